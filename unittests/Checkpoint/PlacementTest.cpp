//===- PlacementTest.cpp - Gemini's placement and recovery probability ----===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Checkpoint/Placement.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <set>

using namespace hetero::checkpoint;

namespace {

using Groups = std::vector<std::vector<int64_t>>;

Probability exact(int64_t n, int64_t m, int64_t k, Layout layout) {
  Probability p;
  std::string error;
  EXPECT_TRUE(recoveryProbability(place(n, m, layout), k, p, error)) << error;
  return p;
}

// Algorithm 6.1's outputs (the spec's table, counted from 0).
TEST(Placement, AlgorithmSixOneGroups) {
  struct Case {
    int64_t n, m;
    Groups groups;
    Layout layout;
  } cases[] = {
      {4, 2, {{0, 1}, {2, 3}}, Layout::Group},
      {5, 2, {{0, 1}, {2, 3, 4}}, Layout::Mixed},
      {7, 3, {{0, 1, 2}, {3, 4, 5, 6}}, Layout::Mixed},
      {2, 2, {{0, 1}}, Layout::Group},
      {16,
       3,
       {{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9, 10, 11}, {12, 13, 14, 15}},
       Layout::Mixed},
  };
  for (const Case &c : cases) {
    Placement placement = place(c.n, c.m, Layout::Mixed);
    EXPECT_EQ(placement.groups, c.groups) << c.n << " " << c.m;
    EXPECT_EQ(placement.layout, c.layout) << c.n << " " << c.m;
  }
  EXPECT_EQ(place(16, 2, Layout::Mixed).groups.size(), 8u);
  // A mixed group is a ring inside: 2 sends to 3, 4 to 2.
  Placement five = place(5, 2, Layout::Mixed);
  EXPECT_EQ(five.peersOf(2), std::vector<int64_t>{3});
  EXPECT_EQ(five.peersOf(4), std::vector<int64_t>{2});
  EXPECT_EQ(five.peersOf(0), std::vector<int64_t>{1});
  EXPECT_EQ(five.hostedBy(2), std::vector<int64_t>{4});
  // The ring: machine i is held by i and i + 1.
  Placement ring = place(4, 2, Layout::Ring);
  EXPECT_EQ(ring.peersOf(3), std::vector<int64_t>{0});
  EXPECT_EQ(ring.hostedBy(0), std::vector<int64_t>{3});
}

TEST(Placement, RejectsImpossibleLayouts) {
  EXPECT_NE(checkPlacement(3, 4, Layout::Mixed).find("at least as many"),
            std::string::npos);
  EXPECT_NE(checkPlacement(4, 0, Layout::Mixed).find("at least 1"),
            std::string::npos);
  EXPECT_NE(checkPlacement(5, 2, Layout::Group).find("ring or mixed"),
            std::string::npos);
  EXPECT_EQ(checkPlacement(5, 2, Layout::Mixed), "");
  EXPECT_EQ(checkPlacement(5, 2, Layout::Ring), "");
}

// Invariant 1 of the spec, exhaustively for N <= 10: |s_i| = m with i
// first, every machine sends and receives m - 1 copies, groups partition
// the machines, and any loss of fewer than m machines is recoverable.
TEST(Placement, EveryLayoutIsBalancedAndToleratesFewerThanMFailures) {
  for (int64_t n = 1; n <= 10; ++n)
    for (int64_t m = 1; m <= n; ++m)
      for (Layout layout : {Layout::Mixed, Layout::Ring}) {
        Placement placement = place(n, m, layout);
        std::vector<int64_t> received(n, 0);
        std::multiset<int64_t> covered;
        for (const std::vector<int64_t> &group : placement.groups) {
          covered.insert(group.begin(), group.end());
          if (layout == Layout::Mixed) {
            EXPECT_TRUE(int64_t(group.size()) >= m &&
                        int64_t(group.size()) < 2 * m);
          }
        }
        EXPECT_EQ(int64_t(covered.size()), n);
        EXPECT_EQ(
            int64_t(std::set<int64_t>(covered.begin(), covered.end()).size()),
            n);
        for (int64_t i = 0; i < n; ++i) {
          const std::vector<int64_t> &set = placement.replicaSets[i];
          ASSERT_EQ(int64_t(set.size()), m);
          EXPECT_EQ(set.front(), i);
          EXPECT_EQ(int64_t(std::set<int64_t>(set.begin(), set.end()).size()),
                    m);
          for (int64_t peer : placement.peersOf(i))
            ++received[peer];
        }
        for (int64_t i = 0; i < n; ++i) {
          EXPECT_EQ(received[i], m - 1);
          EXPECT_EQ(int64_t(placement.hostedBy(i).size()), m - 1);
        }
        for (uint32_t mask = 0; mask < (1u << n); ++mask) {
          if (__builtin_popcount(mask) >= m)
            continue;
          std::vector<bool> failed(n);
          for (int64_t i = 0; i < n; ++i)
            failed[i] = mask >> i & 1;
          EXPECT_TRUE(recoverable(placement, failed));
        }
      }
}

// The spec's reference table (B2.3): exact values of group/mixed and ring.
TEST(Placement, RecoveryProbabilityReferenceTable) {
  struct Row {
    int64_t n, m, k;
    const char *mixed, *ring;
  } rows[] = {
      {4, 2, 2, "2/3", "1/3"},
      {5, 2, 2, "3/5", "1/2"},
      {8, 2, 2, "6/7", "5/7"},
      {8, 2, 3, "4/7", "2/7"},
      {16, 2, 2, "14/15", "13/15"},
      {16, 2, 3, "4/5", "22/35"},
      {16, 2, 4, "8/13", "33/91"},
      {16, 2, 5, "16/39", "2/13"},
      {32, 2, 2, "30/31", "29/31"},
      {32, 2, 3, "28/31", "126/155"},
      {64, 2, 2, "62/63", "61/63"},
      {128, 2, 2, "126/127", "125/127"},
      {1000, 2, 2, "998/999", "997/999"},
      {15, 3, 3, "90/91", "88/91"},
      {16, 3, 3, "69/70", "34/35"},
      {16, 3, 4, "1719/1820", "407/455"},
      {7, 3, 3, "6/7", "4/5"},
      {17, 2, 2, "63/68", "7/8"},
      {17, 2, 3, "133/170", "13/20"},
  };
  for (const Row &row : rows) {
    EXPECT_EQ(exact(row.n, row.m, row.k, Layout::Mixed).fraction(), row.mixed)
        << row.n << " " << row.m << " " << row.k;
    EXPECT_EQ(exact(row.n, row.m, row.k, Layout::Ring).fraction(), row.ring)
        << row.n << " " << row.m << " " << row.k;
  }
  EXPECT_EQ(exact(16, 2, 2, Layout::Mixed).format(), "0.933333");
  EXPECT_EQ(exact(16, 2, 3, Layout::Mixed).format(), "0.800000");
  EXPECT_EQ(exact(5, 2, 2, Layout::Mixed).format(), "0.600000");
  EXPECT_EQ(exact(4, 2, 1, Layout::Mixed).format(), "1.000000");
  EXPECT_EQ(exact(4, 1, 1, Layout::Mixed).format(), "0.000000");
  EXPECT_EQ(exact(4, 2, 0, Layout::Ring).format(), "1.000000");
}

// The counting polynomial against brute force on every small case.
TEST(Placement, CountingEqualsEnumeration) {
  for (int64_t n = 1; n <= 13; ++n)
    for (int64_t m = 1; m <= n; ++m)
      for (Layout layout : {Layout::Mixed, Layout::Ring})
        for (int64_t k = 0; k <= n; ++k) {
          Placement placement = place(n, m, layout);
          Probability counted = exact(n, m, k, layout);
          Probability enumerated =
              recoveryProbabilityByEnumeration(placement, k);
          ASSERT_EQ(counted.numerator, enumerated.numerator)
              << n << " " << m << " " << k << " " << layoutName(layout);
          ASSERT_EQ(counted.denominator, enumerated.denominator);
        }
}

// Inclusion-exclusion over the groups, and Corollary 6.1 as its bound.
TEST(Placement, InclusionExclusionAndCorollary) {
  for (int64_t n = 2; n <= 40; ++n)
    for (int64_t m = 1; m <= std::min<int64_t>(n, 5); ++m) {
      if (n % m)
        continue;
      for (int64_t k = 0; k <= std::min<int64_t>(n, 12); ++k) {
        Probability byGroups;
        std::string error;
        ASSERT_TRUE(groupRecoveryProbability(n, m, k, byGroups, error));
        Probability counted = exact(n, m, k, Layout::Group);
        ASSERT_EQ(byGroups.fraction(), counted.fraction())
            << n << " " << m << " " << k;
        double bound = corollaryBound(n, m, k);
        if (k < 2 * m)
          EXPECT_NEAR(bound, counted.value(), 1e-12) << n << " " << m << k;
        else
          EXPECT_LE(bound, counted.value() + 1e-12);
      }
    }
  // The thesis's values (Fig 6.9): 93.3% and 80.0%; the bound at k = 4.
  EXPECT_NEAR(corollaryBound(16, 2, 2), 14.0 / 15, 1e-12);
  EXPECT_NEAR(corollaryBound(16, 2, 4), 0.6, 1e-12);
  EXPECT_NEAR(corollaryBound(16, 2, 5), 1.0 / 3, 1e-12);
}

// Theorem 6.1: group placement attains 1 - ceil(N/m) / C(N, m) at k = m;
// mixed misses it by exactly (m + q - 2) / C(N, m) <= (2m - 3) / C(N, m).
TEST(Placement, TheoremSixOne) {
  auto choose = [](int64_t n, int64_t k) {
    long double c = 1;
    for (int64_t i = 0; i < k; ++i)
      c = c * (n - i) / (i + 1);
    return c;
  };
  for (int64_t n = 2; n <= 17; ++n)
    for (int64_t m = 2; m <= std::min<int64_t>(n, 4); ++m) {
      Placement placement = place(n, m, Layout::Mixed);
      int64_t q = n % m, p = n / m;
      int64_t distinct = distinctReplicaSets(placement);
      EXPECT_EQ(distinct, q == 0 ? p : p - 1 + m + q) << n << " " << m;
      long double bound = 1 - (long double)((n + m - 1) / m) / choose(n, m);
      long double gap = bound - exact(n, m, m, Layout::Mixed).value();
      EXPECT_NEAR(double(gap), double((q ? m + q - 2 : 0) / choose(n, m)),
                  1e-12);
      EXPECT_LE(double(gap), double((2 * m - 3) / choose(n, m)) + 1e-12);
    }
  EXPECT_EQ(distinctReplicaSets(place(5, 2, Layout::Mixed)), 4);
  EXPECT_EQ(distinctReplicaSets(place(16, 3, Layout::Mixed)), 8);
  EXPECT_EQ(distinctReplicaSets(place(7, 3, Layout::Mixed)), 5);
  EXPECT_EQ(distinctReplicaSets(place(17, 2, Layout::Mixed)), 10);
}

// Invariant 2: more machines never hurt (m | N), and group beats ring.
TEST(Placement, MonotoneInMachinesAndGroupBeatsRing) {
  for (int64_t m = 2; m <= 3; ++m)
    for (int64_t k = m; k <= m + 3; ++k) {
      double previous = 0;
      for (int64_t n = m * 2; n <= 60; n += m) {
        if (n < k)
          continue;
        double value = exact(n, m, k, Layout::Group).value();
        EXPECT_GE(value + 1e-15, previous) << n << " " << m << " " << k;
        EXPECT_GE(value + 1e-15, exact(n, m, k, Layout::Ring).value());
        previous = value;
      }
    }
}

TEST(Placement, ReportsWhatItCannotCount) {
  Probability p;
  std::string error;
  EXPECT_FALSE(recoveryProbability(place(4, 2, Layout::Mixed), 5, p, error));
  EXPECT_NE(error.find("between 0 and the 4 machines"), std::string::npos);
  EXPECT_FALSE(
      recoveryProbability(place(400, 2, Layout::Mixed), 200, p, error));
  EXPECT_NE(error.find("128 bits"), std::string::npos);
  // Large but countable: C(2000, 6) fits.
  EXPECT_TRUE(recoveryProbability(place(2000, 3, Layout::Ring), 6, p, error));
  EXPECT_GT(p.value(), 0.99);
}

} // namespace
