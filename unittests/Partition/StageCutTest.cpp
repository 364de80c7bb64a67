//===- StageCutTest.cpp - the stage cut against brute force ---------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Partition/StageCut.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>

using namespace hetero::partition;

namespace {

/// A random chain of `n` ops, some boundaries not cuttable.
Chain randomChain(std::mt19937 &rng, int64_t n) {
  std::uniform_real_distribution<double> seconds(0.1, 5.0), bytes(0, 1000);
  std::bernoulli_distribution cuttable(0.7);
  Chain chain;
  for (int64_t op = 0; op < n; ++op) {
    chain.seconds.push_back(seconds(rng));
    chain.stateBytes.push_back(bytes(rng));
  }
  for (int64_t b = 0; b <= n; ++b) {
    chain.cuttable.push_back(b == 0 || b == n || cuttable(rng));
    chain.boundaryBytes.push_back(bytes(rng));
  }
  chain.targetBytes = bytes(rng);
  return chain;
}

/// The slowest stage's time and every stage's memory of `bounds`, computed
/// from the formulas of StageCut.h without its code.
struct Figures {
  double bottleneck = 0;
  double compute = 0;
  std::vector<double> memory;
};

Figures figuresOf(const Chain &chain, const Cluster &cluster,
                  const std::vector<int64_t> &bounds) {
  Figures figures;
  int64_t stages = int64_t(bounds.size()) - 1;
  for (int64_t s = 0; s < stages; ++s) {
    double compute = 0, state = 0;
    for (int64_t op = bounds[s]; op < bounds[s + 1]; ++op) {
      compute += chain.seconds[op];
      state += chain.stateBytes[op];
    }
    double time = compute / cluster.speeds[s];
    figures.compute = std::max(figures.compute, time);
    if (s > 0)
      time = std::max(time, 2 * cluster.alphaSeconds +
                                2 * chain.boundaryBytes[bounds[s]] *
                                    cluster.betaSecondsPerByte);
    int64_t held = std::min<int64_t>(stages - s, cluster.microbatches);
    double stash = chain.boundaryBytes[bounds[s]] +
                   (s + 1 == stages ? chain.targetBytes : 0.0);
    figures.memory.push_back(state + double(held) * stash);
    figures.bottleneck = std::max(figures.bottleneck, time);
  }
  return figures;
}

/// Over every cut that fits the caps, by enumerating all of them: the least
/// bottleneck (infinity when none fits) and, among the cuts that reach it,
/// the least largest compute time of a stage.
struct Best {
  double bottleneck = std::numeric_limits<double>::infinity();
  double compute = std::numeric_limits<double>::infinity();
};

Best bruteForce(const Chain &chain, const Cluster &cluster) {
  int64_t n = chain.size(), stages = cluster.stages();
  std::vector<Figures> fitting;
  std::vector<int64_t> bounds = {0};
  std::function<void(int64_t)> extend = [&](int64_t from) {
    if (int64_t(bounds.size()) == stages) {
      bounds.push_back(n);
      Figures figures = figuresOf(chain, cluster, bounds);
      bool fits = true;
      for (int64_t s = 0; s < stages; ++s)
        fits &= cluster.memoryCaps.empty() ||
                figures.memory[s] <= cluster.memoryCaps[s];
      if (fits)
        fitting.push_back(figures);
      bounds.pop_back();
      return;
    }
    for (int64_t b = from; b < n; ++b)
      if (chain.cuttable[b]) {
        bounds.push_back(b);
        extend(b + 1);
        bounds.pop_back();
      }
  };
  extend(1);
  Best best;
  for (const Figures &figures : fitting)
    best.bottleneck = std::min(best.bottleneck, figures.bottleneck);
  for (const Figures &figures : fitting)
    if (figures.bottleneck <= best.bottleneck * (1 + 1e-9))
      best.compute = std::min(best.compute, figures.compute);
  return best;
}

Cluster randomCluster(std::mt19937 &rng, int64_t stages) {
  std::uniform_real_distribution<double> speed(0.25, 2.0);
  Cluster cluster;
  for (int64_t s = 0; s < stages; ++s)
    cluster.speeds.push_back(speed(rng));
  cluster.microbatches = std::uniform_int_distribution<int64_t>(1, 8)(rng);
  cluster.alphaSeconds = std::uniform_real_distribution<double>(0, 0.5)(rng);
  cluster.betaSecondsPerByte =
      std::uniform_real_distribution<double>(0, 0.002)(rng);
  return cluster;
}

TEST(StageCut, EqualsBruteForceOnRandomChains) {
  std::mt19937 rng(7);
  int64_t compared = 0, capped = 0, infeasible = 0;
  for (int trial = 0; trial < 1000; ++trial) {
    int64_t n = std::uniform_int_distribution<int64_t>(1, 12)(rng);
    int64_t stages = std::uniform_int_distribution<int64_t>(1, 5)(rng);
    Chain chain = randomChain(rng, n);
    Cluster cluster = randomCluster(rng, stages);
    // Half the trials cap every rank at a random share of the state.
    if (trial % 2) {
      double total = 0;
      for (double bytes : chain.stateBytes)
        total += bytes;
      std::uniform_real_distribution<double> share(0.3, 1.5);
      for (int64_t s = 0; s < stages; ++s)
        cluster.memoryCaps.push_back(share(rng) * total);
    }
    Best best = bruteForce(chain, cluster);
    double expected = best.bottleneck;
    Cut cut;
    std::string error;
    bool found = partitionChain(chain, cluster, cut, error);
    if (expected == std::numeric_limits<double>::infinity()) {
      EXPECT_FALSE(found) << "trial " << trial;
      EXPECT_FALSE(error.empty());
      ++infeasible;
      continue;
    }
    ASSERT_TRUE(found) << "trial " << trial << ": " << error;
    ASSERT_EQ(int64_t(cut.bounds.size()), stages + 1);
    Figures figures = figuresOf(chain, cluster, cut.bounds);
    EXPECT_NEAR(cut.bottleneckSeconds, expected, 1e-9 * expected)
        << "trial " << trial;
    EXPECT_NEAR(figures.bottleneck, expected, 1e-9 * expected)
        << "trial " << trial;
    EXPECT_NEAR(figures.compute, best.compute, 1e-9 * best.compute)
        << "trial " << trial;
    for (int64_t s = 0; s < stages; ++s) {
      EXPECT_LT(cut.bounds[s], cut.bounds[s + 1]);
      if (s > 0)
        EXPECT_TRUE(chain.cuttable[cut.bounds[s]]);
      if (!cluster.memoryCaps.empty())
        EXPECT_LE(figures.memory[s], cluster.memoryCaps[s]);
    }
    ++compared;
    capped += !cluster.memoryCaps.empty();
  }
  // The trials exercise cuts with and without caps, and chains with none.
  EXPECT_GT(compared, 500) << capped << " capped, " << infeasible
                           << " infeasible";
  EXPECT_GT(capped, 100);
  EXPECT_GT(infeasible, 50);
}

/// `n` ops of 1 s with no state, cuttable everywhere, free to cut.
Chain uniformChain(int64_t n) {
  Chain chain;
  chain.seconds.assign(size_t(n), 1.0);
  chain.stateBytes.assign(size_t(n), 0.0);
  chain.cuttable.assign(size_t(n + 1), true);
  chain.boundaryBytes.assign(size_t(n + 1), 0.0);
  return chain;
}

TEST(StageCut, LinkBoundCutsBalanceTheCompute) {
  // Every cut's transfers take 10 s, more than all the compute: every cut
  // has the same bottleneck, and the compute decides.
  Chain chain = uniformChain(8);
  Cluster cluster;
  cluster.speeds = {1, 1, 1, 1};
  cluster.alphaSeconds = 5;
  Cut cut;
  std::string error;
  ASSERT_TRUE(partitionChain(chain, cluster, cut, error)) << error;
  EXPECT_DOUBLE_EQ(cut.bottleneckSeconds, 10.0);
  EXPECT_EQ(cut.bounds, (std::vector<int64_t>{0, 2, 4, 6, 8}));
}

TEST(StageCut, SlowRankGetsFewerOps) {
  // Eight equal ops over four ranks: the even cut is two each; a rank at
  // half speed gets one, and the others share the rest.
  Chain chain = uniformChain(8);
  Cluster cluster;
  cluster.speeds = {1, 1, 1, 1};
  Cut even, uneven;
  std::string error;
  ASSERT_TRUE(partitionChain(chain, cluster, even, error)) << error;
  EXPECT_EQ(even.bounds, (std::vector<int64_t>{0, 2, 4, 6, 8}));
  EXPECT_DOUBLE_EQ(even.bottleneckSeconds, 2.0);
  cluster.speeds = {1, 1, 1, 0.5};
  ASSERT_TRUE(partitionChain(chain, cluster, uneven, error)) << error;
  EXPECT_EQ(uneven.bounds.back() - uneven.bounds[3], 1);
  EXPECT_DOUBLE_EQ(uneven.bottleneckSeconds, 3.0);
}

TEST(StageCut, CutsOnlyWhereAllowed) {
  Chain chain = uniformChain(4);
  chain.cuttable = {true, false, true, false, true};
  Cluster cluster;
  cluster.speeds = {1, 1};
  Cut cut;
  std::string error;
  ASSERT_TRUE(partitionChain(chain, cluster, cut, error)) << error;
  EXPECT_EQ(cut.bounds, (std::vector<int64_t>{0, 2, 4}));
  cluster.speeds = {1, 1, 1};
  EXPECT_FALSE(partitionChain(chain, cluster, cut, error));
  EXPECT_EQ(error, "3 stages need 2 cuts, but the chain of 4 ops allows 1");
}

TEST(StageCut, LinkCostMovesTheCut) {
  // The even cut's activation takes 6 s over the link; the cut after op 2
  // leaves stage 0 with 3 s of compute.
  Chain chain = uniformChain(4);
  chain.boundaryBytes = {0, 2000, 3000, 0, 0};
  Cluster cluster;
  cluster.speeds = {1, 1};
  Cut cut;
  std::string error;
  ASSERT_TRUE(partitionChain(chain, cluster, cut, error)) << error;
  EXPECT_EQ(cut.bounds, (std::vector<int64_t>{0, 2, 4}));
  EXPECT_DOUBLE_EQ(cut.bottleneckSeconds, 2.0);
  cluster.betaSecondsPerByte = 0.001;
  ASSERT_TRUE(partitionChain(chain, cluster, cut, error)) << error;
  EXPECT_EQ(cut.bounds, (std::vector<int64_t>{0, 3, 4}));
  EXPECT_DOUBLE_EQ(cut.bottleneckSeconds, 3.0);
}

TEST(StageCut, InfeasibleCapNamesTheStage) {
  Chain chain = uniformChain(4);
  chain.stateBytes = {100, 100, 100, 100};
  chain.boundaryBytes = {10, 10, 10, 10, 10};
  Cluster cluster;
  cluster.speeds = {1, 1};
  cluster.microbatches = 4;
  cluster.memoryCaps = {50, -1};
  Cut cut;
  std::string error;
  EXPECT_FALSE(partitionChain(chain, cluster, cut, error));
  // Stage 0 holds at least one op (100 bytes) and two stashed inputs.
  EXPECT_EQ(error, "no cut fits the memory caps: stage 0 needs at least "
                   "120 bytes, its cap is 50");
  // Stage 0 fits only op 0; stage 1 then holds 300 + 10 bytes.
  cluster.memoryCaps = {120, 310};
  ASSERT_TRUE(partitionChain(chain, cluster, cut, error)) << error;
  EXPECT_EQ(cut.bounds, (std::vector<int64_t>{0, 1, 4}));
  cluster.memoryCaps = {120, 300};
  EXPECT_FALSE(partitionChain(chain, cluster, cut, error));
  EXPECT_EQ(error, "no cut fits the memory caps: each stage fits alone, but "
                   "no cut fits all of them at once");
}

TEST(StageCut, CheckCutByHand) {
  Chain chain = uniformChain(4);
  chain.seconds = {1, 2, 3, 4};
  chain.stateBytes = {0, 0, 0, 100};
  chain.cuttable = {true, true, false, true, true};
  Cluster cluster;
  cluster.speeds = {1, 1};
  Cut cut;
  std::string error;
  ASSERT_TRUE(checkCut(chain, cluster, {3}, cut, error)) << error;
  EXPECT_EQ(cut.bounds, (std::vector<int64_t>{0, 3, 4}));
  EXPECT_DOUBLE_EQ(cut.bottleneckSeconds, 6.0);
  EXPECT_FALSE(checkCut(chain, cluster, {2}, cut, error));
  EXPECT_EQ(error, "stage 1 would begin before op 2, where more than one "
                   "value, or one that is not a floating-point tensor, "
                   "crosses the cut");
  EXPECT_FALSE(checkCut(chain, cluster, {4}, cut, error));
  EXPECT_EQ(error, "a split point must lie between two of the chain's 4 ops, "
                   "got a cut before op 4");
  cluster.speeds = {1, 1, 1};
  EXPECT_FALSE(checkCut(chain, cluster, {1, 1}, cut, error));
  EXPECT_EQ(error, "stage 1 would hold no op");
  cluster.speeds = {1, 1};
  cluster.memoryCaps = {-1, 50};
  EXPECT_FALSE(checkCut(chain, cluster, {3}, cut, error));
  EXPECT_EQ(error, "stage 1 would hold 100 bytes, over its cap of 50");
}

} // namespace
