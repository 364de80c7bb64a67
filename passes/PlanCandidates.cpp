//===- PlanCandidates.cpp - candidate schedules under a memory cap --------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Dialect/Schedule.h"
#include "hetero/Passes/Passes.h"
#include "hetero/Schedule/Candidates.h"

#include "mlir/IR/SymbolTable.h"

namespace hetero {
#define GEN_PASS_DEF_HETEROPLANCANDIDATES
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;
using namespace hetero;

namespace {

struct HeteroPlanCandidatesPass
    : public hetero::impl::HeteroPlanCandidatesBase<HeteroPlanCandidatesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (memoryCap < 1 || batch < 1 || activationBytes < 1) {
      module.emitError() << "hetero-plan-candidates: memory-cap, batch and "
                            "activation-bytes must all be at least 1, got "
                            "memory-cap="
                         << int64_t(memoryCap) << " batch=" << int64_t(batch)
                         << " activation-bytes=" << int64_t(activationBytes);
      return signalPassFailure();
    }
    SymbolTable symbols(module);
    for (auto pipeline : llvm::to_vector(module.getOps<PipelineOp>())) {
      int64_t samples = batch, bytesPerSample = activationBytes;
      int64_t stages = pipeline.getNumStages();
      std::vector<schedule::Candidate> candidates = schedule::paretoCandidates(
          stages, samples, bytesPerSample, memoryCap);
      if (candidates.empty()) {
        pipeline.emitError()
            << "hetero-plan-candidates: no schedule of pipeline '"
            << pipeline.getSymName() << "' fits " << int64_t(memoryCap)
            << " bytes: 1F1B with one sample per micro-batch holds "
            << schedule::peakActivationBytes(stages, 0, 1, 1, samples,
                                             bytesPerSample)
            << " on stage 0";
        return signalPassFailure();
      }
      SmallVector<Attribute> plans;
      // Created right after the pipeline, so add them last to first.
      for (const schedule::Candidate &c : llvm::reverse(candidates)) {
        std::string name =
            (pipeline.getSymName() + "_k" + std::to_string(c.groupSize) + "_b" +
             std::to_string(c.microbatchSize))
                .str();
        ScheduleOp created = createSchedule(
            symbols, pipeline, name, c.groupSize,
            schedule::kfkbPrograms(stages, c.microbatches, c.groupSize),
            c.microbatchSize, c.microbatches);
        plans.insert(plans.begin(),
                     FlatSymbolRefAttr::get(created.getSymNameAttr()));
      }
      createPlanSet(symbols, pipeline, plans);
    }
  }
};

} // namespace
