//===- Ratio.h - ZERO-resizing's pruning ratio (Eq. 1) ----------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free. How much of its prunable GEMM work a straggling tensor-parallel
// rank drops in the next iteration (ZERO-resizing, Eq. 1 as reconstructed in
// shared/seeds/000-zero-resizing.md section 2.3):
//
//   alpha_i = clamp((T_i - T_ref) / C_i, 0, alpha_max)
//
// T_i is rank i's busy time in an iteration (its compute, not the time it
// waits in collectives: under synchronous TP every rank's wall-clock time is
// the same), C_i the time of its prunable GEMMs, T_ref the mean of the T
// (ZERO's "compromise criterion") or their minimum (SEMI, or ZERO with
// target = min). Pruning a share alpha of every prunable GEMM saves
// alpha x C_i, linearly.
//
// The planner reads times measured while it already prunes; fed back raw
// they would undo the pruning the next iteration (alpha ~ 0), so Eq. 1 and
// the refresh monitor take unpruned-equivalent times.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_RESIZE_RATIO_H
#define HETERO_RESIZE_RATIO_H

#include <cstdint>
#include <string>
#include <vector>

namespace hetero::resize {

/// The largest share of a GEMM's contraction columns a rank prunes: at
/// least one column stays (the authors' finest granularity is 1/32).
inline constexpr double kDefaultMaxRatio = 31.0 / 32.0;

/// What T_ref is.
enum class Target { Mean, Min };

/// One rank's iteration: busy time and the part of it in prunable GEMMs.
struct RankTimes {
  double busyMs = 0;
  double gemmMs = 0;
};

/// The times `measured` would have been without pruning `pruned` of the
/// GEMM work and without migrating `migratedMs` (unpruned-equivalent GEMM
/// time sent to other ranks): C = C_meas / (1 - pruned) + migrated, and T
/// grows by what C grew.
RankTimes unprunedEquivalent(RankTimes measured, double pruned,
                             double migratedMs = 0);

/// T_ref over every rank's busy time.
double referenceTime(const std::vector<double> &busyMs, Target target);

/// Eq. 1 for one rank; 0 when it has no prunable GEMM time.
double pruningRatio(double busyMs, double referenceMs, double gemmMs,
                    double maxRatio = kDefaultMaxRatio);

/// Eq. 1 for every rank. The times must be finite and >= 0 and the two
/// lists of one length >= 1; a message says what is wrong otherwise. A rank
/// whose busy time is within `noiseGuard` of T_ref (T_i <= (1 + noiseGuard)
/// T_ref) prunes nothing: measured times jitter by a few percent, and
/// pruning that jitter costs accuracy for no balance (0: the paper).
std::string checkTimes(const std::vector<double> &busyMs,
                       const std::vector<double> &gemmMs);
std::vector<double> pruningRatios(const std::vector<double> &busyMs,
                                  const std::vector<double> &gemmMs,
                                  Target target,
                                  double maxRatio = kDefaultMaxRatio,
                                  double noiseGuard = 0);

/// The columns a rank prunes of a contraction of `columns` at `ratio`:
/// floor(ratio x columns), at most columns - 1.
int64_t prunedColumns(int64_t columns, double ratio);

/// ZERO's lazy refresh of T_ref: a rank watches its own normalised busy time
/// and asks for a new reference (an all-reduce) only when it moves by more
/// than `threshold` (10%) from the one the reference was taken at; with
/// `symmetric`, a drop by as much triggers too, so that pruning stops when
/// the straggling does.
class RefreshMonitor {
public:
  explicit RefreshMonitor(double referenceMs, double threshold = 0.10,
                          bool symmetric = false)
      : reference(referenceMs), threshold(threshold), symmetric(symmetric) {}

  /// Whether `observedMs` triggers a refresh; if so it becomes the
  /// reference.
  bool observe(double observedMs);
  double referenceMs() const { return reference; }

private:
  double reference;
  double threshold;
  bool symmetric;
};

} // namespace hetero::resize

#endif // HETERO_RESIZE_RATIO_H
