//===- Kfkb.h - kFkB pipeline schedules -----------------------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free: the order in which a pipeline stage runs the forward and
// backward passes of its micro-batches under a kFkB schedule (Ada-Grouper).
// k = 1 is 1F1B (PipeDream-Flush), k >= M is GPipe.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_SCHEDULE_KFKB_H
#define HETERO_SCHEDULE_KFKB_H

#include <cstdint>
#include <string>
#include <vector>

namespace hetero::schedule {

struct Task {
  enum Kind { Forward, Backward } kind;
  int64_t microbatch;
  bool operator==(const Task &other) const {
    return kind == other.kind && microbatch == other.microbatch;
  }
};

/// The program of `stage` (0-based) in a pipeline of `stages` stages that
/// runs `microbatches` micro-batches in groups of `groupSize`:
/// micro-batches form groups of k consecutive ones (the last one smaller
/// when k does not divide M); the stage runs a warm-up of min(S-1-s, G)
/// forward groups, then alternates one forward and one backward group, then
/// the remaining backward groups; inside a group micro-batches ascend.
/// Requires 0 <= stage < stages, microbatches >= 1, groupSize >= 1.
std::vector<Task> kfkbProgram(int64_t stages, int64_t microbatches,
                              int64_t groupSize, int64_t stage);

/// "F0 F1 B0 ..." as printed by --hetero-print-schedule.
std::string formatProgram(const std::vector<Task> &program);

} // namespace hetero::schedule

#endif // HETERO_SCHEDULE_KFKB_H
