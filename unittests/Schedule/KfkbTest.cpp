//===- KfkbTest.cpp - kFkB stage programs ---------------------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Schedule/Kfkb.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <set>

using namespace hetero::schedule;

namespace {

std::string program(int64_t stages, int64_t microbatches, int64_t k,
                    int64_t stage) {
  return formatProgram(kfkbProgram(stages, microbatches, k, stage));
}

TEST(Kfkb, TwoForwardTwoBackward) {
  EXPECT_EQ(program(2, 6, 2, 0), "F0 F1 F2 F3 B0 B1 F4 F5 B2 B3 B4 B5");
  EXPECT_EQ(program(2, 6, 2, 1), "F0 F1 B0 B1 F2 F3 B2 B3 F4 F5 B4 B5");
}

TEST(Kfkb, OneForwardOneBackwardIsPipeDreamFlush) {
  EXPECT_EQ(program(4, 6, 1, 0), "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5");
  EXPECT_EQ(program(4, 6, 1, 3), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5");
}

TEST(Kfkb, GroupOfAllIsGPipe) {
  for (int64_t k : {4, 5, 100})
    for (int64_t stage = 0; stage < 3; ++stage)
      EXPECT_EQ(program(3, 4, k, stage), "F0 F1 F2 F3 B0 B1 B2 B3");
}

TEST(Kfkb, NonDividingGroupSize) {
  // Groups {0,1,2} {3,4}.
  EXPECT_EQ(program(2, 5, 3, 0), "F0 F1 F2 F3 F4 B0 B1 B2 B3 B4");
  EXPECT_EQ(program(2, 5, 3, 1), "F0 F1 F2 B0 B1 B2 F3 F4 B3 B4");
}

TEST(Kfkb, EveryTaskOnceForwardBeforeBackward) {
  for (int64_t stages = 1; stages <= 6; ++stages)
    for (int64_t microbatches = 1; microbatches <= 9; ++microbatches)
      for (int64_t k = 1; k <= microbatches + 1; ++k)
        for (int64_t stage = 0; stage < stages; ++stage) {
          std::vector<Task> tasks = kfkbProgram(stages, microbatches, k, stage);
          ASSERT_EQ(tasks.size(), size_t(2 * microbatches));
          std::set<int64_t> forwarded, backwarded;
          for (const Task &task : tasks) {
            if (task.kind == Task::Forward) {
              EXPECT_TRUE(forwarded.insert(task.microbatch).second);
            } else {
              EXPECT_TRUE(forwarded.count(task.microbatch));
              EXPECT_TRUE(backwarded.insert(task.microbatch).second);
            }
          }
        }
}

std::vector<std::vector<Action>> kfkbPipeline(int64_t stages,
                                              int64_t microbatches, int64_t k) {
  std::vector<std::vector<Action>> programs;
  for (int64_t s = 0; s < stages; ++s)
    programs.push_back(
        withTransfers(kfkbProgram(stages, microbatches, k, s), stages, s));
  return programs;
}

TEST(VerifyPrograms, EveryKfkbScheduleIsSound) {
  for (int64_t stages = 1; stages <= 5; ++stages)
    for (int64_t microbatches = 1; microbatches <= 8; ++microbatches)
      for (int64_t k = 1; k <= microbatches; ++k) {
        std::vector<Problem> problems =
            verifyPrograms(kfkbPipeline(stages, microbatches, k), microbatches);
        EXPECT_TRUE(problems.empty())
            << stages << " stages, " << microbatches
            << " micro-batches, k = " << k << ": " << problems.front().message;
      }
}

TEST(VerifyPrograms, PeakMemoryIsKTimesStagesToGo) {
  // kFkB keeps min(k (S - s), M) activations in flight on stage s.
  int64_t stages = 4, microbatches = 12;
  for (int64_t k = 1; k <= 4; ++k)
    for (int64_t s = 0; s < stages; ++s) {
      int64_t peak = std::min(k * (stages - s), microbatches);
      std::vector<std::vector<Action>> programs =
          kfkbPipeline(stages, microbatches, k);
      int64_t inFlight = 0, maximum = 0;
      for (const Action &action : programs[s]) {
        inFlight += action.kind == Action::Forward;
        inFlight -= action.kind == Action::Backward;
        maximum = std::max(maximum, inFlight);
      }
      EXPECT_EQ(maximum, peak) << "k = " << k << ", stage " << s;
    }
}

TEST(VerifyPrograms, ReportsAMemoryCap) {
  std::vector<Problem> problems =
      verifyPrograms(kfkbPipeline(2, 4, 4), 4, /*memoryCap=*/3);
  ASSERT_FALSE(problems.empty());
  EXPECT_EQ(problems.front().message,
            "stage 0 holds 4 activations in flight after F3, above the memory "
            "cap of 3");
}

TEST(VerifyPrograms, ReportsADeadlock) {
  // Both stages wait for the other first.
  std::vector<std::vector<Action>> programs = {{{Action::Forward, 0},
                                                {Action::RecvGradient, 0, 1},
                                                {Action::SendActivation, 0, 1},
                                                {Action::Backward, 0}},
                                               {{Action::RecvActivation, 0, 0},
                                                {Action::Forward, 0},
                                                {Action::Backward, 0},
                                                {Action::SendGradient, 0, 0}}};
  std::vector<Problem> problems = verifyPrograms(programs, 1);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems.front().message,
            "deadlock: stage 0 waits at the receive of gradient 0 from stage "
            "1; stage 1 waits at the receive of activation 0 from stage 0");
}

TEST(VerifyPrograms, ReportsAForwardBeforeItsActivation) {
  std::vector<std::vector<Action>> programs = kfkbPipeline(2, 2, 2);
  // Stage 1: receive activation 1, F0, receive activation 0, ...
  std::swap(programs[1][0], programs[1][2]);
  std::vector<Problem> problems = verifyPrograms(programs, 2);
  ASSERT_FALSE(problems.empty());
  EXPECT_EQ(problems.front().message,
            "stage 1 runs F0 before receiving its activation from stage 0");
}

TEST(VerifyPrograms, ReportsALinkOutOfOrder) {
  std::vector<std::vector<Action>> programs = kfkbPipeline(2, 2, 2);
  // Stage 1 receives activation 1 before activation 0, then runs both.
  ASSERT_EQ(describe(programs[1][0]),
            "the receive of activation 0 from stage 0");
  ASSERT_EQ(describe(programs[1][2]),
            "the receive of activation 1 from stage 0");
  std::swap(programs[1][1], programs[1][2]); // recv a0, recv a1, F0, F1
  std::swap(programs[1][0], programs[1][1]); // recv a1, recv a0, F0, F1
  std::vector<Problem> problems = verifyPrograms(programs, 2);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems.front().message,
            "link 0 -> 1: message 0 is activation 0, but stage 1 receives "
            "activation 1 there");
  EXPECT_EQ(problems.front().stage, 1);
  EXPECT_EQ(problems.front().action, 0);
}

TEST(SplitMicrobatches, RunsEachTaskAsConsecutiveSmallerOnes) {
  // 1F1B over 2 micro-batches of twice the size: every task and transfer
  // of micro-batch i becomes those of 2i and 2i + 1.
  std::vector<std::vector<Action>> coarse = kfkbPrograms(2, 2, 1);
  std::vector<std::vector<Action>> fine = splitMicrobatches(coarse, 2);
  ASSERT_EQ(fine.size(), 2u);
  std::vector<Task> computed;
  for (const Action &action : fine[0])
    if (action.kind == Action::Forward || action.kind == Action::Backward)
      computed.push_back(
          {action.kind == Action::Forward ? Task::Forward : Task::Backward,
           action.microbatch});
  EXPECT_EQ(formatProgram(computed), "F0 F1 F2 F3 B0 B1 B2 B3");
  EXPECT_EQ(fine[1].size(), 2 * coarse[1].size());
  // The split programs are sound programs of 4 micro-batches.
  EXPECT_TRUE(verifyPrograms(fine, 4).empty());
  // A factor of 1 changes nothing.
  std::vector<std::vector<Action>> same = splitMicrobatches(coarse, 1);
  for (size_t s = 0; s < coarse.size(); ++s)
    for (size_t i = 0; i < coarse[s].size(); ++i)
      EXPECT_EQ(same[s][i].microbatch, coarse[s][i].microbatch);
}

TEST(Kfkb, ProblemsDigestKeepsTheFirstOfEachKindAndCountsTheRest) {
  // Stage 1 of 2 misses every task of 1000 micro-batches but the first,
  // and runs one task twice: two kinds of "never runs" and one "twice".
  std::vector<std::vector<Action>> programs = kfkbPipeline(2, 1000, 1);
  programs[1] = {{Action::RecvActivation, 0, 0},
                 {Action::Forward, 0},
                 {Action::Forward, 0},
                 {Action::Backward, 0},
                 {Action::SendGradient, 0, 0}};
  std::vector<Problem> problems = verifyPrograms(programs, 1000);
  ASSERT_EQ(problems.size(), 1u + 2u * 999u);
  ProblemDigest digest = digestProblems(problems, /*perKind=*/2);
  ASSERT_EQ(digest.shown.size(), 5u);
  ASSERT_EQ(digest.more.size(), 5u);
  std::vector<std::string> messages;
  for (const Problem &problem : digest.shown)
    messages.push_back(problem.message);
  EXPECT_EQ(messages, (std::vector<std::string>{
                          "stage 1 runs F0 twice", "stage 1 never runs F1",
                          "stage 1 never runs B1", "stage 1 never runs F2",
                          "stage 1 never runs B2"}));
  EXPECT_EQ(digest.more, (std::vector<int64_t>{0, 0, 0, 997, 997}));
  // Few problems: all shown, nothing counted.
  ProblemDigest all = digestProblems(problems, /*perKind=*/1000);
  EXPECT_EQ(all.shown.size(), problems.size());
  for (int64_t more : all.more)
    EXPECT_EQ(more, 0);
}

} // namespace
