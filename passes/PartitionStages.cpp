//===- PartitionStages.cpp - a one-stage model cut into pipeline stages ---===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The forward of a one-stage pipeline is a chain of ops (its body, less the
// constants every stage can re-create). The pass finds where the chain may
// be cut, costs its ops and cuts, lets hetero/Partition/StageCut.h choose
// the cut for the ranks' speeds and memories (or checks the user's), and
// rewrites the pipeline with one forward function per stage.
//
//===----------------------------------------------------------------------===//

#include "OptimizerUpdate.h"

#include "hetero/Dialect/Hetero.h"
#include "hetero/Dialect/Utils.h"
#include "hetero/Partition/StageCut.h"
#include "hetero/Passes/Passes.h"
#include "hetero/Profile/PartitionProfile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <sstream>

namespace hetero {
#define GEN_PASS_DEF_HETEROPARTITIONSTAGES
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;
using namespace hetero;

namespace {

/// Ops every stage can re-create where it needs them instead of receiving
/// their values: constants, empty tensors and fills of such values.
bool isRematerializable(Operation *op) {
  if (op->hasTrait<OpTrait::ConstantLike>() || isa<tensor::EmptyOp>(op))
    return llvm::all_of(op->getOperands(), [](Value operand) {
      Operation *def = operand.getDefiningOp();
      return def && isRematerializable(def);
    });
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return fill.hasPureTensorSemantics() &&
           llvm::all_of(op->getOperands(), [](Value operand) {
             Operation *def = operand.getDefiningOp();
             return def && isRematerializable(def);
           });
  return false;
}

/// Arithmetic and memory traffic of one forward op, callees included.
struct OpWork {
  double flops = 0;
  double bytes = 0;
};

class WorkModel {
public:
  explicit WorkModel(SymbolTable &symbols) : symbols(symbols) {}

  OpWork of(Operation *op) {
    OpWork work;
    if (auto call = dyn_cast<func::CallOp>(op)) {
      if (auto callee = symbols.lookup<func::FuncOp>(call.getCallee()))
        if (!callee.isExternal())
          return ofFunction(callee);
      return traffic(op);
    }
    if (auto product = dyn_cast<PrunableMatmulOp>(op)) {
      work = traffic(op);
      auto lhs = cast<RankedTensorType>(product.getLhs().getType());
      auto result = cast<RankedTensorType>(product.getResult().getType());
      if (lhs.hasStaticShape() && result.hasStaticShape())
        work.flops = 2.0 * double(result.getNumElements()) *
                     double(lhs.getShape().back());
      return work;
    }
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      work = traffic(op);
      double points = 1;
      for (int64_t range : linalgOp.getStaticLoopRanges())
        if (!ShapedType::isDynamic(range))
          points *= double(range);
      int64_t bodyOps = 0;
      for (Operation &inner : linalgOp.getBlock()->without_terminator())
        bodyOps += !isa<linalg::IndexOp>(inner);
      work.flops = points * double(std::max<int64_t>(1, bodyOps));
      return work;
    }
    if (op->getNumRegions() == 0)
      return traffic(op);
    // Structured control flow: what its regions do, once.
    op->walk([&](Operation *inner) {
      if (inner == op || inner->getParentOp() != op)
        return;
      OpWork innerWork = of(inner);
      work.flops += innerWork.flops;
      work.bytes += innerWork.bytes;
    });
    return work;
  }

private:
  static OpWork traffic(Operation *op) {
    OpWork work;
    for (Type type : op->getOperandTypes())
      work.bytes += double(tensorBytes(type));
    for (Type type : op->getResultTypes())
      work.bytes += double(tensorBytes(type));
    return work;
  }

  OpWork ofFunction(func::FuncOp function) {
    auto found = functions.find(function);
    if (found != functions.end())
      return found->second;
    functions[function] = {}; // a recursive call costs nothing more
    OpWork work;
    function.walk([&](Operation *op) {
      if (op->getParentOp() != function.getOperation())
        return;
      OpWork opWork = of(op);
      work.flops += opWork.flops;
      work.bytes += opWork.bytes;
    });
    return functions[function] = work;
  }

  SymbolTable &symbols;
  DenseMap<Operation *, OpWork> functions;
};

/// The forward as a chain: its ops, what crosses each boundary, and what
/// each op needs from outside.
struct ForwardChain {
  func::FuncOp forward;
  SmallVector<Operation *> ops;
  /// Per boundary b (before op b; ops.size() + 1 of them): the one value a
  /// cut there hands to the next stage, or null with `why` saying why the
  /// chain cannot be cut there.
  SmallVector<Value> crossing;
  SmallVector<std::string> why;
  /// Per op: the forward's arguments and rematerializable values it reads
  /// (its operands and what its regions use from above), in first-use
  /// order.
  SmallVector<SmallVector<Value>> reads;
  unsigned numParams = 0;
  bool hasTarget = false;
  BlockArgument input() { return forward.getArgument(0); }
  BlockArgument param(unsigned i) { return forward.getArgument(1 + i); }
  BlockArgument target() {
    return forward.getArgument(forward.getNumArguments() - 1);
  }
};

/// Everything op `op` reads from outside itself.
SmallVector<Value> externalReads(Operation *op) {
  llvm::SetVector<Value> reads;
  for (Value operand : op->getOperands())
    reads.insert(operand);
  llvm::SetVector<Value> above;
  for (Region &region : op->getRegions())
    getUsedValuesDefinedAbove(region, above);
  reads.insert(above.begin(), above.end());
  return SmallVector<Value>(reads.begin(), reads.end());
}

/// Splits the forward's body into its chain and finds where it may be cut.
ForwardChain analyze(func::FuncOp forward, StageOp stage) {
  unsigned numParams = stage.getParamSymbols().size();
  ForwardChain chain;
  chain.forward = forward;
  chain.numParams = numParams;
  chain.hasTarget = forward.getNumArguments() == numParams + 2;
  Block &body = forward.getBody().front();
  DenseMap<Operation *, int64_t> index;
  for (Operation &op : body.without_terminator())
    if (!isRematerializable(&op)) {
      index[&op] = int64_t(chain.ops.size());
      chain.ops.push_back(&op);
      chain.reads.push_back(externalReads(&op));
    }
  int64_t n = int64_t(chain.ops.size());
  // firstUse/lastUse per value by chain position; the return counts as n.
  DenseMap<Value, int64_t> firstUse, lastUse;
  auto use = [&](Value value, int64_t at) {
    firstUse.try_emplace(value, at);
    lastUse[value] = std::max(lastUse.lookup(value), at);
  };
  for (int64_t i = 0; i < n; ++i)
    for (Value value : chain.reads[size_t(i)])
      use(value, i);
  for (Value value : body.getTerminator()->getOperands())
    use(value, n);
  chain.crossing.assign(size_t(n + 1), Value());
  chain.why.assign(size_t(n + 1), "");
  chain.crossing[0] = chain.input();
  // The values of the chain's ops live across boundary b, kept as b grows.
  SmallVector<Value> live;
  for (int64_t b = 1; b < n; ++b) {
    for (Value result : chain.ops[size_t(b - 1)]->getResults())
      if (lastUse.count(result))
        live.push_back(result);
    llvm::erase_if(live,
                   [&](Value value) { return lastUse.lookup(value) < b; });
    std::string &why = chain.why[size_t(b)];
    if (firstUse.count(chain.input()) && lastUse.lookup(chain.input()) >= b) {
      why = "the model's input is used after it";
      continue;
    }
    if (chain.hasTarget && firstUse.count(chain.target()) &&
        firstUse.lookup(chain.target()) < b) {
      why = "the target is used before it";
      continue;
    }
    bool tied = false;
    for (unsigned p = 0; p < numParams && !tied; ++p) {
      Value param = chain.param(p);
      if (firstUse.count(param) && firstUse.lookup(param) < b &&
          lastUse.lookup(param) >= b) {
        why = llvm::formatv("parameter @{0} is used on both sides",
                            stage.getParamSymbols()[p].getValue());
        tied = true;
      }
    }
    if (tied)
      continue;
    if (live.size() != 1) {
      why = llvm::formatv("{0} values are live across it", live.size());
      continue;
    }
    auto type = dyn_cast<RankedTensorType>(live.front().getType());
    if (!type || !type.hasStaticShape() ||
        !isa<FloatType>(type.getElementType())) {
      why = "the value live across it is not a floating-point tensor of "
            "static shape";
      continue;
    }
    chain.crossing[size_t(b)] = live.front();
  }
  return chain;
}

/// A short description of ops [begin, end): each kind with its count, in
/// order of first appearance, calls by callee.
std::string describe(ForwardChain &chain, int64_t begin, int64_t end) {
  SmallVector<std::pair<std::string, int64_t>> kinds;
  for (int64_t i = begin; i < end; ++i) {
    Operation *op = chain.ops[size_t(i)];
    std::string kind = op->getName().getStringRef().str();
    if (auto call = dyn_cast<func::CallOp>(op))
      kind += " @" + call.getCallee().str();
    auto *found = llvm::find_if(
        kinds, [&](const auto &counted) { return counted.first == kind; });
    if (found == kinds.end())
      kinds.push_back({kind, 1});
    else
      ++found->second;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(kinds, os, [&](const auto &kind) {
    os << kind.first;
    if (kind.second > 1)
      os << " x" << kind.second;
  });
  return text;
}

struct HeteroPartitionStagesPass
    : public hetero::impl::HeteroPartitionStagesBase<
          HeteroPartitionStagesPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  LogicalResult partition(PipelineOp pipeline, SymbolTable &symbols,
                          const profile::PartitionProfile &measured);
  LogicalResult checkOptions(ModuleOp module);
};

LogicalResult HeteroPartitionStagesPass::checkOptions(ModuleOp module) {
  auto fail = [&](const Twine &message) {
    return module.emitError() << "hetero-partition-stages: " << message;
  };
  if (stages < 1)
    return fail("stages= must be at least 1, got " + Twine(int64_t(stages)));
  if (!speeds.empty() && int64_t(speeds.size()) != stages)
    return fail("speeds= needs one speed per stage (" + Twine(int64_t(stages)) +
                "), got " + Twine(speeds.size()));
  for (auto [rank, speed] : llvm::enumerate(speeds))
    if (!(speed > 0) || !std::isfinite(speed)) {
      std::ostringstream got;
      got << speed;
      return fail("the speed of rank " + Twine(rank) +
                  " must be a positive number, got " + got.str());
    }
  if (memory.size() > 1 && int64_t(memory.size()) != stages)
    return fail("memory= needs one cap for every rank or one per stage (" +
                Twine(int64_t(stages)) + "), got " + Twine(memory.size()));
  for (int64_t cap : memory)
    if (cap < 1)
      return fail("a memory cap must be at least 1 byte, got " + Twine(cap));
  if (!splitAfter.empty() && int64_t(splitAfter.size()) != stages - 1)
    return fail(
        "split-after= needs stages - 1 = " + Twine(int64_t(stages) - 1) +
        " ops, got " + Twine(splitAfter.size()));
  if (groupSize < 1)
    return fail("group-size= must be at least 1, got " +
                Twine(int64_t(groupSize)));
  if (!(flopsPerSecond > 0) || !(bytesPerSecond > 0) || linkAlphaMs < 0 ||
      linkBetaMsPerMb < 0)
    return fail("flops-per-second and bytes-per-second must be positive and "
                "the link's alpha and beta at least 0");
  return success();
}

void HeteroPartitionStagesPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (failed(checkOptions(module)))
    return signalPassFailure();
  profile::PartitionProfile measured;
  if (!profile.empty()) {
    auto buffer = llvm::MemoryBuffer::getFile(profile);
    if (!buffer) {
      module.emitError() << "hetero-partition-stages: cannot read profile '"
                         << profile << "': " << buffer.getError().message();
      return signalPassFailure();
    }
    std::string problem =
        profile::parsePartitionProfile((*buffer)->getBuffer().str(), measured);
    if (!problem.empty()) {
      module.emitError() << "hetero-partition-stages: profile '" << profile
                         << "': " << problem;
      return signalPassFailure();
    }
  }
  SymbolTable symbols(module);
  for (auto pipeline : llvm::to_vector(module.getOps<PipelineOp>()))
    if (failed(partition(pipeline, symbols, measured)))
      return signalPassFailure();
}

LogicalResult HeteroPartitionStagesPass::partition(
    PipelineOp pipeline, SymbolTable &symbols,
    const profile::PartitionProfile &measured) {
  auto fail = [&](Operation *at) {
    return at->emitError() << "hetero-partition-stages: pipeline '@"
                           << pipeline.getSymName() << "' ";
  };
  if (pipeline.getNumStages() != 1)
    return fail(pipeline) << "has " << pipeline.getNumStages()
                          << " stages; the pass cuts a pipeline of one "
                             "stage whose forward is the whole model";
  for (Operation &op : pipeline.getBody().front())
    if (!isa<StageOp>(op))
      return fail(&op) << "holds '" << op.getName()
                       << "'; cut the model before adding stage variants "
                          "(run hetero-rebatch after the cut)";
  if (auto uses = SymbolTable::getSymbolUses(
          pipeline, pipeline->getParentOfType<ModuleOp>()))
    for (const SymbolTable::SymbolUse &use : *uses)
      if (isa<ScheduleOp, PlanSetOp>(use.getUser()))
        return fail(use.getUser()) << "has '" << use.getUser()->getName()
                                   << "'; cut the model before scheduling it";
  StageOp stage = pipeline.getStage(0);
  if (stage.getBackwardAttr() || stage.getAugmentedAttr() ||
      stage.getBackwardInputAttr())
    return fail(stage) << "has a stage with a backward; the pass cuts the "
                          "forward only (run hetero-derive-backward after "
                          "it)";
  if (pipeline.getPlacementAttr())
    return fail(pipeline) << "states a placement; the cut places one stage "
                             "per rank";
  shard::GridOp grid;
  if (FlatSymbolRefAttr gridName = pipeline.getGridAttr()) {
    grid = symbols.lookup<shard::GridOp>(gridName.getValue());
    if (!grid || grid.getRank() < 1)
      return fail(pipeline) << "needs a grid of at least one axis, the "
                               "pipeline's ranks";
  }
  auto forward = symbols.lookup<func::FuncOp>(stage.getForward());
  if (!forward || forward.isExternal() || !forward.getBody().hasOneBlock())
    return fail(stage) << "needs a forward function with a body of one block";
  unsigned numParams = stage.getParamSymbols().size();
  ForwardChain chain = analyze(forward, stage);
  int64_t n = int64_t(chain.ops.size());
  int64_t numStages = stages;

  if (!measured.opMs.empty() && measured.opMs.rbegin()->first >= n)
    return fail(pipeline) << "has a profile for op "
                          << measured.opMs.rbegin()->first
                          << ", but its forward '@" << forward.getSymName()
                          << "' has ops 0.." << n - 1;

  // The costs of the chain.
  WorkModel work(symbols);
  partition::Chain costs;
  int64_t stateCopies =
      2 +
      int64_t(
          OptimizerUpdate::stateSuffixes(pipeline.getOptimizerAttr()).size());
  DenseSet<Value> paramsSeen;
  for (int64_t i = 0; i < n; ++i) {
    Operation *op = chain.ops[size_t(i)];
    std::optional<double> ms;
    if (auto found = measured.opMs.find(i); found != measured.opMs.end())
      ms = found->second;
    else if (auto call = dyn_cast<func::CallOp>(op))
      if (auto found = measured.callMs.find(call.getCallee().str());
          found != measured.callMs.end())
        ms = found->second;
    OpWork opWork = work.of(op);
    costs.seconds.push_back(ms ? *ms * 1e-3
                               : 3 * (opWork.flops / flopsPerSecond +
                                      opWork.bytes / bytesPerSecond));
    double state = 0;
    for (Value read : chain.reads[size_t(i)]) {
      auto arg = dyn_cast<BlockArgument>(read);
      if (!arg || arg.getOwner() != &forward.getBody().front() ||
          arg.getArgNumber() < 1 || arg.getArgNumber() > numParams ||
          !paramsSeen.insert(read).second)
        continue;
      state += double(tensorBytes(read.getType()) * stateCopies);
    }
    costs.stateBytes.push_back(state);
  }
  if (measured.microbatchMs) {
    // A measured micro-batch: the model's shares, scaled to its time.
    double modeled = 0;
    for (double seconds : costs.seconds)
      modeled += seconds;
    for (double &seconds : costs.seconds)
      if (modeled > 0)
        seconds *= *measured.microbatchMs * 1e-3 / modeled;
  }
  for (auto [p, param] : llvm::enumerate(stage.getParamSymbols()))
    if (!paramsSeen.contains(chain.param(p)))
      // A parameter no op reads stays with stage 0.
      costs.stateBytes.front() +=
          double(tensorBytes(chain.param(p).getType()) * stateCopies);
  for (int64_t b = 0; b <= n; ++b) {
    costs.cuttable.push_back(bool(chain.crossing[size_t(b)]));
    costs.boundaryBytes.push_back(
        chain.crossing[size_t(b)]
            ? double(tensorBytes(chain.crossing[size_t(b)].getType()))
            : 0.0);
  }
  costs.targetBytes =
      chain.hasTarget ? double(tensorBytes(chain.target().getType())) : 0.0;

  partition::Cluster cluster;
  cluster.speeds.assign(speeds.begin(), speeds.end());
  if (cluster.speeds.empty())
    cluster.speeds.assign(size_t(numStages), 1.0);
  for (int64_t s = 0; s < numStages && !memory.empty(); ++s)
    cluster.memoryCaps.push_back(
        double(memory.size() == 1 ? memory[0] : memory[size_t(s)]));
  cluster.microbatches = pipeline.getNumMicrobatches();
  for (int64_t s = 0; s < numStages; ++s)
    cluster.inFlight.push_back(std::min<int64_t>(
        groupSize * (numStages - s), pipeline.getNumMicrobatches()));
  fusion::LinearCost link = measured.link.value_or(
      fusion::LinearCost{double(linkAlphaMs), double(linkBetaMsPerMb)});
  cluster.alphaSeconds = link.alphaMs * 1e-3;
  cluster.betaSecondsPerByte = link.betaMsPerMB * 1e-3 / fusion::kBytesPerMB;

  partition::Cut cut;
  std::string problem;
  if (!splitAfter.empty()) {
    std::vector<int64_t> bounds;
    for (auto [s, after] : llvm::enumerate(splitAfter)) {
      if (after < 0 || after + 1 >= n)
        return fail(pipeline)
               << "cannot split after op " << after << ": the forward '@"
               << forward.getSymName() << "' has ops 0.." << n - 1
               << " and stage " << s + 1 << " would hold no op";
      if (!chain.crossing[size_t(after + 1)])
        return fail(chain.ops[size_t(after)])
               << "cannot split after op " << after << " (the end of stage "
               << s << "): " << chain.why[size_t(after + 1)];
      bounds.push_back(after + 1);
    }
    if (!partition::checkCut(costs, cluster, bounds, cut, problem))
      return fail(pipeline) << "split-after: " << problem;
  } else if (!partition::partitionChain(costs, cluster, cut, problem)) {
    return fail(pipeline) << "cannot be cut into " << numStages
                          << " stages: " << problem;
  }

  // One forward function per stage.
  OpBuilder builder(pipeline.getContext());
  SmallVector<func::FuncOp> functions;
  SmallVector<SmallVector<Attribute>> stageParams;
  stageParams.resize(numStages);
  for (int64_t s = 0; s < numStages; ++s) {
    int64_t begin = cut.bounds[size_t(s)], end = cut.bounds[size_t(s + 1)];
    bool last = s + 1 == numStages;
    std::string name = (forward.getSymName() + "_stage" + Twine(s)).str();
    if (symbols.lookup(name))
      return fail(pipeline) << "would name stage " << s << "'s forward '@"
                            << name << "', which the module already uses";
    // The parameters it reads, in the stage's order (stage 0 also takes
    // those nobody reads).
    SmallVector<unsigned> params;
    for (unsigned p = 0; p < numParams; ++p) {
      Value param = chain.param(p);
      bool reads = s == 0 && !paramsSeen.contains(param);
      for (int64_t i = begin; i < end && !reads; ++i)
        reads = llvm::is_contained(chain.reads[size_t(i)], param);
      if (reads)
        params.push_back(p);
    }
    SmallVector<Type> inputs = {chain.crossing[size_t(begin)].getType()};
    for (unsigned p : params)
      inputs.push_back(chain.param(p).getType());
    if (last && chain.hasTarget)
      inputs.push_back(chain.target().getType());
    Type result = last ? forward.getResultTypes().front()
                       : chain.crossing[size_t(end)].getType();
    builder.setInsertionPoint(forward);
    auto function =
        func::FuncOp::create(builder, forward.getLoc(), name,
                             builder.getFunctionType(inputs, {result}));
    function.setVisibility(forward.getVisibility());
    Block *entry = function.addEntryBlock();
    IRMapping mapping;
    mapping.map(chain.crossing[size_t(begin)], entry->getArgument(0));
    for (auto [i, p] : llvm::enumerate(params)) {
      mapping.map(chain.param(p), entry->getArgument(1 + i));
      stageParams[size_t(s)].push_back(stage.getParamSymbols()[p]);
    }
    if (last && chain.hasTarget)
      mapping.map(chain.target(), entry->getArgument(inputs.size() - 1));
    builder.setInsertionPointToStart(entry);
    // Re-creates a rematerializable value (and what it reads) in the stage.
    std::function<void(Value)> materialize = [&](Value value) {
      if (mapping.contains(value))
        return;
      Operation *def = value.getDefiningOp();
      assert(def && isRematerializable(def) &&
             "the analysis found no other value crossing a cut");
      for (Value read : externalReads(def))
        materialize(read);
      builder.clone(*def, mapping);
    };
    for (int64_t i = begin; i < end; ++i) {
      for (Value read : chain.reads[size_t(i)])
        materialize(read);
      builder.clone(*chain.ops[size_t(i)], mapping);
    }
    Value returned =
        last ? forward.getBody().front().getTerminator()->getOperand(0)
             : chain.crossing[size_t(end)];
    materialize(returned);
    func::ReturnOp::create(builder, forward.getLoc(), mapping.lookup(returned));
    symbols.insert(function);
    functions.push_back(function);

    partition::StageCost cost =
        partition::stageCost(costs, cluster, s, begin, end);
    pipeline.emitRemark() << llvm::formatv(
        "hetero-partition-stages: stage {0}: ops {1}..{2} ({3}), {4} "
        "parameters, predicted {5:f3} ms (compute {6:f3} ms, transfers in "
        "{7:f3} ms), memory {8} bytes",
        s, begin, end - 1, describe(chain, begin, end), params.size(),
        cost.seconds() * 1e3, cost.computeSeconds * 1e3, cost.linkSeconds * 1e3,
        int64_t(std::llround(cost.memoryBytes)));
  }

  // The pipeline of `stages` stages, one per rank of the grid's axis 0.
  std::optional<StringRef> device = stage.getDevice();
  builder.setInsertionPoint(stage);
  for (int64_t s = 0; s < numStages; ++s)
    StageOp::create(builder, stage.getLoc(), builder.getI64IntegerAttr(s),
                    FlatSymbolRefAttr::get(functions[size_t(s)]),
                    /*augmented=*/FlatSymbolRefAttr(),
                    /*backward=*/FlatSymbolRefAttr(),
                    /*backward_input=*/FlatSymbolRefAttr(),
                    /*backward_weight=*/FlatSymbolRefAttr(),
                    builder.getArrayAttr(stageParams[size_t(s)]),
                    device ? builder.getStringAttr(*device) : StringAttr());
  stage.erase();
  pipeline.setNumStages(numStages);
  if (grid) {
    SmallVector<int64_t> shape(grid.getShape());
    shape.front() = numStages;
    grid.setShape(shape);
  }
  if (SymbolTable::symbolKnownUseEmpty(forward, symbols.getOp()))
    symbols.erase(forward);
  return success();
}

} // namespace
