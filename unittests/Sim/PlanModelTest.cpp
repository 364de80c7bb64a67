//===- PlanModelTest.cpp - the (k, b) cost model of pipeline plans --------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Sim/PlanModel.h"

#include "gtest/gtest.h"

using namespace hetero::sim;

namespace {

TEST(FitLink, ProbedLatencyLeavesTheMedianTimePerByte) {
  // 1 ms of latency, 0.001 ms per byte; one message timed late (a receiver
  // descheduled while it arrived) does not move the median.
  std::vector<TimedMessage> messages = {
      {1000, 2.0}, {2000, 3.0}, {1000, 2.0}, {4000, 5.0}, {1000, 40.0}};
  LinkCost cost = fitLink(messages, 1.0);
  EXPECT_DOUBLE_EQ(cost.alphaMs, 1.0);
  EXPECT_DOUBLE_EQ(cost.msPerByte, 0.001);
  EXPECT_DOUBLE_EQ(cost.messageMs(3000), 4.0);
}

TEST(FitLink, ProbedLatencyNeverExceedsTheFastestMessage) {
  // A probe that met a descheduled peer measured 2 ms, but messages of
  // 1000 bytes took 0.3 ms: the latency is at most that.
  LinkCost cost = fitLink({{1000, 0.3}, {1000, 0.5}}, 2.0);
  EXPECT_DOUBLE_EQ(cost.alphaMs, 0.3);
  EXPECT_DOUBLE_EQ(cost.msPerByte, 0.0001 / 1.0);
  EXPECT_DOUBLE_EQ(cost.messageMs(1000), 0.4);
}

TEST(FitLink, LeastSquaresWithoutAProbe) {
  // Sizes far apart: alpha and beta both come from the line.
  std::vector<TimedMessage> messages = {{1000, 2.5}, {4000, 4.0}, {8000, 6.0}};
  LinkCost cost = fitLink(messages, std::nullopt);
  EXPECT_NEAR(cost.alphaMs, 2.0, 1e-9);
  EXPECT_NEAR(cost.msPerByte, 0.0005, 1e-12);
}

TEST(FitLink, OneSizeWithoutAProbeIsAllBandwidth) {
  std::vector<TimedMessage> messages = {{2000, 4.0}, {2000, 6.0}, {2000, 5.0}};
  LinkCost cost = fitLink(messages, std::nullopt);
  EXPECT_DOUBLE_EQ(cost.alphaMs, 0.0);
  EXPECT_DOUBLE_EQ(cost.msPerByte, 0.0025);
}

TEST(FitLink, NegativeInterceptFallsBackToNoLatency) {
  // Noise that tilts the line below the origin: alpha 0, median beta.
  std::vector<TimedMessage> messages = {{1000, 0.5}, {4000, 4.0}};
  LinkCost cost = fitLink(messages, std::nullopt);
  EXPECT_DOUBLE_EQ(cost.alphaMs, 0.0);
  EXPECT_DOUBLE_EQ(cost.msPerByte, (0.0005 + 0.001) / 2);
  EXPECT_DOUBLE_EQ(fitLink({}, 0.25).alphaMs, 0.25);
  EXPECT_DOUBLE_EQ(fitLink({}, 0.25).msPerByte, 0.0);
}

TEST(FitAtSize, ProportionalFromOneSizeAndLinearFromTwo) {
  EXPECT_DOUBLE_EQ(fitAtSize({{2, 3.0}}, 4), 6.0);
  EXPECT_DOUBLE_EQ(fitAtSize({{2, 3.0}, {2, 5.0}}, 1), 2.0);
  // t(b) = 1 + 0.5 b: a fixed cost per task that larger micro-batches
  // amortise (the compute efficiency of larger b).
  EXPECT_DOUBLE_EQ(fitAtSize({{2, 2.0}, {4, 3.0}}, 8), 5.0);
  EXPECT_DOUBLE_EQ(fitAtSize({{2, 2.0}, {4, 1.0}}, 16), 0.0);
  EXPECT_DOUBLE_EQ(fitAtSize({}, 3), 0.0);
}

TEST(PlanModel, CostsFollowTheMicrobatchSize) {
  PlanModel model(2);
  model.setStage(0, 2, 2.0, 4.0);
  model.setStage(0, 4, 3.0, 6.0);
  model.setStage(1, 2, 4.0, 8.0);
  // 100 bytes a sample: a message of b samples takes 0.5 + 100 b x 0.01.
  model.setLink(0, 1, {0.5, 0.01}, 100);
  Costs at8 = model.costsAt(8, /*perStage=*/true);
  ASSERT_EQ(at8.stageForwardMs.size(), 2u);
  EXPECT_DOUBLE_EQ(at8.stageForwardMs[0], 5.0);   // 1 + 0.5 b
  EXPECT_DOUBLE_EQ(at8.stageBackwardMs[0], 10.0); // 2 + b
  EXPECT_DOUBLE_EQ(at8.stageForwardMs[1], 16.0);  // 2 b
  EXPECT_DOUBLE_EQ(at8.linkCommMs.at({0, 1}), 8.5);
  Costs averaged = model.costsAt(8, /*perStage=*/false);
  EXPECT_TRUE(averaged.stageForwardMs.empty());
  EXPECT_TRUE(averaged.linkCommMs.empty());
  EXPECT_DOUBLE_EQ(averaged.forwardMs, 10.5);
  EXPECT_DOUBLE_EQ(averaged.commMs, 8.5);
  ASSERT_TRUE(model.computeAt(0, 4).has_value());
  model.keepOnlySize(2);
  EXPECT_FALSE(model.computeAt(0, 4).has_value());
  EXPECT_DOUBLE_EQ(model.costsAt(8, true).stageForwardMs[0], 8.0);
}

TEST(PlanModel, AnUnmeasuredStageTakesTheMean) {
  PlanModel model(3);
  model.setStage(0, 1, 1.0, 2.0);
  model.setStage(2, 1, 3.0, 6.0);
  Costs costs = model.costsAt(1, true);
  EXPECT_DOUBLE_EQ(costs.stageForwardMs[1], 2.0);
  EXPECT_DOUBLE_EQ(costs.stageBackwardMs[1], 4.0);
}

TEST(PlanModel, PerStageChoiceDiffersFromTheAveragedOne) {
  // Two stages, the second 2x slower (F = 2, B = 4 against 1 and 2), 3 ms a
  // message each way, 8 micro-batches. Averaged, the stages look alike
  // (F = 1.5, B = 3) and k = 3 seems best; per stage, k = 2 is, and it is
  // what the simulator finds with the true costs.
  PlanModel model(2);
  model.setStage(0, 1, 1.0, 2.0);
  model.setStage(1, 1, 2.0, 4.0);
  model.setLink(0, 1, {3.0, 0.0}, 0.0);
  model.setLink(1, 0, {3.0, 0.0}, 0.0);
  std::vector<Plan> plans;
  for (int64_t k : {1, 2, 3, 4, 8})
    plans.push_back({k, 1, 8});
  Ranking perStage = rankPlans(plans, model, true);
  Ranking averaged = rankPlans(plans, model, false);
  EXPECT_EQ(plans[perStage.best].groupSize, 2);
  EXPECT_EQ(plans[averaged.best].groupSize, 3);
  Costs truth;
  truth.stageForwardMs = {1.0, 2.0};
  truth.stageBackwardMs = {2.0, 4.0};
  truth.commMs = 3.0;
  size_t best = 0;
  for (size_t i = 0; i < plans.size(); ++i) {
    double ms =
        simulate(kfkbPrograms(2, 8, plans[i].groupSize), truth).iterationMs;
    EXPECT_DOUBLE_EQ(perStage.iterationMs[i], ms)
        << "k = " << plans[i].groupSize;
    if (ms < perStage.iterationMs[best])
      best = i;
  }
  EXPECT_EQ(best, perStage.best);
  // What the averaged model's pick really costs.
  EXPECT_GT(perStage.iterationMs[averaged.best],
            perStage.iterationMs[perStage.best]);
}

TEST(PlanModel, LargerMicrobatchesTradeMessagesForBubbles) {
  // 16 samples on 2 stages; compute t(b) = 0.5 + 0.5 b per task, messages
  // alpha 2 ms + 0.25 ms a sample. Few large micro-batches pay the bubble,
  // many small ones the latency: the best b lies between.
  PlanModel model(2);
  for (int64_t s = 0; s < 2; ++s) {
    model.setStage(s, 1, 1.0, 2.0);
    model.setStage(s, 2, 1.5, 3.0);
  }
  model.setLink(0, 1, {2.0, 0.25}, 1.0);
  model.setLink(1, 0, {2.0, 0.25}, 1.0);
  std::vector<Plan> plans;
  for (int64_t b : {1, 2, 4, 8, 16})
    plans.push_back({1, b, 16 / b});
  Ranking ranking = rankPlans(plans, model, true);
  EXPECT_EQ(plans[ranking.best].microbatchSize, 8);
  for (size_t i = 0; i < plans.size(); ++i) {
    Costs costs = model.costsAt(plans[i].microbatchSize, true);
    EXPECT_DOUBLE_EQ(
        ranking.iterationMs[i],
        simulate(kfkbPrograms(2, plans[i].microbatches, 1), costs).iterationMs);
  }
}

TEST(PlanModel, SplitMicrobatchesRunAsConsecutiveTasks) {
  // A plan of b = 4 run by stage functions of b = 2: every micro-batch is
  // two tasks with two messages, at the costs of b = 2.
  PlanModel model(2);
  model.setStage(0, 2, 1.0, 2.0);
  model.setStage(1, 2, 1.0, 2.0);
  model.setLink(0, 1, {3.0, 0.0}, 0.0);
  model.setLink(1, 0, {3.0, 0.0}, 0.0);
  Plan plan{2, 4, 4, 2};
  EXPECT_EQ(plan.taskSize(), 2);
  Costs costs = model.costsAt(2, true);
  double split =
      simulate(hetero::schedule::splitMicrobatches(kfkbPrograms(2, 4, 2), 2),
               costs)
          .iterationMs;
  EXPECT_DOUBLE_EQ(model.iterationMs(plan, true), split);
  // One task of the whole micro-batch instead: compute doubles per task,
  // and half as many messages of 3 ms each cross the link.
  EXPECT_NE(model.iterationMs({2, 4, 4, 1}, true), split);
}

} // namespace
