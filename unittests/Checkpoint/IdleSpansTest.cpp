//===- IdleSpansTest.cpp - a stage's network idle spans -------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Checkpoint/IdleSpans.h"

#include "gtest/gtest.h"

using namespace hetero;
using namespace hetero::checkpoint;

namespace {

using Spans = std::vector<std::tuple<double, double, int64_t>>;

Spans spansOf(const StageTimeline &timeline) {
  Spans out;
  for (const IdleSpan &span : idleSpans(timeline))
    out.emplace_back(span.startMs, span.endMs, span.task);
  return out;
}

// The gaps between busy spans, up to the end of the last task, each with
// the task running when it starts (or the next one).
TEST(IdleSpans, GapsAnchoredToTheirTasks) {
  StageTimeline timeline;
  timeline.tasks = {{0, 2}, {2, 4}, {10, 14}, {14, 16}};
  // Out of order and overlapping, as links' spans come.
  timeline.busy = {{9, 10}, {2, 3}, {4, 5}, {4.5, 4.8}, {15, 16}, {16, 20}};
  EXPECT_EQ(spansOf(timeline),
            (Spans{{0, 2, 0}, {3, 4, 1}, {5, 9, 2}, {10, 15, 2}}));
}

TEST(IdleSpans, NoTasksNoSpans) {
  StageTimeline timeline;
  timeline.busy = {{0, 1}};
  EXPECT_TRUE(idleSpans(timeline).empty());
  timeline.tasks = {{1, 3}};
  timeline.busy.clear();
  EXPECT_EQ(spansOf(timeline), (Spans{{0, 3, 0}}));
}

// A simulated 1F1B iteration: stage 0's busy spans are the transfers on
// both of its links.
TEST(IdleSpans, FromTheSimulator) {
  sim::Costs costs;
  costs.forwardMs = 2;
  costs.backwardMs = 4;
  costs.commMs = 1;
  sim::Result result = sim::simulate(sim::kfkbPrograms(2, 4, 1), costs);
  Spans spans = spansOf(stageTimeline(result, 0));
  ASSERT_GE(spans.size(), 3u);
  EXPECT_EQ(spans[0], std::make_tuple(0.0, 2.0, int64_t(0)));
  EXPECT_EQ(spans[1], std::make_tuple(3.0, 4.0, int64_t(1)));
  EXPECT_EQ(spans[2], std::make_tuple(5.0, 9.0, int64_t(2)));
}

} // namespace
