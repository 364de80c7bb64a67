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

TEST(Fusion, SharedLink) {
  // Alone, each set's timeline is evaluate's.
  Problem problem = threeTensors();
  std::vector<Group> perTensor = {{0, 0}, {1, 1}, {2, 2}};
  EXPECT_EQ(evaluateShared({problem}, {perTensor}, {0.0}),
            std::vector<double>{11.75});
  EXPECT_EQ(evaluateShared({problem}, {perTensor}, {2.0}),
            std::vector<double>{13.75});
  // Two sets on one link, the second starting 1 ms later; every transfer
  // waits alpha = 2 ms on its own set, then holds the link for its bytes
  // (a, c: 1 ms; b: 2 ms). In ready order: a0 ready 1.75, link [3.75,
  // 4.75]; a1 ready 2.75, link [4.75, 5.75]; b0 after a0 at 4.75, link
  // [6.75, 8.75]; b1 after a1 at 5.75, link [8.75, 10.75]; c0 after b0 at
  // 8.75, link [10.75, 11.75]; c1 after b1 at 10.75, link [12.75, 13.75].
  EXPECT_EQ(
      evaluateShared({problem, problem}, {perTensor, perTensor}, {0.0, 1.0}),
      (std::vector<double>{11.75, 13.75}));
  // One group each: ready 4.5 and 5.5, 2 ms latency, 4 ms of bytes:
  // [6.5, 10.5], then the second's bytes wait for the link: [10.5, 14.5].
  EXPECT_EQ(
      evaluateShared({problem, problem}, {{{0, 2}}, {{0, 2}}}, {0.0, 1.0}),
      (std::vector<double>{10.5, 14.5}));
  // Latency overlaps the other set's bytes: a set of many small messages
  // loses less to another set than when latency held the link.
  Problem small = problem;
  small.comm = {5.0, 0.0};
  EXPECT_EQ(
      evaluateShared({small, small}, {perTensor, perTensor}, {0.0, 0.0}),
      (std::vector<double>{evaluateShared({small}, {perTensor}, {0.0})[0],
                           evaluateShared({small}, {perTensor}, {0.0})[0]}));
  // A set without transfers ends where it starts.
  EXPECT_EQ(evaluateShared({problem}, {{}}, {3.0}), std::vector<double>{3.0});
}

TEST(Fusion, Baselines) {
  Problem problem = threeTensors();
  EXPECT_EQ(formatGroups(thresholdPlan(problem, 2 * MB).groups), "[0-1] [2-2]");
  EXPECT_EQ(formatGroups(evenPlan(problem, 2).groups), "[0-0] [1-2]");
  EXPECT_EQ(formatGroups(perTensorPlan(problem).groups), "[0-0] [1-1] [2-2]");
}

TEST(Fusion, UncompressedBaselines) {
  // The uncompressed transfer costs 0.5 ms + 2 ms/MB.
  Problem problem = threeTensors();
  problem.dense = LinearCost{0.5, 2.0};
  // HiPress at 2 MB compresses b alone: a 1 + 2.5 -> 3.5; b backprop to 2,
  // compressed by 3, sent 3.5 -> 7.5; c ready at 4, sent 7.5 -> 10.
  Plan hipress = hipressPlan(problem, 2 * MB);
  EXPECT_EQ(hipress.compressed, (std::vector<bool>{false, true, false}));
  EXPECT_DOUBLE_EQ(hipress.iterationMs, 10.0);
  // A threshold above every tensor is FP32 per tensor: 3.5, 8, 10.5; one at
  // most the smallest compresses everything, per tensor's 11.75.
  EXPECT_DOUBLE_EQ(hipressPlan(problem, 4 * MB).iterationMs, 10.5);
  EXPECT_DOUBLE_EQ(hipressPlan(problem, 1).iterationMs,
                   perTensorPlan(problem).iterationMs);
  EXPECT_DOUBLE_EQ(bestHipressPlan(problem).iterationMs, 10.0);
  EXPECT_EQ(bestHipressPlan(problem).thresholdBytes, 2 * MB);
  // FP32 in 2 MB buckets: [a b] after 2 ms, 0.5 + 6 -> 8.5; c -> 11. One
  // bucket (4 MB and up): 3 + 8.5 = 11.5.
  Plan fp32 = bestFp32Plan(problem);
  EXPECT_EQ(formatGroups(fp32.groups), "[0-1] [2-2]");
  EXPECT_EQ(fp32.thresholdBytes, 2 * MB);
  EXPECT_DOUBLE_EQ(fp32.iterationMs, 11.0);
  EXPECT_DOUBLE_EQ(fp32Plan(problem, 4 * MB).iterationMs, 11.5);
  // Every group compressed is the plain model.
  EXPECT_DOUBLE_EQ(evaluate(problem, {{0, 0}, {1, 2}}, {true, true}),
                   evaluate(problem, {{0, 0}, {1, 2}}));
}

TEST(Fusion, JointNeverWorseThanItsStarts) {
  // Three tensors with a cheap uncompressed link: FP32 in 2 MB buckets
  // (9.0) beats every all-compressed grouping (10.0 at best).
  Problem problem = threeTensors();
  problem.dense = LinearCost{1.0, 1.25};
  EXPECT_DOUBLE_EQ(bestFp32Plan(problem).iterationMs, 9.0);
  EXPECT_DOUBLE_EQ(optimalPlan(problem).iterationMs, 10.0);
  Plan joint = jointPlan(problem);
  EXPECT_LE(joint.iterationMs, 9.0);
  EXPECT_DOUBLE_EQ(evaluate(problem, joint.groups, joint.compressed),
                   joint.iterationMs);
  std::mt19937 random(3);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int trial = 0; trial < 50; ++trial) {
    Problem p;
    for (int t = 0; t < 30; ++t)
      p.tensors.push_back(
          {"t", int64_t(unit(random) * 8 * MB) + 1024, unit(random) * 2.0});
    p.compress = {0.25 * unit(random), 0.1 * unit(random), unit(random)};
    p.comm = {0.5 * unit(random), 0.2 * unit(random)};
    p.dense = LinearCost{0.5 * unit(random), 2.0 * unit(random)};
    Plan j = jointPlan(p);
    EXPECT_LE(j.iterationMs, optimalPlan(p).iterationMs + 1e-9);
    EXPECT_LE(j.iterationMs, bestFp32Plan(p).iterationMs + 1e-9);
    EXPECT_LE(j.iterationMs, bestHipressPlan(p).iterationMs + 1e-9);
    EXPECT_NEAR(evaluate(p, j.groups, j.compressed), j.iterationMs, 1e-9);
  }
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

/// The solver's optimum equals brute force on random instances of
/// 1..`maxTensors` tensors from `generate` (`fewTrials` of the largest
/// three sizes, `trials` of the others), and its plan takes the time it
/// reports.
void expectOptimalOnRandomProblems(unsigned seed, int64_t maxTensors,
                                   int trials, int fewTrials,
                                   Problem (*generate)(std::mt19937 &,
                                                       int64_t)) {
  std::mt19937 random(seed);
  for (int64_t n = 1; n <= maxTensors; ++n)
    for (int trial = 0; trial < (n <= maxTensors - 3 ? trials : fewTrials);
         ++trial) {
      Problem problem = generate(random, n);
      Plan exact = optimalPlan(problem);
      Plan brute = bruteForcePlan(problem);
      ASSERT_NEAR(exact.iterationMs, brute.iterationMs, 1e-9)
          << "N = " << n << ", trial " << trial << ": solver "
          << formatGroups(exact.groups) << ", brute force "
          << formatGroups(brute.groups);
      EXPECT_NEAR(evaluate(problem, exact.groups), exact.iterationMs, 1e-9);
    }
}

TEST(Fusion, OptimumEqualsBruteForce) {
  expectOptimalOnRandomProblems(2024, 14, 40, 8, randomProblem);
}

/// The thesis's measured compression cost (Fig. 5.2): flat up to a
/// breakpoint of 0.5..8 MB, linear beyond.
Problem randomPiecewiseProblem(std::mt19937 &random, int64_t n) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Problem problem = randomProblem(random, n);
  CompressionCost &h = problem.compress;
  h.minMs = h.alphaMs + h.betaMsPerMB * (0.5 + 7.5 * unit(random));
  return problem;
}

TEST(Fusion, FlatThenLinearCost) {
  CompressionCost h{0.5, 0.25, 1.0};
  EXPECT_DOUBLE_EQ(h(0), 1.0);
  EXPECT_DOUBLE_EQ(h(2 * MB), 1.0);
  EXPECT_DOUBLE_EQ(h(4 * MB), 1.5);
}

// With a flat-then-linear compression cost the compute stream after i
// tensors in j groups depends on the groups' sizes, not on (i, j): a
// program over (i, j) loses the optimum on many of these instances (the
// 24.7% of docs/gradient-communication.md). The suffix program does not.
TEST(Fusion, FlatThenLinearOptimumEqualsBruteForce) {
  expectOptimalOnRandomProblems(5151, 12, 60, 15, randomPiecewiseProblem);
}

// A case small enough to follow. Backprop 1 ms each, 1 MB each, transfer
// 1 ms + 0 ms/MB, compression flat at 2 ms up to 4 MB. Per tensor: the
// compute stream ends at 3, 6, 9 and the link at 10; as one group: 3 + 2,
// link 6. [0-1] [2-2]... every split pays 2 ms of compression more than
// one group, which never waits for the link: one group, 6 ms.
TEST(Fusion, FlatCostFavoursFewGroups) {
  Problem problem{{{"a", MB, 1.0}, {"b", MB, 1.0}, {"c", MB, 1.0}},
                  {0.0, 0.0, 2.0},
                  {1.0, 0.0}};
  EXPECT_DOUBLE_EQ(perTensorPlan(problem).iterationMs, 10.0);
  Plan best = optimalPlan(problem);
  EXPECT_EQ(formatGroups(best.groups), "[0-2]");
  EXPECT_DOUBLE_EQ(best.iterationMs, 6.0);
}

// Algorithm 5.1 with both prunings finds the optimum, for the affine and
// the measured cost alike, and says it finished.
TEST(Fusion, BranchAndBoundEqualsBruteForce) {
  std::mt19937 random(77);
  for (int64_t n = 1; n <= 12; ++n)
    for (int trial = 0; trial < (n <= 9 ? 40 : 10); ++trial) {
      Problem problem = trial % 2 ? randomPiecewiseProblem(random, n)
                                  : randomProblem(random, n);
      BranchAndBound search = branchAndBoundPlan(problem);
      Plan brute = bruteForcePlan(problem);
      ASSERT_TRUE(search.complete);
      ASSERT_NEAR(search.plan.iterationMs, brute.iterationMs, 1e-9)
          << "N = " << n << ", trial " << trial << ": Algorithm 5.1 "
          << formatGroups(search.plan.groups) << ", brute force "
          << formatGroups(brute.groups);
      EXPECT_GE(search.nodes, 1);
    }
}

TEST(Fusion, BranchAndBoundStopsAtItsBudget) {
  std::mt19937 random(3);
  Problem problem = randomPiecewiseProblem(random, 40);
  BranchAndBound search = branchAndBoundPlan(problem, /*maxNodes=*/10);
  EXPECT_FALSE(search.complete);
  EXPECT_LE(search.nodes, 12);
  // What it has is a valid plan, no better than the optimum.
  EXPECT_NEAR(evaluate(problem, search.plan.groups), search.plan.iterationMs,
              1e-9);
  EXPECT_GE(search.plan.iterationMs, optimalPlan(problem).iterationMs - 1e-9);
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
