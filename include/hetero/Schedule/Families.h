//===- Families.h - the built-in pipeline schedule families ---------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free: the task order of every rank under the schedule families
// users have (PyTorch's torch.distributed.pipelining names them): 1F1B,
// interleaved 1F1B, looped BFS, the zero-bubble ZB1P and ZB-V, and
// DualPipeV. Every family takes Ada-Grouper's group size k: it orders
// groups of k consecutive micro-batches as the family orders single ones,
// and each task of a group runs its micro-batches in ascending order (k = 1
// is the family itself; 1F1B with k is kFkB).
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_SCHEDULE_FAMILIES_H
#define HETERO_SCHEDULE_FAMILIES_H

#include "hetero/Schedule/Kfkb.h"

#include <optional>
#include <string>
#include <vector>

namespace hetero::schedule {

enum class Family { OneFOneB, Interleaved, LoopedBfs, Zb1p, Zbv, DualPipeV };

/// "1f1b", "interleaved", "looped-bfs", "zb1p", "zbv", "dualpipev".
const char *familyName(Family family);
std::optional<Family> parseFamily(const std::string &name);
/// "1f1b|interleaved|...".
std::string familyNames();

/// Whether the family runs the two halves of split backwards (I and W).
bool needsSplitBackward(Family family);

/// The compute tasks of every rank, or why the family cannot run on this
/// placement and micro-batch count.
struct FamilyOrder {
  std::vector<std::vector<Task>> tasks;
  std::string error;
};

/// The order of `family` for `microbatches` micro-batches in groups of
/// `groupSize` on `placement`:
///  - 1f1b: one stage per rank; warm-up forwards, then one forward and one
///    backward, then the remaining backwards (kfkbProgram);
///  - looped-bfs: every forward of a rank's stages, ascending, then every
///    backward, descending;
///  - interleaved: stage s on rank s mod R (loop placement); the groups go
///    round the rank's stages R at a time (Megatron's interleaved 1F1B);
///  - zb1p: interleaved with split backwards, half the warm-up, and rank
///    r's weight gradients r slots after their input gradients;
///  - zbv: the V placement (rank r holds stages r and 2R-1-r) with split
///    backwards, ZB-V's order;
///  - dualpipev: the V placement; forwards of one stage paired with
///    backwards of the other in the steady state, split backwards in the
///    cool-down (DeepSeek's DualPipeV); needs at least 2R groups.
FamilyOrder familyOrder(Family family, const Placement &placement,
                        int64_t microbatches, int64_t groupSize);

/// `familyOrder` with the transfers of withTransfers.
std::vector<std::vector<Action>>
familyPrograms(Family family, const Placement &placement, int64_t microbatches,
               int64_t groupSize, std::string &error);

} // namespace hetero::schedule

#endif // HETERO_SCHEDULE_FAMILIES_H
