//===- PipelineSim.h - discrete-event pipeline simulator --------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free. Each pipeline rank is a device that runs its program in order;
// a task starts when the device is free and its input has arrived: F(s, i)
// needs F(s-1, i)'s output, B(s, i) (or I(s, i)) needs B(s+1, i)'s, over
// the link between their ranks, or at once when the two stages share a
// rank. A directed link between ranks carries one message at a time, in
// send order; a transfer starts when its producer has finished and the link
// is free. Links can be slowed over time
// windows (a preemption trace) and devices by a constant factor
// (stragglers).
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_SIM_PIPELINESIM_H
#define HETERO_SIM_PIPELINESIM_H

#include "hetero/Schedule/Kfkb.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace hetero::sim {

/// A time window in which a link is `slowdown` times slower.
struct LinkWindow {
  int64_t from;
  int64_t to;
  double startMs;
  double endMs;
  double slowdown;
};

struct Costs {
  /// Per micro-batch, on an unslowed device.
  double forwardMs = 1.0;
  double backwardMs = 2.0;
  /// Per message on an unslowed link.
  double commMs = 0.0;
  /// Per stage, where measured: they override forwardMs and backwardMs.
  std::vector<double> stageForwardMs;
  std::vector<double> stageBackwardMs;
  /// Per directed link (from, to), where measured: overrides commMs.
  std::map<std::pair<int64_t, int64_t>, double> linkCommMs;
  /// The part of every message's time that does not grow with its size:
  /// the link's latency, which scaled() keeps.
  double latencyMs = 0.0;
  /// Every transfer, whatever its link, crosses one medium that carries
  /// one message at a time: one network that all ranks' traffic shares (a
  /// shaped or congested link). Transfers then queue in the order they are
  /// ready.
  bool sharedMedium = false;
  /// Per rank; empty or 1.0 means full speed.
  std::vector<double> deviceSlowdown;
  /// The part of a backward its input gradient (I) takes when the backward
  /// is split; the weight gradient (W) takes the rest. The zero-bubble
  /// paper's model has T_F = T_I = T_W.
  double inputGradientShare = 0.5;
  std::vector<LinkWindow> linkWindows;

  /// The unslowed time of one micro-batch's forward or backward on `stage`.
  double forward(int64_t stage) const;
  double backward(int64_t stage) const;
  /// The unslowed time of one message on link from -> to.
  double comm(int64_t from, int64_t to) const;

  /// These costs for micro-batches `factor` times as large: compute and
  /// the bandwidth part of every message grow in proportion (PlanModel's
  /// fit through the origin from one measured size), the latency stays, and
  /// so do slowdowns and windows.
  Costs scaled(double factor) const;
};

/// Parses a trace: one directive per line, '#' starts a comment.
///   link <from> <to> <start_ms> <end_ms> <slowdown>
///   stage <s> <slowdown>
/// Returns an empty string on success, else "line N: <problem>".
std::string parseTrace(const std::string &text, int64_t stages, Costs &costs);

struct Span {
  double startMs;
  double endMs;
};

struct Result {
  double iterationMs = 0.0;
  /// 1 - busy device time / (ranks x iteration time).
  double bubbleFraction = 0.0;
  std::vector<int64_t> peakInflight;
  /// Per rank: when each compute task ran, in program order.
  std::vector<std::vector<Span>> computeSpans;
  std::vector<std::vector<schedule::Action>> computeTasks;
  /// Per directed link (from, to) used: its busy and idle spans.
  struct Link {
    int64_t from;
    int64_t to;
    std::vector<Span> busy;
    std::vector<Span> idle;
  };
  std::vector<Link> links;
};

/// Simulates sound programs (see schedule::verifyPrograms), one per rank
/// of `placement` (one stage per rank by default). A device is a rank: its
/// tasks run one after the other, each taking its stage's time; I and W
/// take `inputGradientShare` and the rest of the stage's backward. A
/// receive is posted where the program has it, and the task that needs its
/// message waits for it, as the lowered step runs.
Result simulate(const std::vector<std::vector<schedule::Action>> &programs,
                const Costs &costs);
Result simulate(const std::vector<std::vector<schedule::Action>> &programs,
                const Costs &costs, const schedule::Placement &placement);

using schedule::kfkbPrograms;

/// The group size an adaptive schedule picks: the k whose kFkB schedule the
/// simulator finds shortest, among those whose peak in-flight activations
/// on stage 0, min(k S, M), fit `memoryCap` (0: no cap); 1F1B, the least
/// memory any kFkB schedule needs, is always a candidate. Ties go to the
/// smaller k.
struct Choice {
  int64_t groupSize = 1;
  double iterationMs = 0.0;
};
Choice chooseGroupSize(int64_t stages, int64_t microbatches, const Costs &costs,
                       int64_t memoryCap);

/// The time a transfer of `commMs` takes on link from -> to when it starts at
/// `startMs`: the work progresses at 1/slowdown inside slowed windows.
double transferEnd(const Costs &costs, int64_t from, int64_t to,
                   double startMs);

} // namespace hetero::sim

#endif // HETERO_SIM_PIPELINESIM_H
