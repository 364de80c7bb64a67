//===- KfkbSchedule.cpp - build kFkB schedules ----------------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Dialect/Schedule.h"
#include "hetero/Passes/Passes.h"
#include "hetero/Schedule/Families.h"

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
    std::optional<schedule::Family> parsed = schedule::parseFamily(family);
    if (!parsed) {
      module.emitError() << "hetero-kfkb-schedule: family must be one of "
                         << schedule::familyNames() << ", got '" << family
                         << "'";
      return signalPassFailure();
    }
    SymbolTable symbols(module);
    for (auto pipeline : llvm::to_vector(module.getOps<PipelineOp>())) {
      if (schedule::needsSplitBackward(*parsed))
        for (int64_t s = 0; s < pipeline.getNumStages(); ++s)
          if (!pipeline.getStage(s).getBackwardInputAttr()) {
            pipeline.getStage(s).emitOpError()
                << "has no split backward, but family=" << family
                << " runs input and weight gradients as separate tasks; run "
                   "hetero-derive-backward{split=true} first";
            return signalPassFailure();
          }
      SmallVector<Attribute> plans;
      // Created right after the pipeline, so add them last to first.
      for (int64_t k : llvm::reverse(sizes)) {
        std::string name = pipeline.getSymName().str() + "_";
        if (*parsed == schedule::Family::OneFOneB) {
          name += std::to_string(k) + "f" + std::to_string(k) + "b";
        } else {
          name += family;
          llvm::replace(name, '-', '_');
          if (k > 1)
            name += "_k" + std::to_string(k);
        }
        std::string error;
        std::vector<std::vector<schedule::Action>> programs =
            schedule::familyPrograms(*parsed, pipeline.getStagePlacement(),
                                     pipeline.getNumMicrobatches(), k, error);
        if (!error.empty()) {
          pipeline.emitOpError() << "cannot be scheduled: " << error;
          return signalPassFailure();
        }
        ScheduleOp created =
            createSchedule(symbols, pipeline, name, k, programs);
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
