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
// compiled code asks. The columns are drawn the ZERO-Rd way from a seed,
// the layer and the epoch (lib/Resize/Priority.h), so every run and every
// rank draws the same ones.
//
// The ratio is either fixed (the paper's homogeneous runs, and PriDiffE's
// empirical ratio) or planned online: at each iteration boundary the ranks
// of a tensor-parallel group exchange their busy time (the iteration less
// the time blocked in communication) and the time of their resized GEMMs
// (hetero.gemm_mark), and each prunes what Eq. 1 (lib/Resize/Ratio.h) gives
// it from unpruned-equivalent times.
//
//===----------------------------------------------------------------------===//

#include "Runtime.h"

#include "hetero/Resize/Priority.h"
#include "hetero/Resize/Ratio.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace {

struct Plan {
  long long iteration = -1;
  std::vector<int64_t> kept;
};

/// The online planner's group and what it decided last.
struct OnlinePlanner {
  hrt_comm group = nullptr;
  hetero::resize::Target target = hetero::resize::Target::Min;
  /// Watches this rank's unpruned-equivalent busy time since the last
  /// refresh of T_ref; none before the first.
  std::optional<hetero::resize::RefreshMonitor> monitor;
  /// The ratio of each rank of the group, in force since the last refresh.
  std::vector<double> ratios;
};

struct ResizeState {
  std::mutex mutex;
  double ratio = 0;
  unsigned long long ranks = 0;
  long long epochIterations = 0;
  unsigned long long seed = 0;
  long long iteration = 0;
  std::map<std::pair<unsigned long long, long long>, Plan> plans;
  std::optional<OnlinePlanner> online;
  /// The iteration so far: its start, the communication time then, the
  /// resized GEMMs' time and the columns asked for and kept.
  double iterationStart = 0, communicationAtStart = 0;
  double gemmStart = -1, gemmSeconds = 0;
  long long columnsAsked = 0, columnsKept = 0;
  /// HETERO_RT_SLOW_GEMM: the slowdown of each rank named; this rank's
  /// (once its rank is known) and the extra sleep not yet slept.
  std::map<long, double> slowdowns;
  std::optional<double> slowdown;
  double owedSeconds = 0;
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
  s.online.reset();
  return HRT_SUCCESS;
}

extern "C" hrt_status hrt_resize_configure_online(hrt_comm group, int target,
                                                  long long epoch_iterations,
                                                  unsigned long long seed) {
  CallSite here{"hrt_resize_configure_online", group, 0};
  if (!group || (target != 0 && target != 1))
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "needs a group and target 0 (mean) or 1 (min)");
  if (hrt_status status = hrt_resize_configure(0, 0, epoch_iterations, seed))
    return status;
  ResizeState &s = resize();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.online.emplace();
  s.online->group = group;
  s.online->target =
      target ? hetero::resize::Target::Min : hetero::resize::Target::Mean;
  return HRT_SUCCESS;
}

extern "C" void hrt_resize_begin_iteration(long long iteration) {
  ResizeState &s = resize();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.iteration = iteration;
  s.iterationStart = hrt_wtime();
  s.communicationAtStart = communicationSeconds();
  s.gemmSeconds = 0;
  s.columnsAsked = s.columnsKept = 0;
}

/// What one rank tells its group at an iteration boundary.
enum RecordField { kBusyMs, kGemmMs, kRefresh, kRecordFields };

extern "C" hrt_status hrt_resize_end_iteration(double *ratios, int capacity,
                                               int *changed) {
  ResizeState &s = resize();
  std::unique_lock<std::mutex> lock(s.mutex);
  CallSite here{"hrt_resize_end_iteration",
                s.online ? s.online->group : nullptr,
                kRecordFields * sizeof(double)};
  if (!s.online || !changed)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "needs hrt_resize_configure_online first and a flag to set");
  *changed = 0;
  OnlinePlanner &planner = *s.online;
  int size = 0, rank = 0;
  if (hrt_status status = hrt_comm_size(planner.group, &size))
    return status;
  if (hrt_status status = hrt_comm_rank(planner.group, &rank))
    return status;
  // This iteration's times, as if nothing had been pruned.
  double wallMs = (hrt_wtime() - s.iterationStart) * 1e3;
  double blockedMs = (communicationSeconds() - s.communicationAtStart) * 1e3;
  double pruned = s.columnsAsked > 0
                      ? 1.0 - double(s.columnsKept) / double(s.columnsAsked)
                      : 0.0;
  hetero::resize::RankTimes times = hetero::resize::unprunedEquivalent(
      {std::max(0.0, wallMs - blockedMs), s.gemmSeconds * 1e3}, pruned);
  bool refresh = !planner.monitor || planner.monitor->observe(times.busyMs);
  double record[kRecordFields] = {times.busyMs, times.gemmMs,
                                  refresh ? 1.0 : 0.0};
  std::vector<double> records(static_cast<size_t>(size) * kRecordFields);
  lock.unlock();
  if (hrt_status status = hrt_all_gather(record, records.data(), kRecordFields,
                                         HRT_FLOAT64, planner.group))
    return status;
  lock.lock();
  std::vector<double> busy(static_cast<size_t>(size)),
      gemm(static_cast<size_t>(size));
  bool anyRefresh = false;
  for (int r = 0; r < size; ++r) {
    busy[size_t(r)] = records[size_t(r) * kRecordFields + kBusyMs];
    gemm[size_t(r)] = records[size_t(r) * kRecordFields + kGemmMs];
    anyRefresh |= records[size_t(r) * kRecordFields + kRefresh] != 0.0;
  }
  // T_ref stays until some rank's busy time moved by more than 10%; then
  // every rank takes the new times as its reference.
  if (anyRefresh) {
    planner.monitor.emplace(times.busyMs, 0.10, /*symmetric=*/true);
    std::vector<double> planned =
        hetero::resize::pruningRatios(busy, gemm, planner.target);
    *changed = planned != planner.ratios;
    planner.ratios = std::move(planned);
    s.ratio = planner.ratios[size_t(rank)];
  }
  for (int r = 0; r < std::min(size, capacity); ++r)
    ratios[r] = planner.ratios[size_t(r)];
  return HRT_SUCCESS;
}

extern "C" void hrt_mlir_gemm_mark(int event) {
  ResizeState &s = resize();
  std::lock_guard<std::mutex> lock(s.mutex);
  double now = hrt_wtime();
  if (event == 0) {
    s.gemmStart = now;
    return;
  }
  if (s.gemmStart < 0)
    return;
  // A slower device runs the same GEMM `slowdown` times as long. Sleeps
  // shorter than a millisecond would overshoot, so they add up first.
  if (!s.slowdown) {
    auto found = s.slowdowns.find(worldRank());
    s.slowdown = found == s.slowdowns.end() ? 1.0 : found->second;
  }
  s.owedSeconds += (*s.slowdown - 1.0) * (now - s.gemmStart);
  if (s.owedSeconds >= 1e-3) {
    std::this_thread::sleep_for(std::chrono::duration<double>(s.owedSeconds));
    double after = hrt_wtime();
    s.owedSeconds -= after - now;
    now = after;
  }
  s.gemmSeconds += now - s.gemmStart;
  s.gemmStart = -1;
}

namespace hetero::rt {

hrt_status configureSlowGemmFromEnvironment(const CallSite &site) {
  ResizeState &s = ::resize();
  s.slowdowns.clear();
  s.slowdown.reset();
  s.owedSeconds = 0;
  const char *text = std::getenv("HETERO_RT_SLOW_GEMM");
  if (!text || !*text)
    return HRT_SUCCESS;
  std::string value(text);
  size_t start = 0;
  while (start <= value.size()) {
    size_t end = value.find(',', start);
    std::string item =
        value.substr(start, end == std::string::npos ? end : end - start);
    char *rest = nullptr;
    long who = std::strtol(item.c_str(), &rest, 10);
    double factor = 0;
    bool valid = rest != item.c_str() && *rest == ':' && who >= 0;
    if (valid) {
      const char *number = rest + 1;
      factor = std::strtod(number, &rest);
      valid = rest != number && *rest == '\0' && std::isfinite(factor) &&
              factor >= 1.0;
    }
    if (!valid)
      return fail(HRT_ERROR_INVALID_ARGUMENT, site,
                  "HETERO_RT_SLOW_GEMM='" + value +
                      "' is not '<rank>:<slowdown >= 1>[,<rank>:<slowdown>]'");
    s.slowdowns[who] = factor;
    if (end == std::string::npos)
      break;
    start = end + 1;
  }
  return HRT_SUCCESS;
}

} // namespace hetero::rt

extern "C" long long hrt_mlir_prune_plan(unsigned long long layer,
                                         long long columns, long long *kept) {
  ResizeState &s = resize();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (columns <= 0)
    return 0;
  if (!prunes(s)) {
    for (long long j = 0; j < columns; ++j)
      kept[j] = j;
    s.columnsAsked += columns;
    s.columnsKept += columns;
    return columns;
  }
  s.columnsAsked += columns;
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
  s.columnsKept += (long long)plan.kept.size();
  return (long long)plan.kept.size();
}
