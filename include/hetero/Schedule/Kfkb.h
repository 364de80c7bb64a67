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

/// One step of a stage program including its transfers.
struct Action {
  enum Kind {
    Forward,
    Backward,
    SendActivation,
    RecvActivation,
    SendGradient,
    RecvGradient,
  } kind;
  int64_t microbatch;
  int64_t peer = -1; // transfers only
};

/// Kinds of transfer: sends and receives, of activations (forward) or of
/// gradients (backward).
bool isSend(Action::Kind kind);
bool isReceive(Action::Kind kind);
bool carriesActivation(Action::Kind kind);

/// `program` with its transfers: the activation of micro-batch i is received
/// from stage s-1 right before F(i) and sent to s+1 right after it; the
/// gradient is received from s+1 right before B(i) and sent to s-1 right
/// after it.
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

/// Runs `programs` with blocking receives and buffered sends, stage after
/// stage until none can go on: `step(stage, action)` performs an action, or
/// returns false when it must wait (a receive whose message has not been
/// sent). Returns where each program stopped (its size when it finished).
/// The verifier's deadlock check and the simulator share it.
template <typename Step>
std::vector<size_t>
runBlocking(const std::vector<std::vector<Action>> &programs, Step step) {
  std::vector<size_t> next(programs.size(), 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t s = 0; s < programs.size(); ++s)
      while (next[s] < programs[s].size() &&
             step(int64_t(s), programs[s][next[s]])) {
        ++next[s];
        progress = true;
      }
  }
  return next;
}

/// "F3", "B0", "send activation 2 to 1", ... for messages.
std::string describe(const Action &action);

/// A problem found in a schedule: the stage, the index of the offending
/// action in its program (or -1 for the stage as a whole) and a sentence.
struct Problem {
  int64_t stage;
  int64_t action;
  std::string message;
};

/// Verifies the programs of a pipeline of `programs.size()` stages running
/// `microbatches` micro-batches:
///  - every F(i) and B(i) exactly once per stage, F(i) before B(i);
///  - activations arrive before the forward that needs them and gradients
///    before the backward, and are sent only after they are produced;
///  - on every directed link the receive order equals the send order;
///  - no deadlock: a simulation with blocking receives and buffered sends
///    completes every program;
///  - when `memoryCap` > 0, no stage holds more than `memoryCap` forward
///    activations in flight (forwards run minus backwards run).
/// Returns the problems in program order; empty when the schedule is sound.
std::vector<Problem>
verifyPrograms(const std::vector<std::vector<Action>> &programs,
               int64_t microbatches, int64_t memoryCap = 0);

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
