//===- ExportSchedule.cpp - schedules as torch.distributed CSV ------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "PassOutput.h"
#include "hetero/Dialect/Schedule.h"
#include "hetero/Passes/Passes.h"
#include "hetero/Schedule/TorchCsv.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"

namespace hetero {
#define GEN_PASS_DEF_HETEROEXPORTSCHEDULE
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;
using namespace hetero;

namespace {

struct HeteroExportSchedulePass
    : public hetero::impl::HeteroExportScheduleBase<HeteroExportSchedulePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<ScheduleOp> candidates;
    for (auto scheduleOp : module.getOps<ScheduleOp>())
      if (scheduleName.empty() || scheduleOp.getSymName() == scheduleName)
        candidates.push_back(scheduleOp);
    if (candidates.size() != 1) {
      module.emitError() << "hetero-export-schedule: "
                         << (candidates.empty() ? "no" : "more than one")
                         << " hetero.schedule"
                         << (scheduleName.empty()
                                 ? std::string(" in the module")
                                 : " named '" + scheduleName + "'")
                         << "; name one with schedule=<name>";
      return signalPassFailure();
    }
    ScheduleOp scheduleOp = candidates.front();
    auto pipeline = SymbolTable::lookupNearestSymbolFrom<PipelineOp>(
        scheduleOp, scheduleOp.getPipelineAttr());
    StagePrograms programs = getStagePrograms(scheduleOp, pipeline);
    auto file = openPassOutput(module, outputFile);
    if (!file)
      return signalPassFailure();
    file->os() << schedule::exportTorchCsv(programs.actions);
    file->os().flush();
    file->keep();
    markAllAnalysesPreserved();
  }
};

} // namespace
