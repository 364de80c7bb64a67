//===- SyncSim.cpp - data-parallel sync of pipeline replicas --------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Sim/SyncSim.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <queue>
#include <random>
#include <set>

namespace hetero::sim {

namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

/// A uniform draw in [0, 1) that does not depend on the standard library's
/// distribution implementation.
double uniform(std::mt19937_64 &generator) {
  return double(generator() >> 11) * 0x1.0p-53;
}

enum class OpKind { Forward, Backward, Sync, StepEnd };

struct Op {
  OpKind kind;
  int64_t microbatch;
  bool final = false;
};

/// 1F1B of micro-batches [first, first + count) with their syncs.
void appendOneFOneB(const SyncConfig &config, int64_t stage, int64_t first,
                    int64_t count, bool finalStep, std::vector<Op> &program) {
  int64_t warmup = std::min(config.stages - stage, count);
  for (int64_t m = 0; m < warmup; ++m)
    program.push_back({OpKind::Forward, first + m});
  for (int64_t b = 0; b < count; ++b) {
    program.push_back({OpKind::Backward, first + b});
    bool last = b == count - 1;
    if (last || (b + 1) % config.syncEvery == 0)
      program.push_back({OpKind::Sync, first + b, last && finalStep});
    if (b + warmup < count)
      program.push_back({OpKind::Forward, first + b + warmup});
  }
}

std::vector<Op> workerProgram(const SyncConfig &config, int64_t stage) {
  std::vector<Op> program;
  int64_t total = config.microbatches;
  if (config.stepMicrobatches <= 0) {
    appendOneFOneB(config, stage, 0, total, /*finalStep=*/true, program);
    return program;
  }
  for (int64_t first = 0; first < total; first += config.stepMicrobatches) {
    int64_t count = std::min(config.stepMicrobatches, total - first);
    appendOneFOneB(config, stage, first, count, first + count == total,
                   program);
    program.push_back({OpKind::StepEnd, first + count - 1});
  }
  return program;
}

enum class EventKind { OpDone, Resume, Arrival, Timer };

struct Event {
  double timeMs;
  int64_t sequence;
  EventKind kind;
  int64_t worker;
  bool operator>(const Event &other) const {
    if (timeMs != other.timeMs)
      return timeMs > other.timeMs;
    return sequence > other.sequence;
  }
};

class Simulation {
public:
  explicit Simulation(const SyncConfig &config)
      : config(config), workers(config.stages * config.pipelines),
        scheduler(schedulerOptions(config)) {
    for (int64_t stage = 0; stage < config.stages; ++stage) {
      std::vector<Op> program = workerProgram(config, stage);
      for (int64_t replica = 0; replica < config.pipelines; ++replica) {
        Worker &worker = workers[index(stage, replica)];
        worker.program = program;
        worker.activationAt.assign(config.microbatches, kNever);
        worker.gradientAt.assign(config.microbatches, kNever);
        worker.generator.seed(config.seed * 0x9E3779B97F4A7C15ull +
                              uint64_t(index(stage, replica)));
      }
    }
    barrier.resize(config.stages);
  }

  SyncResult run() {
    for (int64_t w = 0; w < int64_t(workers.size()); ++w)
      tryStart(w, 0.0);
    while (!events.empty()) {
      Event event = events.top();
      events.pop();
      now = event.timeMs;
      switch (event.kind) {
      case EventKind::OpDone:
        finishOp(event.worker);
        break;
      case EventKind::Resume:
        workers[event.worker].busy = false;
        ++workers[event.worker].pc;
        tryStart(event.worker, now);
        break;
      case EventKind::Arrival:
        tryStart(event.worker, now);
        break;
      case EventKind::Timer:
        timers.erase(now);
        startGroups(scheduler.advance(now));
        scheduleTimer();
        break;
      }
    }
    return result();
  }

private:
  struct Worker {
    std::vector<Op> program;
    size_t pc = 0;
    bool busy = false;
    std::vector<double> activationAt;
    std::vector<double> gradientAt;
    std::mt19937_64 generator;
    /// The number of syncs it has entered.
    int64_t syncs = 0;
  };

  static sync::Options schedulerOptions(const SyncConfig &config) {
    sync::Options options = config.scheduler;
    options.stages = config.stages;
    options.replicas = config.pipelines;
    return options;
  }

  int64_t index(int64_t stage, int64_t replica) const {
    return stage * config.pipelines + replica;
  }
  int64_t stageOf(int64_t worker) const { return worker / config.pipelines; }
  int64_t replicaOf(int64_t worker) const { return worker % config.pipelines; }

  void push(double at, EventKind kind, int64_t worker) {
    events.push({at, sequence++, kind, worker});
  }

  double sleep(Worker &worker) {
    return uniform(worker.generator) < config.sleepProbability ? config.sleepMs
                                                               : 0.0;
  }

  void tryStart(int64_t w, double at) {
    Worker &worker = workers[w];
    if (worker.busy || worker.pc >= worker.program.size())
      return;
    const Op &op = worker.program[worker.pc];
    int64_t stage = stageOf(w);
    switch (op.kind) {
    case OpKind::Forward:
      if (stage > 0 && worker.activationAt[op.microbatch] > at)
        return;
      worker.busy = true;
      push(at + sleep(worker) + config.forwardMs, EventKind::OpDone, w);
      return;
    case OpKind::Backward:
      if (stage < config.stages - 1 && worker.gradientAt[op.microbatch] > at)
        return;
      worker.busy = true;
      push(at + sleep(worker) + config.backwardMs, EventKind::OpDone, w);
      return;
    case OpKind::Sync:
      worker.busy = true;
      enterSync(w, op.final);
      return;
    case OpKind::StepEnd: {
      worker.busy = true;
      int64_t replica = replicaOf(w);
      std::vector<int64_t> &arrived = stepBarrier[{replica, op.microbatch}];
      arrived.push_back(w);
      if (int64_t(arrived.size()) == config.stages)
        for (int64_t member : arrived)
          push(now + config.p2pMs, EventKind::Resume, member);
      return;
    }
    }
  }

  void finishOp(int64_t w) {
    Worker &worker = workers[w];
    const Op &op = worker.program[worker.pc];
    int64_t stage = stageOf(w), replica = replicaOf(w);
    double arrival = now + config.p2pMs;
    if (op.kind == OpKind::Forward && stage + 1 < config.stages) {
      int64_t next = index(stage + 1, replica);
      workers[next].activationAt[op.microbatch] = arrival;
      push(arrival, EventKind::Arrival, next);
    }
    if (op.kind == OpKind::Backward) {
      if (stage > 0) {
        int64_t previous = index(stage - 1, replica);
        workers[previous].gradientAt[op.microbatch] = arrival;
        push(arrival, EventKind::Arrival, previous);
      } else {
        ++completed;
        lastCompletionMs = now;
      }
    }
    worker.busy = false;
    ++worker.pc;
    tryStart(w, now);
  }

  void enterSync(int64_t w, bool final) {
    int64_t stage = stageOf(w), replica = replicaOf(w);
    int64_t round = workers[w].syncs++;
    switch (config.policy) {
    case SyncPolicy::SDPipe:
      startGroups(scheduler.ready(stage, replica, now, final));
      scheduleTimer();
      return;
    case SyncPolicy::AllReduce: {
      std::vector<int64_t> &arrived = barrier[stage][round];
      arrived.push_back(replica);
      if (int64_t(arrived.size()) == config.pipelines)
        finishGroup(stage, arrived, 0.0);
      return;
    }
    case SyncPolicy::AdPsgd: {
      std::vector<int64_t> &arrived = barrier[stage][round];
      arrived.push_back(replica);
      int64_t partner = partnerOf(stage, round, replica);
      if (partner == replica) {
        finishGroup(stage, {replica}, 0.0);
      } else if (std::count(arrived.begin(), arrived.end(), partner)) {
        finishGroup(stage,
                    {std::min(replica, partner), std::max(replica, partner)},
                    0.0);
      }
      return;
    }
    }
  }

  /// AD-PSGD's partner in a round: consecutive replicas of a shuffle every
  /// replica of the stage draws from the same seed.
  int64_t partnerOf(int64_t stage, int64_t round, int64_t replica) {
    auto key = std::make_pair(stage, round);
    auto found = matchings.find(key);
    if (found == matchings.end()) {
      std::vector<int64_t> order(config.pipelines);
      std::iota(order.begin(), order.end(), 0);
      std::mt19937_64 shared(config.seed ^ (uint64_t(stage) << 40) ^
                             uint64_t(round));
      for (int64_t i = config.pipelines - 1; i > 0; --i)
        std::swap(order[i], order[shared() % uint64_t(i + 1)]);
      std::vector<int64_t> partner(config.pipelines);
      for (int64_t i = 0; i < config.pipelines; ++i)
        partner[order[i]] = (i % 2 == 0 && i + 1 < config.pipelines)
                                ? order[i + 1]
                            : i % 2 == 1 ? order[i - 1]
                                         : order[i];
      found = matchings.emplace(key, std::move(partner)).first;
    }
    return found->second[replica];
  }

  void startGroups(const std::vector<sync::Group> &groups) {
    for (const sync::Group &group : groups)
      finishGroup(group.stage, group.members, config.rpcMs, group.mode,
                  group.tick);
  }

  void finishGroup(int64_t stage, const std::vector<int64_t> &members,
                   double extraMs, sync::Mode mode = sync::Mode::Normal,
                   int64_t tick = -1) {
    sync::Group group;
    group.stage = stage;
    group.tick = tick >= 0 ? tick : ticks[stage]++;
    group.dispatchMs = now;
    group.members = members;
    std::sort(group.members.begin(), group.members.end());
    group.mode = mode;
    double done = now + extraMs + averagingMs(config, stage, members.size());
    for (int64_t replica : group.members)
      push(done, EventKind::Resume, index(stage, replica));
    table.push_back(std::move(group));
  }

  void scheduleTimer() {
    std::optional<double> next = scheduler.nextDeadline();
    if (next && timers.insert(*next).second)
      push(*next, EventKind::Timer, -1);
  }

  std::string describe(int64_t w) const {
    const Worker &worker = workers[w];
    const Op &op = worker.program[worker.pc];
    std::string who = "worker (" + std::to_string(stageOf(w)) + ", " +
                      std::to_string(replicaOf(w)) + ")";
    std::string m = std::to_string(op.microbatch);
    switch (op.kind) {
    case OpKind::Forward:
      return who + " waits for the activation of F" + m;
    case OpKind::Backward:
      return who + " waits for the gradient of B" + m;
    case OpKind::Sync:
      return who + " waits in its sync after B" + m;
    case OpKind::StepEnd:
      return who + " waits for its pipeline to end the step of B" + m;
    }
    return who;
  }

  SyncResult result() {
    SyncResult out;
    for (int64_t w = 0; w < int64_t(workers.size()); ++w)
      if (workers[w].pc < workers[w].program.size()) {
        out.stalled = true;
        out.blocked.push_back(describe(w));
      }
    out.makespanMs = out.stalled ? lastCompletionMs : now;
    if (out.makespanMs > 0.0)
      out.throughput = double(completed) / (out.makespanMs / 1000.0);
    double members = 0.0;
    for (const sync::Group &group : table)
      members += double(group.members.size());
    if (!table.empty())
      out.meanGroupSize = members / double(table.size());
    out.table = std::move(table);
    out.counters = scheduler.counters();
    if (config.policy != SyncPolicy::SDPipe)
      out.counters.groups = int64_t(out.table.size());
    return out;
  }

  const SyncConfig &config;
  std::vector<Worker> workers;
  sync::Scheduler scheduler;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  int64_t sequence = 0;
  double now = 0.0;
  std::set<double> timers;
  /// All-Reduce and AD-PSGD: per stage and round, who has arrived.
  std::vector<std::map<int64_t, std::vector<int64_t>>> barrier;
  /// The workers of a (pipeline, last micro-batch of a step) at its end.
  std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> stepBarrier;
  std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> matchings;
  std::map<int64_t, int64_t> ticks;
  std::vector<sync::Group> table;
  int64_t completed = 0;
  double lastCompletionMs = 0.0;
};

} // namespace

double averagingMs(const SyncConfig &config, int64_t stage, int64_t size) {
  if (size <= 1)
    return 0.0;
  double g = double(size);
  double bytes = config.stageBytesPerStage.empty()
                     ? config.stageBytes
                     : config.stageBytesPerStage[stage];
  return 2.0 * (g - 1.0) / g * bytes / config.bandwidthBytesPerMs +
         2.0 * (g - 1.0) * config.latencyMs;
}

SyncResult simulateSync(const SyncConfig &config) {
  return Simulation(config).run();
}

double homogeneousIterationMs(const SyncConfig &config) {
  SyncConfig homogeneous = config;
  homogeneous.policy = SyncPolicy::AllReduce;
  homogeneous.sleepMs = 0.0;
  return simulateSync(homogeneous).makespanMs /
         double(homogeneous.microbatches);
}

void calibrate(SyncConfig &config, double sleepIterations) {
  // An iteration is the homogeneous interval between a worker's syncs (its
  // local optimizer steps): one micro-batch in PipeDream's order, one step
  // of the compiled step that syncs once per step.
  std::vector<Op> program = workerProgram(config, 0);
  double syncs =
      double(std::count_if(program.begin(), program.end(), [](const Op &op) {
        return op.kind == OpKind::Sync;
      }));
  double iterationMs =
      homogeneousIterationMs(config) * double(config.microbatches) / syncs;
  config.sleepMs = sleepIterations * iterationMs;
  config.scheduler.windowMaxMs = iterationMs / double(config.pipelines);
}

} // namespace hetero::sim
