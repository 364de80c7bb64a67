//===- Planner.cpp - online choice of the kFkB group size -----------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The runtime side of Ada-Grouper: measured times feed moving averages, and
// every `period` iterations the pipeline simulator (lib/Sim) ranks the
// candidate group sizes under those costs. Switching happens only at an
// iteration boundary.
//
//===----------------------------------------------------------------------===//

#include "Runtime.h"

#include "hetero/Sim/PipelineSim.h"

#include <deque>
#include <numeric>
#include <vector>

struct hrt_planner_impl {
  int stages;
  int microbatches;
  std::vector<int> candidates;
  int period;
  size_t window;
  int current = 0;
  double minGain = 0.0;
  int64_t iteration = 0;
  std::deque<double> forward, backward, transfer;
};

namespace {

using hetero::rt::CallSite;
using hetero::rt::fail;

void push(std::deque<double> &samples, size_t window, double value) {
  samples.push_back(value);
  while (samples.size() > window)
    samples.pop_front();
}

double mean(const std::deque<double> &samples) {
  if (samples.empty())
    return 0.0;
  return std::accumulate(samples.begin(), samples.end(), 0.0) /
         double(samples.size());
}

} // namespace

extern "C" hrt_status hrt_planner_create(int stages, int microbatches,
                                         const int *group_sizes, int count,
                                         int period, int window,
                                         hrt_planner *planner) {
  CallSite here{"hrt_planner_create", nullptr, 0};
  if (stages < 1 || microbatches < 1)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "a pipeline needs at least 1 stage and 1 micro-batch");
  if (!group_sizes || count < 1)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "at least one candidate group size is needed");
  for (int i = 0; i < count; ++i)
    if (group_sizes[i] < 1)
      return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                  "candidate group size " + std::to_string(group_sizes[i]) +
                      " is below 1");
  if (period < 1 || window < 1)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "the period and the window must be at least 1");
  if (!planner)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here, "the output is null");
  *planner = new hrt_planner_impl{
      stages, microbatches, std::vector<int>(group_sizes, group_sizes + count),
      period, size_t(window)};
  return HRT_SUCCESS;
}

extern "C" void hrt_planner_destroy(hrt_planner planner) { delete planner; }

extern "C" hrt_status hrt_planner_record_compute(hrt_planner planner,
                                                 double forward_ms,
                                                 double backward_ms) {
  if (!planner || !(forward_ms >= 0.0) || !(backward_ms >= 0.0))
    return fail(HRT_ERROR_INVALID_ARGUMENT,
                {"hrt_planner_record_compute", nullptr, 0},
                "needs a planner and times >= 0");
  push(planner->forward, planner->window, forward_ms);
  push(planner->backward, planner->window, backward_ms);
  return HRT_SUCCESS;
}

extern "C" hrt_status hrt_planner_record_transfer(hrt_planner planner,
                                                  double ms) {
  if (!planner || !(ms >= 0.0))
    return fail(HRT_ERROR_INVALID_ARGUMENT,
                {"hrt_planner_record_transfer", nullptr, 0},
                "needs a planner and a time >= 0");
  push(planner->transfer, planner->window, ms);
  return HRT_SUCCESS;
}

extern "C" hrt_status hrt_planner_end_iteration(hrt_planner planner,
                                                hrt_comm comm, int *switched) {
  CallSite here{"hrt_planner_end_iteration", comm, 3 * sizeof(double)};
  if (!planner || !switched)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here, "null argument");
  *switched = 0;
  if (++planner->iteration % planner->period != 0)
    return HRT_SUCCESS;
  double costs[3] = {mean(planner->forward), mean(planner->backward),
                     mean(planner->transfer)};
  if (comm) {
    // Every rank decides from the same averages.
    if (hrt_status status =
            hrt_all_reduce(costs, costs, 3, HRT_FLOAT64, HRT_AVG, comm))
      return status;
  }
  hetero::sim::Costs simulated;
  simulated.forwardMs = costs[0];
  simulated.backwardMs = costs[1];
  simulated.commMs = costs[2];
  int best = planner->current;
  double bestMs = 0.0, currentMs = 0.0;
  for (int i = 0; i < int(planner->candidates.size()); ++i) {
    double ms =
        hetero::sim::simulate(hetero::sim::kfkbPrograms(planner->stages,
                                                        planner->microbatches,
                                                        planner->candidates[i]),
                              simulated)
            .iterationMs;
    if (i == planner->current)
      currentMs = ms;
    if (i == 0 || ms < bestMs) {
      best = i;
      bestMs = ms;
    }
  }
  // Keep the plan in force unless another is faster by the minimum gain
  // (strictly faster when it is 0).
  if (!(bestMs < currentMs * (1.0 - planner->minGain)))
    best = planner->current;
  *switched = best != planner->current;
  planner->current = best;
  return HRT_SUCCESS;
}

extern "C" hrt_status hrt_planner_set_min_gain(hrt_planner planner,
                                               double fraction) {
  if (!planner || !(fraction >= 0.0 && fraction < 1.0))
    return fail(HRT_ERROR_INVALID_ARGUMENT,
                {"hrt_planner_set_min_gain", nullptr, 0},
                "needs a planner and a fraction in [0, 1), got " +
                    std::to_string(fraction));
  planner->minGain = fraction;
  return HRT_SUCCESS;
}

extern "C" int hrt_planner_group_size(hrt_planner planner) {
  return planner ? planner->candidates[planner->current] : 0;
}

extern "C" int hrt_planner_plan_index(hrt_planner planner) {
  return planner ? planner->current : -1;
}
