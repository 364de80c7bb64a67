//===- Scheduler.cpp - SDPipe's sync-group scheduler ----------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/SyncGroups/Scheduler.h"

#include "hetero/SyncGroups/Averaging.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <numeric>

namespace hetero::sync {

namespace {
/// The weight of a new iteration-time sample in the moving average.
constexpr double kIterationSmoothing = 0.2;
/// Intervals longer than this many times the average come from stragglers
/// and do not move T_max.
constexpr double kStragglerFactor = 1.5;
/// The adaptive window's bounds relative to T_max, and its start.
constexpr double kWindowFloor = 1e-3;
constexpr double kWindowStart = 0.1;
} // namespace

const char *modeName(Mode mode) {
  switch (mode) {
  case Mode::Normal:
    return "normal";
  case Mode::Enforced:
    return "enforced";
  case Mode::Ignored:
    return "ignored";
  case Mode::Departure:
    return "forced-by-departure";
  }
  return "?";
}

Scheduler::Scheduler(const Options &options) : options(options) {
  assert(options.stages >= 1 && options.replicas >= 1 && options.period >= 1);
  stageStates.resize(options.stages);
  for (Stage &state : stageStates) {
    state.lastReadyMs.assign(options.replicas, 0.0);
    state.heard.assign(options.replicas, false);
    state.finalIssued.assign(options.replicas, false);
    state.gone.assign(options.replicas, false);
    state.arrivalsParent.resize(options.replicas);
    std::iota(state.arrivalsParent.begin(), state.arrivalsParent.end(), 0);
  }
  for (int64_t stage = 0; stage < options.stages; ++stage)
    stageStates[stage].window = windowMax(stage) * kWindowStart;
  if (!options.adaptive)
    for (int64_t stage = 0; stage < options.stages; ++stage)
      stageStates[stage].window = windowMax(stage);
}

void Scheduler::check(int64_t stage, int64_t replica) const {
  assert(stage >= 0 && stage < options.stages && "stage out of range");
  assert(replica >= 0 && replica < options.replicas && "replica out of range");
  (void)stage;
  (void)replica;
}

double Scheduler::windowMax(int64_t stage) const {
  if (options.windowMaxMs)
    return *options.windowMaxMs;
  const Stage &state = stageStates[stage];
  double fraction = options.windowFraction.value_or(1.0 / options.replicas);
  if (state.measuredIterationMs <= 0.0)
    return options.initialWindowMaxMs;
  return state.measuredIterationMs * fraction;
}

double Scheduler::window(int64_t stage) const {
  return stageStates[stage].window;
}

bool Scheduler::departed(int64_t stage, int64_t replica) const {
  return stageStates[stage].gone[replica];
}

bool Scheduler::waiting(int64_t stage, int64_t replica) const {
  const std::vector<int64_t> &ready = stageStates[stage].ready;
  return std::find(ready.begin(), ready.end(), replica) != ready.end();
}

bool Scheduler::anyDeparture(const Stage &state) const {
  for (int64_t replica = 0; replica < options.replicas; ++replica)
    if (state.finalIssued[replica] || state.gone[replica])
      return true;
  return false;
}

int64_t Scheduler::liveCount(const Stage &state) const {
  return std::count(state.gone.begin(), state.gone.end(), false);
}

void Scheduler::observeInterval(Stage &state, double intervalMs) {
  if (intervalMs <= 0.0)
    return;
  if (state.measuredIterationMs <= 0.0) {
    state.measuredIterationMs = intervalMs;
    return;
  }
  if (intervalMs > kStragglerFactor * state.measuredIterationMs)
    return;
  state.measuredIterationMs +=
      kIterationSmoothing * (intervalMs - state.measuredIterationMs);
}

bool Scheduler::valid(const Stage &state) const {
  const std::vector<bool> *excluded = nullptr;
  if (liveCount(state) < options.replicas)
    excluded = &state.gone;
  if (options.semantics == Semantics::Sliding) {
    std::vector<std::vector<int64_t>> groups = state.recent;
    groups.push_back(state.ready);
    return connects(options.replicas, groups, excluded);
  }
  if (!state.checkDue)
    return true;
  // Every arrival since the last check, as the artifact's union-find merges
  // them, plus the candidate.
  std::vector<std::vector<int64_t>> groups{state.ready};
  for (int64_t replica = 0; replica < options.replicas; ++replica)
    groups.push_back({replica, state.arrivalsParent[replica]});
  return connects(options.replicas, groups, excluded);
}

std::vector<Group> Scheduler::ready(int64_t stage, int64_t replica,
                                    double nowMs, bool final) {
  check(stage, replica);
  Stage &state = stageStates[stage];
  assert(!waiting(stage, replica) && "READY before the previous answer");
  assert(!state.gone[replica] && "READY from a departed worker");
  if (state.heard[replica] && !options.windowMaxMs)
    observeInterval(state, nowMs - state.lastReadyMs[replica]);
  state.heard[replica] = true;
  state.lastReadyMs[replica] = nowMs;
  state.ready.push_back(replica);
  if (final)
    state.finalIssued[replica] = true;

  std::vector<Group> out;
  if (state.enforcing) {
    // Re-validate at each arrival; a departure ends the wait at once.
    if (anyDeparture(state))
      dispatch(stage, nowMs, valid(state) ? Mode::Enforced : Mode::Departure,
               out);
    else if (valid(state))
      dispatch(stage, nowMs, Mode::Enforced, out);
    return out;
  }
  if (state.ready.size() == 1)
    state.deadlineMs = nowMs + state.window;
  if (int64_t(state.ready.size()) >= liveCount(state))
    close(stage, nowMs, out);
  return out;
}

void Scheduler::close(int64_t stage, double nowMs, std::vector<Group> &out) {
  Stage &state = stageStates[stage];
  if (valid(state))
    return dispatch(stage, nowMs, Mode::Normal, out);
  if (anyDeparture(state))
    return dispatch(stage, nowMs, Mode::Departure, out);
  if (!options.enforce) {
    ++count.ignored;
    return dispatch(stage, nowMs, Mode::Ignored, out);
  }
  if (!options.lock || !holder || *holder == stage) {
    if (options.lock)
      holder = stage;
    state.enforcing = true;
    ++count.enforced;
    return;
  }
  ++count.ignored;
  dispatch(stage, nowMs, Mode::Ignored, out);
}

void Scheduler::dispatch(int64_t stage, double nowMs, Mode mode,
                         std::vector<Group> &out) {
  Stage &state = stageStates[stage];
  Group group;
  group.stage = stage;
  group.tick = state.ticks++;
  group.dispatchMs = nowMs;
  group.members = std::move(state.ready);
  std::sort(group.members.begin(), group.members.end());
  group.mode = mode;
  state.ready.clear();
  if (state.enforcing) {
    state.enforcing = false;
    if (holder && *holder == stage)
      holder.reset();
  }

  if (options.semantics == Semantics::Sliding) {
    if (options.period > 1)
      state.recent.push_back(group.members);
    while (int64_t(state.recent.size()) > options.period - 1)
      state.recent.erase(state.recent.begin());
  } else {
    // The artifact's bookkeeping: merge the round into the union-find of
    // arrivals; a completed check resets it, and every P x N worker updates
    // make the next one due.
    bool wasDue = state.checkDue;
    bool checked = wasDue && mode != Mode::Ignored && mode != Mode::Departure;
    std::vector<int64_t> &parent = state.arrivalsParent;
    auto root = [&](int64_t x) {
      while (parent[x] != x)
        x = parent[x];
      return x;
    };
    for (int64_t member : group.members)
      parent[root(member)] = root(group.members.front());
    if (checked) {
      std::iota(parent.begin(), parent.end(), 0);
      state.checkDue = false;
      state.updatesSinceCheck = 0;
    }
    state.updatesSinceCheck += group.members.size();
    if (state.updatesSinceCheck >= options.period * options.replicas)
      state.checkDue = true;
  }

  if (options.adaptive) {
    double max = windowMax(stage);
    if (group.members.size() < 2)
      state.window = std::min(2.0 * state.window, max);
    else
      state.window =
          std::min(std::max(0.9 * state.window, max * kWindowFloor), max);
  } else {
    state.window = windowMax(stage);
  }

  for (int64_t member : group.members)
    if (state.finalIssued[member])
      state.gone[member] = true;
  ++count.groups;
  if (mode == Mode::Departure)
    ++count.departures;
  history.push_back(group);
  out.push_back(std::move(group));
}

std::vector<Group> Scheduler::advance(double nowMs) {
  std::vector<Group> out;
  if (options.livenessMs > 0.0) {
    // Only a worker someone waits for can miss its deadline.
    for (int64_t stage = 0; stage < options.stages; ++stage) {
      Stage &state = stageStates[stage];
      if (state.ready.empty())
        continue;
      for (int64_t replica = 0; replica < options.replicas; ++replica)
        if (!state.gone[replica] && !waiting(stage, replica) &&
            nowMs - state.lastReadyMs[replica] >= options.livenessMs)
          for (Group &group : depart(stage, replica, nowMs))
            out.push_back(std::move(group));
    }
  }
  for (int64_t stage = 0; stage < options.stages; ++stage) {
    Stage &state = stageStates[stage];
    if (!state.enforcing && !state.ready.empty() && nowMs >= state.deadlineMs)
      close(stage, nowMs, out);
  }
  return out;
}

std::optional<double> Scheduler::nextDeadline() const {
  std::optional<double> next;
  auto consider = [&](double at) {
    if (!next || at < *next)
      next = at;
  };
  for (int64_t stage = 0; stage < options.stages; ++stage) {
    const Stage &state = stageStates[stage];
    if (!state.enforcing && !state.ready.empty() &&
        std::isfinite(state.deadlineMs))
      consider(state.deadlineMs);
    if (options.livenessMs > 0.0 && !state.ready.empty())
      for (int64_t replica = 0; replica < options.replicas; ++replica)
        if (!state.gone[replica] && !waiting(stage, replica))
          consider(state.lastReadyMs[replica] + options.livenessMs);
  }
  return next;
}

std::vector<Group> Scheduler::depart(int64_t stage, int64_t replica,
                                     double nowMs) {
  check(stage, replica);
  Stage &state = stageStates[stage];
  std::vector<Group> out;
  if (state.gone[replica])
    return out;
  state.gone[replica] = true;
  state.finalIssued[replica] = true;
  state.ready.erase(
      std::remove(state.ready.begin(), state.ready.end(), replica),
      state.ready.end());
  if (state.ready.empty()) {
    if (state.enforcing) {
      state.enforcing = false;
      if (holder && *holder == stage)
        holder.reset();
    }
    return out;
  }
  if (state.enforcing || int64_t(state.ready.size()) >= liveCount(state))
    dispatch(stage, nowMs, Mode::Departure, out);
  return out;
}

} // namespace hetero::sync
