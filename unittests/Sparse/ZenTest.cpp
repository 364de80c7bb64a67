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

/// The partitions' index sets, each ascending.
std::vector<std::vector<uint32_t>>
sortedParts(std::vector<std::vector<uint32_t>> parts) {
  for (std::vector<uint32_t> &part : parts)
    std::sort(part.begin(), part.end());
  return parts;
}

TEST(Zen, NoIndexLostAndEveryRankPartitionsAlike) {
  HashSeeds seeds;
  std::vector<uint32_t> indices = zipfIndices(10000, 1);
  auto parts = partitionIndices(indices, 8, seeds);
  ASSERT_TRUE(parts);
  // Another rank sees the same indices in another order, on 4 threads.
  std::vector<uint32_t> reordered = indices;
  std::reverse(reordered.begin(), reordered.end());
  auto again = partitionIndices(reordered, 8, seeds, 0, 4);
  ASSERT_TRUE(again);
  EXPECT_EQ(sortedParts(*parts), sortedParts(*again));
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
    std::vector<uint32_t> part = sortedParts(*parts)[p];
    std::vector<uint32_t> bitmap = encodeHashBitmap(part, members);
    EXPECT_EQ(decodeHashBitmap(bitmap, members), part);
    words += bitmap.size();
  }
  // |G| / 32 words, plus at most one partial word per partition.
  EXPECT_GE(words, size_t(size / 32));
  EXPECT_LE(words, size_t(size / 32 + partitions));
}

/// Alg 3.2 replayed by hand on one thread: an index takes the first of
/// its three probed slots that is free, else the next serial slot; the
/// memory is read out in slot order.
std::vector<uint32_t> replayAlg32(const HashMemory &shape,
                                  const std::vector<uint32_t> &indices,
                                  int64_t &serialUsed) {
  std::vector<int64_t> probed(shape.probedSlots(), -1);
  std::vector<uint32_t> serial;
  for (uint32_t index : indices) {
    bool placed = false;
    for (int k = 0; k < 3 && !placed; ++k) {
      int64_t &slot = probed[shape.probeSlot(index, k)];
      if (slot < 0) {
        slot = index;
        placed = true;
      }
    }
    if (!placed && int64_t(serial.size()) < shape.serialSlots())
      serial.push_back(index);
  }
  serialUsed = int64_t(serial.size());
  std::vector<uint32_t> memory;
  for (int64_t slot : probed)
    if (slot >= 0)
      memory.push_back(uint32_t(slot));
  memory.insert(memory.end(), serial.begin(), serial.end());
  return memory;
}

TEST(Zen, Fig39RehashesThenWritesSerially) {
  // Fig. 3.9's memory: 3 partitions of r1 = 4 probed and r2 = 3 serial
  // slots. Partition 0's indices are inserted until every probed slot is
  // taken and an index has gone to serial memory.
  HashSeeds seeds;
  HashMemory memory(3, 4, 3, seeds);
  std::vector<uint32_t> inserted;
  int64_t serialUsed = 0;
  for (uint32_t index = 1; serialUsed < 2; ++index) {
    if (partitionOf(index, seeds, 3) != 0)
      continue;
    ASSERT_TRUE(memory.insert(index));
    inserted.push_back(index);
    replayAlg32(memory, inserted, serialUsed);
  }
  int64_t expectedSerial = 0;
  std::vector<uint32_t> expected =
      replayAlg32(memory, inserted, expectedSerial);
  EXPECT_EQ(memory.extract(0), expected);
  EXPECT_EQ(memory.serialUsed(), 2);
  EXPECT_EQ(expected.size(), 6u); // 4 probed slots, then 2 serial
  // The last index found its three slots taken: it is in serial memory.
  EXPECT_EQ(expected.back(), inserted.back());
  EXPECT_TRUE(memory.extract(1).empty());
  // The read-out is the memory's order, not the indices' (no sort).
  EXPECT_FALSE(std::is_sorted(expected.begin(), expected.end()));
}

TEST(Zen, OneThreadReadsOutInMemoryOrder) {
  HashSeeds seeds;
  std::vector<uint32_t> indices = zipfIndices(3000, 5);
  HashMemory memory(4, 1200, 120, seeds);
  for (uint32_t index : indices)
    ASSERT_TRUE(memory.insert(index));
  for (int64_t p = 0; p < 4; ++p) {
    std::vector<uint32_t> mine;
    for (uint32_t index : indices)
      if (partitionOf(index, seeds, 4) == p)
        mine.push_back(index);
    int64_t serialUsed = 0;
    EXPECT_EQ(memory.extract(p), replayAlg32(memory, mine, serialUsed));
  }
  // About 3% of the indices need serial memory at a load of 3/4 over
  // three probes; none is lost.
  EXPECT_GT(memory.serialUsed(), 0);
  EXPECT_LT(memory.serialUsed(), 300);
}

TEST(Zen, ThreadsInsertingAtOnceLoseNothing) {
  HashSeeds seeds;
  std::vector<uint32_t> indices(1 << 18);
  for (size_t i = 0; i < indices.size(); ++i)
    indices[i] = uint32_t(i * 2654435761u % (1u << 30));
  for (int round = 0; round < 4; ++round) {
    // A memory at the default load, filled by 8 threads at once.
    auto parts = partitionIndices(indices, 8, seeds, 0, 8);
    ASSERT_TRUE(parts);
    size_t held = 0;
    std::vector<uint32_t> all;
    for (int64_t p = 0; p < 8; ++p) {
      for (uint32_t index : (*parts)[p])
        EXPECT_EQ(partitionOf(index, seeds, 8), p);
      all.insert(all.end(), (*parts)[p].begin(), (*parts)[p].end());
      held += (*parts)[p].size();
    }
    std::sort(all.begin(), all.end());
    std::vector<uint32_t> expected = indices;
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(held, indices.size()) << "round " << round;
    EXPECT_EQ(all, expected) << "round " << round;
  }
}

TEST(Zen, HashingAGradientOnThreadsFindsEveryNonZero) {
  HashSeeds seeds;
  std::vector<uint32_t> indices = zipfIndices(kSize / 50, 7);
  std::vector<float> gradient(kSize, 0.0f);
  for (uint32_t index : indices)
    gradient[index] = 1.0f + float(index % 7);
  auto expected = partitionIndices(indices, 6, seeds);
  ASSERT_TRUE(expected);
  for (int threads : {1, 2, 5}) {
    std::vector<std::vector<uint32_t>> parts =
        hierarchicalHash(gradient.data(), gradient.size(), 6, seeds, threads);
    EXPECT_EQ(sortedParts(parts), sortedParts(*expected))
        << threads << " threads";
  }
  // An empty or all-zero gradient has empty partitions.
  std::vector<float> zeros(100, 0.0f);
  for (const auto &part : hierarchicalHash(zeros.data(), 100, 3, seeds, 4))
    EXPECT_TRUE(part.empty());
  EXPECT_EQ(hierarchicalHash(nullptr, 0, 3, seeds, 4).size(), 3u);
}

TEST(Zen, SerialMemoryTakesCollisionsAndOverflowIsReported) {
  HashSeeds seeds;
  HashMemory memory(1, 20, 2, seeds); // 20 probed slots, 2 serial
  int inserted = 0;
  for (uint32_t i = 0; i < 100 && memory.insert(i * 7919); ++i)
    ++inserted;
  // Insertion fails once an index finds its 3 slots taken and the serial
  // memory full: never beyond 22 indices.
  EXPECT_GE(inserted, 3);
  EXPECT_LE(inserted, 22);
  EXPECT_EQ(memory.serialUsed(), 2);
  EXPECT_EQ(memory.extract(0).size(), size_t(inserted));
  // Sized by the caller, an overflowing memory is reported; sized by
  // partitionIndices, it grows until nothing is lost.
  std::vector<uint32_t> indices;
  for (uint32_t i = 0; i < 1000; ++i)
    indices.push_back(i * 7919);
  EXPECT_FALSE(partitionIndices(indices, 2, seeds, 16));
  auto grown = partitionIndices(indices, 2, seeds);
  ASSERT_TRUE(grown);
  EXPECT_EQ((*grown)[0].size() + (*grown)[1].size(), indices.size());
}

} // namespace
