//===- ImportSchedule.cpp - torch.distributed CSV schedules ---------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Dialect/Schedule.h"
#include "hetero/Passes/Passes.h"
#include "hetero/Schedule/TorchCsv.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"

namespace hetero {
#define GEN_PASS_DEF_HETEROIMPORTSCHEDULE
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;
using namespace hetero;

namespace {

struct HeteroImportSchedulePass
    : public hetero::impl::HeteroImportScheduleBase<HeteroImportSchedulePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fail = [&](const Twine &message) {
      module.emitError() << "hetero-import-schedule: " << message;
      signalPassFailure();
    };
    SmallVector<PipelineOp> pipelines;
    for (auto pipeline : module.getOps<PipelineOp>())
      if (pipelineName.empty() || pipeline.getSymName() == pipelineName)
        pipelines.push_back(pipeline);
    if (pipelines.size() != 1)
      return fail(Twine(pipelines.empty() ? "no" : "more than one") +
                  " hetero.pipeline to schedule; name one with pipeline=");
    PipelineOp pipeline = pipelines.front();
    std::string errorMessage;
    auto input = openInputFile(inputFile, &errorMessage);
    if (!input)
      return fail("cannot read '" + inputFile + "': " + errorMessage);
    schedule::ImportedSchedule imported = schedule::importTorchCsv(
        input->getBuffer().str(), pipeline.getNumStages(),
        pipeline.getNumMicrobatches());
    schedule::Placement placement = pipeline.getStagePlacement();
    if (imported.rows && imported.rows != placement.ranks)
      return fail(inputFile + " has " + Twine(imported.rows) +
                  " rows (ranks), but pipeline '" + pipeline.getSymName() +
                  "' runs on " + Twine(placement.ranks) + " ranks");
    if (!imported.error.empty())
      return fail(inputFile + ": " + imported.error);
    if (imported.rankOf != placement.rankOf)
      return fail(inputFile + " places the stages on ranks " +
                  schedule::formatPlacement(imported.rankOf) +
                  ", but pipeline '" + pipeline.getSymName() +
                  "' places them on " +
                  schedule::formatPlacement(placement.rankOf));
    std::vector<schedule::Problem> problems = schedule::verifyPrograms(
        imported.programs, placement, pipeline.getNumMicrobatches());
    if (!problems.empty())
      return fail(inputFile + ": " + problems.front().message);

    SymbolTable symbols(module);
    createSchedule(symbols, pipeline, scheduleName, groupSize,
                   imported.programs);
  }
};

} // namespace
