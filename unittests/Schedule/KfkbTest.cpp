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
            "rank 0 holds 4 micro-batch stashes after F3 of stage 0, above the "
            "memory cap of 3");
}

TEST(VerifyPrograms, ReportsADeadlock) {
  // Both stages wait for the other first.
  std::vector<std::vector<Action>> programs = {
      {{Action::Forward, 0, -1, 0},
       {Action::RecvGradient, 0, 1, 0},
       {Action::Backward, 0, -1, 0},
       {Action::SendActivation, 0, 1, 0}},
      {{Action::RecvActivation, 0, 0, 1},
       {Action::Forward, 0, -1, 1},
       {Action::Backward, 0, -1, 1},
       {Action::SendGradient, 0, 0, 1}}};
  std::vector<Problem> problems = verifyPrograms(programs, 1);
  ASSERT_EQ(problems.size(), 1u);
  // Posted receives would not help: B0 of stage 0 needs the gradient that
  // stage 1 sends only after the activation stage 0 sends after it.
  EXPECT_EQ(problems.front().message,
            "deadlock: rank 0 waits at stage 0's receive of gradient 0 from "
            "stage 1 (from rank 1); rank 1 waits at stage 1's receive of "
            "activation 0 from stage 0 (from rank 0)");
  // Where rank 0 stops with posted receives: at B0.
  EXPECT_EQ(problems.front().rank, 0);
  EXPECT_EQ(problems.front().action, 2);
}

TEST(VerifyPrograms, TellsABlockingOnlyDeadlock) {
  // Stage 0 waits for gradient 0 before sending activation 1, which stage 1
  // needs before it sends gradient 0: posted receives would run it.
  std::vector<std::vector<Action>> programs = {
      {{Action::Forward, 0, -1, 0},
       {Action::SendActivation, 0, 1, 0},
       {Action::Forward, 1, -1, 0},
       {Action::RecvGradient, 0, 1, 0},
       {Action::SendActivation, 1, 1, 0},
       {Action::Backward, 0, -1, 0},
       {Action::RecvGradient, 1, 1, 0},
       {Action::Backward, 1, -1, 0}},
      {{Action::RecvActivation, 0, 0, 1},
       {Action::RecvActivation, 1, 0, 1},
       {Action::Forward, 0, -1, 1},
       {Action::Backward, 0, -1, 1},
       {Action::SendGradient, 0, 0, 1},
       {Action::Forward, 1, -1, 1},
       {Action::Backward, 1, -1, 1},
       {Action::SendGradient, 1, 0, 1}}};
  std::vector<Problem> problems = verifyPrograms(programs, 2);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems.front().message.rfind(
                "deadlock with blocking receives: rank 0 waits at stage 0's "
                "receive of gradient 0 from stage 1 (from rank 1); rank 1 "
                "waits at stage 1's receive of activation 1 from stage 0 "
                "(from rank 0) (it runs when receives are only posted",
                0),
            0u)
      << problems.front().message;
}

TEST(VerifyPrograms, ReportsAForwardBeforeItsActivation) {
  std::vector<std::vector<Action>> programs = kfkbPipeline(2, 2, 2);
  // Stage 1: receive activation 1, F0, receive activation 0, ...
  std::swap(programs[1][0], programs[1][2]);
  std::vector<Problem> problems = verifyPrograms(programs, 2);
  ASSERT_FALSE(problems.empty());
  EXPECT_EQ(problems.front().message,
            "rank 1 runs F0 of stage 1 before receiving its activation from "
            "stage 0");
}

TEST(VerifyPrograms, MatchesMessagesWhateverTheirOrder) {
  std::vector<std::vector<Action>> programs = kfkbPipeline(2, 2, 2);
  // Stage 1 receives activation 1 before activation 0, then runs both.
  ASSERT_EQ(describe(programs[1][0]),
            "stage 1's receive of activation 0 from stage 0");
  ASSERT_EQ(describe(programs[1][2]),
            "stage 1's receive of activation 1 from stage 0");
  std::swap(programs[1][1], programs[1][2]); // recv a0, recv a1, F0, F1
  std::swap(programs[1][0], programs[1][1]); // recv a1, recv a0, F0, F1
  EXPECT_TRUE(verifyPrograms(programs, 2).empty());
}

TEST(VerifyPrograms, ReportsUnpairedTransfers) {
  std::vector<std::vector<Action>> programs = kfkbPipeline(2, 2, 1);
  // Stage 0 no longer sends activation 1.
  auto isSendOfOne = [](const Action &action) {
    return action.kind == Action::SendActivation && action.microbatch == 1;
  };
  programs[0].erase(
      std::find_if(programs[0].begin(), programs[0].end(), isSendOfOne));
  std::vector<Problem> problems = verifyPrograms(programs, 2);
  ASSERT_EQ(problems.size(), 1u) << problems.front().message;
  EXPECT_EQ(problems.front().message,
            "unpaired receive: rank 1 runs stage 1's receive of activation 1 "
            "from stage 0, but rank 0 never sends it");
  // And twice instead.
  programs = kfkbPipeline(2, 2, 1);
  auto send = std::find_if(programs[0].begin(), programs[0].end(), isSendOfOne);
  programs[0].insert(send, *send);
  problems = verifyPrograms(programs, 2);
  ASSERT_EQ(problems.size(), 1u) << problems.front().message;
  EXPECT_EQ(problems.front().message,
            "rank 0 repeats stage 0's send of activation 1 to stage 1");
}

TEST(VerifyPrograms, ReportsASplitBackwardOutOfOrder) {
  std::vector<std::vector<Action>> programs = {
      {{Action::Forward, 0, -1, 0},
       {Action::BackwardWeight, 0, -1, 0},
       {Action::BackwardInput, 0, -1, 0}}};
  std::vector<Problem> problems = verifyPrograms(programs, 1);
  ASSERT_FALSE(problems.empty());
  EXPECT_EQ(problems.front().message, "rank 0 runs W0 of stage 0 before I0");
  programs[0] = {{Action::Forward, 0, -1, 0},
                 {Action::BackwardInput, 0, -1, 0}};
  problems = verifyPrograms(programs, 1);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems.front().message, "rank 0 never runs W0 of stage 0");
}

TEST(VerifyPrograms, StagesOnOneRankHandOverWithoutTransfers) {
  // Two stages on one rank: F0 of stage 1 needs F0 of stage 0 first.
  Placement one;
  one.rankOf = {0, 0};
  one.ranks = 1;
  std::vector<std::vector<Action>> programs = {{{Action::Forward, 0, -1, 1},
                                                {Action::Forward, 0, -1, 0},
                                                {Action::Backward, 0, -1, 1},
                                                {Action::Backward, 0, -1, 0}}};
  std::vector<Problem> problems = verifyPrograms(programs, one, 1);
  ASSERT_FALSE(problems.empty());
  EXPECT_EQ(problems.front().message,
            "rank 0 runs F0 of stage 1 before F0 of stage 0 produces its "
            "activation");
  std::swap(programs[0][0], programs[0][1]);
  EXPECT_TRUE(verifyPrograms(programs, one, 1).empty());
  programs[0].insert(programs[0].begin() + 1,
                     {Action::SendActivation, 0, 1, 0});
  problems = verifyPrograms(programs, one, 1);
  ASSERT_FALSE(problems.empty());
  EXPECT_EQ(problems.front().message,
            "rank 0: stage 0's send of activation 0 to stage 1 needs no "
            "transfer: stage 1 is on the same rank");
}

TEST(VerifyPrograms, ReportsATaskOnTheWrongRank) {
  std::vector<std::vector<Action>> programs = kfkbPipeline(2, 1, 1);
  programs[0][0].stage = 1;
  std::vector<Problem> problems = verifyPrograms(programs, 1);
  ASSERT_FALSE(problems.empty());
  EXPECT_EQ(problems.front().message,
            "rank 0 runs F0 of stage 1, but stage 1 is placed on rank 1");
}

TEST(SplitMicrobatches, RunsEachTaskAsConsecutiveSmallerOnes) {
  // 1F1B over 2 micro-batches of twice the size: every task and transfer
  // of micro-batch i becomes those of 2i and 2i + 1.
  std::vector<std::vector<Action>> coarse = kfkbPrograms(2, 2, 1);
  std::vector<std::vector<Action>> fine = splitMicrobatches(coarse, 2);
  ASSERT_EQ(fine.size(), 2u);
  EXPECT_EQ(formatProgram(computeTasks(fine[0])), "F0 F1 F2 F3 B0 B1 B2 B3");
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
  programs[1] = {{Action::RecvActivation, 0, 0, 1},
                 {Action::Forward, 0, -1, 1},
                 {Action::Forward, 0, -1, 1},
                 {Action::Backward, 0, -1, 1},
                 {Action::SendGradient, 0, 0, 1}};
  std::vector<Problem> all = verifyPrograms(programs, 1000);
  // Stage 0's sends and receives of the micro-batches stage 1 misses are
  // unpaired: reported on rank 0, after rank 1's own problems.
  std::vector<Problem> problems;
  int64_t unpaired = 0;
  for (const Problem &problem : all) {
    if (problem.rank == 1)
      problems.push_back(problem);
    else
      unpaired += problem.message.rfind("unpaired ", 0) == 0;
  }
  EXPECT_EQ(unpaired, 2 * 999);
  EXPECT_EQ(all.size(), problems.size() + 2 * 999);
  ASSERT_EQ(problems.size(), 1u + 2u * 999u);
  ProblemDigest digest = digestProblems(problems, /*perKind=*/2);
  ASSERT_EQ(digest.shown.size(), 5u);
  ASSERT_EQ(digest.more.size(), 5u);
  std::vector<std::string> messages;
  for (const Problem &problem : digest.shown)
    messages.push_back(problem.message);
  EXPECT_EQ(messages, (std::vector<std::string>{
                          "rank 1 runs F0 of stage 1 twice",
                          "rank 1 never runs F1 of stage 1",
                          "rank 1 never runs B1 of stage 1 (nor I and W)",
                          "rank 1 never runs F2 of stage 1",
                          "rank 1 never runs B2 of stage 1 (nor I and W)"}));
  EXPECT_EQ(digest.more, (std::vector<int64_t>{0, 0, 0, 997, 997}));
  // Few problems: all shown, nothing counted.
  ProblemDigest whole = digestProblems(problems, /*perKind=*/1000);
  EXPECT_EQ(whole.shown.size(), problems.size());
  for (int64_t more : whole.more)
    EXPECT_EQ(more, 0);
}

} // namespace
