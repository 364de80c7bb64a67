//===- TimelineProfile.h - measured stage timelines in JSON -----*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free. Reads a measured iteration, the Chrome trace that
// `hetero-run --timeline DIR` writes (DIR/timeline.json), as one timeline
// per pipeline stage: the tasks ("forward" and "backward" events, in time
// order) and the communication (every other event) of the stage's first
// replica. Rows are named "rank r (stage s, replica p)", or "rank r" for a
// job without a grid, where rank r runs stage r.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_PROFILE_TIMELINEPROFILE_H
#define HETERO_PROFILE_TIMELINEPROFILE_H

#include "hetero/Checkpoint/IdleSpans.h"

#include <string>
#include <vector>

namespace hetero::profile {

/// Fills `timelines` with one entry per stage; returns "" or what is wrong.
std::string
parseTimelineProfile(const std::string &text, int64_t stages,
                     std::vector<checkpoint::StageTimeline> &timelines);

} // namespace hetero::profile

#endif // HETERO_PROFILE_TIMELINEPROFILE_H
