//===- Timeline.h - rows of labelled spans as pictures ----------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free. A timeline is a list of rows (a pipeline stage, a rank, a link),
// each holding labelled, coloured spans in milliseconds from a common origin.
// hetero-sim draws the timelines it simulates with it, hetero-run the one it
// measures (`--timeline`), so that both pictures read alike:
//
//   - a Chrome trace (chrome://tracing, https://ui.perfetto.dev): one "X"
//     event per span (ts and dur in microseconds, pid 0, tid the row's id)
//     and one "thread_name" metadata event per row naming it;
//   - an SVG picture: one horizontal bar per row, a box per span with its
//     label when it fits (and as a tooltip always), a time axis in ms.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_SIM_TIMELINE_H
#define HETERO_SIM_TIMELINE_H

#include "hetero/Sim/PipelineSim.h"

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace hetero::timeline {

/// The fill colours of the pictures.
inline constexpr const char *kForwardColor = "#4c78a8";
inline constexpr const char *kBackwardColor = "#59a14f";
inline constexpr const char *kCommunicationColor = "#f28e2b";

/// One span of a row, in milliseconds from the timeline's origin.
struct Span {
  double startMs = 0.0;
  double endMs = 0.0;
  /// The event's name in a Chrome trace; the box's label in an SVG when
  /// `labelled`.
  std::string name;
  /// The event's category in a Chrome trace ("forward", "transfer", ...).
  std::string category;
  /// The box's fill in an SVG.
  std::string color;
  bool labelled = true;
};

/// A compute task: "F3" (forward, blue) or "B3" (backward, green) for
/// micro-batch 3; "F" or "B" when the micro-batch is not known (negative).
Span taskSpan(bool forward, int64_t microbatch, double startMs, double endMs);

/// Time in communication: an unlabelled orange box named `name`.
Span communicationSpan(const std::string &name, const std::string &category,
                       double startMs, double endMs);

/// One row of a timeline.
struct Row {
  /// The row's thread id in a Chrome trace.
  int64_t id = 0;
  /// "stage 0", "rank 1 (stage 0, replica 1)", "link 0->1".
  std::string name;
  std::vector<Span> spans;
};

/// The rows of a simulated iteration: one per stage (its tasks), then one
/// per directed link (its transfers, named "link <from>-><to>").
std::vector<Row> rowsOf(const sim::Result &result);

/// Writes `rows` as a Chrome trace in JSON.
void writeChromeTrace(const std::vector<Row> &rows, std::ostream &os);

/// Writes `rows` as an SVG picture: row names on the left, then a plot 800
/// pixels wide whose time axis runs from 0 to the latest end of a span.
void writeSvg(const std::vector<Row> &rows, std::ostream &os);

} // namespace hetero::timeline

#endif // HETERO_SIM_TIMELINE_H
