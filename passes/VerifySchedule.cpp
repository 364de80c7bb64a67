//===- VerifySchedule.cpp - prove schedules sound -------------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Dialect/Schedule.h"
#include "hetero/Passes/Passes.h"

#include "mlir/IR/SymbolTable.h"

namespace hetero {
#define GEN_PASS_DEF_HETEROVERIFYSCHEDULE
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;
using namespace hetero;

namespace {

struct HeteroVerifySchedulePass
    : public hetero::impl::HeteroVerifyScheduleBase<HeteroVerifySchedulePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    bool sound = true;
    for (auto scheduleOp : module.getOps<ScheduleOp>()) {
      // The op verifier has resolved the pipeline and the stage ids.
      auto pipeline = symbols.lookup<PipelineOp>(scheduleOp.getPipeline());
      if (!pipeline)
        continue;
      StagePrograms programs = getStagePrograms(scheduleOp, pipeline);
      if (failed(
              verifyStagePrograms(scheduleOp, pipeline, programs, memoryCap)))
        sound = false;
    }
    if (!sound)
      return signalPassFailure();
    markAllAnalysesPreserved();
  }
};

} // namespace
