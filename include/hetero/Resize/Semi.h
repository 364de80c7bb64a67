//===- Semi.h - SEMI-migration: prune, migrate, or both ---------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free. SEMI-migration (shared/seeds/000-zero-resizing.md section
// 2.8, Algorithm 2'): every rank runs the same planner on the all-gathered
// busy times, against T_min.
//
// * One straggler: if its Eq. 1 ratio alpha is tolerable (<= alpha_tol) it
//   only prunes; otherwise Eq. 2 splits alpha into a pruned share beta x
//   alpha and a migrated share (1 - beta) x alpha where the straggler's
//   extra cost of pruning equals the receivers' extra cost of migration:
//     S + E(beta alpha) = Comm((1 - beta) alpha) + Comp((1 - beta) alpha).
// * Several: Eq. 3 lets the slowest x migrate, x the largest k for which
//   each of the k slowest gains more (T_rk - T_min) than migrating the
//   first k's work costs the receivers:
//     cost_k = Comm(V_k) + max_{j in R_k} V_k / (|R_k| v_j),
//     V_k = sum_{l <= k} alpha_rl W_rl,
//   R_k every other rank (the paper) or the ranks that do not straggle;
//   the other stragglers prune by Eq. 1 against T_min.
//
// The cost functions come from samples (a pre-test, then history): a
// least-squares polynomial made non-negative and non-decreasing.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_RESIZE_SEMI_H
#define HETERO_RESIZE_SEMI_H

#include "hetero/Resize/Ratio.h"

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace hetero::resize {

using CostFunction = std::function<double(double)>;

/// A cost curve fitted to samples: the least-squares polynomial p of
/// `degree` (1 or 2) through them, read as max(0, max of p on [x0, x]) so
/// that it never falls and never goes negative (x0: the smallest sample).
class CostFit {
public:
  /// A message when the samples cannot be fitted: x and y of one length,
  /// finite, at least degree + 1 distinct x.
  static std::string check(const std::vector<double> &x,
                           const std::vector<double> &y, int degree);
  static CostFit fit(const std::vector<double> &x, const std::vector<double> &y,
                     int degree = 1);

  double operator()(double x) const;
  const std::vector<double> &coefficients() const { return coefficient; }

private:
  double polynomial(double x) const;
  std::vector<double> coefficient; // c0 + c1 x + c2 x^2
  double start = 0;
};

/// Comm from measured communication: `migrating` holds (share of one
/// rank's work migrated in the group, communication ms) of iterations
/// that migrated, `still` the communication ms of iterations that did not.
/// Comm(m) is what migrating adds: the fit of the migrating samples (a
/// line once two shares were measured, else their mean) less the mean of
/// the still ones, 0 at m = 0, never negative or falling. 0 until both
/// kinds were measured: the first migration is what prices it.
CostFunction
communicationCost(const std::vector<std::pair<double, double>> &migrating,
                  const std::vector<double> &still);

/// Eq. 2's terms, each a function of a share of the straggler's GEMM work.
struct SplitModel {
  double staticMs = 0;      // S: allocating the pruned operands
  CostFunction extract;     // E(pruned share): gathering the kept columns
  CostFunction communicate; // Comm(migrated share)
  CostFunction compute;     // Comp(migrated share) on the slowest receiver
};

/// Eq. 2: the share beta of `ratio` that the straggler prunes (the rest
/// migrates); 1 when pruning all of it costs no more, 0 when even none
/// costs more than migrating all.
double splitShare(double ratio, const SplitModel &model);

/// Who receives migrated work in Eq. 3.
enum class Receivers {
  Others,        // every rank but the k that migrate (the paper)
  NonStragglers, // the ranks that do not straggle (the authors' code)
};

/// Eq. 3's inputs per rank: busy time, prunable GEMM time (both
/// unpruned-equivalent) and GEMM work (any unit: speed is work / time).
struct RankLoad {
  double busyMs = 0;
  double gemmMs = 0;
  double work = 1;
};

/// Eq. 3's verdict.
struct MigrationChoice {
  /// The stragglers, slowest first (ties: lower rank).
  std::vector<int64_t> stragglers;
  /// cost_k and gain_k = T_rk - T_min for k = 1.. as far as they were
  /// tested (one past the last that migrates, unless all do).
  std::vector<double> costs, gains;
  /// x: the first x stragglers migrate.
  int64_t migrating = 0;
};

/// The stragglers: T_i > (1 + noiseGuard) x T_min.
std::vector<int64_t> stragglersOf(const std::vector<RankLoad> &loads,
                                  double noiseGuard);

/// Eq. 3; `communicate` is Comm of a migrated volume in work units.
MigrationChoice chooseMigrating(const std::vector<RankLoad> &loads,
                                const CostFunction &communicate,
                                Receivers receivers, double noiseGuard = 0,
                                double maxRatio = kDefaultMaxRatio);

/// What one rank does in the next iteration, as shares of its GEMM work.
struct RankPlan {
  double prune = 0;
  double migrate = 0;
};

struct SemiOptions {
  double maxRatio = kDefaultMaxRatio;
  /// A single straggler with alpha at most this only prunes.
  double tolerableRatio = 0.5;
  /// T_i > (1 + noiseGuard) T_min makes a straggler (0: the paper).
  double noiseGuard = 0.05;
  Receivers receivers = Receivers::Others;
};

/// Eq. 2 and 3's cost curves: S, E of the pruned share, Comm of a migrated
/// volume in work units.
struct SemiCosts {
  double staticMs = 0;
  CostFunction extract;
  CostFunction communicate;
};

/// Algorithm 2': every rank's plan from every rank's load.
std::vector<RankPlan> semiPlan(const std::vector<RankLoad> &loads,
                               const SemiCosts &costs,
                               const SemiOptions &options = {});

/// MIG alone: every straggler (against T_min) migrates its Eq. 1 share.
std::vector<RankPlan> migrationPlan(const std::vector<RankLoad> &loads,
                                    double noiseGuard = 0,
                                    double maxRatio = kDefaultMaxRatio);

} // namespace hetero::resize

#endif // HETERO_RESIZE_SEMI_H
