//===- InterleaveCheckpoints.cpp - Gemini's chunks in idle spans ----------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "PassOutput.h"
#include "hetero/Checkpoint/IdleSpans.h"
#include "hetero/Checkpoint/Partition.h"
#include "hetero/Dialect/Hetero.h"
#include "hetero/Dialect/Utils.h"
#include "hetero/Passes/Passes.h"
#include "hetero/Profile/PipelineProfile.h"
#include "hetero/Profile/TimelineProfile.h"
#include "hetero/Schedule/Kfkb.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <cmath>

namespace hetero {
#define GEN_PASS_DEF_HETEROINTERLEAVECHECKPOINTS
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;
using namespace hetero;

namespace {

constexpr StringLiteral kPass = "hetero-interleave-checkpoints";

/// Which ops overwrite the memref globals that back a checkpoint's tensors:
/// an op that writes to a get_global of one of them, or a call of a function
/// that does, transitively.
class StateWriters {
public:
  StateWriters(ModuleOp module, DenseSet<StringAttr> globals)
      : symbols(module), globals(std::move(globals)) {}

  bool writes(Operation *op) {
    WalkResult result = op->walk([&](Operation *inner) {
      if (auto call = dyn_cast<func::CallOp>(inner)) {
        auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
        if (callee && functionWrites(callee))
          return WalkResult::interrupt();
      }
      auto global = dyn_cast<memref::GetGlobalOp>(inner);
      if (global && globals.contains(global.getNameAttr().getAttr()) &&
          writtenThrough(global.getResult()))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    return result.wasInterrupted();
  }

private:
  static bool writtenThrough(Value memref) {
    for (OpOperand &use : memref.getUses()) {
      auto effects = dyn_cast<MemoryEffectOpInterface>(use.getOwner());
      if (!effects)
        continue;
      SmallVector<MemoryEffects::EffectInstance> found;
      effects.getEffectsOnValue(memref, found);
      if (llvm::any_of(found, [](const MemoryEffects::EffectInstance &e) {
            return isa<MemoryEffects::Write>(e.getEffect());
          }))
        return true;
    }
    return false;
  }

  bool functionWrites(func::FuncOp function) {
    auto [found, inserted] = memo.try_emplace(function, false);
    if (!inserted)
      return found->second; // known, or being visited (a cycle): false
    bool result = !function.isExternal() && writes(function);
    memo[function] = result;
    return result;
  }

  SymbolTable symbols;
  DenseSet<StringAttr> globals;
  DenseMap<Operation *, bool> memo;
};

/// The memref global a checkpointed tensor reads, if it reads one.
StringAttr globalOf(Value tensor) {
  auto toTensor = tensor.getDefiningOp<bufferization::ToTensorOp>();
  if (!toTensor)
    return {};
  auto global = toTensor.getBuffer().getDefiningOp<memref::GetGlobalOp>();
  return global ? global.getNameAttr().getAttr() : StringAttr();
}

struct InterleaveCheckpointsPass
    : public hetero::impl::HeteroInterleaveCheckpointsBase<
          InterleaveCheckpointsPass> {
  using HeteroInterleaveCheckpointsBase::HeteroInterleaveCheckpointsBase;

  void runOnOperation() override;

private:
  /// The timeline of every stage of `pipeline`, simulated or measured.
  LogicalResult timelines(PipelineOp pipeline, func::FuncOp stageProgram,
                          std::vector<checkpoint::StageTimeline> &out);
  /// The compute tasks and transfers of each stage program of `pipeline`,
  /// in program order: the schedule that runs.
  std::vector<std::vector<schedule::Action>> programsOf(PipelineOp pipeline);
  LogicalResult interleave(func::FuncOp stageProgram, CheckpointOp checkpoint,
                           const checkpoint::StageTimeline &timeline);

  checkpoint::PartitionProblem problemTemplate;
  DenseMap<Operation *, std::vector<checkpoint::StageTimeline>> cache;
};

std::vector<std::vector<schedule::Action>>
InterleaveCheckpointsPass::programsOf(PipelineOp pipeline) {
  using schedule::Action;
  HeteroDialect &dialect = *getContext().getLoadedDialect<HeteroDialect>();
  int64_t stages = pipeline.getNumStages();
  int64_t microbatches = pipeline.getNumMicrobatches();
  std::vector<std::vector<Action>> programs(stages);
  for (auto function : getOperation().getOps<func::FuncOp>()) {
    FlatSymbolRefAttr ofPipeline =
        dialect.getPipelineAttrHelper().getAttr(function);
    IntegerAttr stageAttr = dialect.getStageAttrHelper().getAttr(function);
    if (!ofPipeline || !stageAttr || function.isExternal() ||
        ofPipeline.getValue() != pipeline.getSymName())
      continue;
    int64_t s = stageAttr.getInt();
    // Activations are tagged with their micro-batch, gradients with it
    // plus the micro-batches of a step.
    auto microbatchOf = [&](int64_t tag) { return tag % microbatches; };
    for (Operation &op : function.getBody().front()) {
      if (auto mark = dyn_cast<TaskMarkOp>(op)) {
        programs[s].push_back(
            {mark.getKind() == TaskKind::forward ? Action::Forward
                                                 : Action::Backward,
             int64_t(mark.getMicrobatch().value_or(0)), -1, s});
      } else if (auto send = dyn_cast<SendOp>(op)) {
        int64_t peer = send.getPeer();
        programs[s].push_back(
            {peer > s ? Action::SendActivation : Action::SendGradient,
             microbatchOf(send.getTag()), peer, s});
      } else if (auto recv = dyn_cast<RecvOp>(op)) {
        int64_t peer = recv.getPeer();
        programs[s].push_back(
            {peer < s ? Action::RecvActivation : Action::RecvGradient,
             microbatchOf(recv.getTag()), peer, s});
      }
    }
  }
  return programs;
}

LogicalResult InterleaveCheckpointsPass::timelines(
    PipelineOp pipeline, func::FuncOp stageProgram,
    std::vector<checkpoint::StageTimeline> &out) {
  auto cached = cache.find(pipeline);
  if (cached != cache.end()) {
    out = cached->second;
    return success();
  }
  int64_t stages = pipeline.getNumStages();
  if (!profile.empty()) {
    if (failed(readPassProfile(
            stageProgram, kPass, profile, [&](const std::string &text) {
              return profile::parseTimelineProfile(text, stages, out);
            })))
      return failure();
  } else {
    sim::Costs simCosts;
    if (failed(readPassProfile(
            stageProgram, kPass, costs, [&](const std::string &text) {
              return profile::parsePipelineProfile(text, stages, simCosts);
            })))
      return failure();
    sim::Result result = sim::simulate(programsOf(pipeline), simCosts);
    for (int64_t s = 0; s < stages; ++s)
      out.push_back(checkpoint::stageTimeline(result, s));
  }
  cache[pipeline] = out;
  return success();
}

LogicalResult InterleaveCheckpointsPass::interleave(
    func::FuncOp stageProgram, CheckpointOp checkpoint,
    const checkpoint::StageTimeline &timeline) {
  Block *block = checkpoint->getBlock();
  SmallVector<TaskMarkOp> marks(block->getOps<TaskMarkOp>());
  bool blocking =
      problemTemplate.interleaving == checkpoint::Interleaving::Blocking;
  if (!blocking && marks.size() != timeline.tasks.size())
    return checkpoint.emitError()
           << kPass << ": the timeline of this stage has "
           << timeline.tasks.size() << " compute tasks, but its program marks "
           << marks.size() << "; the timeline is of another schedule";

  // Write-after-read: the first op that overwrites checkpointed state ends
  // the spans the chunks may use.
  DenseSet<StringAttr> globals;
  for (Value tensor : checkpoint.getTensors())
    if (StringAttr global = globalOf(tensor))
      globals.insert(global);
  StateWriters writers(getOperation(), globals);
  Operation *writer = block->getTerminator();
  for (Operation *op = checkpoint->getNextNode(); op != block->getTerminator();
       op = op->getNextNode())
    if (writers.writes(op)) {
      writer = op;
      break;
    }

  // Where each task starts: after the previous task's mark and its sends.
  auto taskStart = [&](int64_t task) -> Operation * {
    if (task == 0)
      return checkpoint->getNextNode();
    Operation *op = marks[task - 1]->getNextNode();
    while (isa<SendOp>(op))
      op = op->getNextNode();
    if (op->isBeforeInBlock(checkpoint))
      return checkpoint->getNextNode();
    return op;
  };
  // The spans whose chunks can be issued before the writer.
  checkpoint::PartitionProblem problem = problemTemplate;
  problem.spansNs.clear();
  SmallVector<Operation *> anchors;
  for (const checkpoint::IdleSpan &span : checkpoint::idleSpans(timeline)) {
    Operation *anchor = taskStart(span.task);
    if (anchor != writer && writer->isBeforeInBlock(anchor))
      break;
    anchors.push_back(anchor);
    problem.spansNs.push_back(std::llround((span.endMs - span.startMs) * 1e6));
  }
  if (anchors.empty() ||
      problem.interleaving == checkpoint::Interleaving::Blocking) {
    anchors.assign(1, checkpoint->getNextNode());
    problem.spansNs.assign(1, 0);
  }
  problem.checkpointBytes = checkpoint.getShardBytes();
  problem.copies = checkpoint.getReplicas() - 1;
  checkpoint::Partition plan = checkpoint::partition(problem);

  // Each chunk is a byte range of the shard, the tensors laid end to end.
  OpBuilder builder(checkpoint);
  SmallVector<int64_t> starts;
  int64_t shardOffset = 0;
  for (Value tensor : checkpoint.getTensors()) {
    starts.push_back(shardOffset);
    shardOffset += tensorBytes(tensor.getType());
  }
  for (const checkpoint::Chunk &chunk : plan.chunks) {
    builder.setInsertionPoint(anchors[chunk.span]);
    int64_t begin = chunk.offset, end = chunk.offset + chunk.bytes;
    for (auto [index, tensor] : llvm::enumerate(checkpoint.getTensors())) {
      int64_t tensorBegin = starts[index];
      int64_t tensorEnd = tensorBegin + tensorBytes(tensor.getType());
      int64_t from = std::max(begin, tensorBegin);
      int64_t to = std::min(end, tensorEnd);
      if (from >= to)
        continue;
      CkptChunkOp::create(builder, checkpoint.getLoc(), tensor,
                          from - tensorBegin, to - from, chunk.copy,
                          chunk.span);
    }
  }
  builder.setInsertionPoint(writer);
  CkptCommitOp::create(builder, checkpoint.getLoc());
  return success();
}

void InterleaveCheckpointsPass::runOnOperation() {
  ModuleOp module = getOperation();
  SmallVector<CheckpointOp> checkpoints;
  module.walk([&](CheckpointOp checkpoint) {
    // A checkpoint already completed by a commit is interleaved.
    for (Operation *op = checkpoint->getNextNode(); op; op = op->getNextNode())
      if (isa<CkptCommitOp>(op))
        return;
    checkpoints.push_back(checkpoint);
  });
  if (checkpoints.empty())
    return;

  checkpoint::PartitionProblem &problem = problemTemplate;
  problem.spansNs = {0};
  problem.checkpointBytes = 1;
  problem.bufferBytes = bufferBytes;
  problem.parts = parts;
  problem.bandwidthBytesPerMs = bandwidthBytesPerMs;
  problem.alphaNs = std::llround(alphaMs * 1e6);
  problem.mu = mu;
  if (interleaving == "gemini")
    problem.interleaving = checkpoint::Interleaving::Gemini;
  else if (interleaving == "naive")
    problem.interleaving = checkpoint::Interleaving::Naive;
  else if (interleaving == "blocking")
    problem.interleaving = checkpoint::Interleaving::Blocking;
  else {
    module.emitError() << kPass << ": unknown interleaving '" << interleaving
                       << "', expected gemini, naive or blocking";
    return signalPassFailure();
  }
  if (std::string bad = checkpoint::checkPartitionProblem(problem);
      !bad.empty()) {
    module.emitError() << kPass << ": " << bad;
    return signalPassFailure();
  }
  // Blocking sends everything at the start of the step: no spans needed.
  bool blocking = problem.interleaving == checkpoint::Interleaving::Blocking;
  if (!costs.empty() && !profile.empty()) {
    module.emitError() << kPass << " takes costs= or profile=, not both";
    return signalPassFailure();
  }
  if (!blocking && costs.empty() && profile.empty()) {
    module.emitError() << kPass
                       << " needs the step's timeline: costs=<pipeline "
                          "profile.json> to simulate it, or "
                          "profile=<timeline.json> measured by hetero-run "
                          "--timeline";
    return signalPassFailure();
  }

  HeteroDialect &dialect = *getContext().getLoadedDialect<HeteroDialect>();
  for (CheckpointOp checkpoint : checkpoints) {
    auto stageProgram = checkpoint->getParentOfType<func::FuncOp>();
    IntegerAttr stage = stageProgram
                            ? dialect.getStageAttrHelper().getAttr(stageProgram)
                            : IntegerAttr();
    FlatSymbolRefAttr pipelineName =
        stageProgram ? dialect.getPipelineAttrHelper().getAttr(stageProgram)
                     : FlatSymbolRefAttr();
    auto pipeline = pipelineName
                        ? SymbolTable::lookupNearestSymbolFrom<PipelineOp>(
                              module, pipelineName)
                        : PipelineOp();
    if (!stage || !pipeline ||
        checkpoint->getBlock() != &stageProgram.getBody().front()) {
      checkpoint.emitError()
          << kPass
          << ": a hetero.checkpoint is interleaved into the stage program "
             "of a step (hetero-lower-pipeline), whose timeline is known; "
             "this one is not in one";
      return signalPassFailure();
    }
    std::vector<checkpoint::StageTimeline> stageTimelines;
    if (blocking)
      stageTimelines.resize(pipeline.getNumStages());
    else if (failed(timelines(pipeline, stageProgram, stageTimelines)))
      return signalPassFailure();
    if (failed(interleave(stageProgram, checkpoint,
                          stageTimelines[stage.getInt()])))
      return signalPassFailure();
  }
}

} // namespace
