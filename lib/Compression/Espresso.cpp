//===- Espresso.cpp - compression decisions per tensor --------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Compression/Espresso.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace hetero::espresso {
namespace {

bool hasNodes(const Problem &problem) {
  return problem.nodeSize > 1 && problem.nodeSize < problem.ranks &&
         problem.ranks % problem.nodeSize == 0;
}

struct Timeline {
  double endMs = 0.0;
  double backpropEndMs = 0.0;
  std::vector<double> collectiveEndMs;
};

Timeline run(const Problem &problem, const std::vector<Decision> &decisions) {
  Timeline timeline;
  double gpu = 0.0, cpu = 0.0, link = 0.0, gpuDecompress = 0.0;
  double cpuDecompress = 0.0, end = 0.0;
  const fusion::LinearCost &l = problem.link;
  for (size_t t = 0; t < problem.tensors.size(); ++t) {
    const fusion::Tensor &tensor = problem.tensors[t];
    const Decision &decision = decisions[t];
    const DeviceCosts &device =
        decision.device == Device::Gpu ? problem.gpu : problem.cpu;
    int64_t bytes = tensor.bytes;
    // A hierarchical collective runs among the nodes, between an intra-node
    // reduce and broadcast.
    bool nodes = decision.hierarchical && decision.scheme != Scheme::Dense;
    double ranks =
        double(nodes ? problem.ranks / problem.nodeSize : problem.ranks);
    double intra = 0.0;
    if (nodes) {
      double m = double(problem.nodeSize);
      intra = 2.0 * (m - 1.0) *
              (problem.intraLink.alphaMs + problem.intraLink.betaMsPerMB *
                                               double(bytes) / m /
                                               fusion::kBytesPerMB);
    }
    int64_t slice = int64_t(double(bytes) / ranks);
    double wire = double(bytes) * problem.wireFraction;
    gpu += tensor.backwardMs;
    double ready = gpu;
    if (decision.scheme != Scheme::Dense) {
      if (decision.device == Device::Gpu) {
        gpu += device.compress(bytes);
        ready = gpu;
      } else {
        cpu = std::max(cpu, ready) + device.compress(bytes);
        ready = cpu;
      }
    }
    double start = std::max(ready, link), duration = 0.0, decompress = 0.0;
    double steps = ranks - 1.0;
    switch (decision.scheme) {
    case Scheme::Dense:
      duration = 2.0 * steps *
                 (l.alphaMs +
                  l.betaMsPerMB * double(bytes) / ranks / fusion::kBytesPerMB);
      break;
    case Scheme::AllGather:
      duration =
          steps * (l.alphaMs + l.betaMsPerMB * wire / fusion::kBytesPerMB);
      decompress = ranks * device.decompress(bytes);
      break;
    case Scheme::AllToAll:
      duration =
          2.0 * steps *
              (l.alphaMs + l.betaMsPerMB * wire / ranks / fusion::kBytesPerMB) +
          device.compress(slice);
      decompress = ranks * device.decompress(slice) + device.decompress(bytes);
      break;
    }
    link = start + duration + intra;
    timeline.collectiveEndMs.push_back(link);
    end = std::max(end, link);
    if (decision.scheme != Scheme::Dense) {
      double &stream =
          decision.device == Device::Gpu ? gpuDecompress : cpuDecompress;
      stream = std::max(stream, link) + decompress;
      end = std::max(end, stream);
    }
  }
  timeline.backpropEndMs = gpu;
  timeline.endMs = std::max({end, gpu, cpu});
  return timeline;
}

} // namespace

double simulate(const Problem &problem,
                const std::vector<Decision> &decisions) {
  return run(problem, decisions).endMs;
}

namespace {

/// Alg 4.1's passes from `start` (the paper starts from all dense, and
/// then leaves the tensors hidden behind the backprop alone).
Plan improve(const Problem &problem, std::vector<Decision> start,
             const std::vector<size_t> &order, bool skipHidden) {
  Plan plan{std::move(start), 0.0};
  std::vector<Decision> all = options(problem);
  // Passes over the tensors until one changes nothing; later passes
  // revisit every tensor, since a hidden transfer still holds the link
  // that later ones wait for.
  for (bool changed = true, first = true; changed; first = false) {
    changed = false;
    for (size_t t : order) {
      Timeline current = run(problem, plan.decisions);
      if (first && skipHidden &&
          current.collectiveEndMs[t] <= current.backpropEndMs)
        continue;
      Decision best = plan.decisions[t];
      double bestMs = current.endMs;
      for (const Decision &option : all) {
        plan.decisions[t] = option;
        double ms = simulate(problem, plan.decisions);
        if (ms < bestMs - 1e-12) {
          bestMs = ms;
          best = option;
          changed = true;
        }
      }
      plan.decisions[t] = best;
    }
  }
  plan.iterationMs = simulate(problem, plan.decisions);
  return plan;
}

} // namespace

Plan greedyPlan(const Problem &problem) {
  size_t n = problem.tensors.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return problem.tensors[a].bytes > problem.tensors[b].bytes;
  });
  // From all dense (the paper's start), and from every option applied to
  // all tensors: one tensor's move alone cannot leave a plateau where only
  // compressing many together pays.
  Plan best = improve(problem, std::vector<Decision>(n), order, true);
  for (const Decision &option : options(problem)) {
    Plan plan =
        improve(problem, std::vector<Decision>(n, option), order, false);
    if (plan.iterationMs < best.iterationMs - 1e-12)
      best = plan;
  }
  return best;
}

Plan offloadPlan(const Problem &problem, const Plan &plan) {
  // Groups of GPU-compressed tensors of equal size, in ready order.
  std::map<int64_t, std::vector<size_t>> groups;
  for (size_t t = 0; t < plan.decisions.size(); ++t)
    if (plan.decisions[t].scheme != Scheme::Dense &&
        plan.decisions[t].device == Device::Gpu)
      groups[problem.tensors[t].bytes].push_back(t);
  std::vector<std::vector<size_t>> members;
  for (auto &entry : groups)
    members.push_back(entry.second);
  Plan best = plan;
  best.iterationMs = simulate(problem, plan.decisions);
  // Every vector of counts, as a mixed-radix number.
  std::vector<size_t> counts(members.size(), 0);
  while (true) {
    size_t g = 0;
    while (g < members.size() && counts[g] == members[g].size())
      counts[g++] = 0;
    if (g == members.size())
      break;
    ++counts[g];
    std::vector<Decision> decisions = plan.decisions;
    for (size_t h = 0; h < members.size(); ++h)
      for (size_t c = 0; c < counts[h]; ++c)
        decisions[members[h][members[h].size() - 1 - c]].device = Device::Cpu;
    double ms = simulate(problem, decisions);
    if (ms < best.iterationMs)
      best = {decisions, ms};
  }
  return best;
}

Plan espressoPlan(const Problem &problem) {
  return offloadPlan(problem, greedyPlan(problem));
}

Plan exhaustivePlan(const Problem &problem) {
  size_t n = problem.tensors.size();
  std::vector<Decision> all = options(problem);
  std::vector<size_t> choice(n, 0);
  std::vector<Decision> decisions(n);
  Plan best{decisions, simulate(problem, decisions)};
  while (true) {
    size_t t = 0;
    while (t < n && choice[t] == all.size() - 1)
      choice[t++] = 0;
    if (t == n)
      break;
    ++choice[t];
    for (size_t i = 0; i < n; ++i)
      decisions[i] = all[choice[i]];
    double ms = simulate(problem, decisions);
    if (ms < best.iterationMs)
      best = {decisions, ms};
  }
  return best;
}

std::vector<Decision> options(const Problem &problem) {
  std::vector<Decision> result = {{Scheme::Dense, Device::Gpu, false}};
  for (bool hierarchical : {false, true}) {
    if (hierarchical && !hasNodes(problem))
      continue;
    for (Device device : {Device::Gpu, Device::Cpu})
      for (Scheme scheme : {Scheme::AllGather, Scheme::AllToAll})
        result.push_back({scheme, device, hierarchical});
  }
  return result;
}

std::string describe(const Decision &decision) {
  if (decision.scheme == Scheme::Dense)
    return "dense";
  return std::string(decision.device == Device::Gpu ? "gpu " : "cpu ") +
         (decision.scheme == Scheme::AllGather ? "allgather" : "alltoall") +
         (decision.hierarchical ? " hierarchical" : "");
}

} // namespace hetero::espresso
