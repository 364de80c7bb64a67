//===- MeasuredTimeline.h - hetero-run --timeline ---------------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_TOOLS_HETERO_RUN_MEASUREDTIMELINE_H
#define HETERO_TOOLS_HETERO_RUN_MEASUREDTIMELINE_H

#include "hetero-rt/hrt.h"
#include "hetero/Sim/Timeline.h"

#include <cstdint>
#include <string>
#include <vector>

namespace hetero {

/// Creates `directory` unless it exists and checks that it can be written
/// into; prints "hetero-run: --timeline: cannot write '<path>': <reason>"
/// and returns false when not.
bool prepareTimelineDirectory(const std::string &directory);

/// Gathers the spans that every rank of `world` recorded since its
/// hrt_timeline_begin_iteration (iteration `iteration` of the run) to rank 0,
/// which writes `directory`/timeline.json and `directory`/timeline.svg and
/// prints where. Rows are named "rank r (stage s, replica p)" when the ranks
/// form a grid of `replicas` replicas per stage (0: not known), else
/// "rank r". Collective; returns false after a message.
bool writeTimeline(hrt_comm world, const std::string &directory,
                   int64_t iteration, int64_t replicas);

/// hetero-run --profile-timeline: the mean of several measured iterations,
/// span by span, as hetero-interleave-checkpoints' profile= reads it.
class ProfiledTimeline {
public:
  ProfiledTimeline(hrt_comm world, int64_t replicas)
      : world(world), replicas(replicas) {}
  /// Adds the spans every rank recorded since its
  /// hrt_timeline_begin_iteration. Collective; false after a message.
  bool add();
  /// Rank 0 writes the mean iteration to `path` as a Chrome trace and says
  /// so. An iteration whose spans differ in number from the first one's is
  /// left out of the mean.
  bool write(const std::string &path) const;

private:
  hrt_comm world;
  int64_t replicas;
  std::vector<timeline::Row> sum;
  int64_t iterations = 0;
  int64_t skipped = 0;
};

} // namespace hetero

#endif // HETERO_TOOLS_HETERO_RUN_MEASUREDTIMELINE_H
