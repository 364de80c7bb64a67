//===- Priority.h - which columns a straggler prunes ------------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free. ZERO-Pri and ZERO-PriDiff (shared/seeds/000-zero-resizing.md
// sections 2.4-2.5): per prunable weight W (N x K, pruned along the
// contraction K), the mean absolute change of each column over an epoch
// ranks the columns; those that changed least are pruned first.
//
// The statistics update incrementally: a column this rank pruned for most
// of the epoch got imputed (zero) gradients, so its small change says
// nothing, and re-measuring it would prune it forever. Its statistic is
// kept; the others are replaced. The columns that did train become small in
// turn as they converge, which rotates the pruning round-robin by priority.
//
// PriDiff prunes each layer at least Eq. 1's ratio and more where many
// columns hardly move: alpha_l = min(alpha_max, max(alpha, gamma x
// alpha'_l)), alpha'_l the share of columns whose statistic is below
// theta = N_iter x epsilon.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_RESIZE_PRIORITY_H
#define HETERO_RESIZE_PRIORITY_H

#include "hetero/Resize/Ratio.h"

#include <cstdint>
#include <vector>

namespace hetero::resize {

/// Mean over the N rows of |now - snapshot| per column of row-major N x K
/// matrices.
std::vector<double> columnChange(const std::vector<float> &now,
                                 const std::vector<float> &snapshot,
                                 int64_t rows, int64_t columns);

/// The columns by priority: largest statistic first, ties to the lower
/// index.
std::vector<int64_t> priorityOrder(const std::vector<double> &variation);

/// ZERO-Rd's order: a permutation of [0, columns) drawn from `seed`, the
/// same on every machine for the same seed.
std::vector<int64_t> randomOrder(int64_t columns, uint64_t seed);

/// The seed of ZERO-Rd's draw for one layer and epoch.
uint64_t randomSeed(uint64_t globalSeed, uint64_t layer, uint64_t epoch);

/// The kept columns at `ratio`: the first K - prunedColumns(K, ratio) of
/// `order`, ascending.
std::vector<int64_t> keptColumns(const std::vector<int64_t> &order,
                                 double ratio);

/// What one rank does with its columns in an iteration, each ascending.
struct ColumnSplit {
  std::vector<int64_t> kept;     // computed by the rank itself
  std::vector<int64_t> migrated; // computed by the other ranks for it
};

/// `order` read as [kept | migrated | pruned]: the last
/// prunedColumns(K, pruneRatio) columns are pruned, the floor(migrateRatio
/// x K) before them migrate (at most as many as leave one column kept),
/// the rest are kept. Pruning and migration thus drop the tail of one
/// priority order, pruning its very end.
ColumnSplit splitColumns(const std::vector<int64_t> &order, double pruneRatio,
                         double migrateRatio);

/// The complement of sorted `kept` in [0, columns), ascending.
std::vector<int64_t> prunedSet(const std::vector<int64_t> &kept,
                               int64_t columns);

/// PriDiff's ratio of a layer: min(maxRatio, max(ratio, gamma x share of
/// columns with variation < threshold)).
double layerRatio(const std::vector<double> &variation, double ratio,
                  double threshold, double gamma = 0.8,
                  double maxRatio = kDefaultMaxRatio);

/// One prunable weight's priority state on one rank across epochs.
class ColumnPriority {
public:
  /// `columns` of a contraction; every statistic starts equal (1).
  explicit ColumnPriority(int64_t columns, double prunedShare = 0.5);

  /// Records one training iteration that pruned `pruned` (any order).
  void recordIteration(const std::vector<int64_t> &pruned);

  /// Ends an epoch with the measured change of every column: the columns
  /// pruned in at least `prunedShare` of its iterations keep their
  /// statistic, the others take their change. Returns the new order.
  const std::vector<int64_t> &endEpoch(const std::vector<double> &change);

  const std::vector<double> &variation() const { return stats; }
  const std::vector<int64_t> &order() const { return ranking; }
  int64_t columns() const { return int64_t(stats.size()); }

private:
  std::vector<double> stats;
  std::vector<int64_t> ranking;
  std::vector<int64_t> prunedIterations;
  int64_t iterations = 0;
  double prunedShare;
};

} // namespace hetero::resize

#endif // HETERO_RESIZE_PRIORITY_H
