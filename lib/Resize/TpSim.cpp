//===- TpSim.cpp - tensor parallelism with a straggler, simulated ---------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Resize/TpSim.h"

#include "hetero/Resize/Migration.h"

#include <algorithm>
#include <cmath>

using namespace hetero::resize;

const char *hetero::resize::policyName(TpPolicy policy) {
  switch (policy) {
  case TpPolicy::Baseline:
    return "baseline";
  case TpPolicy::ZeroMean:
    return "zero-mean";
  case TpPolicy::ZeroMin:
    return "zero-min";
  case TpPolicy::Migration:
    return "mig";
  case TpPolicy::Semi:
    return "semi";
  }
  return "";
}

std::string hetero::resize::checkTpModel(const TpModel &model,
                                         const std::vector<double> &delta) {
  if (model.ranks < 2)
    return "tensor parallelism needs at least 2 ranks, got " +
           std::to_string(model.ranks);
  if (int64_t(delta.size()) != model.ranks)
    return std::to_string(delta.size()) + " slowdowns for " +
           std::to_string(model.ranks) + " ranks: expected one per rank";
  if (model.linears < 1)
    return "the model needs at least one prunable linear";
  for (double t : {model.gemmMs, model.otherMs, model.allReduceMs,
                   model.migrateMs, model.latencyMs, model.extractMs})
    if (!std::isfinite(t) || t < 0)
      return "times must be finite and >= 0";
  if (!(model.gemmMs > 0))
    return "the GEMM time must be > 0";
  for (size_t i = 0; i < delta.size(); ++i)
    if (!std::isfinite(delta[i]) || delta[i] < 1)
      return "rank " + std::to_string(i) +
             ": a slowdown is a factor >= 1, got " + std::to_string(delta[i]);
  return "";
}

std::vector<RankLoad>
hetero::resize::tpLoads(const TpModel &model,
                        const std::vector<double> &delta) {
  std::vector<RankLoad> loads;
  double linears = double(model.linears);
  for (double d : delta)
    loads.push_back({linears * (model.otherMs + d * model.gemmMs),
                     linears * d * model.gemmMs, linears * model.gemmMs});
  return loads;
}

/// Collectives a migration adds per linear: a broadcast and a reduce.
static double migrationLatencyMs(const TpModel &model) {
  return 2 * std::ceil(std::log2(double(model.ranks))) * model.latencyMs;
}

SemiCosts hetero::resize::tpCosts(const TpModel &model) {
  double linears = double(model.linears);
  double work = linears * model.gemmMs;
  SemiCosts costs;
  costs.extract = [=](double share) {
    return linears * share * model.extractMs;
  };
  costs.communicate = [=](double volume) {
    if (!(volume > 0))
      return 0.0;
    return linears *
           (migrationLatencyMs(model) + volume / work * model.migrateMs);
  };
  return costs;
}

std::vector<RankPlan> hetero::resize::tpPlan(const TpModel &model,
                                             const std::vector<double> &delta,
                                             TpPolicy policy,
                                             const SemiOptions &options) {
  std::vector<RankLoad> loads = tpLoads(model, delta);
  std::vector<RankPlan> plan(loads.size());
  switch (policy) {
  case TpPolicy::Baseline:
    break;
  case TpPolicy::ZeroMean:
  case TpPolicy::ZeroMin: {
    std::vector<double> busy, gemm;
    for (const RankLoad &load : loads) {
      busy.push_back(load.busyMs);
      gemm.push_back(load.gemmMs);
    }
    std::vector<double> ratios = pruningRatios(
        busy, gemm, policy == TpPolicy::ZeroMin ? Target::Min : Target::Mean,
        options.maxRatio);
    for (size_t i = 0; i < plan.size(); ++i)
      plan[i].prune = ratios[i];
    break;
  }
  case TpPolicy::Migration:
    plan = migrationPlan(loads, options.noiseGuard, options.maxRatio);
    break;
  case TpPolicy::Semi:
    plan = semiPlan(loads, tpCosts(model), options);
    break;
  }
  return plan;
}

double hetero::resize::tpIterationMs(const TpModel &model,
                                     const std::vector<double> &delta,
                                     const std::vector<RankPlan> &plan) {
  auto ranks = size_t(model.ranks);
  std::vector<bool> migrating(ranks, false);
  for (size_t i = 0; i < ranks; ++i)
    migrating[i] = plan[i].migrate > 0;
  // Per linear: each rank's own kept work, then what it receives.
  std::vector<double> busy(ranks, 0.0);
  double communication = model.allReduceMs;
  for (size_t i = 0; i < ranks; ++i) {
    double kept = std::max(0.0, 1 - plan[i].prune - plan[i].migrate);
    busy[i] = model.otherMs + delta[i] * model.gemmMs * kept +
              plan[i].prune * model.extractMs;
  }
  for (size_t s = 0; s < ranks; ++s) {
    if (!migrating[s])
      continue;
    // The straggler's share spread over the receivers in blocks of whole
    // thousandths (the columns' granularity does not matter here).
    const int64_t grain = 1000;
    auto columns = int64_t(std::llround(plan[s].migrate * double(grain)));
    for (const Block &block :
         migrationBlocks(model.ranks, int64_t(s), columns, migrating))
      busy[size_t(block.rank)] += delta[size_t(block.rank)] * model.gemmMs *
                                  double(block.size()) / double(grain);
    communication +=
        migrationLatencyMs(model) + plan[s].migrate * model.migrateMs;
  }
  double slowest = *std::max_element(busy.begin(), busy.end());
  return double(model.linears) * (slowest + communication);
}
