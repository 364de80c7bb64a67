//===- FamiliesTest.cpp - built-in schedule families and PyTorch's CSV ----===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Schedule/Families.h"
#include "hetero/Schedule/TorchCsv.h"
#include "hetero/Sim/PipelineSim.h"

#include "gtest/gtest.h"

#include <fstream>
#include <sstream>

using namespace hetero::schedule;

namespace {

std::string readInput(const std::string &name) {
  std::ifstream file(std::string(HETERO_SCHEDULE_INPUTS) + "/" + name);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

/// The placement a family runs on: one stage per rank for 1F1B, a loop of
/// `local` stages per rank for the interleaved ones, a V for the others.
Placement placementFor(Family family, int64_t ranks, int64_t local) {
  switch (family) {
  case Family::OneFOneB:
    return Placement::identity(ranks);
  case Family::Zbv:
  case Family::DualPipeV:
    return Placement::vShape(ranks);
  default:
    return Placement::loop(ranks * local, ranks);
  }
}

constexpr Family kFamilies[] = {Family::OneFOneB,  Family::Interleaved,
                                Family::LoopedBfs, Family::Zb1p,
                                Family::Zbv,       Family::DualPipeV};

TEST(Families, EveryOrderThatBuildsIsSound) {
  int64_t built = 0;
  for (Family family : kFamilies)
    for (int64_t ranks = 1; ranks <= 4; ++ranks)
      for (int64_t local = 1; local <= 3; ++local)
        for (int64_t microbatches = 1; microbatches <= 12; ++microbatches)
          for (int64_t k = 1; k <= 3; ++k) {
            Placement placement = placementFor(family, ranks, local);
            std::string error;
            std::vector<std::vector<Action>> programs =
                familyPrograms(family, placement, microbatches, k, error);
            if (!error.empty())
              continue;
            ++built;
            std::vector<Problem> problems =
                verifyPrograms(programs, placement, microbatches);
            EXPECT_TRUE(problems.empty())
                << familyName(family) << " on " << ranks << " ranks x "
                << placement.stages() / ranks << " stages, " << microbatches
                << " micro-batches, k = " << k << ": "
                << problems.front().message;
            bool split = false;
            for (const auto &program : programs)
              for (const Action &action : program)
                split = split || action.kind == Action::BackwardWeight;
            EXPECT_EQ(split,
                      needsSplitBackward(family) && placement.stages() > 0)
                << familyName(family);
          }
  EXPECT_GT(built, 500);
}

TEST(Families, RefusesWhatTheyCannotRun) {
  std::string error;
  familyPrograms(Family::OneFOneB, Placement::loop(4, 2), 4, 1, error);
  EXPECT_EQ(error, "family=1f1b runs one stage per rank, but the pipeline "
                   "places 4 stages on 2 ranks; use family=interleaved");
  familyPrograms(Family::Interleaved, Placement::vShape(2), 4, 1, error);
  EXPECT_EQ(error, "family=interleaved needs the loop placement (stage s on "
                   "rank s mod 2), got [0, 1, 1, 0]");
  familyPrograms(Family::Zbv, Placement::loop(4, 2), 4, 1, error);
  EXPECT_EQ(error, "family=zbv needs the V placement (rank r holds stages r "
                   "and 3-r), got [0, 1, 0, 1]");
  familyPrograms(Family::DualPipeV, Placement::vShape(2), 3, 1, error);
  EXPECT_EQ(error, "family=dualpipev needs at least as many micro-batch "
                   "groups as stages (4), got 3");
  familyPrograms(Family::Interleaved, Placement::loop(4, 2), 5, 1, error);
  EXPECT_EQ(error, "family=interleaved goes round the stages in 2 rounds, "
                   "which do not divide its 5 micro-batch groups; use a "
                   "number of groups that 2 divides, or fewer than 2");
}

TEST(Families, OneFOneBIsKfkb) {
  for (int64_t k = 1; k <= 4; ++k) {
    std::string error;
    std::vector<std::vector<Action>> programs =
        familyPrograms(Family::OneFOneB, Placement::identity(3), 7, k, error);
    std::vector<std::vector<Action>> kfkb = kfkbPrograms(3, 7, k);
    ASSERT_EQ(programs.size(), kfkb.size());
    for (size_t r = 0; r < kfkb.size(); ++r)
      EXPECT_EQ(formatProgram(computeTasks(programs[r])),
                formatProgram(computeTasks(kfkb[r])));
  }
}

TEST(Families, GroupsRunTheirMicrobatchesTogether) {
  // ZB1P over groups of 2: each task of group g runs micro-batches 2g and
  // 2g + 1 back to back.
  std::string error;
  FamilyOrder order = familyOrder(Family::Zb1p, Placement::loop(4, 2), 8, 2);
  ASSERT_TRUE(order.error.empty()) << order.error;
  FamilyOrder single = familyOrder(Family::Zb1p, Placement::loop(4, 2), 4, 1);
  for (size_t r = 0; r < 2; ++r) {
    ASSERT_EQ(order.tasks[r].size(), 2 * single.tasks[r].size());
    for (size_t t = 0; t < single.tasks[r].size(); ++t)
      for (int64_t part = 0; part < 2; ++part) {
        const Task &task = order.tasks[r][2 * t + part];
        EXPECT_EQ(task.kind, single.tasks[r][t].kind);
        EXPECT_EQ(task.stage, single.tasks[r][t].stage);
        EXPECT_EQ(task.microbatch, 2 * single.tasks[r][t].microbatch + part);
      }
  }
}

/// The compute tasks of every row of a compute-only CSV, overlapped pairs
/// in order.
std::vector<std::string> computeRows(const std::string &text, int64_t stages,
                                     int64_t microbatches) {
  CsvCells cells = readTorchCsv(text, stages, microbatches);
  EXPECT_TRUE(cells.error.empty()) << cells.error;
  std::vector<std::string> rows;
  for (const auto &row : cells.rows) {
    std::vector<Action> actions;
    for (const auto &cell : row)
      actions.insert(actions.end(), cell.begin(), cell.end());
    rows.push_back(formatProgram(computeTasks(actions), /*withStage=*/true));
  }
  return rows;
}

std::vector<std::string> familyRows(Family family, const Placement &placement,
                                    int64_t microbatches) {
  FamilyOrder order = familyOrder(family, placement, microbatches, 1);
  EXPECT_TRUE(order.error.empty()) << order.error;
  std::vector<std::string> rows;
  for (const auto &tasks : order.tasks)
    rows.push_back(formatProgram(tasks, /*withStage=*/true));
  return rows;
}

TEST(Families, Zb1pIsPyTorchs) {
  // PyTorch's file uses the older names: B is the input gradient there.
  EXPECT_EQ(familyRows(Family::Zb1p, Placement::loop(4, 2), 8),
            computeRows(readInput("zb1p_2rank_2stagep_compute.csv"), 4, 8));
}

TEST(Families, DualPipeVIsPyTorchs) {
  EXPECT_EQ(familyRows(Family::DualPipeV, Placement::vShape(4), 10),
            computeRows(readInput("dualpipev_4rank_10mb.csv"), 8, 10));
}

TEST(TorchCsv, AddsTheTransfersPyTorchsLoweringAdds) {
  ImportedSchedule compute =
      importTorchCsv(readInput("zb1p_2rank_2stagep_compute.csv"), 4, 8);
  ASSERT_TRUE(compute.error.empty()) << compute.error;
  EXPECT_TRUE(compute.computeOnly);
  EXPECT_TRUE(compute.olderNames);
  EXPECT_EQ(compute.rankOf, (std::vector<int64_t>{0, 1, 0, 1}));
  ImportedSchedule comms =
      importTorchCsv(readInput("zb1p_2rank_2stagep_comms.csv"), 4, 8);
  ASSERT_TRUE(comms.error.empty()) << comms.error;
  EXPECT_FALSE(comms.computeOnly);
  EXPECT_TRUE(comms.olderNames);
  // Both in the current names, action for action.
  EXPECT_EQ(exportTorchCsv(compute.programs), exportTorchCsv(comms.programs));
  EXPECT_TRUE(verifyPrograms(comms.programs, Placement::loop(4, 2), 8).empty());
  // Ours round-trips.
  ImportedSchedule again =
      importTorchCsv(exportTorchCsv(compute.programs), 4, 8);
  ASSERT_TRUE(again.error.empty()) << again.error;
  EXPECT_FALSE(again.olderNames);
  EXPECT_EQ(exportTorchCsv(again.programs), exportTorchCsv(compute.programs));
}

TEST(TorchCsv, ReadsEveryActionKind) {
  ImportedSchedule read = importTorchCsv(
      "0UNSHARD,0F0,0SEND_F0,,0RECV_B0,0I0,0W0,0RESHARD,0REDUCE_GRAD\n"
      "1RECV_F0,(1F0;1B0)OVERLAP_F_B,1SEND_B0\n",
      2, 1);
  ASSERT_TRUE(read.error.empty()) << read.error;
  EXPECT_FALSE(read.olderNames);
  EXPECT_EQ(exportTorchCsv(read.programs),
            "0F0,0SEND_F0,0RECV_B0,0I0,0W0\n1RECV_F0,1F0,1B0,1SEND_B0\n");
  EXPECT_TRUE(verifyPrograms(read.programs, 1).empty());
}

TEST(TorchCsv, ReportsWhereACellIsWrong) {
  auto error = [](const std::string &text) {
    return importTorchCsv(text, 2, 2).error;
  };
  EXPECT_EQ(error("0F0,0X1\n"),
            "line 1, column 2: expected [stage][F|I|W|B|BW|SEND_F|RECV_F|"
            "SEND_B|RECV_B|UNSHARD|RESHARD|REDUCE_GRAD][micro-batch] or "
            "(a;b)OVERLAP_F_B, got '0X1'");
  EXPECT_EQ(error("0F0\n1F2\n"),
            "line 2, column 1: '1F2' names micro-batch 2, but the pipeline "
            "has 2");
  EXPECT_EQ(error("0F0\n0F1\n"),
            "line 2 runs stage 0, which line 1 runs too; a stage runs on one "
            "rank");
  EXPECT_EQ(error("5F0\n"),
            "line 1, column 1: '5F0' names stage 5, but the pipeline has 2");
  EXPECT_EQ(error("(0F0;0SEND_F0)OVERLAP_F_B\n"),
            "line 1, column 1: '(0F0;0SEND_F0)OVERLAP_F_B' overlaps "
            "'0SEND_F0', which is not a compute action");
  EXPECT_EQ(error("0B1,0F1\n1F1,1B1\n"),
            "the compute order cannot go on: rank 0 waits to run B1 of stage "
            "0; rank 1 waits to run F1 of stage 1");
}

TEST(Families, ZeroBubbleFillsTheBubbles) {
  // Equal forward, input-gradient and weight-gradient times (the
  // zero-bubble paper's model): the split families idle less than the
  // whole-backward ones on the same ranks.
  hetero::sim::Costs costs;
  costs.forwardMs = 1.0;
  costs.backwardMs = 2.0;
  auto bubble = [&](Family family, const Placement &placement) {
    std::string error;
    std::vector<std::vector<Action>> programs =
        familyPrograms(family, placement, 8, 1, error);
    EXPECT_TRUE(error.empty()) << error;
    return hetero::sim::simulate(programs, costs, placement).bubbleFraction;
  };
  double interleaved = bubble(Family::Interleaved, Placement::loop(8, 4));
  double zb1p = bubble(Family::Zb1p, Placement::loop(8, 4));
  double zbv = bubble(Family::Zbv, Placement::vShape(4));
  double oneFOneB = bubble(Family::OneFOneB, Placement::identity(4));
  EXPECT_LT(interleaved, oneFOneB);
  EXPECT_LT(zb1p, interleaved);
  EXPECT_LT(zbv, interleaved);
}

} // namespace
