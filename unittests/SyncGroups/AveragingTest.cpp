//===- AveragingTest.cpp - W, connectivity, Adam rescale, Theorem 1 -------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/SyncGroups/Averaging.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

using namespace hetero::sync;

namespace {

using Groups = std::vector<std::vector<int64_t>>;

/// A random subset of 0..n-1 with between 1 and n members.
std::vector<int64_t> randomGroup(int64_t n, std::mt19937_64 &rng) {
  std::vector<int64_t> all(n);
  std::iota(all.begin(), all.end(), 0);
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(1 + rng() % n);
  std::sort(all.begin(), all.end());
  return all;
}

/// A random partition of 0..n-1 into disjoint groups.
Groups randomPartition(int64_t n, std::mt19937_64 &rng) {
  std::vector<int64_t> all(n);
  std::iota(all.begin(), all.end(), 0);
  std::shuffle(all.begin(), all.end(), rng);
  Groups groups;
  for (size_t at = 0; at < all.size();) {
    size_t size = 1 + rng() % (all.size() - at);
    groups.emplace_back(all.begin() + at, all.begin() + at + size);
    at += size;
  }
  return groups;
}

std::vector<double> multiply(const std::vector<double> &a,
                             const std::vector<double> &b, int64_t n) {
  std::vector<double> c(n * n, 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < n; ++k)
      for (int64_t j = 0; j < n; ++j)
        c[i * n + j] += a[i * n + k] * b[k * n + j];
  return c;
}

/// T1: W of Eq. 2 is symmetric, doubly stochastic, has only the entries 0, 1
/// and 1/|S|, is idempotent, and its trace is N - sum(|S| - 1).
void checkAveragingMatrix(int64_t n, const Groups &groups) {
  std::vector<double> w = averagingMatrix(n, groups);
  std::vector<std::vector<double>> allowed(n, {0.0, 1.0});
  for (const std::vector<int64_t> &group : groups)
    for (int64_t member : group)
      allowed[member].push_back(1.0 / double(group.size()));
  double trace = 0.0;
  int64_t expectedTrace = n;
  for (const std::vector<int64_t> &group : groups)
    expectedTrace -= int64_t(group.size()) - 1;
  for (int64_t i = 0; i < n; ++i) {
    double row = 0.0, column = 0.0;
    for (int64_t j = 0; j < n; ++j) {
      double entry = w[i * n + j];
      EXPECT_NEAR(entry, w[j * n + i], 1e-12);
      EXPECT_GE(entry, 0.0);
      EXPECT_TRUE(
          std::any_of(allowed[i].begin(), allowed[i].end(),
                      [&](double v) { return std::fabs(v - entry) < 1e-12; }))
          << "W(" << i << ", " << j << ") = " << entry;
      row += entry;
      column += w[j * n + i];
    }
    EXPECT_NEAR(row, 1.0, 1e-12);
    EXPECT_NEAR(column, 1.0, 1e-12);
    trace += w[i * n + i];
  }
  EXPECT_NEAR(trace, double(expectedTrace), 1e-12);
  std::vector<double> square = multiply(w, w, n);
  for (int64_t i = 0; i < n * n; ++i)
    EXPECT_NEAR(square[i], w[i], 1e-12);
}

TEST(SyncAveraging, MatrixOfOneGroupIsASymmetricStochasticProjection) {
  std::mt19937_64 rng(1);
  for (int64_t n : {2, 4, 8, 16, 64}) {
    int64_t cases = n == 64 ? 40 : 1000;
    for (int64_t c = 0; c < cases; ++c)
      checkAveragingMatrix(n, {randomGroup(n, rng)});
  }
}

TEST(SyncAveraging, DisjointGroupsGiveABlockDiagonalProjection) {
  std::mt19937_64 rng(2);
  for (int64_t n : {2, 4, 8, 16}) {
    for (int64_t c = 0; c < 200; ++c)
      checkAveragingMatrix(n, randomPartition(n, rng));
  }
}

TEST(SyncAveraging, MatrixEntriesByHand) {
  // N = 4, S = {1, 3}: W averages replicas 1 and 3 and keeps 0 and 2.
  std::vector<double> w = averagingMatrix(4, {{1, 3}});
  std::vector<double> expected = {1, 0, 0, 0, 0, 0.5, 0, 0.5,
                                  0, 0, 1, 0, 0, 0.5, 0, 0.5};
  EXPECT_EQ(w, expected);
}

/// T2: X W keeps the column mean; in the runtime's f32 (sum, then 1/|S|)
/// within 4 |S| 2^-24 max|x|.
TEST(SyncAveraging, SyncPreservesTheReplicaMean) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> normal(0.0, 1.0);
  const int64_t n = 8, d = 10000;
  std::vector<double> x(d * n);
  for (double &v : x)
    v = normal(rng);
  for (int64_t trial = 0; trial < 20; ++trial) {
    std::vector<int64_t> group = randomGroup(n, rng);
    std::vector<double> w = averagingMatrix(n, {group});
    double largest = 0.0, worst = 0.0, worstF32 = 0.0;
    for (int64_t row = 0; row < d; ++row) {
      const double *replicas = &x[row * n];
      double before = 0.0, after = 0.0;
      for (int64_t j = 0; j < n; ++j) {
        before += replicas[j];
        largest = std::max(largest, std::fabs(replicas[j]));
        double mixed = 0.0;
        for (int64_t i = 0; i < n; ++i)
          mixed += replicas[i] * w[i * n + j];
        after += mixed;
      }
      worst = std::max(worst, std::fabs(after - before) / double(n));
      // The f32 path: members sum their values, scale by 1/|S|, and each
      // keeps the result.
      float sum = 0.0f;
      for (int64_t member : group)
        sum += float(replicas[member]);
      float average = sum * (1.0f / float(group.size()));
      double afterF32 = 0.0, beforeF32 = 0.0;
      for (int64_t j = 0; j < n; ++j) {
        beforeF32 += double(float(replicas[j]));
        bool member = std::count(group.begin(), group.end(), j);
        afterF32 += member ? double(average) : double(float(replicas[j]));
      }
      worstF32 = std::max(worstF32, std::fabs(afterF32 - beforeF32) / n);
    }
    EXPECT_LE(worst, 1e-12 * largest);
    EXPECT_LE(worstF32,
              4.0 * double(group.size()) * std::ldexp(1.0, -24) * largest);
  }
}

/// Connectivity by breadth-first search, as the reference for union-find.
bool connectedByBfs(int64_t n, const Groups &groups) {
  std::vector<std::vector<int64_t>> neighbours(n);
  for (const std::vector<int64_t> &group : groups)
    for (int64_t u : group)
      for (int64_t v : group)
        if (u != v)
          neighbours[u].push_back(v);
  std::vector<bool> seen(n, false);
  std::vector<int64_t> queue{0};
  seen[0] = true;
  for (size_t at = 0; at < queue.size(); ++at)
    for (int64_t next : neighbours[queue[at]])
      if (!seen[next]) {
        seen[next] = true;
        queue.push_back(next);
      }
  return int64_t(queue.size()) == n;
}

/// T3: union-find agrees with BFS on 10^4 random windows, and adding a group
/// never increases the component count.
TEST(SyncAveraging, UnionFindAgreesWithBreadthFirstSearch) {
  std::mt19937_64 rng(4);
  int64_t connectedCases = 0;
  for (int64_t c = 0; c < 10000; ++c) {
    int64_t n = 1 + rng() % 64;
    int64_t p = 1 + rng() % 20;
    Groups window;
    // Mostly small groups, so both verdicts occur often.
    UnionFind sets(n);
    int64_t components = n;
    for (int64_t g = 0; g < p; ++g) {
      std::vector<int64_t> group = randomGroup(n, rng);
      if (rng() % 4)
        group.resize(std::min<size_t>(group.size(), 1 + rng() % 3));
      window.push_back(group);
      for (size_t i = 1; i < group.size(); ++i)
        sets.unite(group[0], group[i]);
      EXPECT_LE(sets.components(), components);
      components = sets.components();
    }
    bool expected = connectedByBfs(n, window);
    ASSERT_EQ(connects(n, window), expected) << "case " << c;
    EXPECT_EQ(components == 1, expected);
    connectedCases += expected;
  }
  EXPECT_GT(connectedCases, 1000);
  EXPECT_LT(connectedCases, 9000);
}

TEST(SyncAveraging, DepartedReplicasAreLeftOutOfConnectivity) {
  std::vector<bool> departed = {false, false, true, false};
  EXPECT_FALSE(connects(4, {{0, 1}, {1, 3}}));
  EXPECT_TRUE(connects(4, {{0, 1}, {1, 3}}, &departed));
  EXPECT_FALSE(connects(4, {{0, 1}}, &departed));
}

/// T9: with no gradients, syncs keep the mean and never increase the
/// consensus distance ||X (I - J)||_F; they shrink it when the groups
/// connect the replicas, and singletons leave it unchanged.
TEST(SyncAveraging, GroupsContractTowardsConsensus) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal(0.0, 1.0);
  const int64_t n = 8, d = 1000;
  std::vector<std::vector<double>> x(n, std::vector<double>(d));
  for (auto &replica : x)
    for (double &v : replica)
      v = normal(rng);
  auto distance = [&] {
    double sum = 0.0;
    for (int64_t k = 0; k < d; ++k) {
      double mean = 0.0;
      for (int64_t i = 0; i < n; ++i)
        mean += x[i][k];
      mean /= n;
      for (int64_t i = 0; i < n; ++i)
        sum += (x[i][k] - mean) * (x[i][k] - mean);
    }
    return std::sqrt(sum);
  };
  auto apply = [&](const std::vector<int64_t> &group) {
    for (int64_t k = 0; k < d; ++k) {
      double mean = 0.0;
      for (int64_t member : group)
        mean += x[member][k];
      mean /= double(group.size());
      for (int64_t member : group)
        x[member][k] = mean;
    }
  };
  double start = distance();
  for (int64_t i = 0; i < n; ++i)
    apply({i});
  EXPECT_EQ(distance(), start);
  double previous = start;
  for (int64_t tick = 0; tick < 200; ++tick) {
    std::vector<int64_t> group = randomGroup(n, rng);
    group.resize(std::min<size_t>(group.size(), 3));
    apply(group);
    double now = distance();
    EXPECT_LE(now, previous * (1 + 1e-12));
    previous = now;
  }
  EXPECT_LT(previous, 1e-6 * start);
}

/// T11: SDPipe's Adam rescale, worked by hand.
TEST(SyncAveraging, AdamVarianceRescale) {
  // b2 = 0.999, t = 1, g = 2, N = 4: m2 = 0.002, v = 0.004.
  double m2 = 0.001 * 2.0, v = 0.001 * 4.0;
  double rescaled = rescaledSecondMoment(m2, v, 4);
  EXPECT_NEAR(rescaled, 0.001003, 1e-6 * 0.001003);
  EXPECT_NEAR(rescaled / 0.001, 1.003, 1e-6);
  double mHat = 0.1 * 2.0 / (1 - 0.9);
  EXPECT_NEAR(mHat / std::sqrt(rescaled / 0.001), 1.997, 1e-3);
  // N = 1 is AdamW's v, bit for bit; v below m2^2 (rounding) clamps.
  EXPECT_EQ(rescaledSecondMoment(m2, v, 1), v);
  EXPECT_EQ(rescaledSecondMoment(0.5, 0.2, 4), 0.25);
  std::mt19937_64 rng(6);
  for (int c = 0; c < 1000; ++c) {
    double a = std::ldexp(double(rng() % 1000), -10);
    double b = a * a + std::ldexp(double(rng() % 1000), -12);
    double r = rescaledSecondMoment(a, b, 1 + rng() % 16);
    EXPECT_GE(r, 0.0);
    EXPECT_LE(r, b);
  }
}

/// T13: Theorem 1's terms against direct evaluation where a double holds
/// them, and the network error grows with P.
TEST(SyncAveraging, TheoremTermsInLogSpace) {
  // N = 2, P = 1, n1 = 2: n1^NP = 4, so t1 = 8 (5 / 0.75)^2 and
  // t2 = 0.75^(2/2) = 0.75.
  TheoremTerms small = theoremTerms(1, 2, 1, 2, 1, 0.1, 1.0, 1.0);
  EXPECT_NEAR(std::exp(small.logT1), 8.0 * (5.0 / 0.75) * (5.0 / 0.75), 1e-9);
  EXPECT_NEAR(std::exp(small.logT2), 0.75, 1e-12);
  double eta = 1 * 0.1 / 2;
  double t1 = 8.0 * (5.0 / 0.75) * (5.0 / 0.75), t2 = 0.75;
  double direct = 2 * 1 * eta * eta * 1 * 1 * 8 * 2 * t1 / 1 *
                  (1 / (1 - t2) + 2 / std::pow(1 - std::sqrt(t2), 2));
  EXPECT_NEAR(small.logNetworkError, std::log(direct), 1e-9);

  // N = 4, n1 = 4: the terms stay finite where n1^-NP underflows, and the
  // network error is non-decreasing in P.
  double previous = -INFINITY;
  for (int64_t period : {1, 2, 5, 10, 20, 100, 1000}) {
    TheoremTerms terms = theoremTerms(4, 4, period, 4, 2, 1e-3, 1.0, 1.0);
    EXPECT_TRUE(std::isfinite(terms.logNetworkError)) << "P = " << period;
    EXPECT_GE(terms.logNetworkError, previous) << "P = " << period;
    previous = terms.logNetworkError;
  }
  // At a fixed learning rate the error falls as the smallest group grows
  // (eta^2 / n2^3 = gamma^2 / (N^2 n2)).
  EXPECT_LT(theoremTerms(1, 8, 5, 8, 4, 1e-3, 1, 1).logNetworkError,
            theoremTerms(1, 8, 5, 8, 2, 1e-3, 1, 1).logNetworkError);
}

} // namespace
