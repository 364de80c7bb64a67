//===- Ratio.cpp - ZERO-resizing's pruning ratio (Eq. 1) ------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Resize/Ratio.h"

#include <algorithm>
#include <cmath>

using namespace hetero::resize;

RankTimes hetero::resize::unprunedEquivalent(RankTimes measured, double pruned,
                                             double migratedMs) {
  double kept = 1.0 - std::clamp(pruned, 0.0, 1.0);
  double gemm = (kept > 0 ? measured.gemmMs / kept : measured.gemmMs) +
                std::max(migratedMs, 0.0);
  return {measured.busyMs + (gemm - measured.gemmMs), gemm};
}

double hetero::resize::referenceTime(const std::vector<double> &busyMs,
                                     Target target) {
  if (busyMs.empty())
    return 0;
  if (target == Target::Min)
    return *std::min_element(busyMs.begin(), busyMs.end());
  double sum = 0;
  for (double t : busyMs)
    sum += t;
  return sum / double(busyMs.size());
}

double hetero::resize::pruningRatio(double busyMs, double referenceMs,
                                    double gemmMs, double maxRatio) {
  if (!(gemmMs > 0))
    return 0;
  return std::clamp((busyMs - referenceMs) / gemmMs, 0.0, maxRatio);
}

std::string hetero::resize::checkTimes(const std::vector<double> &busyMs,
                                       const std::vector<double> &gemmMs) {
  if (busyMs.empty())
    return "no ranks: expected one busy time per rank";
  if (busyMs.size() != gemmMs.size())
    return std::to_string(busyMs.size()) + " busy times but " +
           std::to_string(gemmMs.size()) +
           " GEMM times: expected one of each per rank";
  for (size_t i = 0; i < busyMs.size(); ++i) {
    if (!std::isfinite(busyMs[i]) || busyMs[i] < 0 ||
        !std::isfinite(gemmMs[i]) || gemmMs[i] < 0)
      return "rank " + std::to_string(i) + ": times must be finite and >= 0";
    if (gemmMs[i] > busyMs[i])
      return "rank " + std::to_string(i) +
             ": its GEMM time exceeds its busy time, which includes it";
  }
  return "";
}

std::vector<double>
hetero::resize::pruningRatios(const std::vector<double> &busyMs,
                              const std::vector<double> &gemmMs, Target target,
                              double maxRatio, double noiseGuard) {
  double reference = referenceTime(busyMs, target);
  std::vector<double> ratios;
  for (size_t i = 0; i < busyMs.size(); ++i)
    ratios.push_back(
        busyMs[i] <= (1.0 + noiseGuard) * reference
            ? 0.0
            : pruningRatio(busyMs[i], reference, gemmMs[i], maxRatio));
  return ratios;
}

int64_t hetero::resize::prunedColumns(int64_t columns, double ratio) {
  if (columns <= 1 || !(ratio > 0))
    return 0;
  // The small slack keeps ratios such as 0.7 x 10 from rounding down to 6.
  auto pruned =
      int64_t(std::floor(std::min(ratio, 1.0) * double(columns) + 1e-9));
  return std::min(pruned, columns - 1);
}

bool RefreshMonitor::observe(double observedMs) {
  bool grew = observedMs > reference * (1.0 + threshold);
  bool fell = symmetric && observedMs < reference * (1.0 - threshold);
  if (!grew && !fell)
    return false;
  reference = observedMs;
  return true;
}
