//===- SchedulerTest.cpp - the sync-group scheduler on a virtual clock ----===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/SyncGroups/Scheduler.h"

#include "hetero/SyncGroups/Averaging.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>

using namespace hetero::sync;

namespace {

using Members = std::vector<int64_t>;

Options fixedWindow(int64_t stages, int64_t replicas, double windowMs) {
  Options options;
  options.stages = stages;
  options.replicas = replicas;
  options.windowMaxMs = windowMs;
  options.adaptive = false;
  return options;
}

std::vector<Members> membersOf(const std::vector<Group> &groups) {
  std::vector<Members> out;
  for (const Group &group : groups)
    out.push_back(group.members);
  return out;
}

/// P = 1 makes any candidate short of all replicas invalid.
Options allOrWait(int64_t stages, int64_t replicas) {
  Options options = fixedWindow(stages, replicas, 1.0);
  options.period = 1;
  return options;
}

/// Replica 0 of stage 0 arrives alone and its stage starts to enforce.
void enforceStageZero(Scheduler &scheduler) {
  scheduler.ready(0, 0, 0.0);
  EXPECT_TRUE(scheduler.advance(1.0).empty());
  EXPECT_EQ(scheduler.tokenHolder(), std::optional<int64_t>(0));
}

/// T4 (a): all N ready within T form one group at the N-th arrival.
TEST(SyncScheduler, AllReadyWithinTheWindowCloseItEarly) {
  Scheduler scheduler(fixedWindow(1, 4, 10.0));
  EXPECT_TRUE(scheduler.ready(0, 2, 0.0).empty());
  EXPECT_TRUE(scheduler.ready(0, 0, 1.0).empty());
  EXPECT_TRUE(scheduler.ready(0, 3, 2.0).empty());
  EXPECT_EQ(scheduler.nextDeadline(), std::optional<double>(10.0));
  std::vector<Group> groups = scheduler.ready(0, 1, 3.0);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].members, (Members{0, 1, 2, 3}));
  EXPECT_EQ(groups[0].dispatchMs, 3.0);
  EXPECT_EQ(groups[0].mode, Mode::Normal);
  EXPECT_FALSE(scheduler.nextDeadline());
}

/// T4 (b): without enforcement, arrivals 2T apart are two singletons; the
/// window is anchored on the first arrival.
TEST(SyncScheduler, ArrivalsOutsideTheWindowSyncAlone) {
  Options options = fixedWindow(1, 2, 10.0);
  options.enforce = false;
  Scheduler scheduler(options);
  EXPECT_TRUE(scheduler.ready(0, 0, 0.0).empty());
  EXPECT_TRUE(scheduler.advance(9.9).empty());
  EXPECT_EQ(membersOf(scheduler.advance(10.0)), (std::vector<Members>{{0}}));
  EXPECT_TRUE(scheduler.ready(0, 1, 20.0).empty());
  EXPECT_EQ(membersOf(scheduler.advance(30.0)), (std::vector<Members>{{1}}));
  EXPECT_EQ(scheduler.counters().ignored, 2);
}

/// T4 (d): with T = 0, a group holds only the arrivals of one instant.
TEST(SyncScheduler, ZeroWindowGroupsOnlySimultaneousArrivals) {
  Options options = fixedWindow(1, 3, 0.0);
  options.enforce = false;
  Scheduler scheduler(options);
  scheduler.ready(0, 2, 5.0);
  scheduler.ready(0, 0, 5.0);
  EXPECT_EQ(membersOf(scheduler.advance(5.0)), (std::vector<Members>{{0, 2}}));
  scheduler.ready(0, 1, 5.5);
  EXPECT_EQ(membersOf(scheduler.advance(5.5)), (std::vector<Members>{{1}}));
}

/// T8: the window doubles after a singleton (capped at T_max) and shrinks
/// by 0.9 after a larger group, down to T_max / 1000.
TEST(SyncScheduler, AdaptiveWindow) {
  Options options;
  options.replicas = 3;
  options.windowMaxMs = 10.0;
  options.enforce = false;
  Scheduler scheduler(options);
  EXPECT_DOUBLE_EQ(scheduler.window(0), 1.0);
  double now = 0.0;
  auto singleton = [&] {
    scheduler.ready(0, 0, now);
    now += scheduler.window(0);
    ASSERT_EQ(scheduler.advance(now).size(), 1u);
  };
  auto triple = [&] {
    scheduler.ready(0, 0, now);
    scheduler.ready(0, 1, now);
    ASSERT_EQ(scheduler.ready(0, 2, now).size(), 1u);
  };
  std::vector<double> windows;
  for (int i = 0; i < 4; ++i) {
    singleton();
    windows.push_back(scheduler.window(0));
  }
  for (int i = 0; i < 2; ++i) {
    triple();
    windows.push_back(scheduler.window(0));
  }
  std::vector<double> expected = {2, 4, 8, 10, 9, 8.1};
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(windows[i], expected[i], 1e-12) << "after group " << i;
  for (int i = 0; i < 200; ++i)
    triple();
  EXPECT_NEAR(scheduler.window(0), 0.01, 1e-12);
}

/// Unset T_max follows the stage's iteration time over N.
TEST(SyncScheduler, MeasuredWindowIsTheIterationOverN) {
  Options options;
  options.replicas = 2;
  options.adaptive = false;
  options.initialWindowMaxMs = 3.0;
  Scheduler scheduler(options);
  EXPECT_DOUBLE_EQ(scheduler.windowMax(0), 3.0);
  for (int step = 0; step < 40; ++step) {
    double now = 10.0 * step;
    // A straggler's long interval every 7 steps does not move it.
    if (step % 7 == 6)
      now += 25.0;
    scheduler.ready(0, 0, now);
    scheduler.ready(0, 1, now);
  }
  EXPECT_NEAR(scheduler.windowMax(0), 5.0, 0.5);
}

/// A window that started above the T_max measured later comes down to it
/// with the next whole group, and a windowFraction replaces 1/N.
TEST(SyncScheduler, WindowNeverExceedsTheMeasuredMaximum) {
  Options options;
  options.replicas = 2;
  options.initialWindowMaxMs = 1000.0;
  options.windowFraction = 0.25;
  Scheduler scheduler(options);
  EXPECT_DOUBLE_EQ(scheduler.window(0), 100.0); // 0.1 T_max to start
  // Whole groups at 0 and 40 ms: 0.9 x 100 after the first, and the
  // interval of 40 ms makes T_max = 40 / 4 (not 40 / 2) before the second.
  for (int step = 0; step < 2; ++step) {
    scheduler.ready(0, 0, 40.0 * step);
    scheduler.ready(0, 1, 40.0 * step);
  }
  EXPECT_DOUBLE_EQ(scheduler.windowMax(0), 10.0);
  EXPECT_DOUBLE_EQ(scheduler.window(0), 10.0);
}

/// T4 (e): with P = 1 the candidate alone must connect the stage, so every
/// group is all N.
TEST(SyncScheduler, PeriodOneIsAllReduce) {
  Scheduler scheduler(allOrWait(1, 4));
  enforceStageZero(scheduler);
  EXPECT_FALSE(scheduler.nextDeadline());
  scheduler.ready(0, 1, 50.0);
  scheduler.ready(0, 3, 60.0);
  std::vector<Group> groups = scheduler.ready(0, 2, 70.0);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].members, (Members{0, 1, 2, 3}));
  EXPECT_EQ(groups[0].mode, Mode::Enforced);
  EXPECT_FALSE(scheduler.tokenHolder());
}

/// The token: a second stage whose candidate is invalid while the first
/// enforces dispatches anyway and is logged `ignored`.
TEST(SyncScheduler, OnlyOneStageEnforcesAtATime) {
  Options options = allOrWait(2, 2);
  Scheduler scheduler(options);
  enforceStageZero(scheduler);
  scheduler.ready(1, 1, 2.0);
  std::vector<Group> groups = scheduler.advance(3.0);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].stage, 1);
  EXPECT_EQ(groups[0].members, (Members{1}));
  EXPECT_EQ(groups[0].mode, Mode::Ignored);
  EXPECT_EQ(scheduler.counters().ignored, 1);

  // Without the lock both stages wait.
  options.lock = false;
  Scheduler unlocked(options);
  unlocked.ready(0, 0, 0.0);
  unlocked.ready(1, 1, 0.0);
  EXPECT_TRUE(unlocked.advance(1.0).empty());
  EXPECT_EQ(unlocked.counters().enforced, 2);
}

/// T7 (c), the departure rule: a final READY ends enforcement at once, and a
/// departed worker no longer counts towards the early close.
TEST(SyncScheduler, FinalSyncEndsEnforcement) {
  Scheduler scheduler(allOrWait(1, 3));
  enforceStageZero(scheduler);
  std::vector<Group> groups = scheduler.ready(0, 1, 2.0, /*final=*/true);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].members, (Members{0, 1}));
  EXPECT_EQ(groups[0].mode, Mode::Departure);
  EXPECT_FALSE(scheduler.tokenHolder());
  EXPECT_TRUE(scheduler.departed(0, 1));
  // Replicas 0 and 2 remain: two arrivals close the window.
  scheduler.ready(0, 2, 3.0);
  EXPECT_EQ(membersOf(scheduler.ready(0, 0, 3.5)),
            (std::vector<Members>{{0, 2}}));
}

/// A worker that misses the liveness deadline departs and releases the
/// stage that waits for it.
TEST(SyncScheduler, LivenessDeadlineReleasesAWaitingStage) {
  Options options = allOrWait(1, 2);
  options.livenessMs = 50.0;
  Scheduler scheduler(options);
  scheduler.ready(0, 0, 10.0);
  scheduler.advance(11.0);
  ASSERT_EQ(scheduler.tokenHolder(), std::optional<int64_t>(0));
  EXPECT_EQ(scheduler.nextDeadline(), std::optional<double>(50.0));
  EXPECT_TRUE(scheduler.advance(49.0).empty());
  std::vector<Group> groups = scheduler.advance(50.0);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].members, (Members{0}));
  EXPECT_EQ(groups[0].mode, Mode::Departure);
  EXPECT_TRUE(scheduler.departed(0, 1));
  EXPECT_FALSE(scheduler.tokenHolder());
}

/// The artifact's semantics: singletons are valid until P x N updates have
/// passed; then a round waits until all arrivals since the last check
/// connect the stage.
TEST(SyncScheduler, PeriodicSemanticsChecksEveryPTimesNUpdates) {
  Options options = fixedWindow(1, 4, 1.0);
  options.period = 2;
  options.semantics = Semantics::Periodic;
  Scheduler scheduler(options);
  double now = 0.0;
  for (int i = 0; i < 8; ++i) {
    scheduler.ready(0, i % 4, now);
    now += 1.0;
    std::vector<Group> groups = scheduler.advance(now);
    ASSERT_EQ(groups.size(), 1u) << i;
    EXPECT_EQ(groups[0].mode, Mode::Normal);
  }
  scheduler.ready(0, 0, now);
  EXPECT_TRUE(scheduler.advance(now + 1.0).empty());
  EXPECT_EQ(scheduler.tokenHolder(), std::optional<int64_t>(0));
  scheduler.ready(0, 1, now + 2.0);
  scheduler.ready(0, 2, now + 3.0);
  std::vector<Group> groups = scheduler.ready(0, 3, now + 4.0);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].members, (Members{0, 1, 2, 3}));
  EXPECT_EQ(groups[0].mode, Mode::Enforced);
  // The check is done: a singleton is valid again.
  scheduler.ready(0, 2, now + 10.0);
  EXPECT_EQ(scheduler.advance(now + 11.0).at(0).mode, Mode::Normal);
}

/// Drives the scheduler with workers that compute for a random time, now
/// and then much longer, between syncs; with no pipeline dependencies
/// between stages, every run must finish.
struct DrivenRun {
  std::vector<Group> table;
  /// Per group: the replicas of its stage that had finished before it.
  std::vector<std::vector<bool>> finished;
  /// Per group: whether the lock was held by another stage at dispatch.
  std::vector<bool> tokenElsewhere;
  /// Enforcement intervals as (stage, start, end).
  std::vector<std::tuple<int64_t, double, double>> intervals;
  Counters counters;
};

DrivenRun drive(const Options &options, int64_t syncs, uint64_t seed,
                double stragglerMs, double jitterMs = 4.0) {
  Scheduler scheduler(options);
  std::mt19937_64 rng(seed);
  const double inf = std::numeric_limits<double>::infinity();
  int64_t workers = options.stages * options.replicas;
  std::vector<double> next(workers);
  std::vector<int64_t> done(workers, 0);
  std::vector<bool> waiting(workers, false);
  auto work = [&] {
    double ms = 8.0 + jitterMs * double(rng() % 1000) / 1000.0;
    if (rng() % 10 == 0)
      ms += stragglerMs;
    return ms;
  };
  for (double &at : next)
    at = work();
  DrivenRun run;
  std::optional<int64_t> holder;
  double holderSince = 0.0;
  auto take = [&](const std::vector<Group> &groups, double now) {
    for (const Group &group : groups) {
      run.tokenElsewhere.push_back(scheduler.tokenHolder() &&
                                   *scheduler.tokenHolder() != group.stage);
      std::vector<bool> finished(options.replicas);
      for (int64_t r = 0; r < options.replicas; ++r)
        finished[r] = done[group.stage * options.replicas + r] == syncs;
      run.finished.push_back(finished);
      std::set<int64_t> seen;
      for (int64_t member : group.members) {
        int64_t w = group.stage * options.replicas + member;
        EXPECT_TRUE(waiting[w]) << "member " << member << " was not ready";
        EXPECT_TRUE(seen.insert(member).second);
        waiting[w] = false;
        ++done[w];
        next[w] = done[w] < syncs ? now + work() : inf;
      }
      run.table.push_back(group);
    }
    if (scheduler.tokenHolder() != holder) {
      if (holder)
        run.intervals.emplace_back(*holder, holderSince, now);
      holder = scheduler.tokenHolder();
      holderSince = now;
    }
  };
  while (true) {
    int64_t w = std::min_element(next.begin(), next.end()) - next.begin();
    std::optional<double> deadline = scheduler.nextDeadline();
    if (next[w] == inf && !deadline)
      break;
    if (deadline && *deadline <= next[w]) {
      take(scheduler.advance(*deadline), *deadline);
      continue;
    }
    double now = next[w];
    next[w] = inf;
    waiting[w] = true;
    int64_t stage = w / options.replicas, replica = w % options.replicas;
    take(scheduler.ready(stage, replica, now, done[w] == syncs - 1), now);
  }
  for (int64_t w = 0; w < workers; ++w) {
    EXPECT_FALSE(waiting[w]) << "worker " << w << " was never answered";
    EXPECT_EQ(done[w], syncs) << "worker " << w;
  }
  run.counters = scheduler.counters();
  return run;
}

/// Whether the groups of `window` join every replica not `finished` into
/// one component: a breadth-first search over "shares a group with",
/// written apart from lib/SyncGroups' union-find (connects), which the
/// scheduler itself relies on. A finished replica need not be joined, but
/// a group may join the others through it.
bool joinedByBreadthFirst(int64_t replicas, const std::vector<Members> &window,
                          const std::vector<bool> &finished) {
  std::vector<std::vector<int64_t>> neighbours(static_cast<size_t>(replicas));
  for (const Members &group : window)
    for (int64_t a : group)
      for (int64_t b : group)
        if (a != b)
          neighbours[size_t(a)].push_back(b);
  int64_t start = -1;
  for (int64_t r = 0; r < replicas && start < 0; ++r)
    if (!finished[size_t(r)])
      start = r;
  if (start < 0)
    return true;
  std::vector<bool> reached(size_t(replicas), false);
  std::vector<int64_t> frontier = {start};
  reached[size_t(start)] = true;
  while (!frontier.empty()) {
    int64_t node = frontier.back();
    frontier.pop_back();
    for (int64_t next : neighbours[size_t(node)])
      if (!reached[size_t(next)]) {
        reached[size_t(next)] = true;
        frontier.push_back(next);
      }
  }
  for (int64_t r = 0; r < replicas; ++r)
    if (!finished[size_t(r)] && !reached[size_t(r)])
      return false;
  return true;
}

/// The search itself, on windows worked out by hand.
TEST(SyncScheduler, BreadthFirstJoinsWhatTheGroupsChain) {
  std::vector<bool> none(4, false), lastDone = {false, false, false, true};
  EXPECT_FALSE(joinedByBreadthFirst(4, {{0, 1}, {2, 3}}, none));
  EXPECT_TRUE(joinedByBreadthFirst(4, {{0, 1}, {1, 2}, {2, 3}}, none));
  EXPECT_FALSE(joinedByBreadthFirst(4, {{0, 1}, {1, 2}}, none));
  EXPECT_TRUE(joinedByBreadthFirst(4, {{0, 1}, {1, 2}}, lastDone));
  // Through a finished replica.
  EXPECT_TRUE(joinedByBreadthFirst(4, {{0, 3}, {3, 1, 2}}, lastDone));
}

/// T4 (f), T5, T6 on random runs: every READY answered once, the last P
/// groups of a stage connect it at every tick that was not ignored or
/// forced by a departure (checked by a search of the test's own, not the
/// scheduler's connects), enforcement intervals never overlap, and every
/// ignored tick falls inside another stage's enforcement.
TEST(SyncScheduler, RandomRunsKeepTheSlidingWindowInvariant) {
  for (int64_t replicas : {2, 4, 8})
    for (int64_t period : {1, 2, 3, 10})
      for (uint64_t seed = 1; seed <= 5; ++seed) {
        Options options;
        options.stages = 4;
        options.replicas = replicas;
        options.period = period;
        options.windowMaxMs = 12.0 / double(replicas);
        DrivenRun run = drive(options, 60, seed, 30.0);
        SCOPED_TRACE("N = " + std::to_string(replicas) +
                     ", P = " + std::to_string(period) +
                     ", seed = " + std::to_string(seed));
        std::vector<std::vector<Members>> byStage(options.stages);
        for (size_t g = 0; g < run.table.size(); ++g) {
          const Group &group = run.table[g];
          std::vector<Members> &history = byStage[group.stage];
          EXPECT_EQ(group.tick, int64_t(history.size()));
          history.push_back(group.members);
          if (group.mode == Mode::Ignored) {
            EXPECT_TRUE(run.tokenElsewhere[g]) << "tick " << group.tick;
          }
          if (group.mode != Mode::Normal && group.mode != Mode::Enforced)
            continue;
          size_t from = history.size() > size_t(period)
                            ? history.size() - size_t(period)
                            : 0;
          std::vector<Members> window(history.begin() + from, history.end());
          EXPECT_TRUE(joinedByBreadthFirst(replicas, window, run.finished[g]))
              << "stage " << group.stage << " tick " << group.tick;
        }
        for (size_t a = 0; a < run.intervals.size(); ++a)
          for (size_t b = a + 1; b < run.intervals.size(); ++b)
            EXPECT_LE(std::get<2>(run.intervals[a]),
                      std::get<1>(run.intervals[b]));
        if (period == 1) {
          for (size_t g = 0; g < run.table.size(); ++g) {
            const Group &group = run.table[g];
            if (group.mode == Mode::Ignored || group.mode == Mode::Departure)
              continue;
            int64_t finished = std::count(run.finished[g].begin(),
                                          run.finished[g].end(), true);
            EXPECT_EQ(int64_t(group.members.size()), replicas - finished);
          }
        }
      }
}

/// T4 (c): with T = infinity every group is all N, as All-Reduce's.
TEST(SyncScheduler, InfiniteWindowIsAllReduce) {
  Options options;
  options.stages = 2;
  options.replicas = 4;
  options.windowMaxMs = std::numeric_limits<double>::infinity();
  DrivenRun run = drive(options, 30, 7, 50.0);
  EXPECT_EQ(run.table.size(), 2u * 30u);
  for (const Group &group : run.table)
    EXPECT_EQ(group.members, (Members{0, 1, 2, 3}));
}

/// Workers that all arrive within the window never need enforcement;
/// stragglers cause some.
TEST(SyncScheduler, EnforcementOnlyWithStragglers) {
  Options options = fixedWindow(4, 4, 5.0);
  DrivenRun calm = drive(options, 100, 3, 0.0, 1.0);
  EXPECT_EQ(calm.counters.enforced, 0);
  EXPECT_EQ(calm.counters.ignored, 0);
  DrivenRun stormy = drive(options, 100, 3, 60.0);
  EXPECT_GT(stormy.counters.enforced, 0);
}

} // namespace
