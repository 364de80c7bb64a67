//===- FusionTest.cpp - Cupcake's fusion model and solver -----------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Fusion/Fusion.h"

#include "gtest/gtest.h"

#include <random>

using namespace hetero::fusion;

namespace {

constexpr int64_t MB = 1 << 20;

Problem threeTensors() {
  // Backprop 1 ms each; 1, 2, 1 MB; compression 0.5 + 0.25/MB; transfer
  // 2 + 1/MB.
  return {{{"a", MB, 1.0}, {"b", 2 * MB, 1.0}, {"c", MB, 1.0}},
          {0.5, 0.25},
          {2.0, 1.0}};
}

TEST(Fusion, TimelineByHand) {
  Problem problem = threeTensors();
  // Per tensor:
  //   a: backprop [0,1], compress 0.75 -> 1.75; send 3 ms -> 4.75
  //   b: backprop [1.75,2.75], compress 1.0 -> 3.75; send 4 -> 8.75
  //   c: backprop [3.75,4.75], compress 0.75 -> 5.5; send 3 -> 11.75
  EXPECT_DOUBLE_EQ(perTensorPlan(problem).iterationMs, 11.75);
  // One group: backprop 3, compress 0.5 + 1 = 1.5 -> 4.5; send 6 -> 10.5.
  EXPECT_DOUBLE_EQ(singleGroupPlan(problem).iterationMs, 10.5);
  // [a] [b c]: a as above ends 4.75; b, c backprop to 3.75, compress
  // 0.5 + 0.75 -> 5.0; send 2 + 3 from max(4.75, 5.0) -> 10.0.
  EXPECT_DOUBLE_EQ(evaluate(problem, {{0, 0}, {1, 2}}), 10.0);
  Plan best = optimalPlan(problem);
  EXPECT_DOUBLE_EQ(best.iterationMs, 10.0);
  EXPECT_EQ(formatGroups(best.groups), "[0-0] [1-2]");
}

TEST(Fusion, Baselines) {
  Problem problem = threeTensors();
  EXPECT_EQ(formatGroups(thresholdPlan(problem, 2 * MB).groups), "[0-1] [2-2]");
  EXPECT_EQ(formatGroups(evenPlan(problem, 2).groups), "[0-0] [1-2]");
  EXPECT_EQ(formatGroups(perTensorPlan(problem).groups), "[0-0] [1-1] [2-2]");
}

/// Random instances across regimes: latency-bound, bandwidth-bound, and
/// with compression dominating or free.
Problem randomProblem(std::mt19937 &random, int64_t n) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Problem problem;
  for (int64_t t = 0; t < n; ++t)
    problem.tensors.push_back({"t" + std::to_string(t),
                               int64_t(unit(random) * 8 * MB) + 1,
                               unit(random) * 3.0});
  problem.compress = {unit(random) * 2.0, unit(random)};
  problem.comm = {unit(random) * 5.0, unit(random) * 4.0};
  return problem;
}

TEST(Fusion, DynamicProgramEqualsBruteForce) {
  std::mt19937 random(2024);
  for (int64_t n = 1; n <= 14; ++n)
    for (int trial = 0; trial < (n <= 10 ? 40 : 8); ++trial) {
      Problem problem = randomProblem(random, n);
      Plan dp = optimalPlan(problem);
      Plan brute = bruteForcePlan(problem);
      ASSERT_NEAR(dp.iterationMs, brute.iterationMs, 1e-9)
          << "N = " << n << ", trial " << trial << ": DP "
          << formatGroups(dp.groups) << ", brute force "
          << formatGroups(brute.groups);
      // The plan the DP reports achieves the time it reports.
      EXPECT_NEAR(evaluate(problem, dp.groups), dp.iterationMs, 1e-9);
    }
}

TEST(Fusion, NeverWorseThanTheBaselines) {
  std::mt19937 random(7);
  for (int trial = 0; trial < 50; ++trial) {
    Problem problem = randomProblem(random, 60);
    double optimum = optimalPlan(problem).iterationMs;
    EXPECT_LE(optimum, perTensorPlan(problem).iterationMs + 1e-9);
    EXPECT_LE(optimum, singleGroupPlan(problem).iterationMs + 1e-9);
    EXPECT_LE(optimum, thresholdPlan(problem, 25 * MB).iterationMs + 1e-9);
    EXPECT_LE(optimum, bestEvenPlan(problem).iterationMs + 1e-9);
  }
}

TEST(Fusion, GroupsCoverTheTensorsInOrder) {
  std::mt19937 random(11);
  Problem problem = randomProblem(random, 100);
  Plan plan = optimalPlan(problem);
  int64_t next = 0;
  for (const Group &group : plan.groups) {
    EXPECT_EQ(group.first, next);
    EXPECT_GE(group.last, group.first);
    next = group.last + 1;
  }
  EXPECT_EQ(next, 100);
}

} // namespace
