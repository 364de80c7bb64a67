//===- AdaptivePlanning.cpp - hetero-run --adaptive's measurements --------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "AdaptivePlanning.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdio>

namespace hetero {

AdaptivePlanning::AdaptivePlanning(hrt_planner planner, hrt_comm world,
                                   int rank, int64_t perStage, int period,
                                   std::vector<hrt_plan> plans)
    : planner(planner), world(world), rank(rank), perStage(perStage),
      period(period), plans(std::move(plans)) {
  sizesDiffer = false;
  for (const hrt_plan &plan : this->plans)
    sizesDiffer |= plan.microbatch_size != this->plans.front().microbatch_size;
  int size = 0;
  hrt_comm_size(world, &size);
  if (rank - perStage >= 0)
    neighbours.push_back(int(rank - perStage));
  if (rank + perStage < size)
    neighbours.push_back(int(rank + perStage));
}

/// Whether `status` is success; otherwise reports the runtime's error.
static bool succeeded(hrt_status status, const char *prefix) {
  if (status == HRT_SUCCESS)
    return true;
  llvm::errs() << prefix << hrt_last_error() << "\n";
  return false;
}

bool AdaptivePlanning::probe() {
  return succeeded(
      hrt_link_probe(world, neighbours.data(), int(neighbours.size())),
      "hetero-run: --adaptive: ");
}

bool AdaptivePlanning::start() {
  return succeeded(hrt_link_measure(1), "hetero-run: --adaptive: ") && probe();
}

bool AdaptivePlanning::afterIteration(bool warmup, int &switched) {
  int stage = int(rank / perStage);
  // The planner re-plans at the end of every `period`-th iteration, from
  // the latest link estimates: they are read only then.
  bool replans = ++iterations % period == 0;
  // The warm-up's messages met ranks that were still touching their
  // buffers for the first time: the link's window starts after it.
  if (warmup)
    hrt_link_estimates_reset();
  if (!warmup) {
    double forward = 0, backward = 0;
    hrt_task_times(&forward, &backward, nullptr);
    if (!succeeded(hrt_planner_record_stage(planner, stage, forward, backward),
                   "hetero-run: "))
      return false;
  }
  if (!warmup && replans) {
    std::vector<hrt_link_estimate> estimates(
        size_t(hrt_link_estimates(nullptr, 0)));
    hrt_link_estimates(estimates.data(), int(estimates.size()));
    for (const hrt_link_estimate &link : estimates) {
      int from = int(link.sender / perStage);
      if (link.messages == 0 || (from != stage - 1 && from != stage + 1))
        continue;
      if (!succeeded(hrt_planner_record_link(planner, from, link.alpha_ms,
                                             link.ms_per_byte,
                                             link.message_bytes),
                     "hetero-run: "))
        return false;
    }
  }
  // The latency and clock offsets are measured again just before a re-plan.
  if (replans && !probe())
    return false;
  return succeeded(hrt_planner_end_iteration(planner, world, &switched),
                   "hetero-run: ");
}

static std::string planText(const hrt_plan &plan, bool sizesDiffer) {
  std::string text = "k = " + std::to_string(plan.group_size);
  if (sizesDiffer)
    text += ", b = " + std::to_string(plan.microbatch_size);
  return text;
}

std::string AdaptivePlanning::describe() const {
  return ", " +
         planText(plans[size_t(hrt_planner_plan_index(planner))], sizesDiffer);
}

std::string AdaptivePlanning::predictions() const {
  std::vector<double> ms(plans.size(), 0.0);
  hrt_planner_predictions(planner, ms.data(), int(ms.size()));
  std::string text;
  char number[32];
  for (size_t i = 0; i < plans.size(); ++i) {
    std::snprintf(number, sizeof(number), "%.1f", ms[i]);
    text += (i ? "; " : "") + planText(plans[i], sizesDiffer) + ": " + number +
            " ms";
  }
  return text;
}

} // namespace hetero
