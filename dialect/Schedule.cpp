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
                                       int64_t numStages) {
  StagePrograms programs;
  programs.actions.resize(numStages);
  programs.ops.resize(numStages);
  for (auto program : scheduleOp.getBody().getOps<StageProgramOp>()) {
    int64_t stage = program.getStageId();
    if (stage < 0 || stage >= numStages)
      continue;
    for (auto task : program.getBody().getOps<TaskOpInterface>()) {
      schedule::Action action = task.getAction();
      programs.actions[stage].push_back(action);
      programs.ops[stage].push_back(task);
    }
  }
  return programs;
}

LogicalResult hetero::verifyStagePrograms(ScheduleOp scheduleOp,
                                          PipelineOp pipeline,
                                          const StagePrograms &programs,
                                          int64_t memoryCap) {
  std::vector<schedule::Problem> problems = schedule::verifyPrograms(
      programs.actions, scheduleOp.getMicrobatchCount(pipeline), memoryCap);
  // A schedule with many problems of one kind (every task of a stage
  // missing, say) gets the first few and a count, not one line each.
  schedule::ProblemDigest digest = schedule::digestProblems(problems);
  for (size_t i = 0; i < digest.shown.size(); ++i) {
    const schedule::Problem &problem = digest.shown[i];
    Operation *at = scheduleOp;
    if (problem.action >= 0)
      at = programs.ops[problem.stage][problem.action];
    else
      for (auto program : scheduleOp.getBody().getOps<StageProgramOp>())
        if (program.getStageId() == problem.stage)
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

/// Appends the task ops of `actions` to the body of `program`.
static void buildStageProgram(OpBuilder &builder, StageProgramOp program,
                              const std::vector<Action> &actions) {
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(&program.getBody().front());
  Location loc = program.getLoc();
  for (const Action &action : actions) {
    switch (action.kind) {
    case Action::Forward:
      FwdOp::create(builder, loc, action.microbatch);
      break;
    case Action::Backward:
      BwdOp::create(builder, loc, action.microbatch);
      break;
    case Action::SendActivation:
    case Action::SendGradient:
      SendTaskOp::create(builder, loc,
                         action.kind == Action::SendActivation
                             ? Payload::activation
                             : Payload::gradient,
                         action.microbatch, action.peer);
      break;
    case Action::RecvActivation:
    case Action::RecvGradient:
      RecvTaskOp::create(builder, loc,
                         action.kind == Action::RecvActivation
                             ? Payload::activation
                             : Payload::gradient,
                         action.microbatch, action.peer);
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
  for (size_t stage = 0; stage < programs.size(); ++stage) {
    auto program = StageProgramOp::create(builder, loc, stage);
    program.getBody().emplaceBlock();
    buildStageProgram(builder, program, programs[stage]);
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
