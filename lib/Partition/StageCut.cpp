//===- StageCut.cpp - cutting a chain of ops into pipeline stages ---------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Partition/StageCut.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace hetero::partition {

int64_t inFlight(const Cluster &cluster, int64_t stage) {
  if (!cluster.inFlight.empty())
    return cluster.inFlight[size_t(stage)];
  return std::min(cluster.stages() - stage, cluster.microbatches);
}

StageCost stageCost(const Chain &chain, const Cluster &cluster, int64_t stage,
                    int64_t begin, int64_t end) {
  StageCost cost;
  double seconds = 0, state = 0;
  for (int64_t op = begin; op < end; ++op) {
    seconds += chain.seconds[size_t(op)];
    state += chain.stateBytes[size_t(op)];
  }
  cost.computeSeconds = seconds / cluster.speeds[size_t(stage)];
  // The activation in and its gradient out share the link before the
  // stage.
  if (stage > 0)
    cost.linkSeconds =
        2 * (cluster.alphaSeconds +
             chain.boundaryBytes[size_t(begin)] * cluster.betaSecondsPerByte);
  int64_t stages = cluster.stages();
  double stash = chain.boundaryBytes[size_t(begin)];
  if (stage + 1 == stages)
    stash += chain.targetBytes;
  cost.memoryBytes = state + double(inFlight(cluster, stage)) * stash;
  return cost;
}

static bool fits(const Cluster &cluster, int64_t stage, double bytes) {
  if (cluster.memoryCaps.empty())
    return true;
  double cap = cluster.memoryCaps[size_t(stage)];
  return cap < 0 || bytes <= cap;
}

std::string validate(const Chain &chain, const Cluster &cluster) {
  std::ostringstream os;
  size_t n = chain.seconds.size();
  if (chain.stateBytes.size() != n || chain.cuttable.size() != n + 1 ||
      chain.boundaryBytes.size() != n + 1)
    return "the chain's vectors disagree on its length";
  int64_t stages = cluster.stages();
  if (stages < 1)
    return "a cut needs at least one stage";
  for (int64_t s = 0; s < stages; ++s)
    if (!(cluster.speeds[size_t(s)] > 0) ||
        !std::isfinite(cluster.speeds[size_t(s)])) {
      os << "the speed of rank " << s << " must be positive, got "
         << cluster.speeds[size_t(s)];
      return os.str();
    }
  if (!cluster.memoryCaps.empty() &&
      int64_t(cluster.memoryCaps.size()) != stages)
    return "the memory caps must be one per stage";
  if (!cluster.inFlight.empty() && int64_t(cluster.inFlight.size()) != stages)
    return "the in-flight counts must be one per stage";
  if (cluster.microbatches < 1)
    return "a step needs at least one micro-batch";
  return "";
}

namespace {

/// The min-max dynamic program over (stage, bound): the cut minimising the
/// largest `measure` of a stage among the cuts whose stages all take at
/// most `limit` seconds and fit their caps. Returns false when none does.
template <typename Measure>
bool minMaxCut(const Chain &chain, const Cluster &cluster, Measure measure,
               double limit, std::vector<int64_t> &bounds, double &value) {
  int64_t n = chain.size(), stages = cluster.stages();
  const double infinity = std::numeric_limits<double>::infinity();
  // best[s][b]: the least largest measure of stages 0..s covering ops
  // [0, b) with stage s ending at bound b; from[s][b] where stage s begins.
  std::vector<std::vector<double>> best(
      size_t(stages), std::vector<double>(size_t(n + 1), infinity));
  std::vector<std::vector<int64_t>> from(
      size_t(stages), std::vector<int64_t>(size_t(n + 1), -1));
  for (int64_t s = 0; s < stages; ++s)
    for (int64_t end = s + 1; end <= n; ++end) {
      // Stage s ends at b: the last stage at n, the others at a cut.
      if (s + 1 == stages ? end != n
                          : (end == n || !chain.cuttable[size_t(end)]))
        continue;
      for (int64_t begin = s; begin < end; ++begin) {
        double before = s == 0 ? (begin == 0 ? 0.0 : infinity)
                               : best[size_t(s - 1)][size_t(begin)];
        if (before == infinity)
          continue;
        StageCost cost = stageCost(chain, cluster, s, begin, end);
        if (cost.seconds() > limit || !fits(cluster, s, cost.memoryBytes))
          continue;
        double largest = std::max(before, measure(cost));
        if (largest < best[size_t(s)][size_t(end)]) {
          best[size_t(s)][size_t(end)] = largest;
          from[size_t(s)][size_t(end)] = begin;
        }
      }
    }
  value = best[size_t(stages - 1)][size_t(n)];
  if (value == infinity)
    return false;
  bounds.assign(size_t(stages + 1), 0);
  bounds[size_t(stages)] = n;
  for (int64_t s = stages - 1; s > 0; --s)
    bounds[size_t(s)] = from[size_t(s)][size_t(bounds[size_t(s + 1)])];
  return true;
}

/// Why no cut fits the caps: the first stage that fits nowhere, with the
/// least memory it would need over the runs of ops it could take.
std::string whyNothingFits(const Chain &chain, const Cluster &cluster) {
  int64_t n = chain.size(), stages = cluster.stages();
  std::ostringstream os;
  for (int64_t s = 0; s < stages; ++s) {
    double least = std::numeric_limits<double>::infinity();
    bool fitsSomewhere = false;
    for (int64_t end = s + 1; end <= n; ++end)
      for (int64_t begin = s; begin < end; ++begin) {
        bool endsAtBound =
            s + 1 == stages ? end == n : end < n && chain.cuttable[size_t(end)];
        bool beginsAtBound =
            s == 0 ? begin == 0 : chain.cuttable[size_t(begin)];
        if (!endsAtBound || !beginsAtBound)
          continue;
        StageCost cost = stageCost(chain, cluster, s, begin, end);
        least = std::min(least, cost.memoryBytes);
        fitsSomewhere |= fits(cluster, s, cost.memoryBytes);
      }
    if (!fitsSomewhere) {
      os << "no cut fits the memory caps: stage " << s << " needs at least "
         << std::llround(least) << " bytes, its cap is "
         << std::llround(cluster.memoryCaps[size_t(s)]);
      return os.str();
    }
  }
  return "no cut fits the memory caps: each stage fits alone, but no cut "
         "fits all of them at once";
}

} // namespace

bool partitionChain(const Chain &chain, const Cluster &cluster, Cut &cut,
                    std::string &error) {
  error = validate(chain, cluster);
  if (!error.empty())
    return false;
  int64_t n = chain.size(), stages = cluster.stages();
  int64_t allowed = 0;
  for (int64_t b = 1; b < n; ++b)
    allowed += chain.cuttable[size_t(b)];
  if (n < stages || allowed < stages - 1) {
    std::ostringstream os;
    os << stages << " stages need " << stages - 1 << " cuts, but the chain of "
       << n << " ops allows " << allowed;
    error = os.str();
    return false;
  }
  const double infinity = std::numeric_limits<double>::infinity();
  // First the least bottleneck; then, among the cuts that reach it, the
  // one whose largest compute time is least: where links bound the step,
  // many cuts share the bottleneck, and the compute is balanced among
  // them.
  double bottleneck = 0, compute = 0;
  if (!minMaxCut(
          chain, cluster, [](const StageCost &cost) { return cost.seconds(); },
          infinity, cut.bounds, bottleneck)) {
    error = whyNothingFits(chain, cluster);
    return false;
  }
  // A relative slack of 1e-12 keeps the first cut within the limit when the
  // sums are added in another order.
  minMaxCut(
      chain, cluster, [](const StageCost &cost) { return cost.computeSeconds; },
      bottleneck * (1 + 1e-12), cut.bounds, compute);
  cut.bottleneckSeconds = 0;
  for (int64_t s = 0; s < stages; ++s)
    cut.bottleneckSeconds =
        std::max(cut.bottleneckSeconds,
                 stageCost(chain, cluster, s, cut.bounds[size_t(s)],
                           cut.bounds[size_t(s + 1)])
                     .seconds());
  return true;
}

bool checkCut(const Chain &chain, const Cluster &cluster,
              const std::vector<int64_t> &innerBounds, Cut &cut,
              std::string &error) {
  error = validate(chain, cluster);
  if (!error.empty())
    return false;
  int64_t n = chain.size(), stages = cluster.stages();
  std::ostringstream os;
  if (int64_t(innerBounds.size()) != stages - 1) {
    os << stages << " stages need " << stages - 1 << " split points, got "
       << innerBounds.size();
    error = os.str();
    return false;
  }
  for (int64_t bound : innerBounds)
    if (bound < 1 || bound >= n) {
      os << "a split point must lie between two of the chain's " << n
         << " ops, got a cut before op " << bound;
      error = os.str();
      return false;
    }
  std::vector<int64_t> bounds = {0};
  bounds.insert(bounds.end(), innerBounds.begin(), innerBounds.end());
  bounds.push_back(n);
  double bottleneck = 0;
  for (int64_t s = 0; s < stages; ++s) {
    int64_t begin = bounds[size_t(s)], end = bounds[size_t(s + 1)];
    if (begin >= end) {
      os << "stage " << s << " would hold no op";
      error = os.str();
      return false;
    }
    if (s > 0 && !chain.cuttable[size_t(begin)]) {
      os << "stage " << s << " would begin before op " << begin
         << ", where more than one value, or one that is not a "
            "floating-point tensor, crosses the cut";
      error = os.str();
      return false;
    }
    StageCost cost = stageCost(chain, cluster, s, begin, end);
    if (!fits(cluster, s, cost.memoryBytes)) {
      os << "stage " << s << " would hold " << std::llround(cost.memoryBytes)
         << " bytes, over its cap of "
         << std::llround(cluster.memoryCaps[size_t(s)]);
      error = os.str();
      return false;
    }
    bottleneck = std::max(bottleneck, cost.seconds());
  }
  cut.bounds = bounds;
  cut.bottleneckSeconds = bottleneck;
  return true;
}

} // namespace hetero::partition
