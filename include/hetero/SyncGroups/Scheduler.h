//===- Scheduler.h - SDPipe's sync-group scheduler --------------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free. The state machine that forms SDPipe's dynamic sync groups, shared
// by hetero-sim's discrete-event model and hetero-run's coordinator. Workers
// (stage, replica) of an M-stage x N-replica mesh send READY after their local
// optimizer step; per stage the scheduler collects arrivals in a window T
// anchored on the first one and closes it early once every live replica is
// ready. A closed candidate is valid when the last P - 1 groups of the stage
// plus the candidate connect all replicas (sliding semantics, the paper's
// Assumption 1), or, under periodic semantics (the authors' artifact), when no
// connectivity check is due. An invalid candidate waits for more arrivals
// with no timeout, but only while its stage holds the single cross-stage
// enforcement token; otherwise it is dispatched anyway and logged `ignored`,
// which is what prevents the cross-stage deadlock of SDPipe's Fig. 3. Once a
// worker of a stage has issued its final sync, or missed the liveness
// deadline, enforcement in that stage stops, so runs end cleanly.
//
// The scheduler keeps no clock of its own: callers pass the time of each
// event, and call `advance` at `nextDeadline()` to close expired windows.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_SYNCGROUPS_SCHEDULER_H
#define HETERO_SYNCGROUPS_SCHEDULER_H

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace hetero::sync {

/// How connectivity is enforced: over the last P groups of a stage (the
/// paper), or once every P x N worker updates since the last check (the
/// artifact).
enum class Semantics { Sliding, Periodic };

/// Why a group was dispatched as it was (the SyncTable's mode column).
enum class Mode {
  /// A valid candidate, or one no connectivity check was due for.
  Normal,
  /// A candidate that had to wait for more workers to become valid.
  Enforced,
  /// Invalid and not enforced: another stage held the enforcement token, or
  /// enforcement is off.
  Ignored,
  /// Invalid, but a worker of the stage has departed.
  Departure,
};

const char *modeName(Mode mode);

struct Options {
  int64_t stages = 1;
  int64_t replicas = 1;
  /// P: the last `period` groups of a stage must connect its replicas.
  int64_t period = 10;
  Semantics semantics = Semantics::Sliding;
  /// Whether invalid candidates wait for more workers at all.
  bool enforce = true;
  /// The cross-stage enforcement token. Off only to show the deadlock.
  bool lock = true;
  /// T_max in ms: the window never grows beyond it. Infinity closes windows
  /// only when every replica is ready (All-Reduce), 0 at the first arrival.
  /// Unset, it is measured: the stage's iteration time (a moving average of
  /// the interval between a worker's READYs, stragglers' intervals
  /// excluded) over N.
  std::optional<double> windowMaxMs;
  /// The measured T_max as a fraction of the iteration time; unset, 1/N.
  std::optional<double> windowFraction;
  /// T_max before the first measurement, when windowMaxMs is unset.
  double initialWindowMaxMs = 1.0;
  /// Doubles T after a singleton group and scales it by 0.9 otherwise,
  /// within [T_max / 1000, T_max]; else T = T_max always.
  bool adaptive = true;
  /// A worker that has sent no READY for this long while others of its
  /// stage progress is treated as departed. <= 0 disables the deadline.
  double livenessMs = 0.0;
};

/// One row of the SyncTable.
struct Group {
  int64_t stage = 0;
  /// The stage's group count before this one: its clock k.
  int64_t tick = 0;
  double dispatchMs = 0.0;
  /// Sorted replica indices.
  std::vector<int64_t> members;
  Mode mode = Mode::Normal;
};

struct Counters {
  int64_t groups = 0;
  int64_t enforced = 0;
  int64_t ignored = 0;
  int64_t departures = 0;
};

class Scheduler {
public:
  explicit Scheduler(const Options &options);

  /// Worker (stage, replica) is ready at `nowMs`; `final` marks its last
  /// sync. Returns the groups dispatched because of it. A worker must not
  /// send READY again before its previous one has been answered.
  std::vector<Group> ready(int64_t stage, int64_t replica, double nowMs,
                           bool final = false);

  /// Closes the windows that have expired by `nowMs` and applies the
  /// liveness deadline. Returns the groups dispatched.
  std::vector<Group> advance(double nowMs);

  /// The earliest time at which `advance` has something to do, if any.
  std::optional<double> nextDeadline() const;

  /// Marks a worker departed (it left for good) and returns the groups this
  /// releases.
  std::vector<Group> depart(int64_t stage, int64_t replica, double nowMs);

  /// The SyncTable: every dispatched group, in dispatch order.
  const std::vector<Group> &table() const { return history; }
  const Counters &counters() const { return count; }
  /// The current window T of a stage, and its T_max.
  double window(int64_t stage) const;
  double windowMax(int64_t stage) const;
  /// The stage holding the enforcement token, if any.
  std::optional<int64_t> tokenHolder() const { return holder; }
  bool departed(int64_t stage, int64_t replica) const;
  /// Whether READY from this worker is waiting for its group.
  bool waiting(int64_t stage, int64_t replica) const;

private:
  struct Stage {
    std::vector<int64_t> ready;
    double deadlineMs = 0.0;
    bool enforcing = false;
    /// Periodic semantics: a connectivity check is due.
    bool checkDue = false;
    int64_t updatesSinceCheck = 0;
    /// Periodic semantics: components of every arrival since the last check.
    std::vector<int64_t> arrivalsParent;
    std::vector<std::vector<int64_t>> recent;
    double window = 0.0;
    double measuredIterationMs = 0.0;
    std::vector<double> lastReadyMs;
    std::vector<bool> heard;
    std::vector<bool> finalIssued;
    std::vector<bool> gone;
    int64_t ticks = 0;
  };

  void close(int64_t stage, double nowMs, std::vector<Group> &out);
  void dispatch(int64_t stage, double nowMs, Mode mode,
                std::vector<Group> &out);
  bool valid(const Stage &state) const;
  bool anyDeparture(const Stage &state) const;
  int64_t liveCount(const Stage &state) const;
  void observeInterval(Stage &state, double intervalMs);
  void check(int64_t stage, int64_t replica) const;

  Options options;
  std::vector<Stage> stageStates;
  std::optional<int64_t> holder;
  std::vector<Group> history;
  Counters count;
};

} // namespace hetero::sync

#endif // HETERO_SYNCGROUPS_SCHEDULER_H
