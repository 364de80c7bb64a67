//===- Resize.cpp - the kept columns of prunable layers -------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The runtime side of ZERO-resizing (docs/resizing.md): which contraction
// columns of each prunable layer this rank computes in the current
// iteration, answered to hetero.prune_plan. A layer's columns are fixed from
// the first question of an iteration to its end, so a layer's backward
// products prune what its forward pruned (the lineage), however often the
// compiled code asks.
//
// The ratio is fixed per configuration (the paper's homogeneous runs, and
// PriDiffE's empirical ratio); the columns are drawn the ZERO-Rd way from a
// seed, the layer and the epoch (lib/Resize/Priority.h), so every run and
// every rank draws the same ones.
//
//===----------------------------------------------------------------------===//

#include "Runtime.h"

#include "hetero/Resize/Priority.h"

#include <cmath>
#include <map>
#include <mutex>
#include <vector>

namespace {

struct Plan {
  long long iteration = -1;
  std::vector<int64_t> kept;
};

struct ResizeState {
  std::mutex mutex;
  double ratio = 0;
  unsigned long long ranks = 0;
  long long epochIterations = 0;
  unsigned long long seed = 0;
  long long iteration = 0;
  std::map<std::pair<unsigned long long, long long>, Plan> plans;
};

ResizeState &resize() {
  static ResizeState state;
  return state;
}

/// Whether this rank prunes under the configuration.
bool prunes(const ResizeState &s) {
  if (!(s.ratio > 0))
    return false;
  if (s.ranks == 0)
    return true;
  int rank = hetero::rt::worldRank();
  return rank < 64 && ((s.ranks >> rank) & 1);
}

} // namespace

using namespace hetero::rt;

extern "C" hrt_status hrt_resize_configure(double ratio,
                                           unsigned long long ranks,
                                           long long epoch_iterations,
                                           unsigned long long seed) {
  CallSite here{"hrt_resize_configure", nullptr, 0};
  if (!std::isfinite(ratio) || ratio < 0 || ratio >= 1)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "the pruning ratio must be in [0, 1), got " +
                    std::to_string(ratio));
  if (epoch_iterations < 0)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "an epoch must be >= 0 iterations (0: one epoch), got " +
                    std::to_string(epoch_iterations));
  ResizeState &s = resize();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.ratio = ratio;
  s.ranks = ranks;
  s.epochIterations = epoch_iterations;
  s.seed = seed;
  s.plans.clear();
  return HRT_SUCCESS;
}

extern "C" void hrt_resize_begin_iteration(long long iteration) {
  ResizeState &s = resize();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.iteration = iteration;
}

extern "C" long long hrt_mlir_prune_plan(unsigned long long layer,
                                         long long columns, long long *kept) {
  ResizeState &s = resize();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (columns <= 0)
    return 0;
  if (!prunes(s)) {
    for (long long j = 0; j < columns; ++j)
      kept[j] = j;
    return columns;
  }
  Plan &plan = s.plans[{layer, columns}];
  if (plan.iteration != s.iteration) {
    long long epoch =
        s.epochIterations > 0 ? s.iteration / s.epochIterations : 0;
    plan.iteration = s.iteration;
    plan.kept = hetero::resize::keptColumns(
        hetero::resize::randomOrder(
            columns, hetero::resize::randomSeed(s.seed, layer,
                                                (unsigned long long)epoch)),
        s.ratio);
  }
  for (size_t j = 0; j < plan.kept.size(); ++j)
    kept[j] = plan.kept[j];
  return (long long)plan.kept.size();
}
