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

TEST(Candidates, StagesThatDifferAreEachChecked) {
  // Two stages, 16 samples, a cap of 1000 bytes. Stage 0 stashes 10 bytes a
  // sample and holds nothing else; stage 1 stashes 40 and holds 600 of
  // parameters, gradients and optimizer state. Stage s holds
  // min(k (2 - s), M) micro-batches: for k = 1, b = 16 would put 600 + 640
  // on stage 1, b = 8 puts 920 there (160 on stage 0); for k = 2, stage 1
  // holds two micro-batches, so b = 4 (920 again).
  std::vector<StageMemory> stages = {{10, 0}, {40, 600}};
  std::vector<Candidate> candidates = paretoCandidates(stages, 16, 1000);
  ASSERT_FALSE(candidates.empty());
  EXPECT_EQ(candidates[0].groupSize, 1);
  EXPECT_EQ(candidates[0].microbatchSize, 8);
  EXPECT_EQ(candidates[0].peakBytes, 920);
  ASSERT_GE(candidates.size(), 2u);
  EXPECT_EQ(candidates[1].microbatchSize, 4);
  EXPECT_EQ(candidates[1].peakBytes, 920);
  for (const Candidate &c : candidates)
    EXPECT_LE(
        peakStageBytes(stages, c.groupSize, c.microbatchSize, c.microbatches),
        1000);
  // Nothing fits when the parameters alone exceed the cap.
  EXPECT_TRUE(paretoCandidates({{10, 0}, {40, 1001}}, 16, 1000).empty());
}

TEST(Candidates, SizesAreMultiplesOfTheStep) {
  // Stage functions of 4 samples: b in {4, 8, 16} for 16 samples.
  std::vector<StageMemory> stages(4, StageMemory{1, 0});
  for (const Candidate &c : paretoCandidates(stages, 16, 12, 4))
    EXPECT_EQ(c.microbatchSize % 4, 0) << "k = " << c.groupSize;
  // With a cap below 1F1B at 4 samples, none fits, though b = 1 would.
  EXPECT_TRUE(paretoCandidates(stages, 16, 15, 4).empty());
  EXPECT_FALSE(paretoCandidates(stages, 16, 15, 1).empty());
}

TEST(Candidates, AlikeStagesMatchTheUniformForm) {
  for (int64_t stages : {2, 3, 4})
    for (int64_t cap : {9, 16, 40, 100}) {
      auto uniform = paretoCandidates(stages, 24, 1, cap);
      auto general = paretoCandidates(
          std::vector<StageMemory>(size_t(stages), StageMemory{1, 0}), 24, cap);
      ASSERT_EQ(uniform.size(), general.size());
      for (size_t i = 0; i < uniform.size(); ++i) {
        EXPECT_EQ(uniform[i].microbatchSize, general[i].microbatchSize);
        EXPECT_EQ(uniform[i].peakBytes, general[i].peakBytes);
      }
    }
}

} // namespace
