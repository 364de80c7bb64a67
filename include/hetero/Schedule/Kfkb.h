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

/// Where the stages of a pipeline run: stage s on rank rankOf[s] of the
/// pipeline axis. Several stages may share a rank (interleaved and V-shaped
/// schedules); every rank holds at least one.
struct Placement {
  std::vector<int64_t> rankOf;
  int64_t ranks = 0;

  int64_t stages() const { return rankOf.size(); }
  /// The stages on `rank`, ascending.
  std::vector<int64_t> stagesOf(int64_t rank) const;
  bool onePerRank() const { return ranks == stages(); }

  /// Stage s on rank s.
  static Placement identity(int64_t stages);
  /// Stage s on rank s mod `ranks` (interleaved).
  static Placement loop(int64_t stages, int64_t ranks);
  /// Rank r holds stages r and 2 ranks - 1 - r (V-shaped); stages must be
  /// twice the ranks.
  static Placement vShape(int64_t ranks);
  /// "" when `rankOf` places every stage on a rank 0..ranks-1 and leaves
  /// no rank empty; else what is wrong.
  static std::string check(const std::vector<int64_t> &rankOf, int64_t ranks);
  bool operator==(const Placement &other) const {
    return rankOf == other.rankOf && ranks == other.ranks;
  }
};

/// "[0, 1, 1, 0]".
std::string formatPlacement(const std::vector<int64_t> &rankOf);

/// A compute task of a stage: its forward, its whole backward, or the two
/// halves of a split backward (the input gradient I, then the weight
/// gradient W).
struct Task {
  enum Kind { Forward, Backward, BackwardInput, BackwardWeight } kind;
  int64_t microbatch;
  int64_t stage = 0;
  bool operator==(const Task &other) const {
    return kind == other.kind && microbatch == other.microbatch &&
           stage == other.stage;
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

/// "F0 F1 B0 ..." as printed by --hetero-print-schedule (I and W for the
/// halves of a split backward); with `withStage`, each task is prefixed by
/// its stage as in PyTorch's CSV ("2F0").
std::string formatProgram(const std::vector<Task> &program,
                          bool withStage = false);

/// One step of a rank's program including its transfers. `stage` is the
/// stage whose task it is (for a transfer: the stage that sends or
/// receives), `peer` the stage at the other end of a transfer.
struct Action {
  enum Kind {
    Forward,
    Backward,
    BackwardInput,
    BackwardWeight,
    SendActivation,
    RecvActivation,
    SendGradient,
    RecvGradient,
  } kind;
  int64_t microbatch;
  int64_t peer = -1; // transfers only
  int64_t stage = 0;
};

/// Kinds of transfer: sends and receives, of activations (forward) or of
/// gradients (backward).
bool isSend(Action::Kind kind);
bool isReceive(Action::Kind kind);
bool carriesActivation(Action::Kind kind);
bool isCompute(Action::Kind kind);
/// A backward task that produces the input gradient: B or I.
bool producesInputGradient(Action::Kind kind);
Action::Kind actionKind(Task::Kind kind);

/// The compute tasks of `program` (its transfers dropped).
std::vector<Task> computeTasks(const std::vector<Action> &program);

/// `program` (the compute tasks of rank `rank`) with its transfers: a task
/// that needs a value from a stage on another rank receives it right before
/// it runs, and a task whose value a stage on another rank needs sends it
/// right after; neighbouring stages on one rank hand values over without a
/// transfer.
std::vector<Action> withTransfers(const std::vector<Task> &program,
                                  const Placement &placement, int64_t rank);
/// One stage per rank.
std::vector<Action> withTransfers(const std::vector<Task> &program,
                                  int64_t stages, int64_t stage);

/// The kFkB programs of every stage of a pipeline, with their transfers.
std::vector<std::vector<Action>>
kfkbPrograms(int64_t stages, int64_t microbatches, int64_t groupSize);

/// `programs` run with micro-batches `factor` times larger, as stage
/// functions of the smaller size execute them: every task and transfer of
/// micro-batch i becomes `factor` consecutive ones, of micro-batches
/// factor i .. factor i + factor - 1. Requires factor >= 1.
std::vector<std::vector<Action>>
splitMicrobatches(const std::vector<std::vector<Action>> &programs,
                  int64_t factor);

/// Runs `programs` (one per rank) with blocking receives and buffered
/// sends, rank after rank until none can go on: `step(rank, action)`
/// performs an action, or returns false when it must wait (a receive whose
/// message has not been sent). Returns where each program stopped (its size
/// when it finished). The verifier's deadlock check and the simulator share
/// it.
template <typename Step>
std::vector<size_t>
runBlocking(const std::vector<std::vector<Action>> &programs, Step step) {
  std::vector<size_t> next(programs.size(), 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t r = 0; r < programs.size(); ++r)
      while (next[r] < programs[r].size() &&
             step(int64_t(r), programs[r][next[r]])) {
        ++next[r];
        progress = true;
      }
  }
  return next;
}

/// "F3 of stage 2", "the send of activation 2 from stage 0 to stage 1", ...
/// for messages.
std::string describe(const Action &action);

/// A problem found in a schedule: the rank, the index of the offending
/// action in its program (or -1 for the rank as a whole) and a sentence.
struct Problem {
  int64_t rank;
  int64_t action;
  std::string message;
};

/// Verifies the programs (one per rank of `placement`) of a pipeline
/// running `microbatches` micro-batches:
///  - every task of a rank belongs to a stage placed there;
///  - every stage runs F(i) once and either B(i) or I(i) then W(i) once,
///    its backward after its forward;
///  - a task's input is there before it runs: received from a stage on
///    another rank, or produced earlier on this rank by the neighbouring
///    stage; values are sent only after they are produced, and only to
///    stages on another rank;
///  - every send has exactly one receive and every receive one send;
///  - no deadlock: with blocking receives and buffered sends every program
///    runs to its end (a cycle of waiting ranks is named), and likewise
///    when receives are only posted and waited for by the task that needs
///    them;
///  - when `memoryCap` > 0, no rank holds more than `memoryCap`
///    micro-batch stashes (a forward's inputs and residuals, kept until
///    its backward or weight-gradient task).
/// Returns the problems in program order; empty when the schedule is sound.
std::vector<Problem>
verifyPrograms(const std::vector<std::vector<Action>> &programs,
               const Placement &placement, int64_t microbatches,
               int64_t memoryCap = 0);
/// One stage per rank.
std::vector<Problem>
verifyPrograms(const std::vector<std::vector<Action>> &programs,
               int64_t microbatches, int64_t memoryCap = 0);

/// The most micro-batch stashes each rank of `programs` holds at once.
std::vector<int64_t>
peakStashes(const std::vector<std::vector<Action>> &programs);

/// The problems worth showing: the first `perKind` of each kind (problems
/// whose messages differ only in their numbers are of one kind), in their
/// original order. `more[i]` counts the problems of the kind of `shown[i]`
/// left out; it is non-zero only on the last shown problem of its kind.
struct ProblemDigest {
  std::vector<Problem> shown;
  std::vector<int64_t> more;
};
ProblemDigest digestProblems(const std::vector<Problem> &problems,
                             int64_t perKind = 3);

} // namespace hetero::schedule

#endif // HETERO_SCHEDULE_KFKB_H
