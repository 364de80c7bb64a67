//===- KfkbTest.cpp - kFkB stage programs ---------------------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Schedule/Kfkb.h"

#include "gtest/gtest.h"

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
          std::vector<Task> tasks =
              kfkbProgram(stages, microbatches, k, stage);
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

} // namespace
