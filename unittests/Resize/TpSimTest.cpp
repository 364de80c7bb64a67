//===- TpSimTest.cpp - the straggler simulator's acceptance checks --------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Resize/TpSim.h"

#include <gtest/gtest.h>

using namespace hetero::resize;

namespace {

std::vector<double> slowLast(int64_t ranks, double delta) {
  std::vector<double> d(size_t(ranks), 1.0);
  d.back() = delta;
  return d;
}

double run(const TpModel &model, double delta, TpPolicy policy) {
  std::vector<double> d = slowLast(model.ranks, delta);
  return tpIterationMs(model, d, tpPlan(model, d, policy));
}

// Section 5.2: the baseline is affine in delta; ZERO against T_min stays
// within 5% of RT(1); MIG's cost grows with what it migrates; SEMI lies
// between ZERO and MIG.
TEST(TpSim, AcceptanceChecks) {
  TpModel model;
  double one = run(model, 1, TpPolicy::Baseline);
  double slope = run(model, 2, TpPolicy::Baseline) - one;
  EXPECT_NEAR(slope, double(model.linears) * model.gemmMs, 1e-9);
  double previousMig = run(model, 1, TpPolicy::Migration);
  for (double delta : {2.0, 4.0, 6.0, 8.0}) {
    EXPECT_NEAR(run(model, delta, TpPolicy::Baseline),
                one + (delta - 1) * slope, 1e-9);
    double zero = run(model, delta, TpPolicy::ZeroMin);
    EXPECT_LE(zero, 1.05 * one) << "delta " << delta;
    double mig = run(model, delta, TpPolicy::Migration);
    EXPECT_GT(mig, previousMig);
    previousMig = mig;
    EXPECT_LT(mig, run(model, delta, TpPolicy::Baseline));
    double semi = run(model, delta, TpPolicy::Semi);
    EXPECT_LE(semi, mig + 1e-9) << "delta " << delta;
    EXPECT_GE(semi, zero - 1e-9) << "delta " << delta;
  }
  EXPECT_EQ(run(model, 1, TpPolicy::ZeroMin), one);
}

// With only GEMMs slowed, ZERO against the mean prunes (delta - 1) /
// (2 delta) on 2 ranks (section 5.3 item 3); against T_min 1 - 1/delta.
TEST(TpSim, PlansFollowEquationOne) {
  TpModel model;
  model.otherMs = 0;
  for (double delta : {2.0, 4.0, 8.0}) {
    std::vector<double> d = slowLast(2, delta);
    EXPECT_NEAR(tpPlan(model, d, TpPolicy::ZeroMean)[1].prune,
                (delta - 1) / (2 * delta), 1e-12);
    EXPECT_NEAR(tpPlan(model, d, TpPolicy::ZeroMin)[1].prune, 1 - 1 / delta,
                1e-12);
    EXPECT_NEAR(tpPlan(model, d, TpPolicy::Migration)[1].migrate, 1 - 1 / delta,
                1e-12);
  }
}

// SEMI on one mild straggler only prunes; on a heavy one it migrates part.
TEST(TpSim, SemiSplitsHeavyStragglers) {
  TpModel model;
  model.ranks = 4;
  std::vector<RankPlan> mild = tpPlan(model, slowLast(4, 1.5), TpPolicy::Semi);
  EXPECT_GT(mild[3].prune, 0);
  EXPECT_EQ(mild[3].migrate, 0);
  std::vector<RankPlan> heavy = tpPlan(model, slowLast(4, 8), TpPolicy::Semi);
  EXPECT_GT(heavy[3].prune, 0);
  EXPECT_GT(heavy[3].migrate, 0);
  EXPECT_LT(heavy[3].prune,
            tpPlan(model, slowLast(4, 8), TpPolicy::ZeroMin)[3].prune);
}

TEST(TpSim, Checks) {
  TpModel model;
  EXPECT_EQ(checkTpModel(model, {1, 2}), "");
  EXPECT_NE(checkTpModel(model, {1}), "");
  EXPECT_NE(checkTpModel(model, {1, 0.5}), "");
  model.gemmMs = 0;
  EXPECT_NE(checkTpModel(model, {1, 2}), "");
  model.gemmMs = 1;
  model.ranks = 1;
  EXPECT_NE(checkTpModel(model, {1}), "");
}

} // namespace
