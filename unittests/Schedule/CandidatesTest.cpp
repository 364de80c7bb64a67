//===- CandidatesTest.cpp - Pareto candidates under a memory cap ----------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Schedule/Candidates.h"

#include "gtest/gtest.h"

using namespace hetero::schedule;

namespace {

TEST(Candidates, HandComputedFrontier) {
  // S = 4, a batch of 32 samples of 1 byte each, 16 bytes per stage:
  //   k = 1: b = 4 (M = 8, 4 in flight x 4 = 16)
  //   k = 2: b = 2 (M = 16, 8 x 2 = 16)
  //   k = 3: b = 1 (12 x 1), k = 4: b = 1 (16 x 1)
  //   k = 5: 20 x 1 > 16, so generation stops.
  std::vector<Candidate> candidates = paretoCandidates(4, 32, 1, 16);
  ASSERT_EQ(candidates.size(), 4u);
  int64_t expected[][4] = {
      {1, 4, 8, 16}, {2, 2, 16, 16}, {3, 1, 32, 12}, {4, 1, 32, 16}};
  for (size_t i = 0; i < candidates.size(); ++i) {
    EXPECT_EQ(candidates[i].groupSize, expected[i][0]);
    EXPECT_EQ(candidates[i].microbatchSize, expected[i][1]);
    EXPECT_EQ(candidates[i].microbatches, expected[i][2]);
    EXPECT_EQ(candidates[i].peakBytes, expected[i][3]);
  }
}

TEST(Candidates, NothingFits) {
  EXPECT_TRUE(paretoCandidates(4, 32, 1024, 512).empty());
}

TEST(Candidates, OneMicrobatchStopsAtGPipe) {
  // A cap that holds the whole batch: M = 1, and every k is the same plan.
  std::vector<Candidate> candidates = paretoCandidates(4, 32, 1, 1 << 20);
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(candidates[0].microbatchSize, 32);
}

// Against the definition, by brute force over k and every divisor b.
TEST(Candidates, LargestFittingSizePerGroup) {
  for (int64_t stages : {2, 3, 4, 8})
    for (int64_t batch : {12, 16, 30, 64})
      for (int64_t cap : {4, 9, 16, 40, 100}) {
        std::vector<Candidate> candidates =
            paretoCandidates(stages, batch, 1, cap);
        for (size_t i = 0; i < candidates.size(); ++i) {
          const Candidate &c = candidates[i];
          EXPECT_EQ(c.groupSize, int64_t(i) + 1);
          EXPECT_EQ(batch % c.microbatchSize, 0);
          EXPECT_LE(c.peakBytes, cap);
          for (int64_t b = c.microbatchSize + 1; b <= batch; ++b) {
            if (batch % b == 0) {
              EXPECT_GT(
                  peakActivationBytes(stages, 0, c.groupSize, b, batch / b, 1),
                  cap)
                  << "b = " << b << " also fits k = " << c.groupSize;
            }
          }
          // b never grows with k, and no stage holds more than stage 0.
          if (i > 0) {
            EXPECT_LE(c.microbatchSize, candidates[i - 1].microbatchSize);
          }
          for (int64_t s = 1; s < stages; ++s)
            EXPECT_LE(peakActivationBytes(stages, s, c.groupSize,
                                          c.microbatchSize, c.microbatches, 1),
                      c.peakBytes);
        }
        // Unless the last candidate is GPipe (every further k repeats
        // it), no micro-batch size fits the next k.
        if (candidates.empty() ||
            candidates.back().groupSize >= candidates.back().microbatches)
          continue;
        int64_t next = candidates.size() + 1;
        for (int64_t b = 1; b <= batch; ++b) {
          if (batch % b == 0) {
            EXPECT_GT(peakActivationBytes(stages, 0, next, b, batch / b, 1),
                      cap)
                << "stopped before k = " << next << " with b = " << b;
          }
        }
      }
}

} // namespace
