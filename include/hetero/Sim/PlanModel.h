//===- PlanModel.h - measured costs of candidate pipeline plans -*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free. Ada-Grouper's cost model over (k, b): a plan runs M = batch / b
// micro-batches of b samples each in groups of k. What a plan costs follows
// from measurements taken under the plans that ran:
//
//  * per stage, the forward and backward time of one micro-batch at each
//    micro-batch size measured, fitted as t(b) = c0 + c1 b by least squares
//    (through the origin while one size is known), so that a size not run
//    yet is predicted from the sizes that were;
//  * per directed link, the latency alpha and the time per byte of a
//    message, and the bytes a sample puts on the link (the activation of one
//    sample), so that a message of b samples takes alpha + b x bytes x beta.
//
// The per-stage model simulates every stage and link with its own costs;
// the averaged model (what a planner that keeps three scalars sees) gives
// every stage the mean forward and backward time and every link the mean
// message time. `fitLink` turns timed messages into a link's alpha and
// beta.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_SIM_PLANMODEL_H
#define HETERO_SIM_PLANMODEL_H

#include "hetero/Sim/PipelineSim.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace hetero::sim {

/// A candidate plan: groups of `groupSize` micro-batches of `microbatchSize`
/// samples, `microbatches` of them per iteration. Stage functions compiled
/// for a smaller size run each micro-batch as `tasks` consecutive tasks of
/// microbatchSize / tasks samples, each with its own messages
/// (schedule::splitMicrobatches).
struct Plan {
  int64_t groupSize = 1;
  int64_t microbatchSize = 1;
  int64_t microbatches = 1;
  int64_t tasks = 1;

  /// The samples of one task.
  int64_t taskSize() const {
    return tasks > 1 ? std::max<int64_t>(1, microbatchSize / tasks)
                     : microbatchSize;
  }
};

/// A link's cost per message of `bytes`: alphaMs + bytes * msPerByte.
struct LinkCost {
  double alphaMs = 0.0;
  double msPerByte = 0.0;
  double messageMs(double bytes) const { return alphaMs + bytes * msPerByte; }
};

/// One timed message: its payload and its time on the link.
struct TimedMessage {
  double bytes;
  double ms;
};

/// A link's alpha and beta from timed messages. With a latency measured
/// apart (a probe's round trip; never more than the fastest message, which
/// paid it too), only beta is fitted: the median of (ms - alpha) / bytes,
/// robust to messages timed late. Without one, and
/// with sizes at least 1.5x apart, both come from a least-squares line
/// (alpha clamped to >= 0); otherwise alpha is 0 and beta the median of
/// ms / bytes. No messages give the latency alone (or zero costs).
LinkCost fitLink(const std::vector<TimedMessage> &messages,
                 std::optional<double> alphaMs);

/// Least-squares t(b) = c0 + c1 b over (b, t) points; through the origin
/// when they share one b. Evaluated at `b`, never below 0.
double fitAtSize(const std::vector<std::pair<double, double>> &points,
                 double b);

class PlanModel {
public:
  explicit PlanModel(int64_t stages) : stages(stages) {}

  /// One stage's mean forward and backward time per micro-batch of
  /// `microbatchSize` samples; a later one for the same size replaces it.
  void setStage(int64_t stage, int64_t microbatchSize, double forwardMs,
                double backwardMs);
  /// A directed link's cost per message and the bytes one sample puts on
  /// it; a later one replaces it.
  void setLink(int64_t from, int64_t to, LinkCost cost, double bytesPerSample);
  /// Whether all transfers cross one medium (Costs::sharedMedium).
  void setSharedMedium(bool shared) { sharedMedium = shared; }

  /// Forgets compute times measured at sizes other than `microbatchSize`
  /// (on every stage): after the machine changed, old sizes mislead.
  void keepOnlySize(int64_t microbatchSize);

  /// The forward and backward time measured on `stage` at
  /// `microbatchSize`, if any.
  std::optional<std::pair<double, double>>
  computeAt(int64_t stage, int64_t microbatchSize) const;

  /// The simulator's costs for micro-batches of `microbatchSize` samples.
  /// Per stage: every stage and link its own (a stage never measured takes
  /// the mean of those that were); averaged: one forward, backward and
  /// message time for all.
  Costs costsAt(int64_t microbatchSize, bool perStage) const;

  /// The simulated iteration time of `plan`: its programs (split into
  /// tasks) under the costs at its task size.
  double iterationMs(const Plan &plan, bool perStage) const;

private:
  /// Stage -> micro-batch size -> (forward, backward).
  std::map<int64_t, std::map<int64_t, std::pair<double, double>>> compute;
  struct Link {
    LinkCost cost;
    double bytesPerSample;
  };
  std::map<std::pair<int64_t, int64_t>, Link> links;
  int64_t stages;
  bool sharedMedium = false;
};

/// The index of the fastest plan, and every plan's simulated time. Ties go
/// to the earlier plan.
struct Ranking {
  size_t best = 0;
  std::vector<double> iterationMs;
};
Ranking rankPlans(const std::vector<Plan> &plans, const PlanModel &model,
                  bool perStage);

} // namespace hetero::sim

#endif // HETERO_SIM_PLANMODEL_H
