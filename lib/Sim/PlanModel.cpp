//===- PlanModel.cpp - measured costs of candidate pipeline plans ---------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Sim/PlanModel.h"

#include <algorithm>
#include <cmath>

namespace hetero::sim {
namespace {

double median(std::vector<double> values) {
  if (values.empty())
    return 0.0;
  size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + middle, values.end());
  double upper = values[middle];
  if (values.size() % 2)
    return upper;
  double lower = *std::max_element(values.begin(), values.begin() + middle);
  return (lower + upper) / 2.0;
}

} // namespace

LinkCost fitLink(const std::vector<TimedMessage> &messages,
                 std::optional<double> alphaMs) {
  LinkCost cost;
  cost.alphaMs = alphaMs ? std::max(0.0, *alphaMs) : 0.0;
  std::vector<TimedMessage> sized;
  for (const TimedMessage &message : messages)
    if (message.bytes > 0.0 && message.ms >= 0.0)
      sized.push_back(message);
  if (sized.empty())
    return cost;
  // Every message pays the latency: a probe that measured more (its peer
  // was descheduled) is bounded by the fastest message.
  if (alphaMs)
    for (const TimedMessage &message : sized)
      cost.alphaMs = std::min(cost.alphaMs, message.ms);
  auto [smallest, largest] =
      std::minmax_element(sized.begin(), sized.end(),
                          [](const TimedMessage &a, const TimedMessage &b) {
                            return a.bytes < b.bytes;
                          });
  if (!alphaMs && largest->bytes >= 1.5 * smallest->bytes) {
    double n = double(sized.size()), sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (const TimedMessage &message : sized) {
      sx += message.bytes;
      sy += message.ms;
      sxx += message.bytes * message.bytes;
      sxy += message.bytes * message.ms;
    }
    double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
    double intercept = (sy - slope * sx) / n;
    if (intercept >= 0.0 && slope >= 0.0) {
      cost.alphaMs = intercept;
      cost.msPerByte = slope;
      return cost;
    }
    // A negative intercept or slope is noise: fall through to alpha = 0.
  }
  std::vector<double> perByte;
  perByte.reserve(sized.size());
  for (const TimedMessage &message : sized)
    perByte.push_back(std::max(0.0, message.ms - cost.alphaMs) / message.bytes);
  cost.msPerByte = median(std::move(perByte));
  return cost;
}

double fitAtSize(const std::vector<std::pair<double, double>> &points,
                 double b) {
  if (points.empty())
    return 0.0;
  double n = double(points.size()), sx = 0, sy = 0, sxx = 0, sxy = 0;
  double lowest = points.front().first, highest = lowest;
  for (auto [x, y] : points) {
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
    lowest = std::min(lowest, x);
    highest = std::max(highest, x);
  }
  if (highest == lowest)
    return std::max(0.0, sxx > 0.0 ? sxy / sxx * b : sy / n);
  double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  double intercept = (sy - slope * sx) / n;
  return std::max(0.0, intercept + slope * b);
}

void PlanModel::setStage(int64_t stage, int64_t microbatchSize,
                         double forwardMs, double backwardMs) {
  compute[stage][microbatchSize] = {forwardMs, backwardMs};
}

void PlanModel::setLink(int64_t from, int64_t to, LinkCost cost,
                        double bytesPerSample) {
  links[{from, to}] = Link{cost, bytesPerSample};
}

void PlanModel::keepOnlySize(int64_t microbatchSize) {
  for (auto &[stage, bySize] : compute)
    for (auto it = bySize.begin(); it != bySize.end();)
      it = it->first == microbatchSize ? std::next(it) : bySize.erase(it);
}

std::optional<std::pair<double, double>>
PlanModel::computeAt(int64_t stage, int64_t microbatchSize) const {
  auto it = compute.find(stage);
  if (it == compute.end())
    return std::nullopt;
  auto size = it->second.find(microbatchSize);
  if (size == it->second.end())
    return std::nullopt;
  return size->second;
}

Costs PlanModel::costsAt(int64_t microbatchSize, bool perStage) const {
  Costs costs;
  double b = double(microbatchSize);
  std::vector<double> forward, backward;
  std::vector<bool> measured;
  double forwardSum = 0.0, backwardSum = 0.0;
  int64_t measuredStages = 0;
  for (int64_t s = 0; s < stages; ++s) {
    auto it = compute.find(s);
    bool has = it != compute.end() && !it->second.empty();
    double f = 0.0, g = 0.0;
    if (has) {
      std::vector<std::pair<double, double>> fs, gs;
      for (auto [size, times] : it->second) {
        fs.push_back({double(size), times.first});
        gs.push_back({double(size), times.second});
      }
      f = fitAtSize(fs, b);
      g = fitAtSize(gs, b);
      forwardSum += f;
      backwardSum += g;
      ++measuredStages;
    }
    forward.push_back(f);
    backward.push_back(g);
    measured.push_back(has);
  }
  double meanForward = measuredStages ? forwardSum / double(measuredStages) : 0;
  double meanBackward =
      measuredStages ? backwardSum / double(measuredStages) : 0;
  double messageSum = 0.0;
  for (const auto &[ends, link] : links) {
    double ms = link.cost.messageMs(link.bytesPerSample * b);
    messageSum += ms;
    if (perStage)
      costs.linkCommMs[ends] = ms;
  }
  costs.sharedMedium = sharedMedium;
  costs.forwardMs = meanForward;
  costs.backwardMs = meanBackward;
  costs.commMs = links.empty() ? 0.0 : messageSum / double(links.size());
  if (perStage) {
    for (int64_t s = 0; s < stages; ++s) {
      costs.stageForwardMs.push_back(measured[s] ? forward[s] : meanForward);
      costs.stageBackwardMs.push_back(measured[s] ? backward[s] : meanBackward);
    }
  }
  return costs;
}

double PlanModel::iterationMs(const Plan &plan, bool perStage) const {
  auto programs = kfkbPrograms(stages, plan.microbatches, plan.groupSize);
  if (plan.tasks > 1)
    programs = schedule::splitMicrobatches(programs, plan.tasks);
  return simulate(programs, costsAt(plan.taskSize(), perStage)).iterationMs;
}

Ranking rankPlans(const std::vector<Plan> &plans, const PlanModel &model,
                  bool perStage) {
  Ranking ranking;
  for (size_t i = 0; i < plans.size(); ++i) {
    ranking.iterationMs.push_back(model.iterationMs(plans[i], perStage));
    if (ranking.iterationMs[i] < ranking.iterationMs[ranking.best])
      ranking.best = i;
  }
  return ranking;
}

} // namespace hetero::sim
