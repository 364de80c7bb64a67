//===- EspressoTest.cpp - Espresso's decisions against exhaustive search --===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Compression/Espresso.h"

#include "gtest/gtest.h"

#include <random>

using namespace hetero;
using namespace hetero::espresso;

namespace {

constexpr int64_t MB = 1 << 20;

Problem randomProblem(std::mt19937 &random, int64_t n) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Problem problem;
  problem.ranks = 2 + int64_t(unit(random) * 6);
  for (int64_t t = 0; t < n; ++t) {
    // A few sizes, so that Alg 4.2 finds groups.
    int64_t bytes = int64_t(1 + int(unit(random) * 3)) * 8 * MB;
    problem.tensors.push_back({"t", bytes, unit(random) * 4.0});
  }
  problem.link = {unit(random) * 0.5, 0.2 + unit(random) * 2.0};
  problem.gpu = {{0.05, 0.05 + unit(random) * 0.3},
                 {0.05, 0.02 + unit(random) * 0.1}};
  problem.cpu = {{0.2, 0.5 + unit(random) * 2.0},
                 {0.2, 0.2 + unit(random) * 1.0}};
  problem.wireFraction = 0.02;
  // Half the instances have nodes of 2 ranks on a 10x faster link.
  if (problem.ranks % 2 == 0 && problem.ranks > 2 && unit(random) < 0.5) {
    problem.nodeSize = 2;
    problem.intraLink = {problem.link.alphaMs / 10,
                         problem.link.betaMsPerMB / 10};
  }
  return problem;
}

TEST(Espresso, TimelineByHand) {
  // Two ranks; one 1 MB tensor, 1 ms of backprop; link 1 ms + 10 ms/MB.
  Problem problem;
  problem.ranks = 2;
  problem.tensors = {{"a", MB, 1.0}};
  problem.link = {1.0, 10.0};
  problem.gpu = {{0.5, 1.0}, {0.25, 0.5}};
  problem.cpu = {{1.0, 4.0}, {1.0, 2.0}};
  problem.wireFraction = 0.25;
  // Dense ring: 2 (P-1) (1 + 10 x 0.5) = 12, after 1 ms of backprop.
  EXPECT_DOUBLE_EQ(simulate(problem, {{Scheme::Dense, Device::Gpu}}), 13.0);
  // GPU all-gather: compress 1.5 -> 2.5; (P-1)(1 + 10 x 0.25) = 3.5 -> 6;
  // decompress P x 0.75 = 1.5 -> 7.5.
  EXPECT_DOUBLE_EQ(simulate(problem, {{Scheme::AllGather, Device::Gpu}}), 7.5);
  // CPU all-to-all: compress 5 -> 6; 2 (P-1)(1 + 10 x 0.125) = 4.5 plus a
  // re-compression of 0.5 MB, 3 -> 13.5; decompress 2 x 2 + 3 -> 20.5.
  EXPECT_DOUBLE_EQ(simulate(problem, {{Scheme::AllToAll, Device::Cpu}}), 20.5);
  Plan plan = espressoPlan(problem);
  EXPECT_EQ(describe(plan.decisions[0]), "gpu allgather");
  EXPECT_DOUBLE_EQ(plan.iterationMs, 7.5);
}

TEST(Espresso, HierarchicalWhenTheNodesShareAFastLink) {
  // 8 ranks in nodes of 4; the inter-node link is 100x slower than the
  // intra-node one. Among 2 nodes, an all-gather moves one payload instead
  // of seven and decompresses 2 instead of 8.
  Problem problem;
  problem.ranks = 8;
  problem.nodeSize = 4;
  problem.tensors = {{"w", 64 * MB, 1.0}};
  problem.link = {1.0, 10.0};
  problem.intraLink = {0.01, 0.1};
  problem.gpu = {{0.05, 0.05}, {0.05, 0.05}};
  problem.cpu = {{0.2, 1.0}, {0.2, 0.5}};
  EXPECT_EQ(options(problem).size(), 9u);
  // Flat GPU all-gather: 1 + 3.25 compress; 7 (1 + 12.8) = 96.6; decompress
  // 8 x 3.25 = 26: 126.85. Hierarchical: 2 x 3 (0.01 + 1.6) = 9.66 inside
  // the nodes, 1 x (1 + 12.8) = 13.8 between them; decompress 2 x 3.25:
  // 4.25 + 23.46 + 6.5 = 34.21.
  EXPECT_NEAR(simulate(problem, {{Scheme::AllGather, Device::Gpu, false}}),
              126.85, 1e-9);
  EXPECT_NEAR(simulate(problem, {{Scheme::AllGather, Device::Gpu, true}}),
              34.21, 1e-9);
  Plan plan = espressoPlan(problem);
  EXPECT_TRUE(plan.decisions[0].hierarchical) << describe(plan.decisions[0]);
  // Nodes that do not divide the ranks offer no hierarchical option.
  problem.nodeSize = 3;
  EXPECT_EQ(options(problem).size(), 5u);
}

TEST(Espresso, HiddenTensorsStayDense) {
  // The first tensor's all-reduce finishes during the long backprop of the
  // second: compressing it cannot shorten the step.
  Problem problem;
  problem.ranks = 2;
  problem.tensors = {{"early", MB, 1.0}, {"late", MB, 50.0}};
  problem.link = {0.0, 1.0};
  problem.gpu = {{0.0, 1.0}, {0.0, 1.0}};
  problem.cpu = {{0.0, 1.0}, {0.0, 1.0}};
  Plan plan = greedyPlan(problem);
  EXPECT_EQ(describe(plan.decisions[0]), "dense");
}

TEST(Espresso, NeverWorseThanDenseAndCloseToExhaustive) {
  std::mt19937 random(31);
  double worstGap = 0.0, totalGap = 0.0;
  int instances = 0;
  for (int64_t n = 1; n <= 5; ++n)
    for (int trial = 0; trial < 20; ++trial) {
      Problem problem = randomProblem(random, n);
      double dense = simulate(problem, std::vector<Decision>(n));
      Plan greedy = greedyPlan(problem);
      Plan offloaded = offloadPlan(problem, greedy);
      Plan best = exhaustivePlan(problem);
      EXPECT_LE(greedy.iterationMs, dense + 1e-9);
      EXPECT_LE(offloaded.iterationMs, greedy.iterationMs + 1e-9);
      EXPECT_LE(best.iterationMs, offloaded.iterationMs + 1e-9);
      EXPECT_NEAR(simulate(problem, offloaded.decisions), offloaded.iterationMs,
                  1e-9);
      double gap = offloaded.iterationMs / best.iterationMs - 1.0;
      worstGap = std::max(worstGap, gap);
      totalGap += gap;
      ++instances;
    }
  // Measured on these 100 seeded instances (half with nodes, so nine
  // options per tensor): the greedy finds the optimum of every one. From
  // all-dense alone it averaged 2.3% above, 67% at worst.
  EXPECT_LE(totalGap / instances, 0.01);
  EXPECT_LE(worstGap, 0.05);
  std::printf("Espresso vs exhaustive: mean gap %.4f, worst %.4f over %d "
              "instances\n",
              totalGap / instances, worstGap, instances);
}

TEST(Espresso, OffloadIsOptimalOverGroupCounts) {
  // Four equal GPU-compressed tensors and a fast CPU: Alg 4.2 tries every
  // count of last-ready tensors to move, so no such count does better.
  std::mt19937 random(5);
  for (int trial = 0; trial < 20; ++trial) {
    Problem problem = randomProblem(random, 4);
    for (fusion::Tensor &tensor : problem.tensors)
      tensor.bytes = 16 * MB;
    Plan gpuOnly{std::vector<Decision>(4, {Scheme::AllGather, Device::Gpu}),
                 0.0};
    Plan offloaded = offloadPlan(problem, gpuOnly);
    for (int count = 0; count <= 4; ++count) {
      std::vector<Decision> decisions = gpuOnly.decisions;
      for (int c = 0; c < count; ++c)
        decisions[3 - c].device = Device::Cpu;
      EXPECT_LE(offloaded.iterationMs, simulate(problem, decisions) + 1e-9);
    }
  }
}

} // namespace
