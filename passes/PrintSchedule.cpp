//===- PrintSchedule.cpp - print the compute order of schedules -----------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "PassOutput.h"
#include "hetero/Dialect/Schedule.h"
#include "hetero/Passes/Passes.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"

namespace hetero {
#define GEN_PASS_DEF_HETEROPRINTSCHEDULE
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;
using namespace hetero;

namespace {

struct HeteroPrintSchedulePass
    : public hetero::impl::HeteroPrintScheduleBase<HeteroPrintSchedulePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto file = openPassOutput(module, outputFile);
    if (!file)
      return signalPassFailure();
    SymbolTable symbols(module);
    for (auto scheduleOp : module.getOps<ScheduleOp>()) {
      auto pipeline = symbols.lookup<PipelineOp>(scheduleOp.getPipeline());
      int64_t stages = pipeline ? pipeline.getNumStages() : 0;
      StagePrograms programs = getStagePrograms(scheduleOp, stages);
      for (int64_t s = 0; s < stages; ++s) {
        std::vector<schedule::Task> tasks;
        for (const schedule::Action &action : programs.actions[s])
          if (action.kind == schedule::Action::Forward ||
              action.kind == schedule::Action::Backward)
            tasks.push_back({action.kind == schedule::Action::Forward
                                 ? schedule::Task::Forward
                                 : schedule::Task::Backward,
                             action.microbatch});
        file->os() << "stage " << s << ": " << schedule::formatProgram(tasks)
                   << "\n";
      }
    }
    file->os().flush();
    file->keep();
    markAllAnalysesPreserved();
  }
};

} // namespace
