//===- ZenTest.cpp - Zen's hierarchical hashing ---------------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Sparse/Zen.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

using namespace hetero::sparse;

namespace {

constexpr int64_t kSize = 1 << 20; // gradient elements (embedding rows)

/// `count` distinct indices of [0, kSize) drawn from Zipf(1.1) over a
/// shuffled ranking (popular rows are scattered, as in real vocabularies).
std::vector<uint32_t> zipfIndices(size_t count, unsigned seed) {
  static const std::vector<double> cumulative = [] {
    std::vector<double> weights(kSize);
    double total = 0.0;
    for (int64_t r = 0; r < kSize; ++r)
      weights[r] = total += 1.0 / std::pow(double(r + 1), 1.1);
    for (double &w : weights)
      w /= total;
    return weights;
  }();
  static const std::vector<uint32_t> rows = [] {
    std::vector<uint32_t> order(kSize);
    for (int64_t i = 0; i < kSize; ++i)
      order[i] = uint32_t(i);
    std::shuffle(order.begin(), order.end(), std::mt19937(99));
    return order;
  }();
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::set<uint32_t> chosen;
  while (chosen.size() < count) {
    size_t rank =
        std::lower_bound(cumulative.begin(), cumulative.end(), unit(random)) -
        cumulative.begin();
    chosen.insert(rows[std::min<size_t>(rank, kSize - 1)]);
  }
  std::vector<uint32_t> indices(chosen.begin(), chosen.end());
  std::shuffle(indices.begin(), indices.end(), random);
  return indices;
}

TEST(Zen, NoIndexLostAndEveryRankPartitionsAlike) {
  HashSeeds seeds;
  std::vector<uint32_t> indices = zipfIndices(10000, 1);
  auto parts = partitionIndices(indices, 8, seeds);
  ASSERT_TRUE(parts);
  // Another rank sees the same indices in another order.
  std::vector<uint32_t> reordered = indices;
  std::reverse(reordered.begin(), reordered.end());
  auto again = partitionIndices(reordered, 8, seeds);
  ASSERT_TRUE(again);
  EXPECT_EQ(*parts, *again);
  std::set<uint32_t> seen;
  for (int64_t p = 0; p < 8; ++p)
    for (uint32_t index : (*parts)[p]) {
      EXPECT_EQ(partitionOf(index, seeds, 8), p);
      EXPECT_TRUE(seen.insert(index).second) << index << " twice";
    }
  EXPECT_EQ(seen, std::set<uint32_t>(indices.begin(), indices.end()));
}

TEST(Zen, PushAndPullBalanceOnZipfIndices) {
  HashSeeds seeds;
  for (int64_t ranks : {4, 8}) {
    // Each rank's gradient holds 1% of the rows.
    std::vector<int64_t> push(ranks, 0);
    std::vector<std::set<uint32_t>> unions(ranks);
    for (int64_t r = 0; r < ranks; ++r) {
      std::vector<uint32_t> indices = zipfIndices(kSize / 100, 10 + r);
      auto parts = partitionIndices(indices, ranks, seeds);
      ASSERT_TRUE(parts);
      for (int64_t p = 0; p < ranks; ++p) {
        push[p] += (*parts)[p].size();
        unions[p].insert((*parts)[p].begin(), (*parts)[p].end());
      }
    }
    std::vector<int64_t> pull;
    for (const auto &u : unions)
      pull.push_back(u.size());
    EXPECT_LE(imbalance(push), 1.1) << ranks << " ranks";
    EXPECT_LE(imbalance(pull), 1.1) << ranks << " ranks";
  }
}

TEST(Zen, RangesOfSkewedRowsAreImbalancedHashesAreNot) {
  // Unshuffled Zipf: the popular rows are the low indices.
  HashSeeds seeds;
  std::vector<uint32_t> indices;
  for (uint32_t i = 0; i < 20000; ++i)
    indices.push_back(uint32_t(std::pow(double(i + 1), 1.35)) % kSize);
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  std::vector<int64_t> hashed(4, 0), ranged(4, 0);
  for (uint32_t index : indices) {
    ++hashed[partitionOf(index, seeds, 4)];
    ++ranged[index * int64_t(4) / kSize];
  }
  EXPECT_LE(imbalance(hashed), 1.1);
  EXPECT_GT(imbalance(ranged), 1.5);
}

TEST(Zen, HashBitmapRoundTripsInGOver32Words) {
  HashSeeds seeds;
  int64_t partitions = 4, size = 100000;
  std::vector<uint32_t> indices = zipfIndices(5000, 3);
  for (uint32_t &index : indices)
    index %= uint32_t(size);
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  auto parts = partitionIndices(indices, partitions, seeds);
  ASSERT_TRUE(parts);
  size_t words = 0;
  for (int64_t p = 0; p < partitions; ++p) {
    std::vector<uint32_t> members =
        partitionMembers(size, p, partitions, seeds);
    std::vector<uint32_t> bitmap = encodeHashBitmap((*parts)[p], members);
    EXPECT_EQ(decodeHashBitmap(bitmap, members), (*parts)[p]);
    words += bitmap.size();
  }
  // |G| / 32 words, plus at most one partial word per partition.
  EXPECT_GE(words, size_t(size / 32));
  EXPECT_LE(words, size_t(size / 32 + partitions));
}

TEST(Zen, OverflowRegionTakesCollisions) {
  HashSeeds seeds;
  PartitionTable table(20, seeds); // 20 slots, an overflow of 2
  int inserted = 0;
  for (uint32_t i = 0; i < 100 && table.insert(i * 7919); ++i)
    ++inserted;
  // Insertion fails once an index finds its 3 slots taken and the
  // overflow region full: never beyond 22 indices.
  EXPECT_GE(inserted, 3);
  EXPECT_LE(inserted, 22);
  EXPECT_EQ(table.overflowUsed(), 2);
  EXPECT_FALSE(table.insert(uint32_t(inserted) * 7919));
  EXPECT_TRUE(table.insert(0)); // already held
  EXPECT_EQ(table.indices().size(), size_t(inserted));
}

} // namespace
