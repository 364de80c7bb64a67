//===- SyncSimTest.cpp - the data-parallel sync model ---------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Sim/SyncSim.h"

#include "gtest/gtest.h"

#include <algorithm>

using namespace hetero;
using namespace hetero::sim;

namespace {

SyncConfig mesh(int64_t stages, int64_t pipelines, SyncPolicy policy) {
  SyncConfig config;
  config.stages = stages;
  config.pipelines = pipelines;
  config.microbatches = 100;
  config.forwardMs = 10.0;
  config.backwardMs = 20.0;
  config.policy = policy;
  return config;
}

TEST(SyncSim, RingAveragingCost) {
  SyncConfig config;
  config.stageBytes = 100e6;
  config.bandwidthBytesPerMs = 1e6;
  config.latencyMs = 0.1;
  EXPECT_EQ(averagingMs(config, 0, 1), 0.0);
  EXPECT_DOUBLE_EQ(averagingMs(config, 0, 2), 100.0 + 0.2);
  EXPECT_DOUBLE_EQ(averagingMs(config, 0, 4), 150.0 + 0.6);
  config.stageBytesPerStage = {100e6, 200e6};
  EXPECT_DOUBLE_EQ(averagingMs(config, 1, 4), 300.0 + 0.6);
}

TEST(SyncSim, OneStageAllReduceByHand) {
  // Each micro-batch: F, B, then the 4-replica average.
  SyncConfig config = mesh(1, 4, SyncPolicy::AllReduce);
  SyncResult result = simulateSync(config);
  EXPECT_FALSE(result.stalled);
  EXPECT_NEAR(result.makespanMs, 100 * (30.0 + 150.6), 1e-6);
  EXPECT_NEAR(result.throughput, 400 / (100 * 180.6 / 1000), 1e-6);
  EXPECT_EQ(result.meanGroupSize, 4.0);
  EXPECT_EQ(result.table.size(), 100u);
}

} // namespace

namespace {

/// The 4x4 BERT-base mesh of SDPipe's evaluation: F = 10, B = 20 ms per
/// stage, 151, 113, 113 and 155 MB of parameters on 1 GB/s.
SyncResult bert(SyncPolicy policy, double sleepIterations, uint64_t seed) {
  SyncConfig config = mesh(4, 4, policy);
  config.stageBytesPerStage = {151e6, 113e6, 113e6, 155e6};
  config.microbatches = 200;
  config.seed = seed;
  calibrate(config, sleepIterations);
  return simulateSync(config);
}

double meanThroughput(SyncPolicy policy, double sleepIterations) {
  double sum = 0.0;
  for (uint64_t seed = 1; seed <= 3; ++seed)
    sum += bert(policy, sleepIterations, seed).throughput;
  return sum / 3.0;
}

/// The paper's ordering under hete-B, SDPipe = All-Reduce when homogeneous,
/// and the bands of the reproduction plan.
// The compiled step: each step of M micro-batches is a 1F1B with a flush,
// (M + S - 1)(F + B) long without communication costs, and a sync after
// every `syncEvery`-th backward of the step and after its last.
TEST(SyncSim, StepsFlushAsTheCompiledStep) {
  SyncConfig config = mesh(2, 2, SyncPolicy::AllReduce);
  config.microbatches = 40;
  config.stepMicrobatches = 4;
  config.syncEvery = 4;
  config.p2pMs = config.latencyMs = config.rpcMs = config.stageBytes = 0.0;
  SyncResult result = simulateSync(config);
  ASSERT_FALSE(result.stalled);
  EXPECT_DOUBLE_EQ(result.makespanMs, 10 * (4 + 2 - 1) * 30.0);
  // One all-reduce per stage and step.
  EXPECT_EQ(result.table.size(), 2u * 10u);
  config.syncEvery = 3; // after backward 3 and 4 of each step
  EXPECT_EQ(simulateSync(config).table.size(), 2u * 20u);

  // Without the flush the same 40 micro-batches stream: (K + S - 1)(F + B).
  config.stepMicrobatches = 0;
  config.syncEvery = 4;
  result = simulateSync(config);
  EXPECT_DOUBLE_EQ(result.makespanMs, (40 + 2 - 1) * 30.0);

  // The stragglers' h and T_max are made of the interval between syncs:
  // one 150 ms step here.
  config.stepMicrobatches = 4;
  calibrate(config, 2.3);
  EXPECT_NEAR(config.sleepMs, 2.3 * 150.0, 1e-9);
  ASSERT_TRUE(config.scheduler.windowMaxMs.has_value());
  EXPECT_NEAR(*config.scheduler.windowMaxMs, 150.0 / 2, 1e-9);
}

TEST(SyncSim, ThroughputOrderingAndBands) {
  double sdpipe = meanThroughput(SyncPolicy::SDPipe, 2.3);
  double allReduce = meanThroughput(SyncPolicy::AllReduce, 2.3);
  double adPsgd = meanThroughput(SyncPolicy::AdPsgd, 2.3);
  EXPECT_GT(sdpipe, adPsgd);
  EXPECT_GT(adPsgd, allReduce);
  EXPECT_GE(sdpipe / allReduce, 1.3);
  double sdpipeHomogeneous = meanThroughput(SyncPolicy::SDPipe, 0.0);
  double allReduceHomogeneous = meanThroughput(SyncPolicy::AllReduce, 0.0);
  EXPECT_GE(sdpipeHomogeneous / allReduceHomogeneous, 0.95);
  EXPECT_LE(sdpipeHomogeneous / allReduceHomogeneous, 1.10);
  double slowdown = sdpipeHomogeneous / sdpipe;
  EXPECT_GE(slowdown, 1.2);
  EXPECT_LE(slowdown, 2.2);
  // Homogeneous SDPipe groups are all N.
  EXPECT_EQ(bert(SyncPolicy::SDPipe, 0.0, 1).meanGroupSize, 4.0);
}

/// T7 (b): without the cross-stage lock, enforcement deadlocks some runs;
/// with it none stalls. The stalled run of a 2x2 mesh is SDPipe's Fig. 3:
/// two workers wait in enforced syncs, each for a worker that waits on the
/// other's pipeline.
TEST(SyncSim, EnforcementDeadlocksOnlyWithoutTheLock) {
  struct Case {
    int64_t stages, pipelines, period, microbatches;
  };
  for (Case c : {Case{2, 2, 2, 300}, Case{2, 4, 3, 100}, Case{4, 4, 3, 100}}) {
    int64_t stalledWithout = 0, stalledWith = 0;
    for (uint64_t seed = 1; seed <= 40; ++seed) {
      SyncConfig config = mesh(c.stages, c.pipelines, SyncPolicy::SDPipe);
      config.microbatches = c.microbatches;
      config.scheduler.period = c.period;
      config.seed = seed;
      calibrate(config, 2.3);
      config.scheduler.lock = false;
      SyncResult unlocked = simulateSync(config);
      stalledWithout += unlocked.stalled;
      if (unlocked.stalled && c.pipelines == 2) {
        EXPECT_EQ(unlocked.blocked.size(), 4u);
        EXPECT_EQ(std::count_if(
                      unlocked.blocked.begin(), unlocked.blocked.end(),
                      [](const std::string &line) {
                        return line.find("in its sync") != std::string::npos;
                      }),
                  2);
      }
      config.scheduler.lock = true;
      SyncResult locked = simulateSync(config);
      stalledWith += locked.stalled;
      EXPECT_EQ(locked.throughput > 0.0, true);
    }
    SCOPED_TRACE(std::to_string(c.stages) + "x" + std::to_string(c.pipelines) +
                 ", P = " + std::to_string(c.period));
    EXPECT_GE(stalledWithout, 1);
    EXPECT_EQ(stalledWith, 0);
  }
}

double medianGroupSize(const SyncResult &result) {
  std::vector<size_t> sizes;
  for (const sync::Group &group : result.table)
    sizes.push_back(group.members.size());
  std::sort(sizes.begin(), sizes.end());
  return double(sizes[sizes.size() / 2]);
}

/// T14, SDPipe's Fig. 9 on one stage of 8 replicas under hete-B: P = 1 is
/// All-Reduce, and groups shrink as P grows.
TEST(SyncSim, GroupSizesShrinkWithThePeriod) {
  std::vector<double> medians;
  for (int64_t period : {1, 2, 5, 10}) {
    SyncConfig config = mesh(1, 8, SyncPolicy::SDPipe);
    config.stageBytes = 90e6;
    config.microbatches = 200;
    config.scheduler.period = period;
    calibrate(config, 2.3);
    SyncResult result = simulateSync(config);
    ASSERT_FALSE(result.stalled);
    medians.push_back(medianGroupSize(result));
    // Until the first worker's final sync, P = 1 groups are all 8.
    if (period == 1) {
      for (const sync::Group &group : result.table) {
        if (group.tick < config.microbatches - 1) {
          EXPECT_EQ(group.members.size(), 8u) << "tick " << group.tick;
        }
      }
    }
  }
  EXPECT_EQ(medians[0], 8.0);
  for (size_t i = 1; i < medians.size(); ++i)
    EXPECT_LE(medians[i], medians[i - 1]);
  EXPECT_GE(medians[1], 5.0);
  EXPECT_LE(medians[1], 8.0);
  EXPECT_GE(medians[2], 2.0);
  EXPECT_LE(medians[2], 5.0);
}

} // namespace
