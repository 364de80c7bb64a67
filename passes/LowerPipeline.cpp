//===- LowerPipeline.cpp - a pipeline and its schedule as the step --------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// hetero-lower-pipeline: the schedule of an executable hetero.pipeline
// becomes the per-rank training step. Every task of the stage programs is
// emitted in program order, so the IR that was scheduled is the IR that
// runs:
//
//   func.func @p_step(%step: i64) -> f32          // every rank
//     (stage, replica) = shard.process_multi_index on @grid
//     scf.index_switch stage: call @p_step_stage<s>(%step, %replica)
//   func.func private @p_step_stage<s>(%step: i64, %replica: i64) -> f32
//     the gradient sums zeroed
//     recv / data / forward task / send ... backward task ...  (the
//     stage's program)
//     the gradient sums read, one hetero.all_reduce each over the replicas
//     call @p_stage<s>_update(gradient sums...)
//     the mean loss, reduced over the grid
//
// With `sync = #hetero.sync<policy = dynamic, ...>` (SDPipe) the replicas
// do not all-reduce gradients. After every `sync_every_microbatches`-th
// backward (and after the last), a stage program takes a local optimizer
// step on its own gradient sums (@p_stage<s>_update_<n> for n micro-batches)
// and then averages its parameters with a dynamic group of its stage's
// replicas: one hetero.group_sync, whose results are written back to the
// parameter globals. The step's loss is then its pipeline's own, reduced
// over the stage axis only, so that no collective couples the replicas.
//   func.func private @p_stage<s>_forward_task(input[, target]) -> output
//     the stage's forward on its parameters, read from their globals
//   func.func private @p_stage<s>_backward_task(input[, target][, dout])
//     -> input gradient
//     the stage's backward; its parameter gradients are added into the
//     globals @<param>_grad_sum
//   func.func private @p_stage<s>_update(gradient sums...)
//     the optimizer update of the stage's parameters into their globals
//
// A task is one call with its activations only, so a step's size, and the
// work of compiling it, grow with the number of tasks plus the number of
// parameters, not with their product.
//===----------------------------------------------------------------------===//

#include "OptimizerUpdate.h"

#include "hetero/Dialect/Hetero.h"
#include "hetero/Dialect/Schedule.h"
#include "hetero/Dialect/Utils.h"
#include "hetero/Passes/Passes.h"
#include "hetero/Schedule/Families.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

#include <functional>
#include <limits>
#include <map>

namespace hetero {
#define GEN_PASS_DEF_HETEROLOWERPIPELINE
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;
using namespace hetero;
using schedule::Action;

namespace {

/// Grid axis 0 holds the stages, axis 1 the data-parallel replicas.
constexpr int16_t kStageAxis = 0;
constexpr int16_t kReplicaAxis = 1;

/// The functions of a stage for one micro-batch size (an augmented
/// forward that keeps residuals for the backward, and the backward whole
/// or split into its input and weight parts, where the stage names them),
/// and the task functions that call them, emitted with the first step that
/// runs them.
struct StageCode {
  func::FuncOp forward, backward;
  func::FuncOp augmented, backwardInput, backwardWeight;
  func::FuncOp forwardTask, backwardTask, backwardInputTask, backwardWeightTask;

  /// The forward the step runs: the augmented one when there is one.
  func::FuncOp steppedForward() { return augmented ? augmented : forward; }
  bool isSplit() { return bool(backwardInput); }
  /// The values a split backward's input part hands to its weight part:
  /// its last results, the weight part's arguments after the forward's.
  unsigned savedCount() {
    return backwardWeight.getNumArguments() - forward.getNumArguments();
  }
  /// The residuals the forward keeps for the backward.
  TypeRange residualTypes() {
    return augmented ? augmented.getResultTypes().drop_front() : TypeRange();
  }
};

/// One stage of an executable pipeline.
struct Stage {
  /// The stage's code per micro-batch factor: 1 for its own functions, n
  /// for its hetero.stage_variant of n times the samples.
  std::map<int64_t, StageCode> code;
  SmallVector<memref::GlobalOp> params;
  /// The update function of each number of micro-batches an update covers,
  /// and the gradient sums, emitted with the first step.
  std::map<int64_t, func::FuncOp> updates;
  SmallVector<memref::GlobalOp> gradientSums;

  StageCode &own() { return code.at(1); }
};

/// How a step runs a schedule: its stage programs, each task one call of
/// the stage functions of `factor` times the pipeline's micro-batch.
struct StepPlan {
  std::vector<std::vector<Action>> programs;
  int64_t factor = 1;
  /// The tasks that run one of the schedule's micro-batches.
  int64_t tasks = 1;
};

/// Emits the step functions of one executable pipeline.
class PipelineLowering {
public:
  PipelineLowering(PipelineOp pipeline, SymbolTable &symbols,
                   bool lateGradientSync, bool eagerGradientSync)
      : pipeline(pipeline), symbols(symbols), builder(pipeline.getContext()),
        loc(pipeline.getLoc()), lateGradientSync(lateGradientSync),
        eagerGradientSync(eagerGradientSync) {}

  /// Resolves the pipeline's functions, globals and grid; false after a
  /// diagnostic.
  LogicalResult prepare();

  /// Emits the step `name` (and its stage functions `<name>_stage<s>`)
  /// running `plan`.
  func::FuncOp emitStep(StringRef name, const StepPlan &plan,
                        StringAttr scheduleName);

  /// Emits @<p>_step, which runs the step of the default plan, and records
  /// the plans in its `hetero.plan_table`.
  void emitPlanTable(PlanSetOp planSet, MutableArrayRef<func::FuncOp> steps,
                     MutableArrayRef<ScheduleOp> schedules,
                     ArrayRef<StepPlan> plans);

  /// The largest factor n (the stage's own functions: 1) for which every
  /// stage has functions of n times the pipeline's micro-batch and n
  /// divides `factor`.
  int64_t largestVariantDividing(int64_t factor) const;

  /// Emits @<p>_step_reference.
  void emitReference();

  int64_t numStages() const { return stages.size(); }

private:
  func::FuncOp createFunction(StringRef name, FunctionType type, bool isPublic);
  /// The private function @<p>_stage<s>_<suffix>.
  func::FuncOp createStageFunction(int64_t s, StringRef suffix,
                                   FunctionType type) {
    return createFunction(
        (pipeline.getSymName() + "_stage" + Twine(s) + "_" + suffix).str(),
        type, /*isPublic=*/false);
  }
  /// "<base>" for the stage's own functions, "<base>_b<samples>" for a
  /// variant.
  std::string sizedName(StringRef base, int64_t factor) const {
    if (factor == 1)
      return base.str();
    return (base + "_b" + Twine(factor * baseSamples)).str();
  }
  Value indexConstant(int64_t value) {
    return arith::ConstantIndexOp::create(builder, loc, value);
  }
  Value i64Constant(int64_t value) {
    return arith::ConstantIntOp::create(builder, loc, builder.getI64Type(),
                                        value);
  }
  Value f32Constant(double value) {
    return arith::ConstantFloatOp::create(builder, loc, builder.getF32Type(),
                                          llvm::APFloat(float(value)));
  }
  /// `sum` plus `term`; `term` alone when there is no sum yet.
  Value accumulate(Value sum, Value term);
  /// Emits stage `s`'s task functions for micro-batch factor `factor` and
  /// its gradient sums, once for all steps.
  void emitStageFunctions(int64_t s, int64_t factor);
  /// @<p>_stage<s>_forward_task and _backward_task (suffixed _b<samples>
  /// for a variant).
  func::FuncOp emitForwardTask(int64_t s, int64_t factor);
  func::FuncOp emitBackwardTask(int64_t s, int64_t factor);
  /// @<p>_stage<s>_backward_input_task(input, target or output gradient,
  /// residuals...) -> (input gradient, saved...) and
  /// _backward_weight_task(input[, target], saved...), which adds the
  /// parameter gradients into their sums, for a split backward.
  func::FuncOp emitBackwardInputTask(int64_t s, int64_t factor);
  /// @<p>_stage<s>_<name>(input, target or output gradient, residuals...):
  /// calls `callee` (the backward or its input part) with the stage's
  /// parameters, adds its last `summed` results into the parameters'
  /// gradient sums and returns the others.
  func::FuncOp emitBackwardCallTask(int64_t s, int64_t factor,
                                    func::FuncOp callee, StringRef name,
                                    size_t summed);
  func::FuncOp emitBackwardWeightTask(int64_t s, int64_t factor);
  /// Adds each of `gradients` (stage `s`'s parameter gradients) into its
  /// gradient sum global.
  void addIntoGradientSums(int64_t s, ValueRange gradients);
  /// The functions a hetero.stage or hetero.stage_variant names.
  template <typename StageLikeOp> StageCode lookupCode(StageLikeOp stage) {
    auto lookup = [&](std::optional<StringRef> name) {
      return name ? symbols.lookup<func::FuncOp>(*name) : func::FuncOp();
    };
    StageCode code;
    code.forward = lookup(stage.getForward());
    code.backward = lookup(stage.getBackward());
    code.augmented = lookup(stage.getAugmented());
    code.backwardInput = lookup(stage.getBackwardInput());
    code.backwardWeight = lookup(stage.getBackwardWeight());
    return code;
  }
  /// The input (on stage 0) or the target (on the last stage; both on a
  /// single stage) of task micro-batch `microbatch` of `factor` times the
  /// pipeline's micro-batch: the data function's micro-batches
  /// factor x microbatch .. + factor - 1, joined along their first
  /// dimension.
  std::pair<Value, Value> emitData(int64_t s, Value step, Value replica,
                                   int64_t microbatch, int64_t factor);
  /// @<p>_stage<s>_update (or _update_<count> when a local step covers
  /// fewer than the step's micro-batches): the optimizer step on gradient
  /// sums of `count` micro-batches per replica. A function of its own, so
  /// that the buffers of the update and those of the tasks are freed by
  /// separate deallocations.
  func::FuncOp updateFunction(int64_t s, int64_t count);
  /// The values of stage `s`'s parameters, read from their globals.
  SmallVector<Value> readParams(int64_t s) {
    SmallVector<Value> values;
    for (memref::GlobalOp param : stages[s].params)
      values.push_back(readGlobal(builder, loc, param));
    return values;
  }
  /// The scalar loss of a micro-batch added to `total`.
  Value addLoss(Value total, Value loss);
  /// What stage `s`'s forward takes (and its backward first): the
  /// activation, the parameters, and on the last stage the target.
  SmallVector<Value> forwardArguments(int64_t s, Value input, ValueRange params,
                                      Value target) {
    SmallVector<Value> arguments = {input};
    arguments.append(params.begin(), params.end());
    if (s == numStages() - 1)
      arguments.push_back(target);
    return arguments;
  }
  /// Replaces each gradient sum by its all-reduce over the replica axis.
  void reduceGradients(MutableArrayRef<Value> gradients);
  /// The stage's last backward (`backward`, the whole one or its weight
  /// part, called with `arguments`) with its body inline, each parameter
  /// gradient (its last results) summed with the earlier micro-batches' and
  /// all-reduced over the replicas right after the op that computes it: a
  /// gradient's communication starts while the backward still computes the
  /// gradients before it. Returns the backward's results; `gradients`
  /// receives the reduced sums in parameter order.
  SmallVector<Value> emitEagerBackward(int64_t s, func::FuncOp backward,
                                       ArrayRef<Value> arguments,
                                       SmallVectorImpl<Value> &gradients);
  DenseI16ArrayAttr axes(ArrayRef<int16_t> values) {
    return builder.getDenseI16ArrayAttr(values);
  }
  /// The program of pipeline rank `rank` as one function (step, replica)
  /// -> local loss sum: @<step>_stage<s> with one stage per rank,
  /// @<step>_rank<r> with several. Its tasks call the stage functions of
  /// `factor` times the pipeline's micro-batch.
  func::FuncOp emitRankProgram(StringRef stepName, int64_t rank,
                               const std::vector<Action> &program,
                               int64_t factor);
  /// Adds the optimizer update of every parameter of `stage` with the
  /// gradient sums `gradients` of `count` micro-batches.
  void emitUpdates(int64_t stage, ArrayRef<Value> gradients, int64_t count);
  /// Sets the gradient sums of stage `s` to zero.
  void zeroGradientSums(int64_t s);
  /// SDPipe's sync point: the local step of stage `s` on its gradient sums
  /// of `count` micro-batches, then a hetero.group_sync of its parameters
  /// written back to their globals.
  void emitLocalStepAndSync(int64_t s, int64_t count);
  bool dynamicSync() const { return sync && sync.isDynamic(); }
  /// Opens the in-memory checkpoint (#hetero.checkpoint) of stage `s`'s
  /// parameters and optimizer state as they are at the start of `step`.
  void emitCheckpoint(int64_t s, Value step);

  PipelineOp pipeline;
  SymbolTable &symbols;
  OpBuilder builder;
  Location loc;
  SmallVector<Stage> stages;
  /// The pipeline rank (grid axis 0) of each stage.
  schedule::Placement placement;
  func::FuncOp data;
  FlatSymbolRefAttr grid;
  /// Whether the grid has axis 1; without it there is one replica.
  bool hasReplicaAxis = false;
  int64_t replicas = 1;
  /// The tensor-parallel shards of a stage's replica (grid axis 2).
  int64_t shards = 1;
  /// The ranks of the grid.
  int64_t worldSize = 1;
  int64_t microbatches = 0;
  int64_t baseSamples = 1;
  SyncAttr sync;
  std::unique_ptr<OptimizerUpdate> optimizer;
  bool lateGradientSync;
  /// The last backward of a stage is emitted inline, and each parameter's
  /// gradient is summed and all-reduced right where it is computed.
  bool eagerGradientSync;
};

LogicalResult PipelineLowering::prepare() {
  microbatches = pipeline.getNumMicrobatches();
  placement = pipeline.getStagePlacement();
  data = symbols.lookup<func::FuncOp>(pipeline.getDataAttr().getValue());
  SmallVector<memref::GlobalOp> allParams;
  // A stage without its backward cannot train until one is derived.
  auto requireBackward = [&](Operation *stage, int64_t id,
                             bool hasBackward) -> LogicalResult {
    if (hasBackward)
      return success();
    return stage->emitOpError()
           << "stage " << id
           << " has no backward function; run hetero-derive-backward "
              "first to derive it from the forward";
  };
  for (int64_t s = 0; s < pipeline.getNumStages(); ++s) {
    StageOp stageOp = pipeline.getStage(s);
    if (failed(requireBackward(stageOp, s, stageOp.hasBackward())))
      return failure();
    Stage stage;
    stage.code[1] = lookupCode(stageOp);
    for (FlatSymbolRefAttr param : stageOp.getParamSymbols()) {
      auto global = symbols.lookup<memref::GlobalOp>(param.getValue());
      Type element = global.getType().getElementType();
      if (!element.isF32())
        return stageOp.emitOpError()
               << "parameter '" << param.getValue() << "' holds " << element
               << " elements; hetero-lower-pipeline trains f32 parameters";
      stage.params.push_back(global);
      allParams.push_back(global);
    }
    stages.push_back(stage);
  }
  // The verifier checked that variants grow the samples of the data
  // function's micro-batch, along its first dimension.
  auto input = cast<RankedTensorType>(data.getResultTypes()[0]);
  baseSamples = input.getRank() > 0 ? input.getDimSize(0) : 1;
  for (auto variant : pipeline.getBody().getOps<StageVariantOp>()) {
    if (failed(requireBackward(variant, variant.getStageId(),
                               variant.hasBackward())))
      return failure();
    stages[variant.getStageId()]
        .code[variant.getMicrobatchSize() / baseSamples] = lookupCode(variant);
  }

  if (FlatSymbolRefAttr gridName = pipeline.getGridAttr()) {
    grid = gridName;
    auto gridOp = symbols.lookup<shard::GridOp>(gridName.getValue());
    hasReplicaAxis = gridOp.getShape().size() > 1;
    if (hasReplicaAxis)
      replicas = gridOp.getShape()[1];
    if (gridOp.getShape().size() > 2)
      shards = gridOp.getShape()[2];
    worldSize = *gridGroupSize(gridOp.getShape(), {});
  } else {
    // A pipeline without a grid runs on the ranks its placement names.
    builder.setInsertionPoint(pipeline);
    auto gridOp = shard::GridOp::create(
        builder, loc, (pipeline.getSymName() + "_grid").str(),
        ArrayRef<int64_t>{pipeline.getNumRanks()});
    symbols.insert(gridOp, Block::iterator(pipeline.getOperation()));
    grid = FlatSymbolRefAttr::get(gridOp.getSymNameAttr());
    pipeline.setGridAttr(grid);
    worldSize = pipeline.getNumRanks();
  }
  sync = pipeline.getSyncAttr();
  if (dynamicSync() && shards > 1)
    return pipeline.emitOpError()
           << "synchronises its replicas in dynamic groups (policy = "
              "dynamic) on a grid with "
           << shards
           << " tensor-parallel shards; dynamic groups average whole "
              "replicas, expected a grid without axis 2";
  if (dynamicSync())
    for (int64_t s = 0; s < numStages(); ++s)
      if (stages[s].params.empty())
        return pipeline.getStage(s).emitOpError()
               << "has no parameters, but the pipeline synchronises its "
                  "replicas in dynamic groups (policy = dynamic), which "
                  "average every stage's parameters";
  if (!placement.onePerRank() &&
      (dynamicSync() || pipeline.getCheckpointAttr()))
    return pipeline.emitOpError()
           << "places its " << numStages() << " stages on " << placement.ranks
           << " ranks and "
           << (dynamicSync() ? "synchronises its replicas in dynamic groups "
                               "(policy = dynamic)"
                             : "keeps in-memory checkpoints (checkpoint <...>)")
           << "; hetero-lower-pipeline lowers "
           << (dynamicSync() ? "dynamic sync groups" : "checkpoints")
           << " for one stage per rank";
  if (pipeline.getCheckpointAttr())
    for (int64_t s = 0; s < numStages(); ++s)
      if (stages[s].params.empty())
        return pipeline.getStage(s).emitOpError()
               << "has no parameters, but the pipeline keeps in-memory "
                  "checkpoints (checkpoint <...>), which every rank takes "
                  "part in with its parameters";
  // The rescale divides the variance by N; with one replica it is Adam.
  int64_t varianceReplicas =
      dynamicSync() && sync.getAdamVarRescale() && replicas > 1 ? replicas : 0;
  optimizer = std::make_unique<OptimizerUpdate>(
      pipeline.getOptimizerAttr(), allParams, pipeline.getSymName(), symbols,
      varianceReplicas);
  return success();
}

func::FuncOp PipelineLowering::createFunction(StringRef name, FunctionType type,
                                              bool isPublic) {
  builder.setInsertionPointAfter(pipeline);
  auto function = func::FuncOp::create(builder, loc, name, type);
  symbols.insert(function, Block::iterator(pipeline->getNextNode()));
  if (!isPublic)
    function.setPrivate();
  getHeteroDialect(builder.getContext())
      .getPipelineAttrHelper()
      .setAttr(function, FlatSymbolRefAttr::get(pipeline.getSymNameAttr()));
  builder.setInsertionPointToStart(function.addEntryBlock());
  return function;
}

Value PipelineLowering::accumulate(Value sum, Value term) {
  if (!sum)
    return term;
  // In place into the sum, so that loops carry one buffer.
  return linalg::AddOp::create(builder, loc, ValueRange{sum, term},
                               ValueRange{sum})
      .getResult(0);
}

int64_t PipelineLowering::largestVariantDividing(int64_t factor) const {
  int64_t best = 1;
  for (const auto &[candidate, code] : stages.front().code)
    if (factor % candidate == 0)
      best = std::max(best, candidate);
  return best;
}

void PipelineLowering::emitStageFunctions(int64_t s, int64_t factor) {
  Stage &stage = stages[s];
  OpBuilder::InsertionGuard guard(builder);
  if (stage.gradientSums.empty())
    for (memref::GlobalOp param : stage.params)
      stage.gradientSums.push_back(
          createStateGlobal(param, "grad_sum", symbols));
  StageCode &code = stage.code.at(factor);
  if (code.forwardTask)
    return;
  code.forwardTask = emitForwardTask(s, factor);
  if (code.isSplit()) {
    code.backwardInputTask = emitBackwardInputTask(s, factor);
    code.backwardWeightTask = emitBackwardWeightTask(s, factor);
  } else {
    code.backwardTask = emitBackwardTask(s, factor);
  }
}

func::FuncOp PipelineLowering::emitForwardTask(int64_t s, int64_t factor) {
  func::FuncOp forward = stages[s].code.at(factor).steppedForward();
  FunctionType type = forward.getFunctionType();
  bool last = s == numStages() - 1;
  SmallVector<Type> inputs = {type.getInput(0)};
  if (last)
    inputs.push_back(type.getInputs().back());
  func::FuncOp function =
      createStageFunction(s, sizedName("forward_task", factor),
                          builder.getFunctionType(inputs, type.getResults()));
  ValueRange arguments = function.getArguments();
  auto call =
      func::CallOp::create(builder, loc, forward,
                           forwardArguments(s, arguments[0], readParams(s),
                                            last ? arguments[1] : Value()));
  func::ReturnOp::create(builder, loc, call.getResults());
  return function;
}

func::FuncOp PipelineLowering::emitBackwardTask(int64_t s, int64_t factor) {
  StageCode &code = stages[s].code.at(factor);
  return emitBackwardCallTask(s, factor, code.backward, "backward_task",
                              stages[s].params.size());
}

func::FuncOp PipelineLowering::emitBackwardCallTask(int64_t s, int64_t factor,
                                                    func::FuncOp callee,
                                                    StringRef name,
                                                    size_t summed) {
  StageCode &code = stages[s].code.at(factor);
  bool last = s == numStages() - 1;
  // The activation, then the target (last stage) or the output gradient,
  // then the residuals of the augmented forward.
  FunctionType forwardType = code.forward.getFunctionType();
  SmallVector<Type> inputs = {forwardType.getInput(0),
                              last ? forwardType.getInputs().back()
                                   : forwardType.getResult(0)};
  llvm::append_range(inputs, code.residualTypes());
  func::FuncOp function = createStageFunction(
      s, sizedName(name, factor),
      builder.getFunctionType(inputs,
                              callee.getResultTypes().drop_back(summed)));
  ValueRange arguments = function.getArguments();
  SmallVector<Value> callArguments = forwardArguments(
      s, arguments[0], readParams(s), last ? arguments[1] : Value());
  llvm::append_range(callArguments, arguments.drop_front(2));
  if (!last)
    callArguments.push_back(arguments[1]);
  auto call = func::CallOp::create(builder, loc, callee, callArguments);
  if (summed)
    addIntoGradientSums(s, call.getResults().take_back(summed));
  func::ReturnOp::create(builder, loc, call.getResults().drop_back(summed));
  return function;
}

void PipelineLowering::addIntoGradientSums(int64_t s, ValueRange gradients) {
  // The sums are read first and added to after, so that the adds stand
  // together (the GPU pipeline runs them as one kernel).
  SmallVector<Value> buffers;
  for (memref::GlobalOp sum : stages[s].gradientSums)
    buffers.push_back(memref::GetGlobalOp::create(builder, loc, sum.getType(),
                                                  sum.getSymName()));
  for (auto [buffer, gradient] : llvm::zip_equal(buffers, gradients)) {
    Value term = bufferization::ToBufferOp::create(
        builder, loc, cast<MemRefType>(buffer.getType()), gradient,
        /*read_only=*/true);
    linalg::AddOp::create(builder, loc, ValueRange{buffer, term},
                          ValueRange{buffer});
  }
}

func::FuncOp PipelineLowering::emitBackwardInputTask(int64_t s,
                                                     int64_t factor) {
  StageCode &code = stages[s].code.at(factor);
  return emitBackwardCallTask(s, factor, code.backwardInput,
                              "backward_input_task", /*summed=*/0);
}

func::FuncOp PipelineLowering::emitBackwardWeightTask(int64_t s,
                                                      int64_t factor) {
  StageCode &code = stages[s].code.at(factor);
  bool last = s == numStages() - 1;
  FunctionType forwardType = code.forward.getFunctionType();
  unsigned forwardInputs = forwardType.getNumInputs();
  // The activation, the target on the last stage, then the saved values.
  SmallVector<Type> inputs = {forwardType.getInput(0)};
  if (last)
    inputs.push_back(forwardType.getInputs().back());
  llvm::append_range(
      inputs, code.backwardWeight.getFunctionType().getInputs().drop_front(
                  forwardInputs));
  func::FuncOp function =
      createStageFunction(s, sizedName("backward_weight_task", factor),
                          builder.getFunctionType(inputs, {}));
  ValueRange arguments = function.getArguments();
  SmallVector<Value> callArguments = forwardArguments(
      s, arguments[0], readParams(s), last ? arguments[1] : Value());
  llvm::append_range(callArguments, arguments.drop_front(last ? 2 : 1));
  auto call =
      func::CallOp::create(builder, loc, code.backwardWeight, callArguments);
  addIntoGradientSums(s, call.getResults());
  func::ReturnOp::create(builder, loc);
  return function;
}

func::FuncOp PipelineLowering::updateFunction(int64_t s, int64_t count) {
  func::FuncOp &function = stages[s].updates[count];
  if (function)
    return function;
  OpBuilder::InsertionGuard guard(builder);
  SmallVector<Type> inputs;
  for (memref::GlobalOp param : stages[s].params) {
    MemRefType type = param.getType();
    inputs.push_back(
        RankedTensorType::get(type.getShape(), type.getElementType()));
  }
  std::string suffix = "update";
  if (count != microbatches)
    suffix += "_" + std::to_string(count);
  function =
      createStageFunction(s, suffix, builder.getFunctionType(inputs, {}));
  optimizer->beginStep(builder, loc);
  // All-reduced sums hold the micro-batches of every replica; local ones
  // those of this replica.
  emitUpdates(s, SmallVector<Value>(function.getArguments()),
              dynamicSync() ? count : count * replicas);
  func::ReturnOp::create(builder, loc);
  return function;
}

void PipelineLowering::zeroGradientSums(int64_t s) {
  for (memref::GlobalOp sum : stages[s].gradientSums) {
    Value buffer = memref::GetGlobalOp::create(builder, loc, sum.getType(),
                                               sum.getSymName());
    linalg::FillOp::create(builder, loc, ValueRange{f32Constant(0.0)},
                           ValueRange{buffer});
  }
}

void PipelineLowering::emitLocalStepAndSync(int64_t s, int64_t count) {
  Stage &stage = stages[s];
  SmallVector<Value> gradients;
  for (memref::GlobalOp sum : stage.gradientSums)
    gradients.push_back(readGlobal(builder, loc, sum));
  func::CallOp::create(builder, loc, updateFunction(s, count), gradients);
  // READY after the local step (SDPipe's Algorithm 1), then the average.
  SmallVector<Value> params = readParams(s);
  auto average = GroupSyncOp::create(builder, loc, params, grid, sync);
  for (auto [param, averaged] :
       llvm::zip_equal(stage.params, average.getResults())) {
    Value buffer = memref::GetGlobalOp::create(builder, loc, param.getType(),
                                               param.getSymName());
    bufferization::MaterializeInDestinationOp::create(
        builder, loc, TypeRange{}, averaged, buffer, /*restrict=*/false,
        /*writable=*/true);
  }
}

void PipelineLowering::reduceGradients(MutableArrayRef<Value> gradients) {
  if (!hasReplicaAxis)
    return;
  for (Value &sum : gradients)
    sum = AllReduceOp::create(builder, loc, sum, grid, {kReplicaAxis});
}

SmallVector<Value>
PipelineLowering::emitEagerBackward(int64_t s, func::FuncOp backward,
                                    ArrayRef<Value> arguments,
                                    SmallVectorImpl<Value> &gradients) {
  Stage &stage = stages[s];
  SmallVector<Value> results;
  if (backward.isDeclaration() || !backward.getBody().hasOneBlock()) {
    // Nothing to open: the gradients are complete when the call returns.
    results =
        func::CallOp::create(builder, loc, backward, arguments).getResults();
  } else {
    IRMapping mapping;
    Block &body = backward.getBody().front();
    mapping.map(body.getArguments(), arguments);
    for (Operation &op : body.without_terminator())
      builder.clone(op, mapping);
    for (Value result : body.getTerminator()->getOperands())
      results.push_back(mapping.lookupOrDefault(result));
  }
  // Each gradient's sum and all-reduce right after its producer, in
  // parameter order among the gradients of one producer.
  size_t count = stage.params.size();
  DenseMap<Operation *, Operation *> lastPlaced;
  Block *block = builder.getInsertionBlock();
  for (auto [sumGlobal, gradient] : llvm::zip_equal(
           stage.gradientSums, ArrayRef(results).take_back(count))) {
    OpBuilder::InsertionGuard guard(builder);
    Operation *producer = gradient.getDefiningOp();
    if (producer && producer->getBlock() == block) {
      Operation *&after = lastPlaced[producer];
      builder.setInsertionPointAfter(after ? after : producer);
    }
    Value sum = readGlobal(builder, loc, sumGlobal);
    Value empty = tensor::EmptyOp::create(
        builder, loc, cast<RankedTensorType>(sum.getType()).getShape(),
        cast<RankedTensorType>(sum.getType()).getElementType());
    Value total = linalg::AddOp::create(builder, loc, ValueRange{sum, gradient},
                                        ValueRange{empty})
                      .getResult(0);
    auto reduced =
        AllReduceOp::create(builder, loc, total, grid, {kReplicaAxis});
    gradients.push_back(reduced.getResult());
    if (producer && producer->getBlock() == block)
      lastPlaced[producer] = reduced;
  }
  return results;
}

Value PipelineLowering::addLoss(Value total, Value loss) {
  Value scalar = tensor::ExtractOp::create(builder, loc, loss, ValueRange{});
  return arith::AddFOp::create(builder, loc, total, scalar);
}

void PipelineLowering::emitUpdates(int64_t stage, ArrayRef<Value> gradients,
                                   int64_t count) {
  double scale = 1.0 / double(count);
  for (auto [param, gradient] : llvm::zip(stages[stage].params, gradients))
    optimizer->update(builder, loc, param, gradient, scale);
}

void PipelineLowering::emitCheckpoint(int64_t s, Value step) {
  CheckpointAttr checkpoint = pipeline.getCheckpointAttr();
  SmallVector<Value> tensors;
  for (memref::GlobalOp param : stages[s].params) {
    tensors.push_back(readGlobal(builder, loc, param));
    for (memref::GlobalOp state : optimizer->stateOf(param))
      tensors.push_back(readGlobal(builder, loc, state));
  }
  if (memref::GlobalOp counter = optimizer->stepCounter())
    tensors.push_back(readGlobal(builder, loc, counter));
  CheckpointOp::create(builder, loc, tensors, step, checkpoint.getReplicas(),
                       worldSize, checkpoint.getPlacement(),
                       checkpoint.getEvery());
}

std::pair<Value, Value> PipelineLowering::emitData(int64_t s, Value step,
                                                   Value replica,
                                                   int64_t microbatch,
                                                   int64_t factor) {
  SmallVector<Value> inputs, targets;
  for (int64_t part = 0; part < factor; ++part) {
    auto batch = func::CallOp::create(
        builder, loc, data,
        ValueRange{step, replica, i64Constant(factor * microbatch + part)});
    inputs.push_back(batch.getResult(0));
    targets.push_back(batch.getResult(1));
  }
  if (factor == 1)
    return {inputs.front(), targets.front()};
  // Each part fills the next rows of the larger micro-batch.
  auto join = [&](ArrayRef<Value> parts) -> Value {
    auto partType = cast<RankedTensorType>(parts.front().getType());
    SmallVector<int64_t> shape(partType.getShape());
    int64_t rows = shape[0];
    shape[0] *= factor;
    Value joined =
        tensor::EmptyOp::create(builder, loc, shape, partType.getElementType());
    SmallVector<OpFoldResult> offsets(shape.size(), builder.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes,
        strides(shape.size(), builder.getIndexAttr(1));
    for (int64_t size : partType.getShape())
      sizes.push_back(builder.getIndexAttr(size));
    for (auto [index, part] : llvm::enumerate(parts)) {
      offsets[0] = builder.getIndexAttr(int64_t(index) * rows);
      joined = tensor::InsertSliceOp::create(builder, loc, part, joined,
                                             offsets, sizes, strides);
    }
    return joined;
  };
  return {s == 0 ? join(inputs) : Value(),
          s == numStages() - 1 ? join(targets) : Value()};
}

func::FuncOp
PipelineLowering::emitRankProgram(StringRef stepName, int64_t rank,
                                  const std::vector<Action> &program,
                                  int64_t factor) {
  Type i64 = builder.getI64Type();
  std::vector<int64_t> local = placement.stagesOf(rank);
  bool onePerRank = placement.onePerRank();
  std::string name = onePerRank
                         ? (stepName + "_stage" + Twine(local.front())).str()
                         : (stepName + "_rank" + Twine(rank)).str();
  func::FuncOp function = createFunction(
      name, builder.getFunctionType({i64, i64}, {builder.getF32Type()}),
      /*isPublic=*/false);
  if (onePerRank)
    getHeteroDialect(builder.getContext())
        .getStageAttrHelper()
        .setAttr(function, builder.getI64IntegerAttr(local.front()));
  Value step = function.getArgument(0), replica = function.getArgument(1);
  int64_t last = numStages() - 1;
  // One stage per rank (planOf refuses a checkpoint otherwise).
  if (pipeline.getCheckpointAttr())
    emitCheckpoint(local.front(), step);

  // What a micro-batch's forward left for its backward (the stash).
  struct Stashed {
    Value input, target;
    SmallVector<Value> residuals;
  };
  // What the program keeps of each of the rank's stages.
  struct LocalStage {
    StageCode *code = nullptr;
    Type inputType, outputType;
    // The bytes one micro-batch's stash holds: its input, its target on
    // the last stage, and the residuals of an augmented forward.
    int64_t stashBytes = 0;
    std::map<int64_t, Stashed> stash;
    // What a split backward's I task left for its W task, per micro-batch.
    std::map<int64_t, SmallVector<Value>> savedForWeight;
    // The gradient sums, read once the stage's last backward is done.
    SmallVector<Value> gradients;
    int64_t lastBackward = -1;
  };
  std::map<int64_t, LocalStage> states;
  for (int64_t s : local) {
    LocalStage &state = states[s];
    // The gradient sums: globals that the backward tasks add into, zeroed
    // here.
    emitStageFunctions(s, factor);
    state.code = &stages[s].code.at(factor);
    FunctionType forwardType = state.code->forward.getFunctionType();
    state.inputType = forwardType.getInput(0);
    state.outputType = forwardType.getResult(0);
    state.stashBytes = tensorBytes(state.inputType);
    if (s == last)
      state.stashBytes += tensorBytes(forwardType.getInputs().back());
    for (Type residual : state.code->residualTypes())
      state.stashBytes += tensorBytes(residual);
    zeroGradientSums(s);
  }
  for (auto [index, action] : llvm::enumerate(program))
    if (action.kind == Action::Backward ||
        action.kind == Action::BackwardWeight)
      states.at(action.stage).lastBackward = int64_t(index);

  // The values in flight, keyed by stage, payload (activation or gradient)
  // and micro-batch: those a stage takes (received, or handed over by a
  // neighbouring stage of this rank), those it sends, and the receives the
  // program has posted, with their peer stages. A posted receive is
  // emitted right before the task that takes its value: a task waits for
  // its message there, and no earlier.
  using Key = std::tuple<int64_t, bool, int64_t>;
  std::map<Key, Value> inbox, outbox;
  std::map<Key, int64_t> posted;
  // A message's tag: its payload and micro-batch, and which stage of the
  // sending rank sends it.
  auto tagOf = [&](int64_t sender, bool activation, int64_t mb) {
    std::vector<int64_t> senders = placement.stagesOf(placement.rankOf[sender]);
    int64_t position = llvm::find(senders, sender) - senders.begin();
    return builder.getI64IntegerAttr(
        (2 * position + (activation ? 0 : 1)) * microbatches + mb);
  };
  auto take = [&](int64_t s, bool activation, int64_t mb) -> Value {
    Key key{s, activation, mb};
    auto receive = posted.find(key);
    if (receive == posted.end()) {
      Value value = inbox[key];
      inbox.erase(key);
      return value;
    }
    int64_t peer = receive->second;
    posted.erase(receive);
    LocalStage &state = states.at(s);
    return RecvOp::create(
        builder, loc, activation ? state.inputType : state.outputType, grid,
        axes({kStageAxis}), builder.getI64IntegerAttr(placement.rankOf[peer]),
        tagOf(peer, activation, mb));
  };
  // A stage's output (activation) or input gradient: to its neighbour on
  // this rank, or to be sent.
  auto handOver = [&](int64_t s, bool activation, int64_t mb, Value value) {
    int64_t peer = activation ? s + 1 : s - 1;
    if (placement.rankOf[peer] == rank)
      inbox[{peer, activation, mb}] = value;
    else
      outbox[{s, activation, mb}] = value;
  };

  // The micro-batches the program's tasks run: the step's own, or fewer of
  // a variant's larger size.
  int64_t tasks = microbatches / factor;
  auto readSums = [&](int64_t s) {
    for (memref::GlobalOp sum : stages[s].gradientSums)
      states.at(s).gradients.push_back(readGlobal(builder, loc, sum));
  };
  Value loss = f32Constant(0.0);
  int64_t peakStash = 0, peakBytes = 0;
  // Dynamic sync (one stage per rank): a local step and a group average
  // every `syncEvery` backward passes. One that is due waits for the send
  // of its backward's input gradient, so that the previous stage does not
  // wait for the sync.
  int64_t syncEvery = 0, backwards = 0, synced = 0;
  std::optional<int64_t> syncDueAfterSendOf;
  if (dynamicSync())
    syncEvery = sync.getSyncEveryMicrobatches()
                    ? sync.getSyncEveryMicrobatches()
                    : microbatches;
  auto syncIfDue = [&] {
    if (!syncDueAfterSendOf)
      return;
    syncDueAfterSendOf.reset();
    emitLocalStepAndSync(local.front(), backwards - synced);
    synced = backwards;
    if (backwards != microbatches)
      zeroGradientSums(local.front());
  };

  // After a backward's parameter gradients are in their sums: count it for
  // a dynamic sync, or reduce the sums after the stage's last one, so that
  // the reduction overlaps with what the rank still does.
  auto afterBackward = [&](int64_t s, int64_t index, int64_t mb) {
    if (dynamicSync()) {
      ++backwards;
      if (backwards % syncEvery == 0 || index == states.at(s).lastBackward)
        syncDueAfterSendOf = mb;
      return;
    }
    if (index == states.at(s).lastBackward && !lateGradientSync) {
      readSums(s);
      reduceGradients(states.at(s).gradients);
    }
  };
  // The input-gradient task of a split backward on `taskArguments` (the
  // activation, the target or output gradient, the residuals): its input
  // gradient goes to the previous stage; returns what the weight task
  // needs.
  auto emitInputTask = [&](int64_t s, ArrayRef<Value> taskArguments,
                           int64_t mb) {
    StageCode &code = *states.at(s).code;
    auto input = func::CallOp::create(builder, loc, code.backwardInputTask,
                                      taskArguments);
    unsigned inputGradients =
        code.backwardInput.getNumResults() - code.savedCount();
    if (s != 0)
      handOver(s, /*activation=*/false, mb, input.getResult(0));
    return llvm::to_vector_of<Value>(
        input.getResults().drop_front(inputGradients));
  };

  // The weight task of a split backward whose input gradient the program
  // sends next: emitted right after that send.
  std::function<void()> pendingWeight;
  for (auto [index, action] : llvm::enumerate(program)) {
    int64_t mb = action.microbatch, s = action.stage;
    if (action.kind != Action::SendGradient ||
        syncDueAfterSendOf != std::optional<int64_t>(mb))
      syncIfDue();
    LocalStage &state = states.at(s);
    StageCode &code = *state.code;
    switch (action.kind) {
    case Action::RecvActivation:
    case Action::RecvGradient:
      posted[{s, action.kind == Action::RecvActivation, mb}] = action.peer;
      break;
    case Action::SendActivation:
    case Action::SendGradient: {
      bool activation = action.kind == Action::SendActivation;
      Key key{s, activation, mb};
      SendOp::create(builder, loc, grid, axes({kStageAxis}), outbox[key],
                     builder.getI64IntegerAttr(placement.rankOf[action.peer]),
                     tagOf(s, activation, mb));
      outbox.erase(key);
      // A split backward's weight task, once its input gradient is sent.
      if (pendingWeight) {
        std::function<void()> weight = std::move(pendingWeight);
        pendingWeight = nullptr;
        weight();
      }
      if (syncDueAfterSendOf == std::optional<int64_t>(mb))
        syncIfDue();
      break;
    }
    case Action::Forward: {
      Stashed entry;
      if (s == 0 || s == last) {
        auto [input, target] = emitData(s, step, replica, mb, factor);
        if (s == 0)
          entry.input = input;
        if (s == last)
          entry.target = target;
      }
      if (s != 0)
        entry.input = take(s, /*activation=*/true, mb);
      SmallVector<Value> arguments = {entry.input};
      if (s == last)
        arguments.push_back(entry.target);
      auto call =
          func::CallOp::create(builder, loc, code.forwardTask, arguments);
      Value output = call.getResult(0);
      entry.residuals =
          llvm::to_vector_of<Value>(call.getResults().drop_front());
      TaskMarkOp::create(builder, loc, TaskKind::forward,
                         builder.getI64IntegerAttr(mb));
      if (s == last)
        loss = addLoss(loss, output);
      else
        handOver(s, /*activation=*/true, mb, output);
      state.stash[mb] = entry;
      int64_t held = 0, heldBytes = 0;
      for (auto &[t, other] : states) {
        held += other.stash.size();
        int64_t bytes;
        if (llvm::MulOverflow(int64_t(other.stash.size()), other.stashBytes,
                              bytes) ||
            llvm::AddOverflow(heldBytes, bytes, heldBytes))
          heldBytes = std::numeric_limits<int64_t>::max();
      }
      peakStash = std::max(peakStash, held);
      peakBytes = std::max(peakBytes, heldBytes);
      break;
    }
    case Action::BackwardInput: {
      // The input gradient of a split backward as its own task; the stash
      // stays for the weight gradient.
      Stashed &entry = state.stash[mb];
      Value secondArgument =
          s == last ? entry.target : take(s, /*activation=*/false, mb);
      SmallVector<Value> taskArguments = {entry.input, secondArgument};
      llvm::append_range(taskArguments, entry.residuals);
      state.savedForWeight[mb] = emitInputTask(s, taskArguments, mb);
      break;
    }
    case Action::BackwardWeight: {
      Stashed entry = state.stash[mb];
      state.stash.erase(mb);
      SmallVector<Value> arguments = {entry.input};
      if (s == last)
        arguments.push_back(entry.target);
      llvm::append_range(arguments, state.savedForWeight[mb]);
      state.savedForWeight.erase(mb);
      func::CallOp::create(builder, loc, code.backwardWeightTask, arguments);
      TaskMarkOp::create(builder, loc, TaskKind::backward,
                         builder.getI64IntegerAttr(mb));
      afterBackward(s, int64_t(index), mb);
      break;
    }
    case Action::Backward: {
      Stashed entry = state.stash[mb];
      state.stash.erase(mb);
      Value secondArgument =
          s == last ? entry.target : take(s, /*activation=*/false, mb);
      bool eager = eagerGradientSync && hasReplicaAxis && !dynamicSync() &&
                   int64_t(index) == state.lastBackward;
      // The task's arguments: the activation, the target or the output
      // gradient, the residuals.
      SmallVector<Value> taskArguments = {entry.input, secondArgument};
      llvm::append_range(taskArguments, entry.residuals);
      if (code.isSplit()) {
        // The input gradient first, for the previous stage; the weight
        // gradients after its send, when the program sends it next, so
        // that the previous stage does not wait for them.
        SmallVector<Value> saved = emitInputTask(s, taskArguments, mb);
        auto weight = [&, s, entry, saved, eager, mb, index = int64_t(index)] {
          LocalStage &state = states.at(s);
          StageCode &code = *state.code;
          SmallVector<Value> arguments;
          if (eager) {
            arguments = forwardArguments(s, entry.input, readParams(s),
                                         s == last ? entry.target : Value());
            llvm::append_range(arguments, saved);
            emitEagerBackward(s, code.backwardWeight, arguments,
                              state.gradients);
          } else {
            arguments = {entry.input};
            if (s == last)
              arguments.push_back(entry.target);
            llvm::append_range(arguments, saved);
            func::CallOp::create(builder, loc, code.backwardWeightTask,
                                 arguments);
          }
          TaskMarkOp::create(builder, loc, TaskKind::backward,
                             builder.getI64IntegerAttr(mb));
          if (!eager)
            afterBackward(s, index, mb);
        };
        bool sendsNext = index + 1 < program.size() &&
                         program[index + 1].kind == Action::SendGradient &&
                         program[index + 1].stage == s &&
                         program[index + 1].microbatch == mb;
        if (sendsNext)
          pendingWeight = weight;
        else
          weight();
        break;
      }
      if (eager) {
        SmallVector<Value> arguments = forwardArguments(
            s, entry.input, readParams(s), s == last ? entry.target : Value());
        llvm::append_range(arguments, entry.residuals);
        if (s != last)
          arguments.push_back(secondArgument);
        SmallVector<Value> results =
            emitEagerBackward(s, code.backward, arguments, state.gradients);
        TaskMarkOp::create(builder, loc, TaskKind::backward,
                           builder.getI64IntegerAttr(mb));
        if (s != 0)
          handOver(s, /*activation=*/false, mb, results.front());
        break;
      }
      // The parameter gradients go into the sums; what the call returns is
      // the input gradient, and stage 0's goes nowhere.
      auto call =
          func::CallOp::create(builder, loc, code.backwardTask, taskArguments);
      TaskMarkOp::create(builder, loc, TaskKind::backward,
                         builder.getI64IntegerAttr(mb));
      if (s != 0)
        handOver(s, /*activation=*/false, mb, call.getResult(0));
      afterBackward(s, int64_t(index), mb);
      break;
    }
    }
  }
  if (dynamicSync()) {
    syncIfDue();
  } else {
    for (int64_t s : local) {
      if (lateGradientSync) {
        readSums(s);
        reduceGradients(states.at(s).gradients);
      }
      func::CallOp::create(builder, loc, updateFunction(s, tasks),
                           states.at(s).gradients);
    }
  }
  func::ReturnOp::create(builder, loc, loss);
  // The most micro-batches whose forward inputs (and residuals) the
  // program holds at once, over all its stages, and their bytes.
  HeteroDialect &dialect = getHeteroDialect(builder.getContext());
  dialect.getPeakStashAttrHelper().setAttr(
      function, builder.getI64IntegerAttr(peakStash));
  dialect.getPeakStashBytesAttrHelper().setAttr(
      function, builder.getI64IntegerAttr(peakBytes));
  return function;
}

func::FuncOp PipelineLowering::emitStep(StringRef name, const StepPlan &plan,
                                        StringAttr scheduleName) {
  SmallVector<func::FuncOp> rankFunctions;
  for (int64_t r = placement.ranks - 1; r >= 0; --r)
    rankFunctions.push_back(
        emitRankProgram(name, r, plan.programs[r], plan.factor));
  std::reverse(rankFunctions.begin(), rankFunctions.end());

  Type i64 = builder.getI64Type(), f32 = builder.getF32Type();
  func::FuncOp step =
      createFunction(name, builder.getFunctionType({i64}, {f32}),
                     /*isPublic=*/true);
  // Every rank of this grid calls the step.
  HeteroDialect &dialect = getHeteroDialect(builder.getContext());
  dialect.getGridAttrHelper().setAttr(step, grid);
  if (scheduleName)
    dialect.getScheduleAttrHelper().setAttr(
        step, FlatSymbolRefAttr::get(scheduleName));
  Type index = builder.getIndexType();
  SmallVector<int16_t> gridAxes = {kStageAxis};
  if (hasReplicaAxis)
    gridAxes.push_back(kReplicaAxis);
  auto coordinates = shard::ProcessMultiIndexOp::create(
      builder, loc, SmallVector<Type>(gridAxes.size(), index), grid,
      axes(gridAxes));
  Value replica = hasReplicaAxis
                      ? arith::IndexCastOp::create(builder, loc, i64,
                                                   coordinates->getResult(1))
                            .getResult()
                      : i64Constant(0);
  SmallVector<int64_t> cases;
  for (int64_t r = 0; r < placement.ranks; ++r)
    cases.push_back(r);
  auto dispatch = scf::IndexSwitchOp::create(builder, loc, TypeRange{f32},
                                             coordinates->getResult(0), cases,
                                             cases.size());
  Value stepArgument = step.getArgument(0);
  for (int64_t r = 0; r < placement.ranks; ++r) {
    builder.setInsertionPointToStart(
        &dispatch.getCaseRegions()[r].emplaceBlock());
    Value localLoss = func::CallOp::create(builder, loc, rankFunctions[r],
                                           ValueRange{stepArgument, replica})
                          .getResult(0);
    scf::YieldOp::create(builder, loc, localLoss);
  }
  // Every rank of the grid has a stage; the default is never taken.
  builder.setInsertionPointToStart(&dispatch.getDefaultRegion().emplaceBlock());
  scf::YieldOp::create(builder, loc, f32Constant(0.0));

  // The mean loss on every rank: the last stage's sums, reduced over the
  // whole grid; with dynamic sync, the pipeline's own, reduced over its
  // stages.
  builder.setInsertionPointAfter(dispatch);
  auto scalar = RankedTensorType::get({}, f32);
  Value local = tensor::FromElementsOp::create(builder, loc, scalar,
                                               dispatch.getResult(0));
  // Each loss is the mean of one task's micro-batch.
  SmallVector<int16_t> lossAxes = gridAxes;
  int64_t lossCount = microbatches / plan.factor * replicas;
  if (dynamicSync()) {
    lossAxes = {kStageAxis};
    lossCount = microbatches;
  }
  Value total = AllReduceOp::create(builder, loc, local, grid, lossAxes);
  Value sum = tensor::ExtractOp::create(builder, loc, total, ValueRange{});
  Value mean =
      arith::DivFOp::create(builder, loc, sum, f32Constant(double(lossCount)));
  func::ReturnOp::create(builder, loc, mean);
  return step;
}

void PipelineLowering::emitPlanTable(PlanSetOp planSet,
                                     MutableArrayRef<func::FuncOp> steps,
                                     MutableArrayRef<ScheduleOp> schedules,
                                     ArrayRef<StepPlan> plans) {
  Type i64 = builder.getI64Type(), f32 = builder.getF32Type();
  func::FuncOp step = createFunction((pipeline.getSymName() + "_step").str(),
                                     builder.getFunctionType({i64}, {f32}),
                                     /*isPublic=*/true);
  HeteroDialect &dialect = getHeteroDialect(builder.getContext());
  dialect.getGridAttrHelper().setAttr(step, grid);
  SmallVector<Attribute> table;
  func::FuncOp defaultStep;
  for (auto [plan, schedule, stepPlan] : llvm::zip(steps, schedules, plans)) {
    if (schedule.getSymName() == planSet.getDefaultPlan())
      defaultStep = plan;
    SmallVector<NamedAttribute> entry = {
        builder.getNamedAttr("step",
                             FlatSymbolRefAttr::get(plan.getSymNameAttr())),
        builder.getNamedAttr("schedule",
                             FlatSymbolRefAttr::get(schedule.getSymNameAttr())),
        builder.getNamedAttr("group_size", schedule.getGroupSizeAttr()),
        builder.getNamedAttr(
            "microbatches",
            builder.getI64IntegerAttr(schedule.getMicrobatchCount(pipeline))),
        builder.getNamedAttr("tasks",
                             builder.getI64IntegerAttr(stepPlan.tasks))};
    if (IntegerAttr size = schedule.getMicrobatchSizeAttr())
      entry.push_back(builder.getNamedAttr("microbatch_size", size));
    table.push_back(builder.getDictionaryAttr(entry));
  }
  dialect.getPlanTableAttrHelper().setAttr(step, builder.getArrayAttr(table));
  dialect.getStagesAttrHelper().setAttr(step,
                                        builder.getI64IntegerAttr(numStages()));
  Value loss = func::CallOp::create(builder, loc, defaultStep,
                                    ValueRange{step.getArgument(0)})
                   .getResult(0);
  func::ReturnOp::create(builder, loc, loss);
}

void PipelineLowering::emitReference() {
  Type i64 = builder.getI64Type(), f32 = builder.getF32Type();
  func::FuncOp function =
      createFunction((pipeline.getSymName() + "_step_reference").str(),
                     builder.getFunctionType({i64}, {f32}), /*isPublic=*/true);
  Value step = function.getArgument(0);
  int64_t last = numStages() - 1;

  // Loop-carried: the loss sum, then every parameter's gradient sum.
  SmallVector<SmallVector<Value>> params(numStages());
  SmallVector<Value> initial = {f32Constant(0.0)};
  for (int64_t s = 0; s <= last; ++s)
    for (memref::GlobalOp param : stages[s].params) {
      Value current = readGlobal(builder, loc, param);
      params[s].push_back(current);
      auto type = cast<RankedTensorType>(current.getType());
      Value empty = tensor::EmptyOp::create(builder, loc, type.getShape(),
                                            type.getElementType());
      initial.push_back(linalg::FillOp::create(builder, loc,
                                               ValueRange{f32Constant(0.0)},
                                               ValueRange{empty})
                            .getResult(0));
    }

  // One micro-batch of one replica through every stage and back.
  auto body = [&](Value replica, Value microbatch, ValueRange carried) {
    SmallVector<Value> next(carried.begin(), carried.end());
    Value replica64 = arith::IndexCastOp::create(builder, loc, i64, replica);
    Value microbatch64 =
        arith::IndexCastOp::create(builder, loc, i64, microbatch);
    auto batch = func::CallOp::create(
        builder, loc, data, ValueRange{step, replica64, microbatch64});
    Value target = batch.getResult(1);
    SmallVector<SmallVector<Value>> inputs(numStages());
    Value activation = batch.getResult(0);
    SmallVector<SmallVector<Value>> residuals(numStages());
    for (int64_t s = 0; s <= last; ++s) {
      inputs[s] = forwardArguments(s, activation, params[s], target);
      auto call = func::CallOp::create(
          builder, loc, stages[s].own().steppedForward(), inputs[s]);
      activation = call.getResult(0);
      residuals[s] = llvm::to_vector_of<Value>(call.getResults().drop_front());
    }
    next[0] = addLoss(next[0], activation);
    Value outputGradient;
    size_t offset = 1;
    SmallVector<size_t> offsets(numStages());
    for (int64_t s = 0; s <= last; ++s) {
      offsets[s] = offset;
      offset += stages[s].params.size();
    }
    for (int64_t s = last; s >= 0; --s) {
      StageCode &code = stages[s].own();
      SmallVector<Value> arguments = inputs[s];
      llvm::append_range(arguments, residuals[s]);
      if (s != last)
        arguments.push_back(outputGradient);
      size_t count = stages[s].params.size();
      ValueRange gradients;
      Value inputGradient;
      if (code.isSplit()) {
        auto input =
            func::CallOp::create(builder, loc, code.backwardInput, arguments);
        unsigned saved = code.savedCount();
        SmallVector<Value> weightArguments = inputs[s];
        llvm::append_range(weightArguments,
                           input.getResults().take_back(saved));
        gradients = func::CallOp::create(builder, loc, code.backwardWeight,
                                         weightArguments)
                        .getResults();
        if (input.getNumResults() > saved)
          inputGradient = input.getResult(0);
      } else {
        auto call =
            func::CallOp::create(builder, loc, code.backward, arguments);
        gradients = call.getResults().take_back(count);
        if (call.getNumResults() > count)
          inputGradient = call.getResult(0);
      }
      for (auto [k, gradient] : llvm::enumerate(gradients))
        next[offsets[s] + k] = accumulate(next[offsets[s] + k], gradient);
      if (s != 0)
        outputGradient = inputGradient;
    }
    return next;
  };

  Value zero = indexConstant(0), one = indexConstant(1);
  auto replicaLoop = scf::ForOp::create(
      builder, loc, zero, indexConstant(replicas), one, initial,
      [&](OpBuilder &outer, Location, Value replica, ValueRange carried) {
        auto microbatchLoop = scf::ForOp::create(
            outer, loc, zero, indexConstant(microbatches), one, carried,
            [&](OpBuilder &inner, Location, Value microbatch,
                ValueRange innerCarried) {
              OpBuilder::InsertionGuard guard(builder);
              builder.setInsertionPoint(inner.getInsertionBlock(),
                                        inner.getInsertionPoint());
              SmallVector<Value> next = body(replica, microbatch, innerCarried);
              scf::YieldOp::create(builder, loc, next);
            });
        scf::YieldOp::create(outer, loc, microbatchLoop.getResults());
      });

  optimizer->beginStep(builder, loc);
  size_t offset = 1;
  for (int64_t s = 0; s <= last; ++s) {
    ValueRange gradients =
        replicaLoop.getResults().slice(offset, stages[s].params.size());
    offset += stages[s].params.size();
    emitUpdates(s, SmallVector<Value>(gradients), microbatches * replicas);
  }
  Value mean =
      arith::DivFOp::create(builder, loc, replicaLoop.getResult(0),
                            f32Constant(double(microbatches * replicas)));
  func::ReturnOp::create(builder, loc, mean);
}

/// The schedule `name` of `pipeline` (its only one when `name` is empty),
/// null when it has none, or failure after a diagnostic.
FailureOr<ScheduleOp> chooseSchedule(PipelineOp pipeline, ModuleOp module,
                                     StringRef name) {
  SmallVector<ScheduleOp> schedules;
  for (auto schedule : module.getOps<ScheduleOp>())
    if (schedule.getPipeline() == pipeline.getSymName())
      schedules.push_back(schedule);
  if (!name.empty()) {
    for (ScheduleOp schedule : schedules)
      if (schedule.getSymName() == name)
        return schedule;
    return pipeline.emitOpError()
           << "has no schedule '" << name << "' (hetero-lower-pipeline "
           << "schedule=" << name << ")";
  }
  if (schedules.size() > 1) {
    InFlightDiagnostic diagnostic =
        pipeline.emitOpError()
        << "has " << schedules.size()
        << " schedules; choose one with hetero-lower-pipeline{schedule=...}:";
    for (ScheduleOp schedule : schedules)
      diagnostic << " " << schedule.getSymName();
    return diagnostic;
  }
  return schedules.empty() ? ScheduleOp() : schedules.front();
}

struct HeteroLowerPipelinePass
    : public hetero::impl::HeteroLowerPipelineBase<HeteroLowerPipelinePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    // Pipelines without the stage ABI are left to the analyses.
    SmallVector<PipelineOp> pipelines;
    for (auto pipeline : module.getOps<PipelineOp>()) {
      if (pipeline.isExecutable())
        pipelines.push_back(pipeline);
      else
        pipeline.emitWarning()
            << "is not lowered to a training step: it names no data "
               "function and optimizer (see the stage ABI in "
               "docs/execution.md)";
    }
    if (lateGradientSync && eagerGradientSync) {
      module.emitError() << "hetero-lower-pipeline: late-gradient-sync and "
                            "eager-gradient-sync exclude each other (after "
                            "the stage's last send, or where each gradient "
                            "is computed)";
      return signalPassFailure();
    }
    if (!scheduleName.empty() && pipelines.size() > 1) {
      module.emitError() << "hetero-lower-pipeline: schedule=" << scheduleName
                         << " names one schedule, but the module has "
                         << pipelines.size() << " executable pipelines";
      return signalPassFailure();
    }
    for (PipelineOp pipeline : pipelines) {
      PlanSetOp planSet;
      for (auto candidate : module.getOps<PlanSetOp>())
        if (candidate.getPipeline() == pipeline.getSymName())
          planSet = candidate;
      FailureOr<ScheduleOp> schedule;
      if (planSet && scheduleName.empty())
        schedule = ScheduleOp();
      else
        schedule = chooseSchedule(pipeline, module, scheduleName);
      if (failed(schedule))
        return signalPassFailure();
      PipelineLowering lowering(pipeline, symbols, lateGradientSync,
                                eagerGradientSync);
      if (failed(lowering.prepare()))
        return signalPassFailure();
      if (reference)
        lowering.emitReference();
      std::string step = (pipeline.getSymName() + "_step").str();
      if (!planSet || !scheduleName.empty()) {
        FailureOr<StepPlan> plan = planOf(pipeline, *schedule, lowering);
        if (failed(plan))
          return signalPassFailure();
        lowering.emitStep(
            step, *plan, *schedule ? schedule->getSymNameAttr() : StringAttr());
        continue;
      }
      // One step per plan, and the table hetero-run --adaptive picks from.
      if (!pipeline.getStagePlacement().onePerRank()) {
        planSet.emitOpError()
            << "offers plans for pipeline '" << pipeline.getSymName()
            << "', which places several stages on a rank; hetero-run "
               "--adaptive re-plans one stage per rank, so lower one of its "
               "schedules (hetero-lower-pipeline{schedule=...})";
        return signalPassFailure();
      }
      SmallVector<func::FuncOp> steps;
      SmallVector<ScheduleOp> schedules;
      SmallVector<StepPlan> plans;
      for (Attribute plan : planSet.getPlans()) {
        auto scheduleOp = symbols.lookup<ScheduleOp>(
            cast<FlatSymbolRefAttr>(plan).getValue());
        FailureOr<StepPlan> stepPlan = planOf(pipeline, scheduleOp, lowering);
        if (failed(stepPlan))
          return signalPassFailure();
        steps.push_back(
            lowering.emitStep((step + "_" + scheduleOp.getSymName()).str(),
                              *stepPlan, scheduleOp.getSymNameAttr()));
        schedules.push_back(scheduleOp);
        plans.push_back(std::move(*stepPlan));
      }
      lowering.emitPlanTable(planSet, steps, schedules, plans);
    }
  }

  /// How the step runs `schedule` (when it is null: 1F1B, or interleaved
  /// 1F1B or looped BFS on several stages per rank): its stage
  /// programs, verified, on the stage functions of the largest micro-batch
  /// that divides the schedule's; failure after a diagnostic.
  FailureOr<StepPlan> planOf(PipelineOp pipeline, ScheduleOp schedule,
                             const PipelineLowering &lowering) {
    StepPlan plan;
    if (!schedule) {
      // Several stages per rank: interleaved 1F1B where the placement is
      // its loop, else looped BFS, which any placement runs.
      schedule::Placement placement = pipeline.getStagePlacement();
      if (!placement.onePerRank()) {
        std::string error;
        plan.programs = schedule::familyPrograms(
            schedule::Family::Interleaved, placement,
            pipeline.getNumMicrobatches(), /*groupSize=*/1, error);
        if (!error.empty()) {
          error.clear();
          plan.programs = schedule::familyPrograms(
              schedule::Family::LoopedBfs, placement,
              pipeline.getNumMicrobatches(), /*groupSize=*/1, error);
        }
        return plan;
      }
      plan.programs = schedule::kfkbPrograms(pipeline.getNumStages(),
                                             pipeline.getNumMicrobatches(),
                                             /*groupSize=*/1);
      return plan;
    }
    // The stage functions take the pipeline's micro-batch, and variants n
    // times as many samples. A candidate of j times larger micro-batches
    // (M / j of them) runs each as j / n tasks of the largest variant n
    // dividing j (j tasks of the pipeline's size without one); a smaller
    // micro-batch cannot run.
    int64_t count = schedule.getMicrobatchCount(pipeline);
    int64_t pipelineCount = pipeline.getNumMicrobatches();
    if (count > pipelineCount || pipelineCount % count != 0)
      return schedule.emitOpError()
             << "runs " << count << " micro-batches, but the stage "
             << "functions of '" << pipeline.getSymName() << "' take the "
             << pipelineCount
             << " micro-batches of the pipeline; a candidate's micro-batch "
                "must hold a whole number of the pipeline's, so its count "
                "must divide "
             << pipelineCount;
    int64_t factor = pipelineCount / count;
    StagePrograms stagePrograms = getStagePrograms(schedule, pipeline);
    if (failed(verifyStagePrograms(schedule, pipeline, stagePrograms)))
      return failure();
    for (const std::vector<Action> &program : stagePrograms.actions)
      for (const Action &action : program)
        if ((action.kind == Action::BackwardInput ||
             action.kind == Action::BackwardWeight) &&
            !pipeline.getStage(action.stage).getBackwardInputAttr())
          return schedule.emitOpError()
                 << "runs the input and weight gradients of stage "
                 << action.stage
                 << " as separate tasks, but the stage has no split "
                    "backward; run hetero-derive-backward{split=true} first";
    // SDPipe's local steps count the pipeline's micro-batches.
    plan.factor = pipeline.getSyncAttr() && pipeline.getSyncAttr().isDynamic()
                      ? 1
                      : lowering.largestVariantDividing(factor);
    plan.tasks = factor / plan.factor;
    plan.programs =
        schedule::splitMicrobatches(stagePrograms.actions, plan.tasks);
    return plan;
  }
};

} // namespace
