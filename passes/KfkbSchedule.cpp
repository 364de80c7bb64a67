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
    OpBuilder builder(&getContext());
    for (auto pipeline : llvm::to_vector(module.getOps<PipelineOp>())) {
      int64_t stages = pipeline.getNumStages();
      int64_t microbatches = pipeline.getNumMicrobatches();
      builder.setInsertionPointAfter(pipeline);
      std::string k = std::to_string(groupSize);
      auto scheduleOp = ScheduleOp::create(
          builder, pipeline.getLoc(),
          builder.getStringAttr(pipeline.getSymName() + "_" + k + "f" + k +
                                "b"),
          FlatSymbolRefAttr::get(pipeline.getSymNameAttr()),
          builder.getI64IntegerAttr(groupSize),
          /*microbatch_size=*/IntegerAttr());
      scheduleOp.getBody().emplaceBlock();
      // Unique name if one exists already.
      symbols.insert(scheduleOp);
      builder.setInsertionPointToEnd(&scheduleOp.getBody().front());
      for (int64_t s = 0; s < stages; ++s) {
        auto program =
            StageProgramOp::create(builder, pipeline.getLoc(), s);
        program.getBody().emplaceBlock();
        buildStageProgram(builder, program,
                          schedule::withTransfers(
                              schedule::kfkbProgram(stages, microbatches,
                                                    groupSize, s),
                              stages, s));
      }
    }
  }
};

} // namespace
