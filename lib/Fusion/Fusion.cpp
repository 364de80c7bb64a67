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
  return evaluate(problem, groups, {});
}

double evaluate(const Problem &problem, const std::vector<Group> &groups,
                const std::vector<bool> &compressed) {
  double compute = 0.0, comm = 0.0;
  for (size_t g = 0; g < groups.size(); ++g) {
    int64_t bytes = 0;
    for (int64_t t = groups[g].first; t <= groups[g].last; ++t) {
      compute += problem.tensors[t].backwardMs;
      bytes += problem.tensors[t].bytes;
    }
    if (g < compressed.size() && !compressed[g]) {
      comm =
          std::max(comm, compute) + problem.dense.value_or(problem.comm)(bytes);
      continue;
    }
    compute += problem.compress(bytes);
    comm = std::max(comm, compute) + problem.comm(bytes);
  }
  return comm;
}

std::vector<double>
evaluateShared(const std::vector<Problem> &problems,
               const std::vector<std::vector<Group>> &groups,
               const std::vector<double> &startMs) {
  struct Transfer {
    double ready, latencyMs, linkMs;
    size_t set;
  };
  std::vector<Transfer> transfers;
  std::vector<double> ends(startMs);
  for (size_t s = 0; s < problems.size(); ++s) {
    double compute = startMs[s];
    for (const Group &group : groups[s]) {
      int64_t bytes = 0;
      for (int64_t t = group.first; t <= group.last; ++t) {
        compute += problems[s].tensors[t].backwardMs;
        bytes += problems[s].tensors[t].bytes;
      }
      compute += problems[s].compress(bytes);
      double ms = problems[s].comm(bytes);
      double latency = std::min(problems[s].comm.alphaMs, ms);
      transfers.push_back({compute, latency, ms - latency, s});
    }
  }
  std::stable_sort(transfers.begin(), transfers.end(),
                   [](const Transfer &a, const Transfer &b) {
                     return a.ready < b.ready ||
                            (a.ready == b.ready && a.set < b.set);
                   });
  // Each set's collectives run one at a time (a rank's communication
  // thread); a collective's latency keeps only its own set waiting, its
  // bytes hold the shared link.
  std::vector<double> setFree(problems.size(), 0.0);
  double link = 0.0;
  for (const Transfer &transfer : transfers) {
    double start = std::max(transfer.ready, setFree[transfer.set]);
    double end = std::max(start + transfer.latencyMs, link) + transfer.linkMs;
    link = end;
    setFree[transfer.set] = end;
    ends[transfer.set] = std::max(ends[transfer.set], end);
  }
  return ends;
}

namespace {
/// Prefix sums of backward time and bytes, and the costs of a range of
/// tensors [first, end) as one group.
struct Prefix {
  explicit Prefix(const Problem &problem) : problem(problem) {
    int64_t n = problem.tensors.size();
    backward.assign(n + 1, 0.0);
    bytes.assign(n + 1, 0);
    for (int64_t t = 0; t < n; ++t) {
      backward[t + 1] = backward[t] + problem.tensors[t].backwardMs;
      bytes[t + 1] = bytes[t] + problem.tensors[t].bytes;
    }
  }
  double backprop(int64_t first, int64_t end) const {
    return backward[end] - backward[first];
  }
  /// Compression and transfer of [first, end); nothing for an empty range.
  double compress(int64_t first, int64_t end) const {
    return first < end ? problem.compress(bytes[end] - bytes[first]) : 0.0;
  }
  double transfer(int64_t first, int64_t end) const {
    return first < end ? problem.comm(bytes[end] - bytes[first]) : 0.0;
  }

  const Problem &problem;
  std::vector<double> backward;
  std::vector<int64_t> bytes;
};

constexpr double kInf = std::numeric_limits<double>::infinity();
} // namespace

Plan optimalPlan(const Problem &problem) {
  int64_t n = problem.tensors.size();
  if (n == 0)
    return {};
  Prefix prefix(problem);
  const LinearCost &g = problem.comm;
  // psi[r][i]: the least max_k (C_k + transfers from group k on) - H over
  // plans of tensors i.. in r groups (H: compression before i); next[r][i]:
  // where the second of those groups starts.
  std::vector<std::vector<double>> psi(n + 1, std::vector<double>(n + 1, kInf));
  std::vector<std::vector<int64_t>> next(n + 1,
                                         std::vector<int64_t>(n + 1, -1));
  psi[0][n] = -kInf;
  for (int64_t r = 1; r <= n; ++r)
    for (int64_t i = n - r; i >= 0; --i) {
      // The r transfers from tensor i on, whatever the groups.
      double transfers = double(r) * g.alphaMs +
                         g.betaMsPerMB *
                             double(prefix.bytes[n] - prefix.bytes[i]) /
                             kBytesPerMB;
      for (int64_t e = i + 1; e <= n - r + 1; ++e) {
        double rest = psi[r - 1][e];
        if (rest == kInf)
          continue;
        double value = prefix.compress(i, e) +
                       std::max(prefix.backward[e] + transfers, rest);
        if (value < psi[r][i]) {
          psi[r][i] = value;
          next[r][i] = e;
        }
      }
    }
  int64_t best = 1;
  for (int64_t r = 2; r <= n; ++r)
    if (psi[r][0] < psi[best][0])
      best = r;
  std::vector<Group> groups;
  for (int64_t r = best, i = 0; r > 0; i = next[r][i], --r)
    groups.push_back({i, next[r][i] - 1});
  double ms = evaluate(problem, groups);
  return {std::move(groups), ms};
}

namespace {
/// Algorithm 5.1's search: FindOptFusion(M, k) with M the groups of
/// tensors 0..k-1, whose compute stream ends at `compute` and whose last
/// transfer at `link`.
class BranchAndBoundSearch {
public:
  BranchAndBoundSearch(const Problem &problem, int64_t maxNodes)
      : prefix(problem), n(problem.tensors.size()), maxNodes(maxNodes) {}

  BranchAndBound run() {
    // The thesis seeds the global optimum with an even split.
    Plan seed = bestEvenPlan(prefix.problem);
    bestMs = seed.iterationMs;
    best = seed.groups;
    // Main: every first group [0, k).
    for (int64_t k = 1; k <= n && !exhausted(); ++k) {
      double compute = prefix.backprop(0, k) + prefix.compress(0, k);
      double link = compute + prefix.transfer(0, k);
      groups.push_back({0, k - 1});
      findOptFusion(k, compute, link);
      groups.pop_back();
    }
    return {{best, evaluate(prefix.problem, best)}, nodes, !exhausted()};
  }

private:
  bool exhausted() const { return nodes > maxNodes; }

  /// Offers `groups` followed by `rest`, ending at `ms`, as the optimum.
  void consider(double ms, const std::vector<Group> &rest) {
    if (ms >= bestMs)
      return;
    bestMs = ms;
    best = groups;
    best.insert(best.end(), rest.begin(), rest.end());
  }

  /// The end of the last transfer after appending [first, end) to a prefix
  /// ending at (compute, link); updates both.
  double extend(int64_t first, int64_t end, double &compute,
                double &link) const {
    compute += prefix.backprop(first, end) + prefix.compress(first, end);
    link = std::max(link, compute) + prefix.transfer(first, end);
    return link;
  }

  /// Groups of the tensors after a prefix, and when their last transfer
  /// ends.
  struct Completion {
    std::vector<Group> groups;
    double ms;
  };

  /// The best groups of tensors k..N-1 after `groups` (local_opt_fuse);
  /// every completion it tries is offered as the global optimum.
  Completion findOptFusion(int64_t k, double compute, double link) {
    ++nodes;
    if (k == n)
      return {{}, link};
    // local_opt_fuse: the rest as one group.
    std::vector<Group> local = {{k, n - 1}};
    double localCompute = compute, localLink = link;
    double localMs = extend(k, n, localCompute, localLink);
    consider(localMs, local);
    if (exhausted())
      return {local, localMs};
    // Pruning 2 (Eq. 5.5): a group that ends before j* finishes its
    // compression while the link is still busy.
    double delay = link - compute;
    int64_t jStar = k;
    for (int64_t i = k; i < n; ++i) {
      if (prefix.backprop(k, i + 1) + prefix.compress(k, i + 1) > delay)
        break;
      jStar = i;
    }
    for (int64_t i = jStar; i < n - 1; ++i) {
      // Pruning 1 (Eq. 5.4): the rest as one group bounds both streams.
      double base = prefix.backprop(k, n) + prefix.compress(k, i + 1) +
                    prefix.compress(i + 1, n);
      double cases =
          std::max(prefix.backprop(k, i + 1) + prefix.compress(k, i + 1),
                   delay) +
          prefix.transfer(k, i + 1) + prefix.transfer(i + 1, n);
      if (compute + std::max(base, cases) > bestMs)
        continue;
      double nextCompute = compute, nextLink = link;
      extend(k, i + 1, nextCompute, nextLink);
      groups.push_back({k, i});
      Completion rest = findOptFusion(i + 1, nextCompute, nextLink);
      groups.pop_back();
      if (rest.ms < localMs) {
        localMs = rest.ms;
        local = {{k, i}};
        local.insert(local.end(), rest.groups.begin(), rest.groups.end());
      }
      if (exhausted())
        break;
    }
    return {local, localMs};
  }

  Prefix prefix;
  int64_t n;
  int64_t maxNodes;
  int64_t nodes = 0;
  /// The groups of the prefix being extended.
  std::vector<Group> groups;
  double bestMs = kInf;
  std::vector<Group> best;
};
} // namespace

BranchAndBound branchAndBoundPlan(const Problem &problem, int64_t maxNodes) {
  if (problem.tensors.empty())
    return {};
  return BranchAndBoundSearch(problem, maxNodes).run();
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
  Plan plan = planOf(problem, groups);
  plan.thresholdBytes = thresholdBytes;
  return plan;
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

namespace {
/// The best of `make`'s plans for sizes from `smallest` to `largest`
/// bytes, doubling.
template <typename MakePlan>
Plan bestOverSizes(int64_t smallest, int64_t largest, MakePlan make) {
  Plan best = make(smallest);
  for (int64_t bytes = 2 * smallest; bytes <= largest; bytes *= 2) {
    Plan candidate = make(bytes);
    if (candidate.iterationMs < best.iterationMs)
      best = candidate;
  }
  return best;
}

/// Bucket sizes of 2, 4, ..., 64 MB, the thesis's sweep.
template <typename MakePlan> Plan bestOverBuckets(MakePlan make) {
  return bestOverSizes(2 * int64_t(kBytesPerMB), 64 * int64_t(kBytesPerMB),
                       make);
}
} // namespace

Plan bestBucketPlan(const Problem &problem) {
  return bestOverBuckets(
      [&](int64_t bytes) { return thresholdPlan(problem, bytes); });
}

Plan fp32Plan(const Problem &problem, int64_t thresholdBytes) {
  Plan plan = thresholdPlan(problem, thresholdBytes);
  plan.compressed.assign(plan.groups.size(), false);
  plan.iterationMs = evaluate(problem, plan.groups, plan.compressed);
  return plan;
}

Plan bestFp32Plan(const Problem &problem) {
  return bestOverBuckets(
      [&](int64_t bytes) { return fp32Plan(problem, bytes); });
}

Plan hipressPlan(const Problem &problem, int64_t thresholdBytes) {
  Plan plan = perTensorPlan(problem);
  for (const Tensor &tensor : problem.tensors)
    plan.compressed.push_back(tensor.bytes >= thresholdBytes);
  plan.thresholdBytes = thresholdBytes;
  plan.iterationMs = evaluate(problem, plan.groups, plan.compressed);
  return plan;
}

Plan bestHipressPlan(const Problem &problem) {
  return bestOverSizes(4096, 64 * int64_t(kBytesPerMB), [&](int64_t bytes) {
    return hipressPlan(problem, bytes);
  });
}

Plan jointPlan(const Problem &problem) {
  Plan optimal = optimalPlan(problem);
  optimal.compressed.assign(optimal.groups.size(), true);
  Plan best;
  for (Plan plan : {optimal, bestFp32Plan(problem), bestHipressPlan(problem)}) {
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t g = 0; g < plan.groups.size(); ++g) {
        plan.compressed[g] = !plan.compressed[g];
        double ms = evaluate(problem, plan.groups, plan.compressed);
        if (ms < plan.iterationMs - 1e-12) {
          plan.iterationMs = ms;
          changed = true;
        } else {
          plan.compressed[g] = !plan.compressed[g];
        }
      }
    }
    plan.thresholdBytes = 0;
    if (best.groups.empty() || plan.iterationMs < best.iterationMs)
      best = plan;
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
