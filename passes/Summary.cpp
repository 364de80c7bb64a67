//===- Summary.cpp - print what a training step distributes ---------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "PassOutput.h"
#include "hetero/Dialect/Hetero.h"
#include "hetero/Dialect/Utils.h"
#include "hetero/Passes/Passes.h"
#include "hetero/Support/WireSize.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/ToolOutputFile.h"

namespace hetero {
#define GEN_PASS_DEF_HETEROSUMMARY
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;
using namespace hetero;

namespace {

/// Calls `visit(op, times)` for every op of `function` and, through
/// func.call, of the functions it calls that are not in `summarized` (those
/// are summarized on their own); `times` counts how often the op runs per
/// run of `function`. A model whose layers share one function (hetero-gen's
/// @gpt_block_forward) is so counted layer by layer.
void walkThroughCalls(func::FuncOp function, SymbolTable &symbols,
                      const llvm::DenseSet<Operation *> &summarized,
                      int64_t times,
                      function_ref<void(Operation *, int64_t)> visit,
                      llvm::SmallPtrSetImpl<Operation *> &active) {
  if (!active.insert(function).second)
    return; // recursion: counted once
  function.walk([&](Operation *op) {
    visit(op, times);
    auto call = dyn_cast<func::CallOp>(op);
    if (!call)
      return;
    auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
    if (callee && !callee.isExternal() && !summarized.contains(callee))
      walkThroughCalls(callee, symbols, summarized, times, visit, active);
  });
  active.erase(function);
}

void walkThroughCalls(func::FuncOp function, SymbolTable &symbols,
                      const llvm::DenseSet<Operation *> &summarized,
                      function_ref<void(Operation *, int64_t)> visit) {
  llvm::SmallPtrSet<Operation *, 8> active;
  walkThroughCalls(function, symbols, summarized, 1, visit, active);
}

/// The set of `functions`, for walkThroughCalls.
llvm::DenseSet<Operation *> functionSet(ArrayRef<func::FuncOp> functions) {
  llvm::DenseSet<Operation *> set;
  for (func::FuncOp function : functions)
    set.insert(function);
  return set;
}

struct CollectiveTally {
  int64_t count = 0;
  int64_t bytes = 0;
  int64_t wire = 0;
  int64_t compressed = 0;
};

struct HeteroSummaryPass
    : public hetero::impl::HeteroSummaryBase<HeteroSummaryPass> {
  using Base::Base;

  void runOnOperation() override;
  void summarizePipeline(PipelineOp pipeline, SymbolTable &symbols,
                         raw_ostream &os);
  /// Summarizes `functions` (`summarized` is their set), counting through
  /// calls into functions not among them. `prunableLayers` is the count of
  /// a pipeline (the prunable matmuls its stage forwards run); without it,
  /// the layers are the distinct `layer` keys.
  void summarizeFunctions(ArrayRef<func::FuncOp> functions,
                          const llvm::DenseSet<Operation *> &summarized,
                          std::optional<int64_t> prunableLayers,
                          SymbolTable &symbols, raw_ostream &os);
};

void HeteroSummaryPass::summarizePipeline(PipelineOp pipeline,
                                          SymbolTable &symbols,
                                          raw_ostream &os) {
  os << "pipeline @" << pipeline.getSymName() << ": " << pipeline.getNumStages()
     << " stages, " << pipeline.getNumMicrobatches() << " micro-batches";
  if (FlatSymbolRefAttr gridName = pipeline.getGridAttr()) {
    os << ", grid " << gridName;
    if (auto grid = symbols.lookup<shard::GridOp>(gridName.getValue())) {
      os << " (";
      llvm::interleave(grid.getShape(), os, "x");
      os << ")";
    }
  }
  os << "\n";

  // The stage functions, then the step hetero-lower-pipeline compiled with
  // its collectives; what they call besides each other is counted through
  // the calls.
  // A stage's backward is null until hetero-derive-backward derives it.
  SmallVector<func::FuncOp> functions, forwards, backwards;
  for (int64_t s = 0; s < pipeline.getNumStages(); ++s) {
    StageOp stage = pipeline.getStage(s);
    forwards.push_back(symbols.lookup<func::FuncOp>(stage.getForward()));
    functions.push_back(forwards.back());
    backwards.emplace_back();
    if (std::optional<StringRef> backward = stage.getBackward())
      backwards.back() = symbols.lookup<func::FuncOp>(*backward);
    for (FlatSymbolRefAttr name :
         {stage.getAugmentedAttr(), stage.getBackwardAttr(),
          stage.getBackwardInputAttr(), stage.getBackwardWeightAttr()})
      if (name)
        functions.push_back(symbols.lookup<func::FuncOp>(name.getValue()));
  }
  auto module = pipeline->getParentOfType<ModuleOp>();
  auto pipelineOf =
      getHeteroDialect(module.getContext()).getPipelineAttrHelper();
  for (auto function : module.getOps<func::FuncOp>())
    if (FlatSymbolRefAttr owner = pipelineOf.getAttr(function);
        owner && owner.getValue() == pipeline.getSymName())
      functions.push_back(function);
  llvm::DenseSet<Operation *> summarized = functionSet(functions);

  int64_t prunableLayers = 0;
  for (int64_t s = 0; s < pipeline.getNumStages(); ++s) {
    StageOp stage = pipeline.getStage(s);
    func::FuncOp forward = forwards[s], backward = backwards[s];
    int64_t paramBytes = 0, params = 0;
    for (Type input : forward.getFunctionType().getInputs().drop_front()) {
      paramBytes += tensorBytes(input);
      ++params;
    }
    int64_t layers = 0;
    walkThroughCalls(forward, symbols, summarized,
                     [&](Operation *op, int64_t times) {
                       if (isa<PrunableMatmulOp>(op))
                         layers += times;
                     });
    os << "  stage " << s << ": forward @" << forward.getSymName();
    if (backward)
      os << ", backward @" << backward.getSymName();
    else if (stage.getBackwardInputAttr())
      os << ", backward_input @" << *stage.getBackwardInput()
         << ", backward_weight @" << *stage.getBackwardWeight();
    else
      os << ", backward to derive";
    if (std::optional<StringRef> augmented = stage.getAugmented()) {
      auto function = symbols.lookup<func::FuncOp>(*augmented);
      // A pipeline that is not executable has no checked signatures.
      TypeRange residuals = function.getResultTypes().drop_front(
          std::min<size_t>(1, function.getNumResults()));
      int64_t bytes = 0;
      for (Type residual : residuals)
        bytes += tensorBytes(residual);
      os << ", augmented @" << *augmented << " (" << residuals.size()
         << (residuals.size() == 1 ? " residual, " : " residuals, ")
         << wire::formatBytes(bytes) << " per micro-batch)";
    }
    if (std::optional<StringRef> device = stage.getDevice())
      os << ", on " << *device;
    os << "\n    " << params << " tensor inputs besides the activation ("
       << wire::formatBytes(paramBytes) << "), " << layers
       << " prunable matmuls";
    bool last = s + 1 == pipeline.getNumStages();
    if (forward.getNumResults() > 0)
      os << (last ? ", returns " : ", sends ")
         << forward.getFunctionType().getResult(0) << " ("
         << wire::formatBytes(
                tensorBytes(forward.getFunctionType().getResult(0)))
         << ")" << (last ? "" : " per micro-batch");
    os << "\n";
    prunableLayers += layers;
  }
  summarizeFunctions(functions, summarized, prunableLayers, symbols, os);
}

void HeteroSummaryPass::summarizeFunctions(
    ArrayRef<func::FuncOp> functions,
    const llvm::DenseSet<Operation *> &summarized,
    std::optional<int64_t> prunableLayers, SymbolTable &symbols,
    raw_ostream &os) {
  llvm::MapVector<StringRef, CollectiveTally> collectives;
  int64_t colMatmuls = 0, rowMatmuls = 0, maxTp = 1;
  llvm::StringSet<> layerKeys;
  SmallVector<CheckpointOp> checkpoints;
  // What a collective sends from this rank; a receive is counted by its
  // sender.
  auto tally = [&](CollectiveOpInterface collective, int64_t times) {
    if (collective->getNumOperands() == 0)
      return;
    CollectiveTally &entry = collectives[collective->getName().stripDialect()];
    entry.count += times;
    CompressAttr compress = collective.getCompression();
    for (Type type : collective->getOperandTypes()) {
      entry.bytes += times * tensorBytes(type);
      entry.wire += times * wireBytes(type, compress);
    }
    if (collective.isCompressed())
      entry.compressed += times;
  };
  for (func::FuncOp function : functions) {
    walkThroughCalls(
        function, symbols, summarized, [&](Operation *op, int64_t times) {
          if (auto matmul = dyn_cast<PrunableMatmulOp>(op)) {
            (matmul.getMode() == PruneMode::col ? colMatmuls : rowMatmuls) +=
                times;
            maxTp = std::max(maxTp, matmul.getTp());
            layerKeys.insert(matmul.getLayer());
          } else if (auto collective = dyn_cast<CollectiveOpInterface>(op)) {
            tally(collective, times);
          } else if (auto checkpoint = dyn_cast<CheckpointOp>(op)) {
            checkpoints.push_back(checkpoint);
          }
        });
  }
  int64_t layers = prunableLayers.value_or(int64_t(layerKeys.size()));
  os << "  tensor parallel: " << layers << " prunable layers, "
     << colMatmuls + rowMatmuls << " prunable matmuls (" << colMatmuls
     << " col, " << rowMatmuls << " row), tp = " << maxTp << "\n";
  if (collectives.empty())
    os << "  collectives: none\n";
  for (auto &[name, entry] : collectives) {
    os << "  " << name << ": " << entry.count << " ops, "
       << wire::formatBytes(entry.bytes) << " of tensors, "
       << wire::formatBytes(entry.wire) << " on the wire";
    if (entry.compressed)
      os << " (" << entry.compressed << " compressed, "
         << llvm::format("%.1f",
                         entry.wire ? double(entry.bytes) / entry.wire : 0.0)
         << "x smaller)";
    os << "\n";
  }
  for (CheckpointOp checkpoint : checkpoints) {
    int64_t checkpointBytes = 0;
    for (Value tensor : checkpoint.getTensors())
      checkpointBytes += tensorBytes(tensor.getType());
    os << "  checkpoint: " << checkpoint.getTensors().size() << " tensors, "
       << wire::formatBytes(checkpointBytes) << ", " << checkpoint.getReplicas()
       << " replicas of " << checkpoint.getWorld() << " machines, "
       << stringifyReplicaPlacement(checkpoint.getPlacement())
       << " placement, every " << checkpoint.getEvery() << " iterations\n";
  }
}

void HeteroSummaryPass::runOnOperation() {
  ModuleOp module = getOperation();
  std::unique_ptr<llvm::ToolOutputFile> file =
      openPassOutput(module, outputFile);
  if (!file)
    return signalPassFailure();
  raw_ostream &os = file->os();
  SymbolTable symbols(module);
  int64_t pipelines = 0;
  for (auto pipeline : module.getOps<PipelineOp>()) {
    summarizePipeline(pipeline, symbols, os);
    ++pipelines;
  }
  if (pipelines == 0) {
    os << "module without a pipeline\n";
    SmallVector<func::FuncOp> functions =
        llvm::to_vector(module.getOps<func::FuncOp>());
    summarizeFunctions(functions, functionSet(functions), std::nullopt, symbols,
                       os);
  }
  for (auto schedule : module.getOps<ScheduleOp>()) {
    int64_t tasks = 0;
    schedule.walk([&](Operation *op) {
      if (isa<FwdOp, BwdOp, BwdInputOp, BwdWeightOp>(op))
        ++tasks;
    });
    os << "schedule @" << schedule.getSymName() << " for @"
       << schedule.getPipeline() << ": group size " << schedule.getGroupSize()
       << ", " << tasks << " compute tasks\n";
  }
  for (auto plans : module.getOps<PlanSetOp>())
    os << "plan set @" << plans.getSymName() << ": " << plans.getPlans().size()
       << " candidate schedules, default " << plans.getDefaultPlanAttr()
       << "\n";
  os.flush();
  file->keep();
  markAllAnalysesPreserved();
}

} // namespace
