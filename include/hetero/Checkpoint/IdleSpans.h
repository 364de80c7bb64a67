//===- IdleSpans.h - a stage's network idle spans ---------------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free. Where a stage's network is idle during one iteration, from a
// timeline of its compute tasks and its communication (simulated or
// measured), and which task each idle span starts in: the program point
// where checkpoint chunks for the span are issued.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_CHECKPOINT_IDLESPANS_H
#define HETERO_CHECKPOINT_IDLESPANS_H

#include "hetero/Sim/PipelineSim.h"

#include <cstdint>
#include <vector>

namespace hetero::checkpoint {

/// One stage's iteration: its compute tasks in program order and the spans
/// when its network carries training traffic, in ms from the iteration's
/// start.
struct StageTimeline {
  std::vector<sim::Span> tasks;
  std::vector<sim::Span> busy;
};

struct IdleSpan {
  double startMs = 0;
  double endMs = 0;
  /// The task running when the span starts, or the next one to start: the
  /// span's chunks are issued just before it.
  int64_t task = 0;
};

/// The gaps between the busy spans from the iteration's start to the end of
/// its last task (where the optimizer update follows), in order. A stage
/// without tasks has none.
std::vector<IdleSpan> idleSpans(const StageTimeline &timeline);

/// Stage `stage`'s timeline in a simulated iteration: its compute spans, and
/// as busy spans the transfers of every link from or to it.
StageTimeline stageTimeline(const sim::Result &result, int64_t stage);

} // namespace hetero::checkpoint

#endif // HETERO_CHECKPOINT_IDLESPANS_H
