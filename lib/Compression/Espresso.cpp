//===- Espresso.cpp - compression decisions per tensor --------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Compression/Espresso.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iterator>
#include <limits>
#include <memory>
#include <numeric>
#include <queue>

namespace hetero::espresso {

bool Transform::operator==(const Transform &other) const {
  return decompress == other.decompress && compress == other.compress &&
         (!decompress || decompressOn == other.decompressOn) &&
         (!compress || compressOn == other.compressOn);
}

bool Decision::compressed() const {
  return std::any_of(steps.begin(), steps.end(),
                     [](const Step &step) { return step.compressed; });
}

bool Decision::onlyOn(Device device) const {
  auto on = [&](const Transform &t) {
    return (!t.decompress || t.decompressOn == device) &&
           (!t.compress || t.compressOn == device);
  };
  return on(after) && std::all_of(steps.begin(), steps.end(),
                                  [&](const Step &s) { return on(s.before); });
}

Decision Decision::movedTo(Device device) const {
  Decision moved = *this;
  auto move = [&](Transform &t) {
    t.decompressOn = t.decompress ? device : Device::Gpu;
    t.compressOn = t.compress ? device : Device::Gpu;
  };
  for (Step &step : moved.steps)
    move(step.before);
  move(moved.after);
  return moved;
}

bool hasNodes(const Problem &problem) {
  return problem.nodeSize > 1 && problem.nodeSize < problem.ranks &&
         problem.ranks % problem.nodeSize == 0;
}

//===----------------------------------------------------------------------===//
// The decision tree
//===----------------------------------------------------------------------===//

namespace {

/// A communication step of a pattern before its payload state is chosen:
/// indivisible, or step 1 or 2 of a divisible scheme of the scatter family
/// (ReduceScatter / AllToAll, then AllGather) or the root family (Reduce /
/// Gather, then Broadcast).
enum class Kind { Single, Split, Join };
struct Slot {
  Scope scope;
  Kind kind;
  bool scatter;
};

/// The first step of a divisible scheme.
bool isSplit(Routine routine) {
  return routine == Routine::ReduceScatter || routine == Routine::AllToAll ||
         routine == Routine::Reduce || routine == Routine::Gather;
}

Routine routine(const Slot &slot, bool compressed) {
  switch (slot.kind) {
  case Kind::Single:
    return compressed ? Routine::AllGather : Routine::AllReduce;
  case Kind::Split:
    if (slot.scatter)
      return compressed ? Routine::AllToAll : Routine::ReduceScatter;
    return compressed ? Routine::Gather : Routine::Reduce;
  case Kind::Join:
    return slot.scatter ? Routine::AllGather : Routine::Broadcast;
  }
  return Routine::AllReduce;
}

std::vector<std::vector<Slot>> patterns(bool nodes) {
  auto phase = [](Scope scope) {
    return std::vector<std::vector<Slot>>{
        {{scope, Kind::Single, false}},
        {{scope, Kind::Split, true}, {scope, Kind::Join, true}},
        {{scope, Kind::Split, false}, {scope, Kind::Join, false}}};
  };
  std::vector<std::vector<Slot>> result = phase(Scope::Flat);
  if (!nodes)
    return result;
  for (bool scatter : {true, false})
    for (std::vector<Slot> inter : phase(Scope::Inter)) {
      std::vector<Slot> pattern = {{Scope::Intra, Kind::Split, scatter}};
      pattern.insert(pattern.end(), inter.begin(), inter.end());
      pattern.push_back({Scope::Intra, Kind::Join, scatter});
      result.push_back(pattern);
    }
  return result;
}

/// The transforms that take a payload from one state to the next.
std::vector<Transform> transforms(bool from, bool to) {
  std::vector<Transform> result;
  const Device devices[] = {Device::Gpu, Device::Cpu};
  if (!from && !to)
    return {Transform{}};
  if (!from) {
    for (Device d : devices)
      result.push_back({false, Device::Gpu, true, d});
  } else if (!to) {
    for (Device d : devices)
      result.push_back({true, d, false, Device::Gpu});
  } else {
    result.push_back(Transform{}); // the payloads pass through
    for (Device decompress : devices)
      for (Device compress : devices)
        result.push_back({true, decompress, true, compress});
  }
  return result;
}

void enumerate(const std::vector<Slot> &pattern, size_t index, bool state,
               Decision &current, std::vector<Decision> &result) {
  if (index == pattern.size()) {
    for (const Transform &t : transforms(state, false)) {
      current.after = t;
      result.push_back(current);
    }
    return;
  }
  for (bool compressed : {false, true})
    for (const Transform &t : transforms(state, compressed)) {
      current.steps.push_back({routine(pattern[index], compressed),
                               pattern[index].scope, compressed, t});
      enumerate(pattern, index + 1, compressed, current, result);
      current.steps.pop_back();
    }
}

} // namespace

std::vector<Decision> options(const Problem &problem) {
  std::vector<Decision> result;
  for (const std::vector<Slot> &pattern : patterns(hasNodes(problem))) {
    Decision current;
    current.steps.clear();
    enumerate(pattern, 0, false, current, result);
  }
  return result;
}

namespace {
/// The options of `space` whose every transform runs on the GPU.
std::vector<Decision> onGpu(const std::vector<Decision> &space) {
  std::vector<Decision> result;
  std::copy_if(space.begin(), space.end(), std::back_inserter(result),
               [](const Decision &d) { return d.onlyOn(Device::Gpu); });
  return result;
}
} // namespace

std::vector<Decision> gpuOptions(const Problem &problem) {
  return onGpu(options(problem));
}

int64_t groupSize(const Problem &problem, Scope scope) {
  if (!hasNodes(problem) || scope == Scope::Flat)
    return problem.ranks;
  return scope == Scope::Intra ? problem.nodeSize
                               : problem.ranks / problem.nodeSize;
}

namespace {
/// The divisible schemes of `decision`: their first and second steps.
std::vector<std::pair<size_t, size_t>> schemes(const Decision &decision) {
  std::vector<std::pair<size_t, size_t>> result;
  std::vector<size_t> open;
  for (size_t i = 0; i < decision.steps.size(); ++i) {
    const Step &step = decision.steps[i];
    if (isSplit(step.routine))
      open.push_back(i);
    else if (!open.empty() && decision.steps[open.back()].scope == step.scope) {
      result.push_back({open.back(), i});
      open.pop_back();
    }
  }
  return result;
}
} // namespace

std::vector<Decision> divisions(const Problem &problem,
                                const Decision &decision) {
  std::vector<Decision> result = {decision};
  for (auto [first, second] : schemes(decision)) {
    int64_t g = groupSize(problem, decision.steps[first].scope);
    if (g < 2)
      continue; // one rank: nothing to divide
    std::vector<Decision> varied;
    for (const Decision &d : result)
      for (int64_t n = 1; n <= g; ++n) {
        Decision v = d;
        Step &split = v.steps[first];
        bool dense = !split.compressed;
        split.routine =
            n == 1 ? (dense ? Routine::Reduce : Routine::Gather)
                   : (dense ? Routine::ReduceScatter : Routine::AllToAll);
        split.parts = n == 1 || n == g ? 0 : n;
        v.steps[second].routine =
            n == 1 ? Routine::Broadcast : Routine::AllGather;
        varied.push_back(std::move(v));
      }
    result = std::move(varied);
  }
  // `decision` first, as it was.
  auto self = std::find(result.begin(), result.end(), decision);
  if (self != result.end())
    std::rotate(result.begin(), self, self + 1);
  return result;
}

Decision decision(const Lowered &lowered) {
  Decision result;
  if (lowered.scheme == Scheme::Dense)
    return result;
  Scope scope = lowered.hierarchical ? Scope::Inter : Scope::Flat;
  Device d = lowered.device;
  Transform compress{false, Device::Gpu, true, d};
  Transform decompress{true, d, false, Device::Gpu};
  Transform recompress{true, d, true, d};
  if (lowered.scheme == Scheme::AllGather)
    result.steps = {{Routine::AllGather, scope, true, compress}};
  else
    result.steps = {{Routine::AllToAll, scope, true, compress},
                    {Routine::AllGather, scope, true, recompress}};
  if (!lowered.hierarchical) {
    result.after = decompress;
    return result;
  }
  result.steps.insert(result.steps.begin(),
                      {Routine::Reduce, Scope::Intra, false, {}});
  result.steps.push_back({Routine::Broadcast, Scope::Intra, false, decompress});
  return result;
}

namespace {
std::vector<Lowered> allLowered(bool nodes) {
  std::vector<Lowered> result = {{}};
  for (bool hierarchical : {false, true}) {
    if (hierarchical && !nodes)
      continue;
    for (Device device : {Device::Gpu, Device::Cpu})
      for (Scheme scheme : {Scheme::AllGather, Scheme::AllToAll})
        result.push_back({scheme, device, hierarchical});
  }
  return result;
}
} // namespace

std::optional<Lowered> lowered(const Decision &d) {
  for (const Lowered &candidate : allLowered(true))
    if (decision(candidate) == d)
      return candidate;
  return std::nullopt;
}

std::vector<Decision> lowerableOptions(const Problem &problem) {
  std::vector<Decision> result;
  for (const Lowered &candidate : allLowered(hasNodes(problem)))
    result.push_back(decision(candidate));
  return result;
}

//===----------------------------------------------------------------------===//
// The timeline
//===----------------------------------------------------------------------===//

namespace {

enum Resource { Gpu, Cpu, IntraLink, InterLink, NumResources };

struct Task {
  Resource resource;
  double ms;
};

/// The parts of a divisible scheme's first step over g ranks.
double splitParts(const Step &step, double g) {
  if (step.parts > 0)
    return double(step.parts);
  return step.routine == Routine::ReduceScatter ||
                 step.routine == Routine::AllToAll
             ? g
             : 1.0;
}

/// A routine over g ranks in a scheme of n parts (the header's table).
double collectiveMs(Routine routine, double g, double n,
                    const fusion::LinearCost &link, double bytes) {
  double a = link.alphaMs, b = link.betaMsPerMB * bytes / fusion::kBytesPerMB;
  switch (routine) {
  case Routine::AllReduce:
    return 2.0 * (g - 1.0) * a + 2.0 * (g - 1.0) / g * b;
  case Routine::ReduceScatter:
  case Routine::Reduce:
    return (g - 1.0) * a + std::min(1.0, (g - 1.0) / n) * b;
  case Routine::AllToAll:
  case Routine::Gather:
    return (g - 1.0) * a + (g - 1.0) / n * b;
  case Routine::AllGather:
  case Routine::Broadcast:
    return (g - 1.0) * a + std::min(n, g - 1.0) * b;
  }
  return 0.0;
}

/// The tasks a tensor's gradient goes through after its backprop.
std::vector<Task> tasks(const Problem &problem, int64_t tensorBytes,
                        const Decision &decision) {
  std::vector<Task> result;
  bool nodes = hasNodes(problem);
  // What a rank holds: `pieces` slices of `fraction` of the tensor, each
  // as `payloads` compressed payloads still to be summed (1 when dense).
  double fraction = 1.0, pieces = 1.0, payloads = 1.0;
  bool compressed = false;
  // The open first steps of divisible schemes, innermost last: scope,
  // routine and parts.
  struct Split {
    Scope scope;
    Routine routine;
    double parts;
  };
  std::vector<Split> splits;
  auto joins = [&](const Step &step) {
    return !splits.empty() && splits.back().scope == step.scope;
  };
  auto costs = [&](Device d) -> const DeviceCosts & {
    return d == Device::Gpu ? problem.gpu : problem.cpu;
  };
  auto slice = [&] { return int64_t(fraction * double(tensorBytes)); };
  auto apply = [&](const Transform &t) {
    if (t.decompress && compressed) {
      result.push_back(
          {t.decompressOn == Device::Gpu ? Gpu : Cpu,
           pieces * payloads * costs(t.decompressOn).decompress(slice())});
      compressed = false;
      payloads = 1.0;
      fraction *= pieces;
      pieces = 1.0;
    }
    if (t.compress && !compressed) {
      result.push_back({t.compressOn == Device::Gpu ? Gpu : Cpu,
                        pieces * costs(t.compressOn).compress(slice())});
      compressed = true;
      payloads = 1.0;
    }
  };
  for (const Step &step : decision.steps) {
    apply(step.before);
    double g = double(groupSize(problem, step.scope));
    const fusion::LinearCost *link = &problem.link;
    Resource resource = InterLink;
    if (nodes && step.scope == Scope::Intra) {
      link = &problem.intraLink;
      resource = IntraLink;
    }
    double held = pieces * payloads * fraction * double(tensorBytes) *
                  (compressed ? problem.wireFraction : 1.0);
    // After an intra-node split into n parts, the node's n roots all run
    // the inter-node phase and share the node's link.
    double sharing = 1.0;
    if (step.scope == Scope::Inter)
      for (const Split &split : splits)
        if (split.scope == Scope::Intra)
          sharing *= split.parts;
    bool split = isSplit(step.routine);
    bool join = !split && joins(step);
    // An indivisible all-gather spreads every rank's payload: n = g.
    double n = split ? splitParts(step, g) : join ? splits.back().parts : g;
    result.push_back(
        {resource, collectiveMs(step.routine, g, n, *link, held * sharing)});
    if (split) {
      fraction /= n;
      if (step.routine == Routine::AllToAll || step.routine == Routine::Gather)
        payloads *= g; // each root receives every rank's payload
      splits.push_back({step.scope, step.routine, n});
    } else if (join) {
      if (compressed)
        pieces *= n;
      else
        fraction *= n;
      splits.pop_back();
    } else if (step.routine == Routine::AllGather) {
      payloads *= g; // an indivisible all-gather of compressed payloads
    }
  }
  apply(decision.after);
  return result;
}

} // namespace

namespace {

/// The event simulation behind `timeline`: each resource serves its ready
/// tasks first come, first served (the earlier tensor first on a tie).
/// Until tensor t's backward has ended, nothing depends on t's decision, so
/// a simulation paused there can be copied and resumed once per option of
/// t: the options share the prefix.
class Simulation {
public:
  Simulation(const Problem &problem, const std::vector<Decision> &decisions)
      : problem(&problem), chains(std::make_shared<Chains>()) {
    size_t n = problem.tensors.size();
    chains->resize(n);
    for (size_t t = 0; t < n; ++t)
      (*chains)[t] = chainOf(t, decisions[t]);
    for (int r = 0; r < NumResources; ++r)
      lanes[r].assign(r == Cpu ? std::max<int64_t>(problem.cpuWorkers, 1) : 1,
                      0.0);
    result.communicationEndMs.assign(n, 0.0);
    communications.assign(n, {-1.0, 0.0});
    if (n)
      queues[Gpu].push({0.0, 0, 0});
  }

  /// Runs until tensor `pause`'s backward has ended, before any of its
  /// communication is queued; to the end when `pause` is out of range.
  void run(size_t pause = SIZE_MAX) {
    resume();
    while (step(pause)) {
    }
  }

  /// Tensor t's decision from here on; t must be the tensor the
  /// simulation is paused at, or one whose chain has not started.
  void decide(size_t t, const Decision &decision) {
    overridden = t;
    override = chainOf(t, decision);
  }

  /// Runs to the end and returns the timeline.
  Timeline finish() {
    run();
    // A bubble is a gap between the communications of two tensors, not one
    // inside a tensor's own steps.
    std::vector<std::pair<double, double>> spans = communications;
    std::sort(spans.begin(), spans.end());
    double busyUntil = -1.0;
    for (auto [start, end] : spans) {
      if (start < 0.0)
        continue;
      if (busyUntil >= 0.0 && start > busyUntil + 1e-9)
        result.lastBubbleMs = busyUntil;
      busyUntil = std::max(busyUntil, end);
    }
    return result;
  }

private:
  using Chains = std::vector<std::vector<Task>>;
  struct Ready {
    double ms;
    size_t tensor, position;
    bool operator>(const Ready &other) const {
      if (ms != other.ms)
        return ms > other.ms;
      if (tensor != other.tensor)
        return tensor > other.tensor;
      return position > other.position;
    }
  };
  using Queue =
      std::priority_queue<Ready, std::vector<Ready>, std::greater<Ready>>;

  std::vector<Task> chainOf(size_t t, const Decision &decision) const {
    std::vector<Task> chain = {{Gpu, problem->tensors[t].backwardMs}};
    std::vector<Task> rest =
        tasks(*problem, problem->tensors[t].bytes, decision);
    chain.insert(chain.end(), rest.begin(), rest.end());
    return chain;
  }

  const std::vector<Task> &chain(size_t t) const {
    return t == overridden ? override : (*chains)[t];
  }

  /// Queues the successor of the task a pause stopped after.
  void resume() {
    if (!paused)
      return;
    paused = false;
    queueNext(pausedTask, pausedEnd);
  }

  void queueNext(const Ready &task, double end) {
    if (task.position + 1 < chain(task.tensor).size()) {
      const Task &next = chain(task.tensor)[task.position + 1];
      queues[next.resource].push({end, task.tensor, task.position + 1});
    }
  }

  /// Serves one task; false when none is left or at the pause.
  bool step(size_t pause) {
    int pick = -1;
    double pickStart = 0.0;
    for (int r = 0; r < NumResources; ++r) {
      if (queues[r].empty())
        continue;
      double free = *std::min_element(lanes[r].begin(), lanes[r].end());
      double start = std::max(queues[r].top().ms, free);
      if (pick < 0 || start < pickStart ||
          (start == pickStart && queues[pick].top() > queues[r].top())) {
        pick = r;
        pickStart = start;
      }
    }
    if (pick < 0)
      return false;
    Ready task = queues[pick].top();
    queues[pick].pop();
    double &lane = *std::min_element(lanes[pick].begin(), lanes[pick].end());
    double end = pickStart + chain(task.tensor)[task.position].ms;
    lane = end;
    result.endMs = std::max(result.endMs, end);
    if (task.position == 0) {
      result.backpropEndMs = end;
      if (task.tensor + 1 < problem->tensors.size())
        queues[Gpu].push({end, task.tensor + 1, 0});
    }
    if (pick == IntraLink || pick == InterLink) {
      result.communicationEndMs[task.tensor] = end;
      auto &span = communications[task.tensor];
      if (span.first < 0.0)
        span.first = pickStart;
      span.second = end;
    }
    if (task.position == 0 && task.tensor == pause) {
      paused = true;
      pausedTask = task;
      pausedEnd = end;
      return false;
    }
    queueNext(task, end);
    return true;
  }

  const Problem *problem;
  /// Every tensor's chain, shared by the copies; `override` replaces
  /// tensor `overridden`'s.
  std::shared_ptr<Chains> chains;
  size_t overridden = SIZE_MAX;
  std::vector<Task> override;
  Queue queues[NumResources];
  std::vector<double> lanes[NumResources];
  Timeline result;
  /// Per tensor, when its first communication starts and its last ends.
  std::vector<std::pair<double, double>> communications;
  bool paused = false;
  Ready pausedTask{0.0, 0, 0};
  double pausedEnd = 0.0;
};

} // namespace

Timeline timeline(const Problem &problem,
                  const std::vector<Decision> &decisions) {
  return Simulation(problem, decisions).finish();
}

std::vector<double> simulateOptions(const Problem &problem,
                                    const std::vector<Decision> &decisions,
                                    size_t t,
                                    const std::vector<Decision> &options) {
  Simulation prefix(problem, decisions);
  prefix.run(t);
  std::vector<double> ends;
  ends.reserve(options.size());
  for (const Decision &option : options) {
    Simulation resumed = prefix;
    resumed.decide(t, option);
    ends.push_back(resumed.finish().endMs);
  }
  return ends;
}

double simulate(const Problem &problem,
                const std::vector<Decision> &decisions) {
  return timeline(problem, decisions).endMs;
}

//===----------------------------------------------------------------------===//
// The searches
//===----------------------------------------------------------------------===//

namespace {

/// Largest first; the latest-ready (closest to the output layer, which the
/// thesis counts from the end of backprop) first among equal sizes.
std::vector<size_t> sizeOrder(const Problem &problem) {
  std::vector<size_t> order(problem.tensors.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (problem.tensors[a].bytes != problem.tensors[b].bytes)
      return problem.tensors[a].bytes > problem.tensors[b].bytes;
    return a > b;
  });
  return order;
}

/// Alg 4.2 tries every vector of counts up to this many.
constexpr int64_t kMaxOffloadVectors = 1 << 16;

bool contains(const std::vector<Decision> &space, const Decision &d) {
  return std::find(space.begin(), space.end(), d) != space.end();
}

/// Gives tensor `t` of `plan` the best of `candidates` given the others,
/// keeping its decision unless one is strictly better, while `evaluations`
/// stays below `limit`; true if it changed.
bool improve(const Problem &problem, Plan &plan, size_t t,
             const std::vector<Decision> &candidates, int64_t &evaluations,
             int64_t limit = std::numeric_limits<int64_t>::max()) {
  // The options evaluated, in order, within the limit; their timelines
  // share the prefix up to t's backward.
  std::vector<Decision> tried;
  for (const Decision &option : candidates) {
    if (evaluations + int64_t(tried.size()) >= limit)
      break;
    if (!(option == plan.decisions[t]))
      tried.push_back(option);
  }
  if (tried.empty())
    return false;
  std::vector<double> ends = simulateOptions(problem, plan.decisions, t, tried);
  evaluations += int64_t(tried.size());
  bool changed = false;
  for (size_t i = 0; i < tried.size(); ++i)
    if (ends[i] < plan.iterationMs - 1e-12) {
      plan.iterationMs = ends[i];
      plan.decisions[t] = tried[i];
      changed = true;
    }
  return changed;
}

Plan gpuGreedy(const Problem &problem, const std::vector<Decision> &gpuSpace) {
  size_t n = problem.tensors.size();
  Plan plan{std::vector<Decision>(n), 0.0, 0};
  std::vector<bool> candidate(n, true);
  auto remove = [&] {
    Timeline current = timeline(problem, plan.decisions);
    ++plan.evaluations;
    for (size_t t = 0; t < n; ++t)
      if (candidate[t] && !plan.decisions[t].compressed() &&
          current.communicationEndMs[t] <= current.lastBubbleMs + 1e-9)
        candidate[t] = false;
    return current.endMs;
  };
  plan.iterationMs = remove();
  for (size_t t : sizeOrder(problem)) {
    if (!candidate[t])
      continue;
    improve(problem, plan, t, gpuSpace, plan.evaluations);
    remove();
  }
  return plan;
}

Plan offload(const Problem &problem, const Plan &plan,
             const std::vector<Decision> &space) {
  // Groups of GPU-compressed tensors of equal size and option, earliest
  // ready first.
  struct Group {
    int64_t bytes;
    Decision decision;
    std::vector<size_t> members;
  };
  std::vector<Group> groups;
  for (size_t t = 0; t < plan.decisions.size(); ++t) {
    const Decision &d = plan.decisions[t];
    if (!d.compressed() || !d.onlyOn(Device::Gpu) ||
        !contains(space, d.movedTo(Device::Cpu)))
      continue;
    int64_t bytes = problem.tensors[t].bytes;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const Group &g) {
      return g.bytes == bytes && g.decision == d;
    });
    if (it == groups.end())
      groups.push_back({bytes, d, {t}});
    else
      it->members.push_back(t);
  }
  Plan best = plan;
  best.iterationMs = simulate(problem, plan.decisions);
  ++best.evaluations;
  auto evaluate = [&](const std::vector<size_t> &counts) {
    std::vector<Decision> decisions = plan.decisions;
    for (size_t h = 0; h < groups.size(); ++h)
      for (size_t c = 0; c < counts[h]; ++c)
        decisions[groups[h].members[c]] =
            groups[h].decision.movedTo(Device::Cpu);
    double ms = simulate(problem, decisions);
    ++best.evaluations;
    if (ms < best.iterationMs - 1e-12) {
      best.decisions = std::move(decisions);
      best.iterationMs = ms;
      return true;
    }
    return false;
  };
  double vectors = 1.0;
  for (const Group &group : groups)
    vectors *= double(group.members.size() + 1);
  std::vector<size_t> counts(groups.size(), 0);
  if (vectors > double(kMaxOffloadVectors)) {
    // Too many vectors to try each: one group's count at a time, the best
    // given the others, until no group's count changes.
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t g = 0; g < groups.size(); ++g) {
        size_t keep = counts[g];
        for (size_t c = 0; c <= groups[g].members.size(); ++c) {
          if (c == keep)
            continue;
          counts[g] = c;
          if (evaluate(counts)) {
            keep = c;
            changed = true;
          }
        }
        counts[g] = keep;
      }
    }
    return best;
  }
  // Every vector of counts, as a mixed-radix number.
  while (true) {
    size_t g = 0;
    while (g < groups.size() && counts[g] == groups[g].members.size())
      counts[g++] = 0;
    if (g == groups.size())
      break;
    ++counts[g];
    evaluate(counts);
  }
  return best;
}

} // namespace

Plan divisionPlan(const Problem &problem, const Plan &plan) {
  Plan best = plan;
  best.iterationMs = simulate(problem, best.decisions);
  best.evaluations = 1;
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t t : sizeOrder(problem))
      changed |=
          improve(problem, best, t, divisions(problem, best.decisions[t]),
                  best.evaluations);
  }
  return best;
}

Plan espressoPlan(const Problem &problem, const std::vector<Decision> &space) {
  Plan greedy = gpuGreedy(problem, onGpu(space));
  Plan plan = offload(problem, greedy, space);
  plan.evaluations += greedy.evaluations;
  return plan;
}

Plan gpuGreedyPlan(const Problem &problem) {
  return gpuGreedy(problem, gpuOptions(problem));
}

Plan offloadPlan(const Problem &problem, const Plan &plan) {
  return offload(problem, plan, options(problem));
}

Plan espressoPlan(const Problem &problem) {
  Plan thesis = espressoPlan(problem, options(problem));
  Plan divided = divisionPlan(problem, thesis);
  divided.evaluations += thesis.evaluations;
  return divided;
}

Plan allCompressedPlan(const Problem &problem,
                       const std::vector<Decision> &space) {
  Plan best;
  best.decisions.assign(problem.tensors.size(), Decision());
  best.iterationMs = std::numeric_limits<double>::infinity();
  for (const Decision &option : space) {
    if (!option.compressed())
      continue;
    std::vector<Decision> decisions(problem.tensors.size(), option);
    double ms = simulate(problem, decisions);
    ++best.evaluations;
    if (ms < best.iterationMs) {
      best.decisions = std::move(decisions);
      best.iterationMs = ms;
    }
  }
  if (best.evaluations == 0)
    best.iterationMs = simulate(problem, best.decisions);
  return best;
}

Plan searchPlan(const Problem &problem, const std::vector<Decision> &space,
                int64_t maxEvaluations) {
  size_t n = problem.tensors.size();
  Plan thesis = espressoPlan(problem, space);
  int64_t evaluations = thesis.evaluations;
  std::vector<std::vector<Decision>> starts = {thesis.decisions,
                                               std::vector<Decision>(n)};
  // A single tensor's move cannot leave a plateau where only compressing
  // many together pays; from each option on every tensor it can.
  if (space.size() <= 32)
    for (const Decision &option : space)
      starts.push_back(std::vector<Decision>(n, option));
  std::vector<size_t> order = sizeOrder(problem);
  Plan best = thesis;
  for (std::vector<Decision> &start : starts) {
    Plan plan{std::move(start), 0.0, 0};
    plan.iterationMs = simulate(problem, plan.decisions);
    ++evaluations;
    for (bool changed = true; changed && evaluations < maxEvaluations;) {
      changed = false;
      for (size_t t : order)
        changed |=
            improve(problem, plan, t, space, evaluations, maxEvaluations);
    }
    if (plan.iterationMs < best.iterationMs - 1e-12)
      best = plan;
  }
  best.evaluations = evaluations;
  return best;
}

Plan exhaustivePlan(const Problem &problem,
                    const std::vector<Decision> &space) {
  size_t n = problem.tensors.size();
  std::vector<size_t> choice(n, 0);
  std::vector<Decision> decisions(n, space.front());
  Plan best{decisions, simulate(problem, decisions), 1};
  while (true) {
    size_t t = 0;
    while (t < n && choice[t] == space.size() - 1)
      choice[t++] = 0;
    if (t == n)
      break;
    ++choice[t];
    for (size_t i = 0; i < n; ++i)
      decisions[i] = space[choice[i]];
    double ms = simulate(problem, decisions);
    ++best.evaluations;
    if (ms < best.iterationMs - 1e-12) {
      best.decisions = decisions;
      best.iterationMs = ms;
    }
  }
  return best;
}

namespace {
const char *name(Routine routine) {
  switch (routine) {
  case Routine::AllReduce:
    return "allreduce";
  case Routine::ReduceScatter:
    return "reduce_scatter";
  case Routine::AllGather:
    return "allgather";
  case Routine::Reduce:
    return "reduce";
  case Routine::Broadcast:
    return "broadcast";
  case Routine::AllToAll:
    return "alltoall";
  case Routine::Gather:
    return "gather";
  }
  return "";
}
const char *name(Device device) {
  return device == Device::Gpu ? "gpu" : "cpu";
}
const char *name(Scope scope) {
  switch (scope) {
  case Scope::Flat:
    return "flat";
  case Scope::Intra:
    return "intra";
  case Scope::Inter:
    return "inter";
  }
  return "";
}
void describe(const Transform &t, std::vector<std::string> &parts) {
  if (t.decompress)
    parts.push_back(std::string(name(t.decompressOn)) + " decompress");
  if (t.compress)
    parts.push_back(std::string(name(t.compressOn)) + " compress");
}
} // namespace

std::string describe(const Decision &d) {
  if (std::optional<Lowered> l = lowered(d)) {
    if (l->scheme == Scheme::Dense)
      return "dense";
    return std::string(name(l->device)) +
           (l->scheme == Scheme::AllGather ? " allgather" : " alltoall") +
           (l->hierarchical ? " hierarchical" : "");
  }
  std::vector<std::string> steps;
  for (const Step &step : d.steps)
    steps.push_back(std::string(name(step.scope)) + " " + name(step.routine) +
                    (step.compressed ? "*" : ""));
  for (auto [first, second] : schemes(d))
    if (int64_t n = d.steps[first].parts) {
      steps[first] += "/" + std::to_string(n);
      steps[second] += "/" + std::to_string(n);
    }
  std::vector<std::string> parts;
  for (size_t i = 0; i < d.steps.size(); ++i) {
    describe(d.steps[i].before, parts);
    parts.push_back(steps[i]);
  }
  describe(d.after, parts);
  std::string result;
  for (const std::string &part : parts)
    result += (result.empty() ? "" : " | ") + part;
  return result;
}

} // namespace hetero::espresso
