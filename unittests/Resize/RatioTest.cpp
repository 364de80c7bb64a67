//===- RatioTest.cpp - Eq. 1 and the lazy refresh -------------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Resize/Ratio.h"

#include <gtest/gtest.h>

using namespace hetero::resize;

namespace {

// Vector E1: T = [1, 1, 1, 1.8], C_3 = 0.9.
TEST(Ratio, EquationOneAgainstMeanAndMin) {
  std::vector<double> busy = {1.0, 1.0, 1.0, 1.8}, gemm(4, 0.9);
  std::vector<double> mean = pruningRatios(busy, gemm, Target::Mean);
  EXPECT_NEAR(mean[3], 0.6667, 5e-5);
  std::vector<double> least = pruningRatios(busy, gemm, Target::Min);
  EXPECT_NEAR(least[3], 0.8889, 5e-5);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(mean[i], 0.0);
    EXPECT_EQ(least[i], 0.0);
  }
}

// Vector E1b: only the GEMMs slow down by delta; against T_min the ratio
// is 1 - 1/delta. Against the mean with n = 2: (delta - 1) / (2 delta).
TEST(Ratio, PureGemmSlowdown) {
  for (double delta : {2.0, 4.0, 6.0, 8.0}) {
    std::vector<double> busy = {1.0, delta}, gemm = {1.0, delta};
    EXPECT_NEAR(pruningRatios(busy, gemm, Target::Min)[1], 1 - 1 / delta,
                1e-12);
    EXPECT_NEAR(pruningRatios(busy, gemm, Target::Mean)[1],
                (delta - 1) / (2 * delta), 1e-12);
  }
}

TEST(Ratio, ClampsAndSkipsRanksWithoutGemms) {
  EXPECT_EQ(pruningRatio(100, 1, 1), kDefaultMaxRatio);
  EXPECT_EQ(pruningRatio(100, 1, 1, 0.5), 0.5);
  EXPECT_EQ(pruningRatio(5, 1, 0), 0.0);
  EXPECT_EQ(pruningRatio(0.5, 1, 1), 0.0);
}

// Within the noise guard of T_ref a rank prunes nothing; beyond it, Eq. 1
// as without the guard.
TEST(Ratio, NoiseGuardSparesRanksNearTheReference) {
  std::vector<double> busy = {10.0, 10.4, 12.0}, gemm = {5.0, 5.0, 5.0};
  std::vector<double> plain = pruningRatios(busy, gemm, Target::Min);
  EXPECT_NEAR(plain[1], 0.08, 1e-12);
  std::vector<double> guarded =
      pruningRatios(busy, gemm, Target::Min, kDefaultMaxRatio, 0.05);
  EXPECT_EQ(guarded[0], 0.0);
  EXPECT_EQ(guarded[1], 0.0);
  EXPECT_NEAR(guarded[2], plain[2], 1e-12);
  EXPECT_NEAR(guarded[2], 0.4, 1e-12);
}

// Fed back raw, pruned times would undo the pruning; the unpruned
// equivalent gives the same ratio again (no oscillation).
TEST(Ratio, UnprunedEquivalentIsAFixedPoint) {
  std::vector<double> busy = {1.0, 8.0}, gemm = {1.0, 8.0};
  double alpha = pruningRatios(busy, gemm, Target::Min)[1];
  RankTimes pruned = {busy[1] - alpha * gemm[1], (1 - alpha) * gemm[1]};
  EXPECT_NEAR(
      pruningRatios({1.0, pruned.busyMs}, {1.0, pruned.gemmMs}, Target::Min)[1],
      0.0, 1e-12);
  RankTimes full = unprunedEquivalent(pruned, alpha);
  EXPECT_NEAR(full.busyMs, 8.0, 1e-12);
  EXPECT_NEAR(full.gemmMs, 8.0, 1e-12);
  EXPECT_NEAR(pruningRatio(full.busyMs, 1.0, full.gemmMs), alpha, 1e-12);
  // Work migrated away counts too.
  RankTimes migrated = unprunedEquivalent({5.0, 4.0}, 0.0, 3.0);
  EXPECT_NEAR(migrated.busyMs, 8.0, 1e-12);
  EXPECT_NEAR(migrated.gemmMs, 7.0, 1e-12);
}

TEST(Ratio, PrunedColumnsKeepOne) {
  EXPECT_EQ(prunedColumns(4, 0.5), 2);
  EXPECT_EQ(prunedColumns(10, 0.72), 7);
  EXPECT_EQ(prunedColumns(10, 0.7), 7);
  EXPECT_EQ(prunedColumns(32, 31.0 / 32.0), 31);
  EXPECT_EQ(prunedColumns(8, 1.0), 7);
  EXPECT_EQ(prunedColumns(1, 0.9), 0);
  EXPECT_EQ(prunedColumns(8, 0.0), 0);
}

TEST(Ratio, CheckTimes) {
  EXPECT_EQ(checkTimes({1, 2}, {0.5, 1}), "");
  EXPECT_NE(checkTimes({}, {}), "");
  EXPECT_NE(checkTimes({1, 2}, {1}), "");
  EXPECT_NE(checkTimes({1, -2}, {0, 0}), "");
  EXPECT_NE(checkTimes({1, 2}, {2, 1}), "");
}

// Vector E4: reference 1.00; only 1.12 (strictly more than 10% up)
// triggers, and becomes the reference.
TEST(Ratio, LazyRefresh) {
  RefreshMonitor monitor(1.0);
  std::vector<bool> triggered;
  for (double t : {1.02, 0.99, 1.05, 1.08, 1.12})
    triggered.push_back(monitor.observe(t));
  EXPECT_EQ(triggered, (std::vector<bool>{false, false, false, false, true}));
  EXPECT_EQ(monitor.referenceMs(), 1.12);
  EXPECT_FALSE(monitor.observe(0.5));
  RefreshMonitor symmetric(1.0, 0.10, /*symmetric=*/true);
  EXPECT_FALSE(symmetric.observe(0.91));
  EXPECT_TRUE(symmetric.observe(0.89));
  EXPECT_EQ(symmetric.referenceMs(), 0.89);
}

} // namespace
