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

/// How a pipeline's ranks sit on its grid (stage, replica, shard), row-major.
struct RankLayout {
  /// Replicas per stage; 0 when the ranks form no known grid.
  int64_t replicas = 0;
  /// Tensor-parallel shards per replica.
  int64_t shards = 1;
  /// The stages of each pipeline rank where a rank holds several; empty
  /// when pipeline rank s runs stage s.
  std::vector<std::vector<int64_t>> stagesOf;
  /// "rank r (stage s, replica p[, shard t])" ("stages s, u" for several),
  /// or "rank r".
  std::string name(int64_t rank) const;
};

/// Gathers the spans that every rank of `world` recorded since its
/// hrt_timeline_begin_iteration (iteration `iteration` of the run) to rank 0,
/// which writes `directory`/timeline.json and `directory`/timeline.svg and
/// prints where. Rows are named "rank r (stage s, replica p)" (", shard t"
/// with tensor parallelism) when the ranks form a pipeline's grid of
/// `layout.replicas` replicas per stage (0: not known), else "rank r".
/// Collective; returns false after a message.
bool writeTimeline(hrt_comm world, const std::string &directory,
                   int64_t iteration, RankLayout layout);

/// hetero-run --profile-timeline: the mean of several measured iterations,
/// span by span, as hetero-interleave-checkpoints' profile= reads it.
class ProfiledTimeline {
public:
  ProfiledTimeline(hrt_comm world, RankLayout layout)
      : world(world), layout(layout) {}
  /// Adds the spans every rank recorded since its
  /// hrt_timeline_begin_iteration. Collective; false after a message.
  bool add();
  /// Rank 0 writes the mean iteration to `path` as a Chrome trace and says
  /// so. An iteration whose spans differ in number from the first one's is
  /// left out of the mean.
  bool write(const std::string &path) const;

private:
  hrt_comm world;
  RankLayout layout;
  std::vector<timeline::Row> sum;
  int64_t iterations = 0;
  int64_t skipped = 0;
};

} // namespace hetero

#endif // HETERO_TOOLS_HETERO_RUN_MEASUREDTIMELINE_H
