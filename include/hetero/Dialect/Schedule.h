//===- Schedule.h - hetero.schedule <-> stage programs ----------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Converts between the schedule ops of the dialect and the MLIR-free stage
// programs of hetero/Schedule/Kfkb.h, so that passes use the library's
// builder and verifier.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_DIALECT_SCHEDULE_H
#define HETERO_DIALECT_SCHEDULE_H

#include "hetero/Dialect/Hetero.h"
#include "hetero/Schedule/Kfkb.h"

#include "mlir/IR/Builders.h"

namespace hetero {

/// The programs of `schedule`, indexed by rank, and the task ops of each
/// program in the same order; every action names its stage (a task
/// without one runs its rank's one stage). Ranks without a program stay
/// empty.
struct StagePrograms {
  std::vector<std::vector<schedule::Action>> actions;
  std::vector<std::vector<mlir::Operation *>> ops;
  schedule::Placement placement;
};
StagePrograms getStagePrograms(ScheduleOp schedule, PipelineOp pipeline);

/// Checks `programs` (those of `schedule`) with schedule::verifyPrograms and
/// reports each problem as an error at the offending task op, or at the
/// stage program for a problem of the stage as a whole.
mlir::LogicalResult verifyStagePrograms(ScheduleOp schedule,
                                        PipelineOp pipeline,
                                        const StagePrograms &programs,
                                        int64_t memoryCap = 0);

/// Adds `hetero.schedule @name for @pipeline` right after the pipeline, with
/// one stage program per entry (rank) of `programs`, whose tasks name their
/// stage when the pipeline places several on a rank (the name is made unique in
/// `symbols` if it is taken). A candidate of another micro-batch size states
/// it and its micro-batch count.
ScheduleOp
createSchedule(mlir::SymbolTable &symbols, PipelineOp pipeline,
               llvm::StringRef name, int64_t groupSize,
               const std::vector<std::vector<schedule::Action>> &programs,
               std::optional<int64_t> microbatchSize = std::nullopt,
               std::optional<int64_t> microbatches = std::nullopt);

/// Adds `hetero.plan_set @<pipeline>_plans` of the schedules `plans` (flat
/// symbol references, in plan order) after the last of them; the first is
/// the default.
PlanSetOp createPlanSet(mlir::SymbolTable &symbols, PipelineOp pipeline,
                        llvm::ArrayRef<mlir::Attribute> plans);

} // namespace hetero

#endif // HETERO_DIALECT_SCHEDULE_H
