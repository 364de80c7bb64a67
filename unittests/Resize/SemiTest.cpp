//===- SemiTest.cpp - Eq. 2, Eq. 3 and the cost fits ----------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Resize/Semi.h"

#include <gtest/gtest.h>

using namespace hetero::resize;

namespace {

// Vector E2: S = 0.02, E(r) = 0.1 r, Comm(a) = 0.5 a, Comp(a) = a / 7,
// alpha = 0.875 -> beta = 0.8346.
TEST(Semi, EquationTwo) {
  SplitModel model;
  model.staticMs = 0.02;
  model.extract = [](double r) { return 0.1 * r; };
  model.communicate = [](double a) { return 0.5 * a; };
  model.compute = [](double a) { return a / 7; };
  double beta = splitShare(0.875, model);
  EXPECT_NEAR(beta, 0.8346, 5e-5);
  EXPECT_NEAR(beta * 0.875, 0.7303, 5e-5);
  EXPECT_NEAR((1 - beta) * 0.875, 0.1447, 5e-5);
  // Pruning is free: all of it. Pruning costs more than migrating all: none.
  SplitModel free = model;
  free.staticMs = 0;
  free.extract = [](double) { return 0.0; };
  EXPECT_EQ(splitShare(0.875, free), 1.0);
  SplitModel dear = model;
  dear.staticMs = 1.0;
  EXPECT_EQ(splitShare(0.875, dear), 0.0);
}

/// E3's ranks: T = C = delta (GEMM time only), W = 1.
std::vector<RankLoad> equationThreeLoads() {
  std::vector<RankLoad> loads;
  for (double delta : {8.0, 6.0, 4.0, 2.0, 1.0, 1.0, 1.0, 1.0})
    loads.push_back({delta, delta, 1.0});
  return loads;
}

MigrationChoice choose(double kappa, Receivers receivers) {
  return chooseMigrating(
      equationThreeLoads(), [=](double v) { return kappa * v; }, receivers,
      /*noiseGuard=*/0, /*maxRatio=*/1.0);
}

// Vector E3.
TEST(Semi, EquationThree) {
  MigrationChoice paper = choose(0.5, Receivers::Others);
  EXPECT_EQ(paper.migrating, 3);
  ASSERT_EQ(paper.costs.size(), 4u);
  EXPECT_NEAR(paper.costs[0], 1.1875, 5e-5);
  EXPECT_NEAR(paper.costs[1], 1.9931, 5e-5);
  EXPECT_NEAR(paper.costs[2], 2.2125, 5e-5);
  EXPECT_NEAR(paper.costs[3], 2.2188, 5e-5);
  EXPECT_EQ(paper.gains, (std::vector<double>{7, 5, 3, 1}));
  EXPECT_EQ(paper.stragglers, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(choose(0.5, Receivers::NonStragglers).migrating, 3);

  MigrationChoice tight = choose(0.9, Receivers::Others);
  EXPECT_EQ(tight.migrating, 2);
  ASSERT_EQ(tight.costs.size(), 3u);
  EXPECT_NEAR(tight.costs[0], 1.5375, 5e-5);
  EXPECT_NEAR(tight.costs[1], 2.6764, 5e-5);
  EXPECT_NEAR(tight.costs[2], 3.1958, 5e-5);
  MigrationChoice others = choose(0.9, Receivers::NonStragglers);
  EXPECT_EQ(others.migrating, 3);
  ASSERT_EQ(others.costs.size(), 4u);
  EXPECT_NEAR(others.costs[0], 1.0063, 5e-5);
  EXPECT_NEAR(others.costs[1], 1.9646, 5e-5);
  EXPECT_NEAR(others.costs[2], 2.8271, 5e-5);
  EXPECT_NEAR(others.costs[3], 3.4021, 5e-5);

  EXPECT_EQ(choose(2.0, Receivers::Others).migrating, 2);
  EXPECT_EQ(choose(2.0, Receivers::NonStragglers).migrating, 2);
}

TEST(Semi, NoiseGuard) {
  std::vector<RankLoad> loads = {{1.0, 1.0, 1}, {1.04, 1.04, 1}, {2, 2, 1}};
  EXPECT_EQ(stragglersOf(loads, 0), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(stragglersOf(loads, 0.05), (std::vector<int64_t>{2}));
}

SemiCosts linearCosts(double kappa) {
  SemiCosts costs;
  costs.staticMs = 0.02;
  costs.extract = [](double r) { return 0.1 * r; };
  costs.communicate = [=](double v) { return kappa * v; };
  return costs;
}

// Algorithm 2': one tolerable straggler only prunes; a heavy one splits by
// Eq. 2; several follow Eq. 3.
TEST(Semi, Plans) {
  SemiOptions options;
  options.noiseGuard = 0;
  std::vector<RankLoad> mild(8, {1, 1, 1});
  mild[3] = {2, 2, 1};
  std::vector<RankPlan> plan = semiPlan(mild, linearCosts(0.5), options);
  EXPECT_NEAR(plan[3].prune, 0.5, 1e-12);
  EXPECT_EQ(plan[3].migrate, 0.0);

  std::vector<RankLoad> heavy(8, {1, 1, 1});
  heavy[5] = {8, 8, 1};
  plan = semiPlan(heavy, linearCosts(0.5), options);
  // E2's numbers: n = 8, W = 1, receivers at speed 1.
  EXPECT_NEAR(plan[5].prune, 0.7303, 5e-5);
  EXPECT_NEAR(plan[5].migrate, 0.1447, 5e-5);
  for (size_t i = 0; i < 8; ++i)
    if (i != 5) {
      EXPECT_EQ(plan[i].prune, 0.0);
      EXPECT_EQ(plan[i].migrate, 0.0);
    }

  options.maxRatio = 1.0;
  plan = semiPlan(equationThreeLoads(), linearCosts(0.5), options);
  EXPECT_NEAR(plan[0].migrate, 7.0 / 8, 1e-12);
  EXPECT_NEAR(plan[1].migrate, 5.0 / 6, 1e-12);
  EXPECT_NEAR(plan[2].migrate, 3.0 / 4, 1e-12);
  EXPECT_EQ(plan[3].migrate, 0.0);
  EXPECT_NEAR(plan[3].prune, 0.5, 1e-12);
  for (size_t i = 4; i < 8; ++i)
    EXPECT_EQ(plan[i].prune + plan[i].migrate, 0.0);

  std::vector<RankPlan> mig = migrationPlan(equationThreeLoads(), 0, 1.0);
  EXPECT_NEAR(mig[3].migrate, 0.5, 1e-12);
  EXPECT_EQ(semiPlan(std::vector<RankLoad>(4, {1, 1, 1}), linearCosts(0.5),
                     options)[0]
                .prune,
            0.0);
}

TEST(Semi, CostFitIsNonNegativeAndNonDecreasing) {
  EXPECT_EQ(CostFit::check({0, 1}, {1, 2}, 1), "");
  EXPECT_NE(CostFit::check({0, 0}, {1, 2}, 1), "");
  EXPECT_NE(CostFit::check({0, 1, 2}, {1, 2}, 1), "");
  EXPECT_NE(CostFit::check({0, 1, 2}, {1, 2, 3}, 3), "");
  CostFit line = CostFit::fit({0, 0.25, 0.5, 1}, {1, 1.5, 2, 3}, 1);
  EXPECT_NEAR(line.coefficients()[0], 1, 1e-12);
  EXPECT_NEAR(line.coefficients()[1], 2, 1e-12);
  EXPECT_NEAR(line(0.75), 2.5, 1e-12);
  CostFit square = CostFit::fit({0, 1, 2, 3}, {0, 1, 4, 9}, 2);
  EXPECT_NEAR(square(1.5), 2.25, 1e-9);
  // A falling fit reads as flat, a negative one as 0.
  CostFit falling = CostFit::fit({0, 1, 2}, {3, 2, 1}, 1);
  EXPECT_NEAR(falling(0), 3, 1e-12);
  EXPECT_NEAR(falling(2), 3, 1e-12);
  CostFit bowl = CostFit::fit({0, 1, 2}, {1, 0, 1}, 2);
  for (double x = -1; x <= 3; x += 0.125)
    EXPECT_LE(bowl(x), bowl(x + 0.125) + 1e-12);
  CostFit negative = CostFit::fit({0, 1}, {-2, -1}, 1);
  EXPECT_EQ(negative(0.5), 0.0);
}

// Comm is what migrating adds to the communication of an iteration that
// migrates nothing: unknown (0) until both were measured, 0 at m = 0.
TEST(Semi, CommunicationCostFromHistory) {
  EXPECT_EQ(communicationCost({}, {2.0})(0.5), 0.0);
  EXPECT_EQ(communicationCost({{0.5, 9.0}}, {})(0.5), 0.0);
  // One migrated share: the mean extra, for every m > 0.
  CostFunction step = communicationCost({{0.5, 9.0}, {0.5, 11.0}}, {1.0, 3.0});
  EXPECT_NEAR(step(0.5), 8.0, 1e-12);
  EXPECT_NEAR(step(0.1), 8.0, 1e-12);
  EXPECT_EQ(step(0.0), 0.0);
  // Two shares: the line through them, less the still mean (2).
  CostFunction line =
      communicationCost({{0.25, 4.0}, {0.5, 6.0}, {0.75, 8.0}}, {2.0});
  EXPECT_NEAR(line(0.5), 4.0, 1e-12);
  EXPECT_NEAR(line(1.0), 8.0, 1e-12);
  EXPECT_EQ(line(0.0), 0.0);
  // Migrating iterations that communicated less read as free, not as a
  // gain.
  CostFunction cheaper = communicationCost({{0.5, 1.0}}, {3.0});
  EXPECT_EQ(cheaper(0.5), 0.0);
}

// Priced communication moves Eq. 2's split towards pruning.
TEST(Semi, CommunicationShiftsTheSplit) {
  std::vector<RankLoad> loads = {{100, 80, 1}, {420, 400, 1}};
  SemiCosts free;
  free.extract = [](double pruned) { return 100 * pruned; };
  free.communicate = [](double) { return 0.0; };
  SemiCosts priced = free;
  priced.communicate = communicationCost({{0.4, 40.0}}, {10.0});
  RankPlan cheap = semiPlan(loads, free)[1], dear = semiPlan(loads, priced)[1];
  EXPECT_NEAR(cheap.prune + cheap.migrate, dear.prune + dear.migrate, 1e-9);
  EXPECT_GT(dear.prune, cheap.prune + 0.05);
  EXPECT_LT(dear.migrate, cheap.migrate - 0.05);
}

} // namespace
