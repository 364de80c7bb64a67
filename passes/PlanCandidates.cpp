//===- PlanCandidates.cpp - candidate schedules under a memory cap --------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "OptimizerUpdate.h"
#include "hetero/Dialect/Schedule.h"
#include "hetero/Dialect/Utils.h"
#include "hetero/Passes/Passes.h"
#include "hetero/Schedule/Candidates.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

namespace hetero {
#define GEN_PASS_DEF_HETEROPLANCANDIDATES
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;
using namespace hetero;

namespace {

/// What the pipeline's IR says about its memory: samples per micro-batch
/// (the leading dimension of the data function's input) and per stage the
/// bytes one micro-batch keeps stashed until its backward (the forward's
/// input, the target on the last stage, the residuals of an augmented
/// forward) and the bytes the stage holds for good (parameters, their
/// gradient sums, the optimizer's state).
struct PipelineMemory {
  int64_t samplesPerMicrobatch = 0;
  std::vector<schedule::StageMemory> stages;
};

FailureOr<PipelineMemory> memoryFromIR(PipelineOp pipeline,
                                       SymbolTable &symbols) {
  auto data =
      pipeline.getDataAttr()
          ? symbols.lookup<func::FuncOp>(pipeline.getDataAttr().getValue())
          : func::FuncOp();
  auto input = data && data.getNumResults() == 2
                   ? dyn_cast<RankedTensorType>(data.getResultTypes()[0])
                   : RankedTensorType();
  if (!input || !input.hasStaticShape() || input.getRank() < 1)
    return pipeline.emitError()
           << "hetero-plan-candidates: without batch= and activation-bytes=, "
              "the memory of pipeline '"
           << pipeline.getSymName()
           << "' comes from its IR, which needs a data function returning a "
              "statically shaped input whose first dimension counts the "
              "samples of a micro-batch";
  PipelineMemory memory;
  memory.samplesPerMicrobatch = input.getDimSize(0);
  int64_t stages = pipeline.getNumStages();
  int64_t stateCopies = int64_t(
      OptimizerUpdate::stateSuffixes(pipeline.getOptimizerAttr()).size());
  for (int64_t s = 0; s < stages; ++s) {
    StageOp stage = pipeline.getStage(s);
    auto forward = symbols.lookup<func::FuncOp>(stage.getForward());
    if (!forward || forward.getNumArguments() == 0)
      return stage.emitOpError()
             << "hetero-plan-candidates: needs a forward function with the "
                "micro-batch's input as its first argument";
    int64_t stash = tensorBytes(forward.getArgumentTypes().front());
    if (s == stages - 1 && forward.getNumArguments() > 1)
      stash += tensorBytes(forward.getArgumentTypes().back());
    // An augmented forward's residuals wait in the stash too.
    if (std::optional<StringRef> augmented = stage.getAugmented())
      if (auto function = symbols.lookup<func::FuncOp>(*augmented))
        for (Type residual : function.getResultTypes().drop_front())
          stash += tensorBytes(residual);
    int64_t fixed = 0;
    for (FlatSymbolRefAttr param : stage.getParamSymbols())
      if (auto global = symbols.lookup<memref::GlobalOp>(param.getValue()))
        fixed += tensorBytes(
                     RankedTensorType::get(global.getType().getShape(),
                                           global.getType().getElementType())) *
                 (2 + stateCopies);
    int64_t samples = memory.samplesPerMicrobatch;
    memory.stages.push_back({(stash + samples - 1) / samples, fixed});
  }
  return memory;
}

struct HeteroPlanCandidatesPass
    : public hetero::impl::HeteroPlanCandidatesBase<HeteroPlanCandidatesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (memoryCap < 1 || batch < 0 || activationBytes < 0) {
      module.emitError() << "hetero-plan-candidates: memory-cap must be at "
                            "least 1 and batch and activation-bytes at least "
                            "0 (0: from the IR), got memory-cap="
                         << int64_t(memoryCap) << " batch=" << int64_t(batch)
                         << " activation-bytes=" << int64_t(activationBytes);
      return signalPassFailure();
    }
    SymbolTable symbols(module);
    for (auto pipeline : llvm::to_vector(module.getOps<PipelineOp>())) {
      int64_t stages = pipeline.getNumStages();
      int64_t samples = batch, step = 1;
      std::vector<schedule::StageMemory> memory(
          size_t(stages), schedule::StageMemory{activationBytes, 0});
      if (batch == 0 || activationBytes == 0) {
        FailureOr<PipelineMemory> fromIR = memoryFromIR(pipeline, symbols);
        if (failed(fromIR))
          return signalPassFailure();
        if (batch == 0) {
          // Stage functions take micro-batches of this many samples: a
          // candidate's must hold a whole number of them.
          step = fromIR->samplesPerMicrobatch;
          samples = step * pipeline.getNumMicrobatches();
        }
        if (activationBytes == 0)
          memory = fromIR->stages;
      }
      std::vector<schedule::Candidate> candidates =
          schedule::paretoCandidates(memory, samples, memoryCap, step);
      if (candidates.empty()) {
        pipeline.emitError()
            << "hetero-plan-candidates: no schedule of pipeline '"
            << pipeline.getSymName() << "' fits " << int64_t(memoryCap)
            << " bytes: 1F1B with " << step
            << (step == 1 ? " sample" : " samples") << " per micro-batch holds "
            << schedule::peakStageBytes(memory, 1, step, samples / step)
            << " on its fullest stage";
        return signalPassFailure();
      }
      SmallVector<Attribute> plans;
      // Created right after the pipeline, so add them last to first.
      for (const schedule::Candidate &c : llvm::reverse(candidates)) {
        std::string name =
            (pipeline.getSymName() + "_k" + std::to_string(c.groupSize) + "_b" +
             std::to_string(c.microbatchSize))
                .str();
        ScheduleOp created = createSchedule(
            symbols, pipeline, name, c.groupSize,
            schedule::kfkbPrograms(stages, c.microbatches, c.groupSize),
            c.microbatchSize, c.microbatches);
        plans.insert(plans.begin(),
                     FlatSymbolRefAttr::get(created.getSymNameAttr()));
      }
      createPlanSet(symbols, pipeline, plans);
    }
  }
};

} // namespace
