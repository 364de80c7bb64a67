//===- PartitionTest.cpp - Algorithm 6.2 and its variants -----------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Checkpoint/Partition.h"

#include "gtest/gtest.h"

#include <random>
#include <tuple>

using namespace hetero::checkpoint;

namespace {

constexpr int64_t MiB = 1 << 20;
constexpr int64_t ms = 1000000;

/// The spec's reference problem (B4.1 item 5) in MiB and seconds:
/// B = 1000 MiB/s, alpha = 2 ms, mu = 0.9, R = 128 MiB in 4 parts, spans
/// 0.1, 0.05, 0.3 and 0.02 s.
PartitionProblem reference(int64_t checkpointMiB, int64_t replicas) {
  PartitionProblem problem;
  problem.spansNs = {100 * ms, 50 * ms, 300 * ms, 20 * ms};
  problem.checkpointBytes = checkpointMiB * MiB;
  problem.copies = replicas - 1;
  problem.bufferBytes = 128 * MiB;
  problem.parts = 4;
  problem.bandwidthBytesPerMs = double(MiB);
  problem.alphaNs = 2 * ms;
  problem.mu = 0.9;
  return problem;
}

using Expected = std::vector<std::tuple<int64_t, int64_t, int64_t>>;

Expected planOf(const Partition &plan) {
  Expected out;
  for (const Chunk &chunk : plan.chunks)
    out.emplace_back(chunk.span, chunk.copy, chunk.bytes / MiB);
  return out;
}

TEST(Partition, ReferenceOutputsWithoutOverflow) {
  Partition plan = partition(reference(200, 2));
  EXPECT_EQ(planOf(plan), (Expected{{0, 0, 32},
                                    {0, 0, 32},
                                    {0, 0, 20},
                                    {1, 0, 32},
                                    {1, 0, 9},
                                    {2, 0, 32},
                                    {2, 0, 32},
                                    {2, 0, 11}}));
  EXPECT_EQ(plan.overflowNs, 0);
  for (const Chunk &chunk : plan.chunks)
    EXPECT_EQ(chunk.bytes % MiB, 0);
}

TEST(Partition, ReferenceOutputsWithOverflow) {
  Partition plan = partition(reference(500, 2));
  Expected expected = {
      {0, 0, 32}, {0, 0, 32}, {0, 0, 20}, {1, 0, 32}, {1, 0, 9}};
  for (int i = 0; i < 7; ++i)
    expected.emplace_back(2, 0, 32);
  expected.emplace_back(2, 0, 30);
  for (int i = 0; i < 3; ++i)
    expected.emplace_back(3, 0, 32);
  expected.emplace_back(3, 0, 25);
  EXPECT_EQ(planOf(plan), expected);
  // 4 alpha + 121 MiB / B = 129 ms in a 20 ms span: the update waits 109 ms.
  EXPECT_EQ(plan.overflowNs, 109 * ms);
}

TEST(Partition, ReferenceOutputsWithTwoCopies) {
  Partition plan = partition(reference(200, 3));
  Expected expected = {{0, 0, 32}, {0, 0, 32}, {0, 0, 20}, {1, 0, 32},
                       {1, 0, 9},  {2, 0, 32}, {2, 0, 32}, {2, 0, 11}};
  for (int i = 0; i < 5; ++i)
    expected.emplace_back(2, 1, 32);
  expected.emplace_back(2, 1, 17);
  expected.emplace_back(3, 1, 23);
  EXPECT_EQ(planOf(plan), expected);
  // The second copy starts at offset 0 again.
  EXPECT_EQ(plan.chunks[8].offset, 0);
  EXPECT_EQ(plan.chunks[9].offset, 32 * MiB);
}

TEST(Partition, NoCopiesNoChunks) {
  EXPECT_TRUE(partition(reference(200, 1)).chunks.empty());
  PartitionProblem empty = reference(0, 2);
  EXPECT_TRUE(partition(empty).chunks.empty());
}

// Invariant 3 on random problems: it terminates, moves (m - 1) C bytes in
// order, chunks are in (0, R/p], bounded spans are never over-filled, and a
// span left with bytes still to send could not take one more byte.
TEST(Partition, InvariantsOnRandomProblems) {
  std::mt19937_64 random(7);
  for (int trial = 0; trial < 2000; ++trial) {
    PartitionProblem problem;
    int spans = 1 + int(random() % 8);
    for (int i = 0; i < spans; ++i)
      problem.spansNs.push_back(int64_t(random() % (200 * ms)));
    problem.checkpointBytes = 1 + int64_t(random() % (300 * MiB));
    problem.copies = int64_t(random() % 4);
    problem.parts = 1 + int64_t(random() % 4);
    problem.bufferBytes = problem.parts * (1 + int64_t(random() % (64 * MiB)));
    problem.bandwidthBytesPerMs = 1e3 + double(random() % (4 * MiB));
    problem.alphaNs = int64_t(random() % (5 * ms));
    problem.mu = 0.5 + double(random() % 50) / 100;
    if (problem.parts == 1)
      problem.copyBytesPerMs = double(random() % (2 * MiB));
    ASSERT_EQ(checkPartitionProblem(problem), "");
    Partition plan = partition(problem);

    int64_t cap = problem.bufferBytes / problem.parts;
    std::vector<int64_t> sent(problem.copies, 0);
    std::vector<int64_t> usedNs(spans, 0);
    int64_t previousSpan = 0, previousCopy = 0;
    for (const Chunk &chunk : plan.chunks) {
      ASSERT_GT(chunk.bytes, 0);
      ASSERT_LE(chunk.bytes, cap);
      ASSERT_GE(chunk.span, previousSpan);
      ASSERT_GE(chunk.copy, previousCopy);
      ASSERT_EQ(chunk.offset, sent[chunk.copy]);
      ASSERT_EQ(chunk.startNs, usedNs[chunk.span]);
      ASSERT_EQ(chunk.durationNs, chunkNs(problem, chunk.bytes));
      sent[chunk.copy] += chunk.bytes;
      usedNs[chunk.span] += chunk.durationNs;
      previousSpan = chunk.span;
      previousCopy = chunk.copy;
    }
    for (int64_t copy = 0; copy < problem.copies; ++copy)
      ASSERT_EQ(sent[copy], problem.checkpointBytes);
    int64_t lastUsed = plan.chunks.empty() ? -1 : plan.chunks.back().span;
    for (int i = 0; i + 1 < spans; ++i) {
      int64_t bound = int64_t(problem.mu * (long double)problem.spansNs[i]);
      ASSERT_LE(usedNs[i], bound);
      // Greedy: a span before the last used one had no room for a byte more.
      if (i < lastUsed) {
        ASSERT_LT(bound - usedNs[i], chunkNs(problem, 1))
            << "trial " << trial << " span " << i;
      }
    }
    ASSERT_EQ(plan.overflowNs,
              lastUsed == spans - 1
                  ? std::max<int64_t>(0, usedNs.back() - problem.spansNs.back())
                  : 0);
  }
}

/// The spec's calibrated Fig 6.16 analogue (B4.2 S-interleave): GPT-2 40B
/// over 128 GPUs, 3.75 GB per GPU, 100 Gbps shared by 8 GPUs, alpha = 1 ms.
PartitionProblem figureSixSixteen() {
  PartitionProblem problem;
  for (double seconds :
       {1.6, 0.6, 0.5, 0.4, 0.3, 0.3, 0.2, 0.2, 0.15, 0.1, 0.05, 0.04})
    problem.spansNs.push_back(int64_t(seconds * 1e9));
  problem.checkpointBytes = 3750000000;
  problem.copies = 1;
  problem.bufferBytes = 128000000;
  problem.parts = 4;
  problem.bandwidthBytesPerMs = 1.5625e6;
  problem.alphaNs = 1 * ms;
  problem.mu = 0.9;
  return problem;
}

TEST(Partition, InterleavingVariantsOrderAsInTheThesis) {
  const int64_t iterationNs = 23760 * ms;
  PartitionProblem gemini = figureSixSixteen();
  Partition pipelined = partition(gemini);
  EXPECT_EQ(pipelined.chunks.size(), 119u);
  EXPECT_EQ(pipelined.overflowNs, 0);

  // One 128 MB buffer: the receiver's copy is serial with the transfer.
  PartitionProblem serial = figureSixSixteen();
  serial.parts = 1;
  serial.copyBytesPerMs = serial.bandwidthBytesPerMs;
  Partition unpipelined = partition(serial);
  // 0.876 s of traffic lands in the last span, 0.04 s long.
  EXPECT_NEAR(double(unpipelined.overflowNs) / 1e9 + 0.04, 0.876, 0.002);
  EXPECT_NEAR(double(unpipelined.overflowNs) / iterationNs, 0.035, 0.002);

  // Naive: one chunk per span needs a 2.25 GB buffer.
  PartitionProblem naive = figureSixSixteen();
  naive.interleaving = Interleaving::Naive;
  Partition oneEach = partition(naive);
  EXPECT_NEAR(double(oneEach.largestChunkBytes), (0.9 * 1.6e3 - 1) * 1.5625e6,
              1.0);
  EXPECT_EQ(oneEach.chunks[0].span, 0);
  EXPECT_EQ(oneEach.chunks[1].span, 1);

  // Blocking: everything before training, C / B = 2.4 s, 10.1 %.
  PartitionProblem blocking = figureSixSixteen();
  blocking.interleaving = Interleaving::Blocking;
  Partition upFront = partition(blocking);
  for (const Chunk &chunk : upFront.chunks)
    EXPECT_EQ(chunk.span, 0);
  EXPECT_NEAR(double(upFront.overflowNs) / iterationNs, 0.106, 0.002);
  EXPECT_LT(pipelined.overflowNs, unpipelined.overflowNs);
  EXPECT_LT(unpipelined.overflowNs, upFront.overflowNs);
}

TEST(Partition, RejectsBadProblems) {
  PartitionProblem problem = reference(200, 2);
  problem.spansNs.clear();
  EXPECT_NE(checkPartitionProblem(problem).find("at least one idle span"),
            std::string::npos);
  problem = reference(200, 2);
  problem.mu = 1.5;
  EXPECT_NE(checkPartitionProblem(problem).find("mu"), std::string::npos);
  problem = reference(200, 2);
  problem.bandwidthBytesPerMs = 0;
  EXPECT_NE(checkPartitionProblem(problem).find("bandwidth"),
            std::string::npos);
  problem = reference(200, 2);
  problem.bufferBytes = 3;
  EXPECT_NE(checkPartitionProblem(problem).find("4 parts"), std::string::npos);
}

} // namespace
