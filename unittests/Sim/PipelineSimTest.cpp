//===- PipelineSimTest.cpp - the pipeline simulator against hand values ---===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Sim/PipelineSim.h"

#include "gtest/gtest.h"

#include <algorithm>

using namespace hetero::sim;

namespace {

TEST(PipelineSim, OneForwardOneBackwardWithoutCommunication) {
  // With F = 1, B = 2, C = 0, 1F1B takes (M + S - 1)(F + B).
  Costs costs;
  costs.forwardMs = 1.0;
  costs.backwardMs = 2.0;
  for (int64_t stages = 1; stages <= 6; ++stages)
    for (int64_t microbatches = 1; microbatches <= 12; ++microbatches) {
      Result result = simulate(kfkbPrograms(stages, microbatches, 1), costs);
      EXPECT_DOUBLE_EQ(result.iterationMs,
                       double((microbatches + stages - 1) * 3))
          << stages << " stages, " << microbatches << " micro-batches";
      // Idle time is the (S - 1)(F + B) ramp on each of the S devices.
      EXPECT_NEAR(result.bubbleFraction,
                  double(stages - 1) / double(microbatches + stages - 1),
                  1e-12);
    }
}

TEST(PipelineSim, GroupingHidesCommunication) {
  // Ada-Grouper's Fig. 2 setting: B = 2F, C = F/2. 2F2B beats 1F1B.
  Costs costs;
  costs.forwardMs = 1.0;
  costs.backwardMs = 2.0;
  costs.commMs = 0.5;
  for (int64_t stages : {2, 4})
    for (int64_t microbatches : {4, 8}) {
      double oneByOne =
          simulate(kfkbPrograms(stages, microbatches, 1), costs).iterationMs;
      double twoByTwo =
          simulate(kfkbPrograms(stages, microbatches, 2), costs).iterationMs;
      EXPECT_LT(twoByTwo, oneByOne)
          << stages << " stages, " << microbatches << " micro-batches";
    }
  // By hand for S = 2, M = 4: 1F1B 17 ms, 2F2B 16 ms.
  EXPECT_DOUBLE_EQ(simulate(kfkbPrograms(2, 4, 1), costs).iterationMs, 17.0);
  EXPECT_DOUBLE_EQ(simulate(kfkbPrograms(2, 4, 2), costs).iterationMs, 16.0);
}

TEST(PipelineSim, PeakInflightIsKTimesStagesToGo) {
  Costs costs;
  Result result = simulate(kfkbPrograms(4, 12, 2), costs);
  EXPECT_EQ(result.peakInflight, (std::vector<int64_t>{8, 6, 4, 2}));
}

TEST(PipelineSim, SlowedLinkWindowsStretchTransfers) {
  Costs costs;
  costs.commMs = 2.0;
  costs.linkWindows.push_back({0, 1, 1.0, 3.0, 4.0});
  // 1 ms at full speed, then 2 ms of window does 0.5 ms of work, then 0.5.
  EXPECT_DOUBLE_EQ(transferEnd(costs, 0, 1, 0.0), 3.5);
  // Other links are unaffected.
  EXPECT_DOUBLE_EQ(transferEnd(costs, 1, 0, 0.0), 2.0);
}

TEST(PipelineSim, StragglersSlowTheirStage) {
  Costs costs;
  costs.forwardMs = 1.0;
  costs.backwardMs = 2.0;
  costs.deviceSlowdown = {1.0, 2.0};
  Result slow = simulate(kfkbPrograms(2, 4, 1), costs);
  costs.deviceSlowdown = {1.0, 1.0};
  Result fast = simulate(kfkbPrograms(2, 4, 1), costs);
  EXPECT_GT(slow.iterationMs, fast.iterationMs);
}

TEST(PipelineSim, ParsesTraces) {
  Costs costs;
  EXPECT_EQ(parseTrace("# preempted link\nlink 0 1 2.0 5.0 3\nstage 1 1.5\n", 2,
                       costs),
            "");
  ASSERT_EQ(costs.linkWindows.size(), 1u);
  EXPECT_DOUBLE_EQ(costs.deviceSlowdown[1], 1.5);
  Costs bad;
  EXPECT_EQ(parseTrace("link 0 2 0 1 2\n", 3, bad),
            "line 1: link 0 -> 2 does not join neighbouring stages of 3");
  EXPECT_EQ(parseTrace("\nspeed 3\n", 2, bad),
            "line 2: unknown directive 'speed', expected 'link' or 'stage'");
}

TEST(PipelineSim, AdaptiveGroupSizeOnHandTimelines) {
  // S = 2, M = 4, F = 1, B = 2, C = 2, traced by hand (a send starts when
  // the task that produced it ends and the link is free; a receive waits
  // for the arrival):
  //   k = 1: stage 1 runs F0 3-4, B0 4-6, F1 6-7, B1 7-9, F2 13-14,
  //          B2 14-16, F3 16-17, B3 17-19; gradient 3 arrives at 21 and
  //          stage 0's B3 ends at 23.
  //   k = 2: activations arrive at 3, 5, 7, 9; stage 1 runs F0 F1 B0 B1
  //          until 10 and F2 F3 B2 B3 from 10 to 16; gradient 3 arrives at
  //          18, stage 0's B3 ends at 20.
  //   k = 3: stage 1's B2 ends at 14, F3 14-15, B3 15-17, gradient 3
  //          arrives at 19, stage 0's B3 ends at 21.
  //   k = 4: stage 1's forwards end at 10, its backwards at 18, gradient 3
  //          arrives at 20, stage 0's B3 ends at 22.
  Costs costs;
  costs.forwardMs = 1.0;
  costs.backwardMs = 2.0;
  costs.commMs = 2.0;
  const double byHand[] = {23.0, 20.0, 21.0, 22.0};
  for (int64_t k = 1; k <= 4; ++k)
    EXPECT_DOUBLE_EQ(simulate(kfkbPrograms(2, 4, k), costs).iterationMs,
                     byHand[k - 1])
        << "k = " << k;
  Choice choice = chooseGroupSize(2, 4, costs, /*memoryCap=*/0);
  EXPECT_EQ(choice.groupSize, 2);
  EXPECT_DOUBLE_EQ(choice.iterationMs, 20.0);
  // A memory cap of 2 micro-batches rules out k = 2 (stage 0 would hold 4).
  choice = chooseGroupSize(2, 4, costs, /*memoryCap=*/2);
  EXPECT_EQ(choice.groupSize, 1);
  EXPECT_DOUBLE_EQ(choice.iterationMs, 23.0);
  // Without communication every k takes (M + S - 1)(F + B) = 15 ms: the
  // smallest group, which holds the fewest activations, wins the tie.
  costs.commMs = 0.0;
  choice = chooseGroupSize(2, 4, costs, /*memoryCap=*/0);
  EXPECT_EQ(choice.groupSize, 1);
  EXPECT_DOUBLE_EQ(choice.iterationMs, 15.0);
}

TEST(PipelineSim, SharedMediumCarriesOneMessageAtATime) {
  // Activations and gradients of every link on one medium: no two
  // transfers overlap, the medium's total work bounds the iteration, and
  // sharing never makes a schedule faster.
  for (int64_t stages : {2, 3})
    for (int64_t k : {1, 2, 4, 8}) {
      Costs costs;
      costs.forwardMs = 1.0;
      costs.backwardMs = 2.0;
      costs.commMs = 3.0;
      double duplex = simulate(kfkbPrograms(stages, 8, k), costs).iterationMs;
      costs.sharedMedium = true;
      Result shared = simulate(kfkbPrograms(stages, 8, k), costs);
      EXPECT_GE(shared.iterationMs, duplex) << stages << " stages, k = " << k;
      EXPECT_GE(shared.iterationMs, 2.0 * double(stages - 1) * 8 * 3.0);
      std::vector<Span> spans;
      for (const Result::Link &link : shared.links)
        spans.insert(spans.end(), link.busy.begin(), link.busy.end());
      EXPECT_EQ(spans.size(), size_t(2 * (stages - 1) * 8));
      std::sort(spans.begin(), spans.end(), [](const Span &a, const Span &b) {
        return a.startMs < b.startMs;
      });
      for (size_t i = 1; i < spans.size(); ++i)
        EXPECT_GE(spans[i].startMs, spans[i - 1].endMs - 1e-9)
            << stages << " stages, k = " << k << ", transfer " << i;
    }
}

TEST(PipelineSim, SharedMediumServesTransfersInReadyOrder) {
  // Two stages, 1F1B, 2 micro-batches, F = B = 1, C = 1. Stage 0 sends
  // activation 0 at 1 (arrives at 2) and activation 1 at 2 (at 3); stage 1
  // runs F0 over [2, 3], B0 over [3, 4] and sends gradient 0 at 4, behind
  // nothing: activation 1 was ready at 2, first.
  Costs costs;
  costs.forwardMs = 1.0;
  costs.backwardMs = 1.0;
  costs.commMs = 1.0;
  costs.sharedMedium = true;
  Result result = simulate(kfkbPrograms(2, 2, 1), costs);
  costs.sharedMedium = false;
  EXPECT_DOUBLE_EQ(result.iterationMs,
                   simulate(kfkbPrograms(2, 2, 1), costs).iterationMs);
}

} // namespace
