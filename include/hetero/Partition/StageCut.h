//===- StageCut.h - cutting a chain of ops into pipeline stages -*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free. A model's forward function is a chain of n ops; boundary b
// (0 <= b <= n) lies before op b, so boundary 0 is the model's input and
// boundary n its output. S stages take consecutive runs of ops: stage s runs
// ops [bounds[s], bounds[s + 1]), with bounds[0] = 0 and bounds[S] = n, and
// every inner bound is a boundary the chain allows a cut at (exactly one
// activation crosses it). On pipeline rank s, with relative speed v_s:
//
//   compute(s) = (sum of the ops' seconds) / v_s,
//   link(s)    = 2 (alpha + bytes(bounds[s]) beta) for s > 0,
//   memory(s)  = sum of the ops' state bytes
//                + inFlight(s) (bytes(bounds[s]) + [last] targetBytes):
//
// the cut before a stage carries the activation forward and its gradient
// back, on a link that runs beside the compute (sends are buffered), so a
// stage's time is max(compute(s), link(s)), and a stage stashes its input
// (the last stage also the target) for each micro-batch in flight. The cut
// minimises the slowest stage's time subject to
// memory(s) <= cap(s): since a stage's time and memory depend only on its
// own two bounds, dynamic programming over (stage, bound) is exact, in
// O(S n^2) time. Among the cuts of least bottleneck it takes the one whose
// largest compute time is least (a second pass of the same program, limited
// to stages within the bottleneck): where the links bound the step, many
// cuts tie, and this one balances the compute.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_PARTITION_STAGECUT_H
#define HETERO_PARTITION_STAGECUT_H

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace hetero::partition {

/// The costs of a chain of ops.
struct Chain {
  /// Per op: seconds of its forward and backward at speed 1.
  std::vector<double> seconds;
  /// Per op: bytes the stage that runs it holds for good (the parameters
  /// it reads first, their gradient sums and the optimizer's state).
  std::vector<double> stateBytes;
  /// Per boundary (n + 1 entries): whether a cut may fall there (entries 0
  /// and n are ignored), and the bytes of the activation that crosses it
  /// (entry 0: the model's input).
  std::vector<bool> cuttable;
  std::vector<double> boundaryBytes;
  /// Bytes of the last stage's target per micro-batch.
  double targetBytes = 0;

  int64_t size() const { return int64_t(seconds.size()); }
};

/// The pipeline's ranks and links.
struct Cluster {
  /// Relative compute speed of each pipeline rank (> 0); its size is the
  /// number of stages.
  std::vector<double> speeds;
  /// Bytes each rank may hold; empty or a negative entry: no cap.
  std::vector<double> memoryCaps;
  /// Micro-batches each stage holds in flight; empty: 1F1B's
  /// min(S - s, microbatches).
  std::vector<int64_t> inFlight;
  int64_t microbatches = 1;
  /// A transfer of x bytes takes alpha + x beta seconds.
  double alphaSeconds = 0;
  double betaSecondsPerByte = 0;

  int64_t stages() const { return int64_t(speeds.size()); }
};

/// The predicted figures of one stage.
struct StageCost {
  double computeSeconds = 0;
  /// The transfers over the cut before the stage.
  double linkSeconds = 0;
  double memoryBytes = 0;
  double seconds() const { return std::max(computeSeconds, linkSeconds); }
};

/// The costs of stage `stage` running ops [begin, end).
StageCost stageCost(const Chain &chain, const Cluster &cluster, int64_t stage,
                    int64_t begin, int64_t end);

/// Micro-batches stage `stage` holds in flight.
int64_t inFlight(const Cluster &cluster, int64_t stage);

/// A cut: S + 1 bounds from 0 to n and the slowest stage's time.
struct Cut {
  std::vector<int64_t> bounds;
  double bottleneckSeconds = 0;
};

/// Checks a chain and a cluster: "" or a sentence naming what is wrong.
std::string validate(const Chain &chain, const Cluster &cluster);

/// The cut with the least bottleneck under the memory caps. On failure
/// returns false and sets `error` to why: too few ops or allowed cuts for
/// the stages, or no cut that fits the caps (naming the first stage that
/// cannot fit, with the least memory it would need).
bool partitionChain(const Chain &chain, const Cluster &cluster, Cut &cut,
                    std::string &error);

/// Checks a cut given by hand (the inner bounds, S - 1 of them, strictly
/// increasing): a stage left empty, a bound the chain cannot be cut at, or
/// a stage over its cap is an error naming the stage. On success fills
/// `cut` with the bounds and its bottleneck.
bool checkCut(const Chain &chain, const Cluster &cluster,
              const std::vector<int64_t> &innerBounds, Cut &cut,
              std::string &error);

} // namespace hetero::partition

#endif // HETERO_PARTITION_STAGECUT_H
