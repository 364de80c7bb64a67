//===- TimelineTest.cpp - the timeline pictures against hand values -------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Sim/Timeline.h"

#include "gtest/gtest.h"

#include <sstream>

using namespace hetero;
using namespace hetero::timeline;

namespace {

size_t occurrences(const std::string &text, const std::string &piece) {
  size_t count = 0;
  for (size_t at = text.find(piece); at != std::string::npos;
       at = text.find(piece, at + 1))
    ++count;
  return count;
}

std::string chromeTrace(const std::vector<Row> &rows) {
  std::ostringstream os;
  writeChromeTrace(rows, os);
  return os.str();
}

std::string svg(const std::vector<Row> &rows) {
  std::ostringstream os;
  writeSvg(rows, os);
  return os.str();
}

TEST(Timeline, TaskSpansAreNamedColouredAndFiled) {
  Span forward = taskSpan(true, 3, 1.0, 2.0);
  EXPECT_EQ(forward.name, "F3");
  EXPECT_EQ(forward.category, "forward");
  EXPECT_EQ(forward.color, kForwardColor);
  EXPECT_TRUE(forward.labelled);
  Span backward = taskSpan(false, 0, 2.0, 4.0);
  EXPECT_EQ(backward.name, "B0");
  EXPECT_EQ(backward.category, "backward");
  EXPECT_EQ(backward.color, kBackwardColor);
  // A mark that does not say its micro-batch.
  EXPECT_EQ(taskSpan(true, -1, 0.0, 1.0).name, "F");
  Span wait = communicationSpan("recv", "communication", 0.5, 1.0);
  EXPECT_EQ(wait.color, kCommunicationColor);
  EXPECT_FALSE(wait.labelled);
}

TEST(Timeline, ChromeTraceNamesRowsAndTimesSpansInMicroseconds) {
  std::vector<Row> rows = {
      {3,
       "rank 3 (stage 1, replica 1)",
       {taskSpan(true, 2, 1.5, 2.25),
        communicationSpan("recv", "communication", 2.25, 2.5)}}};
  std::string trace = chromeTrace(rows);
  EXPECT_NE(trace.find("{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": "
                       "0, \"tid\": 3, \"args\": {\"name\": \"rank 3 (stage "
                       "1, replica 1)\"}}"),
            std::string::npos)
      << trace;
  EXPECT_NE(trace.find("{\"name\": \"F2\", \"cat\": \"forward\", \"ph\": "
                       "\"X\", \"pid\": 0, \"tid\": 3, \"ts\": 1500.000, "
                       "\"dur\": 750.000}"),
            std::string::npos)
      << trace;
  EXPECT_NE(trace.find("{\"name\": \"recv\", \"cat\": \"communication\", "
                       "\"ph\": \"X\", \"pid\": 0, \"tid\": 3, \"ts\": "
                       "2250.000, \"dur\": 250.000}"),
            std::string::npos)
      << trace;
  EXPECT_EQ(occurrences(trace, "\"ph\": \"X\""), 2u);
  EXPECT_EQ(occurrences(trace, "\"ph\": \"M\""), 1u);
}

TEST(Timeline, TextIsEscaped) {
  std::vector<Row> rows = {
      {0, "a \"b\" \\ <c> & d", {taskSpan(true, 0, 0.0, 1.0)}}};
  EXPECT_NE(chromeTrace(rows).find("\"a \\\"b\\\" \\\\ <c> & d\""),
            std::string::npos);
  EXPECT_NE(svg(rows).find(">a &quot;b&quot; \\ &lt;c&gt; &amp; d</text>"),
            std::string::npos);
}

TEST(Timeline, SvgDrawsEveryBoxLabelsThoseThatFitAndAnAxis) {
  // 10 ms over 800 pixels: F0 is 400 pixels wide, B0 a tenth of a pixel
  // (drawn one pixel wide, without its label).
  std::vector<Row> rows = {
      {0, "stage 0", {taskSpan(true, 0, 0.0, 5.0)}},
      {1,
       "stage 1",
       {taskSpan(false, 0, 5.0, 5.00125),
        communicationSpan("wait", "communication", 6.0, 10.0)}}};
  std::string picture = svg(rows);
  EXPECT_EQ(occurrences(picture, "<rect "), 3u);
  EXPECT_EQ(occurrences(picture, std::string("fill=\"") + kForwardColor), 1u);
  EXPECT_EQ(occurrences(picture, std::string("fill=\"") + kBackwardColor), 1u);
  EXPECT_EQ(occurrences(picture, std::string("fill=\"") + kCommunicationColor),
            1u);
  EXPECT_NE(picture.find(">F0</text>"), std::string::npos);
  EXPECT_EQ(picture.find(">B0</text>"), std::string::npos);
  EXPECT_NE(picture.find("width=\"1.00\""), std::string::npos);
  EXPECT_NE(picture.find(">stage 1</text>"), std::string::npos);
  // Ticks every 2 ms: 0, 2, ..., 10.
  EXPECT_EQ(occurrences(picture, " ms</text>"), 6u);
  EXPECT_NE(picture.find(">0 ms</text>"), std::string::npos);
  EXPECT_NE(picture.find(">10 ms</text>"), std::string::npos);
}

TEST(Timeline, EmptyTimelineHasItsRowsAndAnAxis) {
  std::string picture = svg({{0, "rank 0", {}}});
  EXPECT_NE(picture.find(">rank 0</text>"), std::string::npos);
  EXPECT_NE(picture.find(">0 ms</text>"), std::string::npos);
  EXPECT_EQ(occurrences(picture, "<rect "), 0u);
}

TEST(Timeline, SimulatedRowsAreStagesThenLinks) {
  sim::Costs costs;
  costs.forwardMs = 1.0;
  costs.backwardMs = 2.0;
  costs.commMs = 0.5;
  sim::Result result = sim::simulate(sim::kfkbPrograms(2, 2, 1), costs);
  std::vector<Row> rows = rowsOf(result);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].name, "stage 0");
  EXPECT_EQ(rows[1].name, "stage 1");
  EXPECT_EQ(rows[2].name, "link 0->1");
  EXPECT_EQ(rows[3].name, "link 1->0");
  for (size_t r = 0; r < rows.size(); ++r)
    EXPECT_EQ(rows[r].id, int64_t(r));
  ASSERT_EQ(rows[0].spans.size(), 4u);
  EXPECT_EQ(rows[0].spans[0].name, "F0");
  EXPECT_DOUBLE_EQ(rows[0].spans[0].endMs, 1.0);
  // Two activations and two gradients cross, half a millisecond each.
  ASSERT_EQ(rows[2].spans.size(), 2u);
  EXPECT_EQ(rows[2].spans[0].name, "link 0->1");
  EXPECT_EQ(rows[2].spans[0].category, "transfer");
  EXPECT_DOUBLE_EQ(rows[2].spans[0].endMs - rows[2].spans[0].startMs, 0.5);
}

} // namespace
