//===- KfkbSchedule.cpp - build kFkB schedules ----------------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Dialect/Schedule.h"
#include "hetero/Passes/Passes.h"

#include "mlir/IR/SymbolTable.h"

namespace hetero {
#define GEN_PASS_DEF_HETEROKFKBSCHEDULE
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;
using namespace hetero;

namespace {

struct HeteroKfkbSchedulePass
    : public hetero::impl::HeteroKfkbScheduleBase<HeteroKfkbSchedulePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (groupSize < 1) {
      module.emitError() << "hetero-kfkb-schedule: group-size must be at "
                            "least 1, got "
                         << int64_t(groupSize);
      return signalPassFailure();
    }
    SymbolTable symbols(module);
    std::string k = std::to_string(groupSize);
    for (auto pipeline : llvm::to_vector(module.getOps<PipelineOp>())) {
      createSchedule(symbols, pipeline,
                     (pipeline.getSymName() + "_" + k + "f" + k + "b").str(),
                     groupSize,
                     schedule::kfkbPrograms(pipeline.getNumStages(),
                                            pipeline.getNumMicrobatches(),
                                            groupSize));
    }
  }
};

} // namespace
