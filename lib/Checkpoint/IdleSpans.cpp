//===- IdleSpans.cpp - a stage's network idle spans -----------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Checkpoint/IdleSpans.h"

#include <algorithm>

namespace hetero::checkpoint {

std::vector<IdleSpan> idleSpans(const StageTimeline &timeline) {
  std::vector<IdleSpan> spans;
  if (timeline.tasks.empty())
    return spans;
  double end = 0;
  for (const sim::Span &task : timeline.tasks)
    end = std::max(end, task.endMs);
  std::vector<sim::Span> busy = timeline.busy;
  std::sort(busy.begin(), busy.end(),
            [](const sim::Span &a, const sim::Span &b) {
              return a.startMs < b.startMs;
            });
  // The task running at `time`, or the next one to start.
  auto taskAt = [&](double time) {
    int64_t task = 0;
    while (task + 1 < int64_t(timeline.tasks.size()) &&
           timeline.tasks[task].endMs <= time)
      ++task;
    return task;
  };
  double free = 0;
  auto addGap = [&](double until) {
    until = std::min(until, end);
    if (until > free)
      spans.push_back({free, until, taskAt(free)});
  };
  for (const sim::Span &span : busy) {
    addGap(span.startMs);
    free = std::max(free, span.endMs);
  }
  addGap(end);
  return spans;
}

StageTimeline stageTimeline(const sim::Result &result, int64_t stage) {
  StageTimeline timeline;
  if (stage < int64_t(result.computeSpans.size()))
    timeline.tasks = result.computeSpans[stage];
  for (const sim::Result::Link &link : result.links)
    if (link.from == stage || link.to == stage)
      timeline.busy.insert(timeline.busy.end(), link.busy.begin(),
                           link.busy.end());
  return timeline;
}

} // namespace hetero::checkpoint
