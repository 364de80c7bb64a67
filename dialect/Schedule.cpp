//===- Schedule.cpp - hetero.schedule <-> stage programs ------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Dialect/Schedule.h"

using namespace mlir;
using namespace hetero;
using schedule::Action;

StagePrograms hetero::getStagePrograms(ScheduleOp scheduleOp,
                                       PipelineOp pipeline) {
  StagePrograms programs;
  programs.placement = pipeline.getStagePlacement();
  int64_t ranks = programs.placement.ranks;
  programs.actions.resize(ranks);
  programs.ops.resize(ranks);
  for (auto program : scheduleOp.getBody().getOps<StageProgramOp>()) {
    int64_t rank = program.getStageId();
    if (rank < 0 || rank >= ranks)
      continue;
    std::vector<int64_t> local = programs.placement.stagesOf(rank);
    for (auto task : program.getBody().getOps<TaskOpInterface>()) {
      schedule::Action action = task.getAction();
      // A task without a stage runs the rank's one stage.
      if (action.stage < 0 && local.size() == 1)
        action.stage = local.front();
      programs.actions[rank].push_back(action);
      programs.ops[rank].push_back(task);
    }
  }
  return programs;
}

LogicalResult hetero::verifyStagePrograms(ScheduleOp scheduleOp,
                                          PipelineOp pipeline,
                                          const StagePrograms &programs,
                                          int64_t memoryCap) {
  std::vector<schedule::Problem> problems = schedule::verifyPrograms(
      programs.actions, programs.placement,
      scheduleOp.getMicrobatchCount(pipeline), memoryCap);
  // A schedule with many problems of one kind (every task of a stage
  // missing, say) gets the first few and a count, not one line each.
  schedule::ProblemDigest digest = schedule::digestProblems(problems);
  for (size_t i = 0; i < digest.shown.size(); ++i) {
    const schedule::Problem &problem = digest.shown[i];
    Operation *at = scheduleOp;
    if (problem.action >= 0)
      at = programs.ops[problem.rank][problem.action];
    else
      for (auto program : scheduleOp.getBody().getOps<StageProgramOp>())
        if (program.getStageId() == problem.rank)
          at = program;
    InFlightDiagnostic diagnostic = at->emitError()
                                    << "schedule '" << scheduleOp.getSymName()
                                    << "': " << problem.message;
    if (digest.more[i])
      diagnostic.attachNote()
          << digest.more[i] << " more problems of this kind not shown";
  }
  return success(problems.empty());
}

/// Appends the task ops of `actions` to the body of `program`; they name
/// their stage when `named`.
static void buildStageProgram(OpBuilder &builder, StageProgramOp program,
                              const std::vector<Action> &actions, bool named) {
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(&program.getBody().front());
  Location loc = program.getLoc();
  for (const Action &action : actions) {
    IntegerAttr stage =
        named ? builder.getI64IntegerAttr(action.stage) : IntegerAttr();
    IntegerAttr microbatch = builder.getI64IntegerAttr(action.microbatch);
    IntegerAttr peer = builder.getI64IntegerAttr(action.peer);
    switch (action.kind) {
    case Action::Forward:
      FwdOp::create(builder, loc, microbatch, stage);
      break;
    case Action::Backward:
      BwdOp::create(builder, loc, microbatch, stage);
      break;
    case Action::BackwardInput:
      BwdInputOp::create(builder, loc, microbatch, stage);
      break;
    case Action::BackwardWeight:
      BwdWeightOp::create(builder, loc, microbatch, stage);
      break;
    case Action::SendActivation:
    case Action::SendGradient:
      SendTaskOp::create(builder, loc,
                         PayloadAttr::get(builder.getContext(),
                                          action.kind == Action::SendActivation
                                              ? Payload::activation
                                              : Payload::gradient),
                         microbatch, peer, stage);
      break;
    case Action::RecvActivation:
    case Action::RecvGradient:
      RecvTaskOp::create(builder, loc,
                         PayloadAttr::get(builder.getContext(),
                                          action.kind == Action::RecvActivation
                                              ? Payload::activation
                                              : Payload::gradient),
                         microbatch, peer, stage);
      break;
    }
  }
}

ScheduleOp
hetero::createSchedule(SymbolTable &symbols, PipelineOp pipeline,
                       StringRef name, int64_t groupSize,
                       const std::vector<std::vector<Action>> &programs,
                       std::optional<int64_t> microbatchSize,
                       std::optional<int64_t> microbatches) {
  OpBuilder builder(pipeline);
  builder.setInsertionPointAfter(pipeline);
  Location loc = pipeline.getLoc();
  auto scheduleOp = ScheduleOp::create(
      builder, loc, builder.getStringAttr(name),
      FlatSymbolRefAttr::get(pipeline.getSymNameAttr()),
      builder.getI64IntegerAttr(groupSize),
      microbatchSize ? builder.getI64IntegerAttr(*microbatchSize)
                     : IntegerAttr(),
      microbatches ? builder.getI64IntegerAttr(*microbatches) : IntegerAttr());
  scheduleOp.getBody().emplaceBlock();
  symbols.insert(scheduleOp);
  builder.setInsertionPointToEnd(&scheduleOp.getBody().front());
  bool named = !pipeline.getStagePlacement().onePerRank();
  for (size_t rank = 0; rank < programs.size(); ++rank) {
    auto program = StageProgramOp::create(builder, loc, rank);
    program.getBody().emplaceBlock();
    buildStageProgram(builder, program, programs[rank], named);
  }
  return scheduleOp;
}

PlanSetOp hetero::createPlanSet(SymbolTable &symbols, PipelineOp pipeline,
                                ArrayRef<Attribute> plans) {
  OpBuilder builder(pipeline);
  builder.setInsertionPointAfter(
      symbols.lookup(cast<FlatSymbolRefAttr>(plans.back()).getValue()));
  auto planSet = PlanSetOp::create(
      builder, pipeline.getLoc(),
      builder.getStringAttr(pipeline.getSymName() + "_plans"),
      FlatSymbolRefAttr::get(pipeline.getSymNameAttr()),
      builder.getArrayAttr(plans), cast<FlatSymbolRefAttr>(plans.front()));
  symbols.insert(planSet);
  return planSet;
}
