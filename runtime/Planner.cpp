//===- Planner.cpp - online choice of the pipeline plan -------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The runtime side of Ada-Grouper: measured times feed moving averages, and
// every `period` iterations the pipeline simulator (lib/Sim) ranks the
// candidate plans under those costs. Switching happens only at an
// iteration boundary.
//
// Each rank records what it measured: its stage's forward and backward time
// and the links into its stage (or, through the older calls, one forward,
// backward and transfer time for the whole pipeline). At a re-plan every
// rank gathers every rank's record, so all of them build the same
// PlanModel and pick the same plan.
//
//===----------------------------------------------------------------------===//

#include "Runtime.h"

#include "hetero/Sim/PlanModel.h"

#include <array>
#include <cmath>
#include <deque>
#include <map>
#include <numeric>
#include <vector>

namespace {

/// What a rank measured since the last re-plan, as the doubles it sends.
/// Stage -1: the stage-less calls (record_compute / record_transfer).
constexpr int kMaxLinks = 4;
constexpr int kRecordDoubles = 5 + 4 * kMaxLinks;

} // namespace

struct hrt_planner_impl {
  int stages;
  std::vector<hetero::sim::Plan> plans;
  int period;
  size_t window;
  int current = 0;
  double minGain = 0.0;
  bool perStage = true;
  int64_t iteration = 0;
  int stage = -1;
  std::deque<double> forward, backward, transfer;
  struct Link {
    double alphaMs, msPerByte, messageBytes;
  };
  std::map<int, Link> links; // by the stage it comes from
  hetero::sim::PlanModel model;
  std::vector<double> predictions;

  hrt_planner_impl(int stages, std::vector<hetero::sim::Plan> plans, int period,
                   size_t window)
      : stages(stages), plans(std::move(plans)), period(period), window(window),
        model(stages), predictions(this->plans.size(), 0.0) {}
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

hrt_status checkPlanner(int stages, int count, int period, int window,
                        const CallSite &here) {
  if (stages < 1)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "a pipeline needs at least 1 stage");
  if (count < 1)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "at least one candidate plan is needed");
  if (period < 1 || window < 1)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "the period and the window must be at least 1");
  return HRT_SUCCESS;
}

/// Fails unless `stage` is one of the planner's stages.
hrt_status checkStage(const hrt_planner_impl &planner, int stage,
                      const CallSite &here) {
  if (stage >= 0 && stage < planner.stages)
    return HRT_SUCCESS;
  return fail(HRT_ERROR_INVALID_ARGUMENT, here,
              "stage " + std::to_string(stage) + " is not one of the " +
                  std::to_string(planner.stages) + " stages");
}

void pushCompute(hrt_planner_impl &planner, double forwardMs,
                 double backwardMs) {
  push(planner.forward, planner.window, forwardMs);
  push(planner.backward, planner.window, backwardMs);
}

/// This rank's record: stage, micro-batch size, forward, backward, link
/// count, then (from, alpha, ms per byte, bytes) per link.
std::vector<double> recordOf(const hrt_planner_impl &planner) {
  std::vector<double> record(kRecordDoubles, 0.0);
  record[0] = planner.stage;
  record[1] = double(planner.plans[planner.current].taskSize());
  record[2] = mean(planner.forward);
  record[3] = mean(planner.backward);
  if (planner.stage < 0) {
    record[4] = planner.transfer.empty() ? 0 : 1;
    record[5] = -1;
    record[6] = mean(planner.transfer);
    return record;
  }
  int count = 0;
  for (const auto &[from, link] : planner.links) {
    if (count == kMaxLinks)
      break;
    double *out = &record[5 + 4 * count++];
    out[0] = from;
    out[1] = link.alphaMs;
    out[2] = link.msPerByte;
    out[3] = link.messageBytes;
  }
  record[4] = count;
  return record;
}

/// Builds the planner's model from every rank's record.
void updateModel(hrt_planner_impl &planner, const std::vector<double> &records,
                 int ranks) {
  int64_t size = planner.plans[planner.current].taskSize();
  struct ComputeSum {
    double forward = 0.0, backward = 0.0;
    int ranks = 0;
  };
  std::map<int64_t, ComputeSum> compute;
  std::map<std::pair<int64_t, int64_t>, std::array<double, 4>> links;
  bool stageless = false;
  double stagelessTransfer = 0.0;
  int stagelessTransfers = 0;
  for (int r = 0; r < ranks; ++r) {
    const double *record = &records[size_t(r) * kRecordDoubles];
    int64_t stage = int64_t(record[0]);
    bool measured = record[2] > 0.0 || record[3] > 0.0;
    std::vector<int64_t> covered;
    if (stage < 0) {
      stageless = true;
      for (int64_t s = 0; s < planner.stages; ++s)
        covered.push_back(s);
      if (record[4] > 0) {
        stagelessTransfer += record[6];
        ++stagelessTransfers;
      }
    } else if (stage < planner.stages) {
      covered.push_back(stage);
    }
    if (measured)
      for (int64_t s : covered) {
        compute[s].forward += record[2];
        compute[s].backward += record[3];
        ++compute[s].ranks;
      }
    if (stage < 0)
      continue;
    for (int l = 0; l < int(record[4]) && l < kMaxLinks; ++l) {
      const double *link = record + 5 + 4 * l;
      auto &sum = links[{int64_t(link[0]), stage}];
      sum[0] += link[1];
      sum[1] += link[2];
      sum[2] += link[3];
      sum[3] += 1;
    }
  }
  for (auto &[stage, sum] : compute) {
    double f = sum.forward / sum.ranks;
    double b = sum.backward / sum.ranks;
    // A machine that changed makes the other sizes' times stale.
    if (auto was = planner.model.computeAt(stage, size);
        was && std::fabs(f - was->first) > 0.2 * was->first)
      planner.model.keepOnlySize(size);
    planner.model.setStage(stage, size, f, b);
  }
  if (stageless) {
    // Every stage and link alike: a message costs the mean transfer time
    // whatever its size.
    double ms =
        stagelessTransfers ? stagelessTransfer / stagelessTransfers : 0.0;
    for (int64_t s = 0; s + 1 < planner.stages; ++s) {
      planner.model.setLink(s, s + 1, {ms, 0.0}, 0.0);
      planner.model.setLink(s + 1, s, {ms, 0.0}, 0.0);
    }
    return;
  }
  for (auto &[ends, sum] : links) {
    double n = sum[3];
    planner.model.setLink(ends.first, ends.second, {sum[0] / n, sum[1] / n},
                          sum[2] / n / double(size));
  }
}

} // namespace

extern "C" hrt_status hrt_planner_create_plans(int stages,
                                               const hrt_plan *plans, int count,
                                               int period, int window,
                                               hrt_planner *planner) {
  CallSite here{"hrt_planner_create_plans", nullptr, 0};
  if (hrt_status status = checkPlanner(stages, count, period, window, here))
    return status;
  if (!plans || !planner)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here, "null argument");
  std::vector<hetero::sim::Plan> candidates;
  for (int i = 0; i < count; ++i) {
    const hrt_plan &plan = plans[i];
    if (plan.group_size < 1 || plan.microbatch_size < 1 ||
        plan.microbatches < 1 || plan.tasks < 0 ||
        (plan.tasks > 1 && plan.microbatch_size % plan.tasks != 0))
      return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                  "plan " + std::to_string(i) +
                      " (k = " + std::to_string(plan.group_size) +
                      ", b = " + std::to_string(plan.microbatch_size) +
                      ", M = " + std::to_string(plan.microbatches) +
                      ", tasks = " + std::to_string(plan.tasks) +
                      ") needs k, b and M of at least 1 and tasks (0 or 1: "
                      "one) dividing b");
    candidates.push_back({plan.group_size, plan.microbatch_size,
                          plan.microbatches, std::max(1, plan.tasks)});
  }
  *planner = new hrt_planner_impl(stages, std::move(candidates), period,
                                  size_t(window));
  return HRT_SUCCESS;
}

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
  std::vector<hrt_plan> plans;
  for (int i = 0; i < count; ++i) {
    if (group_sizes[i] < 1)
      return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                  "candidate group size " + std::to_string(group_sizes[i]) +
                      " is below 1");
    plans.push_back({group_sizes[i], 1, microbatches, 1});
  }
  if (hrt_status status = checkPlanner(stages, count, period, window, here))
    return status;
  return hrt_planner_create_plans(stages, plans.data(), count, period, window,
                                  planner);
}

extern "C" void hrt_planner_destroy(hrt_planner planner) { delete planner; }

extern "C" hrt_status hrt_planner_record_compute(hrt_planner planner,
                                                 double forward_ms,
                                                 double backward_ms) {
  if (!planner || !(forward_ms >= 0.0) || !(backward_ms >= 0.0))
    return fail(HRT_ERROR_INVALID_ARGUMENT,
                {"hrt_planner_record_compute", nullptr, 0},
                "needs a planner and times >= 0");
  pushCompute(*planner, forward_ms, backward_ms);
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

extern "C" hrt_status hrt_planner_record_stage(hrt_planner planner, int stage,
                                               double forward_ms,
                                               double backward_ms) {
  CallSite here{"hrt_planner_record_stage", nullptr, 0};
  if (!planner || !(forward_ms >= 0.0) || !(backward_ms >= 0.0))
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "needs a planner and times >= 0");
  if (hrt_status status = checkStage(*planner, stage, here))
    return status;
  if (planner->stage >= 0 && planner->stage != stage)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "this rank recorded stage " + std::to_string(planner->stage) +
                    " before; a rank runs one stage");
  planner->stage = stage;
  pushCompute(*planner, forward_ms, backward_ms);
  return HRT_SUCCESS;
}

extern "C" hrt_status hrt_planner_record_link(hrt_planner planner,
                                              int from_stage, double alpha_ms,
                                              double ms_per_byte,
                                              double message_bytes) {
  CallSite here{"hrt_planner_record_link", nullptr, 0};
  if (!planner || !(alpha_ms >= 0.0) || !(ms_per_byte >= 0.0) ||
      !(message_bytes >= 0.0))
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "needs a planner and costs >= 0");
  if (hrt_status status = checkStage(*planner, from_stage, here))
    return status;
  planner->links[from_stage] = {alpha_ms, ms_per_byte, message_bytes};
  return HRT_SUCCESS;
}

extern "C" hrt_status hrt_planner_set_model(hrt_planner planner,
                                            hrt_planner_model model) {
  if (!planner ||
      (model != HRT_PLANNER_PER_STAGE && model != HRT_PLANNER_AVERAGED))
    return fail(HRT_ERROR_INVALID_ARGUMENT,
                {"hrt_planner_set_model", nullptr, 0},
                "needs a planner and HRT_PLANNER_PER_STAGE or "
                "HRT_PLANNER_AVERAGED");
  planner->perStage = model == HRT_PLANNER_PER_STAGE;
  return HRT_SUCCESS;
}

extern "C" hrt_status hrt_planner_set_shared_medium(hrt_planner planner,
                                                    int shared) {
  if (!planner)
    return fail(HRT_ERROR_INVALID_ARGUMENT,
                {"hrt_planner_set_shared_medium", nullptr, 0},
                "needs a planner");
  planner->model.setSharedMedium(shared != 0);
  return HRT_SUCCESS;
}

extern "C" hrt_status hrt_planner_end_iteration(hrt_planner planner,
                                                hrt_comm comm, int *switched) {
  CallSite here{"hrt_planner_end_iteration", comm,
                kRecordDoubles * sizeof(double)};
  if (!planner || !switched)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here, "null argument");
  *switched = 0;
  if (++planner->iteration % planner->period != 0)
    return HRT_SUCCESS;
  std::vector<double> record = recordOf(*planner);
  int ranks = 1;
  if (comm) {
    // Every rank decides from every rank's record.
    if (hrt_status status = hrt_comm_size(comm, &ranks))
      return status;
  }
  std::vector<double> records(size_t(ranks) * kRecordDoubles);
  if (comm) {
    if (hrt_status status = hrt_all_gather(record.data(), records.data(),
                                           kRecordDoubles, HRT_FLOAT64, comm))
      return status;
  } else {
    records = record;
  }
  updateModel(*planner, records, ranks);
  hetero::sim::Ranking ranking =
      hetero::sim::rankPlans(planner->plans, planner->model, planner->perStage);
  planner->predictions = ranking.iterationMs;
  int best = int(ranking.best);
  double currentMs = ranking.iterationMs[size_t(planner->current)];
  // Keep the plan in force unless another is faster by the minimum gain
  // (strictly faster when it is 0).
  if (!(ranking.iterationMs[size_t(best)] <
        currentMs * (1.0 - planner->minGain)))
    best = planner->current;
  *switched = best != planner->current;
  if (*switched && planner->plans[size_t(best)].taskSize() !=
                       planner->plans[size_t(planner->current)].taskSize()) {
    // Times per task of the old size would mislead at the new one.
    planner->forward.clear();
    planner->backward.clear();
  }
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
  return planner ? int(planner->plans[size_t(planner->current)].groupSize) : 0;
}

extern "C" int hrt_planner_microbatch_size(hrt_planner planner) {
  return planner ? int(planner->plans[size_t(planner->current)].microbatchSize)
                 : 0;
}

extern "C" int hrt_planner_plan_index(hrt_planner planner) {
  return planner ? planner->current : -1;
}

extern "C" int hrt_planner_predictions(hrt_planner planner, double *ms,
                                       int count) {
  if (!planner)
    return 0;
  for (int i = 0; i < count && i < int(planner->predictions.size()); ++i)
    ms[i] = planner->predictions[size_t(i)];
  return int(planner->predictions.size());
}
