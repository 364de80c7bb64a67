//===- Fusion.cpp - Cupcake's optimal gradient tensor fusion --------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Fusion/Fusion.h"

#include <algorithm>
#include <limits>
#include <sstream>

namespace hetero::fusion {

double evaluate(const Problem &problem, const std::vector<Group> &groups) {
  double compute = 0.0, comm = 0.0;
  for (const Group &group : groups) {
    int64_t bytes = 0;
    for (int64_t t = group.first; t <= group.last; ++t) {
      compute += problem.tensors[t].backwardMs;
      bytes += problem.tensors[t].bytes;
    }
    compute += problem.compress(bytes);
    comm = std::max(comm, compute) + problem.comm(bytes);
  }
  return comm;
}

Plan optimalPlan(const Problem &problem) {
  int64_t n = problem.tensors.size();
  if (n == 0)
    return {};
  // Prefix sums of backward time and bytes.
  std::vector<double> backward(n + 1, 0.0);
  std::vector<int64_t> bytes(n + 1, 0);
  for (int64_t t = 0; t < n; ++t) {
    backward[t + 1] = backward[t] + problem.tensors[t].backwardMs;
    bytes[t + 1] = bytes[t] + problem.tensors[t].bytes;
  }
  const LinearCost &h = problem.compress, &g = problem.comm;
  // Compute-stream time after i tensors in j groups.
  auto computeEnd = [&](int64_t i, int64_t j) {
    return backward[i] + j * h.alphaMs +
           h.betaMsPerMB * double(bytes[i]) / kBytesPerMB;
  };
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // end[j][i]: the earliest end of the last transfer when the first i
  // tensors form j groups; from[j][i]: where the last of them starts.
  std::vector<std::vector<double>> end(n + 1, std::vector<double>(n + 1, kInf));
  std::vector<std::vector<int64_t>> from(n + 1,
                                         std::vector<int64_t>(n + 1, -1));
  end[0][0] = 0.0;
  for (int64_t j = 1; j <= n; ++j)
    for (int64_t i = j; i <= n; ++i) {
      double ready = computeEnd(i, j);
      for (int64_t l = j - 1; l < i; ++l) {
        if (end[j - 1][l] == kInf)
          continue;
        double finish = std::max(end[j - 1][l], ready) + g(bytes[i] - bytes[l]);
        if (finish < end[j][i]) {
          end[j][i] = finish;
          from[j][i] = l;
        }
      }
    }
  int64_t best = 1;
  for (int64_t j = 2; j <= n; ++j)
    if (end[j][n] < end[best][n])
      best = j;
  Plan plan;
  plan.iterationMs = end[best][n];
  for (int64_t j = best, i = n; j > 0; i = from[j][i], --j)
    plan.groups.push_back({from[j][i], i - 1});
  std::reverse(plan.groups.begin(), plan.groups.end());
  return plan;
}

Plan bruteForcePlan(const Problem &problem) {
  int64_t n = problem.tensors.size();
  Plan best;
  best.iterationMs = std::numeric_limits<double>::infinity();
  if (n == 0)
    return {};
  // Bit t of `cuts` set: a group ends after tensor t.
  for (uint64_t cuts = 0; cuts < (uint64_t(1) << (n - 1)); ++cuts) {
    std::vector<Group> groups;
    int64_t first = 0;
    for (int64_t t = 0; t < n; ++t)
      if (t == n - 1 || (cuts >> t & 1)) {
        groups.push_back({first, t});
        first = t + 1;
      }
    double ms = evaluate(problem, groups);
    if (ms < best.iterationMs ||
        (ms == best.iterationMs && groups.size() < best.groups.size()))
      best = {groups, ms};
  }
  return best;
}

static Plan planOf(const Problem &problem, std::vector<Group> groups) {
  double ms = evaluate(problem, groups);
  return {std::move(groups), ms};
}

Plan perTensorPlan(const Problem &problem) {
  std::vector<Group> groups;
  for (int64_t t = 0; t < int64_t(problem.tensors.size()); ++t)
    groups.push_back({t, t});
  return planOf(problem, groups);
}

Plan singleGroupPlan(const Problem &problem) {
  if (problem.tensors.empty())
    return {};
  return planOf(problem, {{0, int64_t(problem.tensors.size()) - 1}});
}

Plan thresholdPlan(const Problem &problem, int64_t thresholdBytes) {
  std::vector<Group> groups;
  int64_t n = problem.tensors.size(), first = 0, open = 0;
  for (int64_t t = 0; t < n; ++t) {
    open += problem.tensors[t].bytes;
    if (open >= thresholdBytes || t == n - 1) {
      groups.push_back({first, t});
      first = t + 1;
      open = 0;
    }
  }
  return planOf(problem, groups);
}

Plan evenPlan(const Problem &problem, int64_t count) {
  int64_t n = problem.tensors.size();
  count = std::clamp<int64_t>(count, 1, std::max<int64_t>(n, 1));
  std::vector<Group> groups;
  for (int64_t k = 0; k < count && n > 0; ++k)
    groups.push_back({k * n / count, (k + 1) * n / count - 1});
  return planOf(problem, groups);
}

Plan bestEvenPlan(const Problem &problem) {
  Plan best = evenPlan(problem, 1);
  for (int64_t count = 2; count <= int64_t(problem.tensors.size()); ++count) {
    Plan candidate = evenPlan(problem, count);
    if (candidate.iterationMs < best.iterationMs)
      best = candidate;
  }
  return best;
}

std::string formatGroups(const std::vector<Group> &groups) {
  std::ostringstream os;
  for (size_t i = 0; i < groups.size(); ++i)
    os << (i ? " " : "") << "[" << groups[i].first << "-" << groups[i].last
       << "]";
  return os.str();
}

} // namespace hetero::fusion
