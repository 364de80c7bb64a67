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
    SmallVector<int64_t> sizes(groupSizes.begin(), groupSizes.end());
    if (sizes.empty())
      sizes.push_back(groupSize);
    for (int64_t k : sizes)
      if (k < 1) {
        module.emitError() << "hetero-kfkb-schedule: "
                           << (groupSizes.empty() ? "group-size"
                                                  : "group-sizes")
                           << " must be at least 1, got " << k;
        return signalPassFailure();
      }
    SymbolTable symbols(module);
    for (auto pipeline : llvm::to_vector(module.getOps<PipelineOp>())) {
      SmallVector<Attribute> plans;
      // Created right after the pipeline, so add them last to first.
      for (int64_t k : llvm::reverse(sizes)) {
        std::string name = (pipeline.getSymName() + "_" + std::to_string(k) +
                            "f" + std::to_string(k) + "b")
                               .str();
        ScheduleOp created = createSchedule(
            symbols, pipeline, name, k,
            schedule::kfkbPrograms(pipeline.getNumStages(),
                                   pipeline.getNumMicrobatches(), k));
        plans.insert(plans.begin(),
                     FlatSymbolRefAttr::get(created.getSymNameAttr()));
      }
      if (groupSizes.empty())
        continue;
      createPlanSet(symbols, pipeline, plans);
    }
  }
};

} // namespace
