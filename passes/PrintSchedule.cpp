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
      if (!pipeline)
        continue;
      StagePrograms programs = getStagePrograms(scheduleOp, pipeline);
      // One stage per rank: "stage s: F0 F1 B0 ..."; several: "rank r: 0F0
      // 2F0 2I0 ..." with each task's stage.
      bool onePerRank = programs.placement.onePerRank();
      for (auto [r, actions] : llvm::enumerate(programs.actions))
        file->os() << (onePerRank ? "stage " : "rank ") << r << ": "
                   << schedule::formatProgram(schedule::computeTasks(actions),
                                              !onePerRank)
                   << "\n";
    }
    file->os().flush();
    file->keep();
    markAllAnalysesPreserved();
  }
};

} // namespace
