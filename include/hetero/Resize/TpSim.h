//===- TpSim.h - tensor parallelism with a straggler, simulated -*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free. The iteration of n tensor-parallel ranks whose prunable GEMMs
// run delta_i times slower (shared/seeds/000-zero-resizing.md section
// 5.2), under each policy: the planner of this library decides from the
// ranks' unpruned busy and GEMM times, and the model runs its plan.
//
// Every prunable linear is a synchronisation point: each rank computes its
// non-GEMM work, the share of its three GEMMs it keeps (delta_i x g x (1 -
// prune - migrate)), the cost of gathering the kept columns when it prunes
// (E, proportional to the pruned share), and the columns it received from
// migrating stragglers at its own speed; then the layer's all-reduce runs,
// plus, per migrating straggler, a broadcast and a reduce (2 ceil(log2 n)
// latencies and the migrated bytes). The iteration is the sum over linears
// of the slowest rank plus the communication.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_RESIZE_TPSIM_H
#define HETERO_RESIZE_TPSIM_H

#include "hetero/Resize/Semi.h"

#include <cstdint>
#include <string>
#include <vector>

namespace hetero::resize {

struct TpModel {
  int64_t ranks = 2;
  /// Prunable linears in one iteration (forward and backward of each).
  int64_t linears = 8;
  /// One linear's three GEMMs on a rank at full speed, unpruned.
  double gemmMs = 10;
  /// Everything else a rank computes per linear.
  double otherMs = 2;
  /// The all-reduce every linear already runs.
  double allReduceMs = 1;
  /// Per linear: sending a straggler's whole contraction (share 1) to the
  /// receivers and its results back, beyond the latencies.
  double migrateMs = 4;
  /// One collective's latency.
  double latencyMs = 0.05;
  /// Per linear: gathering and scattering the columns when pruning all of
  /// them (E(share) = share x extractMs).
  double extractMs = 0.5;
};

enum class TpPolicy { Baseline, ZeroMean, ZeroMin, Migration, Semi };

/// The policies' names as hetero-sim prints them.
const char *policyName(TpPolicy policy);

/// A message when the model or the slowdowns cannot be simulated.
std::string checkTpModel(const TpModel &model,
                         const std::vector<double> &delta);

/// The loads the planner reads of an unpruned iteration.
std::vector<RankLoad> tpLoads(const TpModel &model,
                              const std::vector<double> &delta);

/// SEMI's cost curves for the model.
SemiCosts tpCosts(const TpModel &model);

/// The plan `policy` makes for the model's ranks.
std::vector<RankPlan> tpPlan(const TpModel &model,
                             const std::vector<double> &delta, TpPolicy policy,
                             const SemiOptions &options = {});

/// The iteration's time under `plan`.
double tpIterationMs(const TpModel &model, const std::vector<double> &delta,
                     const std::vector<RankPlan> &plan);

} // namespace hetero::resize

#endif // HETERO_RESIZE_TPSIM_H
