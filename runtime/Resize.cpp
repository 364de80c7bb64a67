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
// ZERO-Pri ranks a layer's columns instead by how much the weight rows
// that multiply them changed over the last epoch (hetero.observe_weight
// shows the weight), keeping the statistics of the columns this rank
// pruned; PriDiff prunes more of layers whose columns hardly moved.
//
// With migration (hetero-partition-tp{migration=true}), a straggler also
// hands columns of its shard to the other ranks of its group: the columns
// of the same draw just before the pruned ones (lib/Resize/Priority.h
// splitColumns), split over the receivers in virtual rank order
// (lib/Resize/Migration.h), answered to hetero.migration_plan. Every rank
// knows every rank's shares, so all of them compute the same split. SEMI
// plans both shares by Algorithm 2' (lib/Resize/Semi.h), with Eq. 2's
// extraction cost fitted to samples the ranks exchange with their times.
//
//===----------------------------------------------------------------------===//

#include "Runtime.h"

#include "hetero/Resize/Migration.h"
#include "hetero/Resize/Priority.h"
#include "hetero/Resize/Ratio.h"
#include "hetero/Resize/Semi.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace {

struct Plan {
  long long iteration = -1;
  std::vector<int64_t> kept;
  long long migrated = 0;
};

/// A layer's columns that one rank of the group migrates this iteration.
struct Migrated {
  long long iteration = -1;
  std::vector<int64_t> columns;
};

/// The tensor-parallel group whose ranks migrate columns to each other:
/// every rank's shares (group rank order), fixed or planned online.
struct MigrationGroup {
  hrt_comm group = nullptr;
  int rank = 0;
  std::vector<double> prune, migrate;
  /// Per (layer, columns, source rank).
  std::map<std::tuple<unsigned long long, long long, int>, Migrated> plans;
};

/// The online planner's group and what it decided last.
struct OnlinePlanner {
  hrt_comm group = nullptr;
  hetero::resize::Target target = hetero::resize::Target::Min;
  /// Pruning alone (ZERO), migration alone (MIG) or both (SEMI) for the
  /// stragglers.
  int policy = HRT_RESIZE_PRUNE;
  /// SEMI's history of the extraction cost of pruning, from every rank of
  /// the group alike: (pruned share, GEMM time beyond the kept share of the
  /// unpruned GEMM), the last kExtractionSamples.
  std::deque<std::pair<double, double>> extraction;
  /// SEMI's history of the group's communication per iteration (the least
  /// time any rank was blocked in it, which excludes waiting for a slower
  /// rank): (share migrated in the group, ms) of iterations that migrated,
  /// and the ms of those that did not, the last kExtractionSamples each.
  std::deque<std::pair<double, double>> migratingCommunication;
  std::deque<double> stillCommunication;
  /// This rank's GEMM time of its last iteration that pruned nothing.
  double unprunedGemmMs = 0;
  /// Watches this rank's unpruned-equivalent busy time since the last
  /// refresh of T_ref; none before the first.
  std::optional<hetero::resize::RefreshMonitor> monitor;
  /// The pruned and migrated share of each rank of the group, in force
  /// since the last refresh.
  std::vector<double> ratios, migrated;
  /// Whether the iteration in progress is one of the pre-test's.
  bool pretest = false;
};

/// ZERO-Pri's statistics of one layer on this rank: the copies of its
/// forward weight (transposed to N x K, one column per contraction column)
/// at the last epoch boundary and at the last iteration of the epoch since,
/// and the iterations they were taken in.
struct LayerStatistics {
  explicit LayerStatistics(int64_t columns) : priority(columns) {}
  hetero::resize::ColumnPriority priority;
  std::vector<float> snapshot, latest;
  long long snapshotIteration = -1, latestIteration = -1;
  /// Whether an epoch's change has ranked the columns yet.
  bool ranked = false;
};

/// ZERO-Pri and PriDiff: per (layer, columns), and PriDiff's epsilon (0:
/// ZERO-Pri alone).
struct PriorityState {
  double epsilon = 0;
  std::map<std::pair<unsigned long long, long long>, LayerStatistics> layers;
  /// With migration: every rank of the group's column statistics of each
  /// layer (empty before the rank first ranked it), exchanged when an epoch
  /// starts, so that a receiver splits a source's columns as it does.
  std::map<std::pair<unsigned long long, long long>,
           std::vector<std::vector<double>>>
      peers;
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
  std::optional<MigrationGroup> migration;
  std::optional<PriorityState> priority;
  /// Same imputation: per (layer, product), the values kept in the order of
  /// the last iteration (hrt_mlir_keep_product), and how many of this
  /// iteration's have replaced them so far.
  struct KeptProducts {
    std::vector<std::vector<unsigned char>> values;
    size_t keptThisIteration = 0;
  };
  std::map<std::pair<unsigned long long, long long>, KeptProducts> kept;
  /// The iteration so far: its start, the communication time then, the
  /// resized GEMMs' time, the time of GEMMs run for other ranks' migrated
  /// columns and the columns asked for and kept.
  double iterationStart = 0, communicationAtStart = 0;
  double gemmStart = -1, gemmSeconds = 0;
  double migratedStart = -1, migratedSeconds = 0;
  long long columnsAsked = 0, columnsKept = 0;
  /// Since the configuration: every hrt_mlir_prune_plan's columns asked,
  /// kept and migrated, and the GEMMs run for other ranks' columns.
  hrt_resize_stats totals{};
  /// HETERO_RT_SLOW_GEMM: the slowdown of each rank named and this rank's
  /// (once its rank is known).
  std::map<long, double> slowdowns;
  std::optional<hetero::rt::Slowdown> slowdown;
};

ResizeState &resize() {
  static ResizeState state;
  return state;
}

/// Whether the configuration names this rank (an empty mask names all).
bool named(unsigned long long ranks) {
  if (ranks == 0)
    return true;
  int rank = hetero::rt::worldRank();
  return rank < 64 && ((ranks >> rank) & 1);
}

/// The share of its columns this rank prunes.
double pruneShare(const ResizeState &s) {
  return s.ratio > 0 && named(s.ranks) ? s.ratio : 0.0;
}

/// The share of its columns this rank migrates.
double migrateShare(const ResizeState &s) {
  if (!s.migration)
    return 0;
  return s.migration->migrate[size_t(s.migration->rank)];
}

/// The epoch of `iteration`.
long long epochOf(const ResizeState &s, long long iteration) {
  return s.epochIterations > 0 ? iteration / s.epochIterations : 0;
}

/// ZERO-Rd's order of a layer's columns this epoch, the same on every rank.
std::vector<int64_t> columnOrder(const ResizeState &s, unsigned long long layer,
                                 long long columns) {
  return hetero::resize::randomOrder(
      columns, hetero::resize::randomSeed(
                   s.seed, layer, (unsigned long long)epochOf(s, s.iteration)));
}

/// Ranks a layer's columns anew when an epoch ended since the last ranking:
/// the change of each weight row between the copies taken at the two
/// epochs' last iterations (lib/Resize/Priority.h keeps the statistics of
/// the columns this rank pruned).
void rankAtEpochBoundary(ResizeState &s, LayerStatistics &layer) {
  if (layer.latestIteration <= layer.snapshotIteration ||
      epochOf(s, layer.latestIteration) >= epochOf(s, s.iteration))
    return;
  int64_t columns = layer.priority.columns();
  int64_t rows = columns > 0 ? int64_t(layer.latest.size()) / columns : 0;
  layer.priority.endEpoch(hetero::resize::columnChange(
      layer.latest, layer.snapshot, rows, columns));
  layer.snapshot.swap(layer.latest);
  layer.snapshotIteration = layer.latestIteration;
  layer.ranked = true;
  ++s.totals.rankings;
}

/// How a rank splits a layer's columns this iteration: by its priority
/// statistics `variation` once ranked (ZERO-Pri; PriDiff also prunes more
/// of a layer whose columns hardly moved), else by ZERO-Rd's draw. A
/// source and the receivers of its migrated columns call this alike.
hetero::resize::ColumnSplit
splitFor(const ResizeState &s, unsigned long long layer, long long columns,
         const std::vector<double> *variation, double prune, double migrate) {
  if (!variation || variation->empty())
    return hetero::resize::splitColumns(columnOrder(s, layer, columns), prune,
                                        migrate);
  if (prune > 0 && s.priority->epsilon > 0)
    prune = hetero::resize::layerRatio(
        *variation, prune, double(s.epochIterations) * s.priority->epsilon);
  return hetero::resize::splitColumns(hetero::resize::priorityOrder(*variation),
                                      prune, migrate);
}

/// Rank `rank`'s exchanged statistics of a layer; none without priority
/// pruning or before its first ranking.
const std::vector<double> *peerStatistics(const ResizeState &s,
                                          unsigned long long layer,
                                          long long columns, int rank) {
  if (!s.priority)
    return nullptr;
  auto found = s.priority->peers.find({layer, columns});
  if (found == s.priority->peers.end() || size_t(rank) >= found->second.size())
    return nullptr;
  return &found->second[size_t(rank)];
}

/// Ranks every layer whose epoch ended and hands each rank of the
/// migration group every rank's statistics. Collective over the group; the
/// lock is released while it communicates.
hrt_status exchangePriorities(ResizeState &s,
                              std::unique_lock<std::mutex> &lock) {
  MigrationGroup &group = *s.migration;
  PriorityState &priority = *s.priority;
  // One record per layer: its key, its width, then its statistics (all
  // ones before the first ranking, sent as width 0).
  std::vector<double> mine;
  for (auto &[key, layer] : priority.layers) {
    rankAtEpochBoundary(s, layer);
    const std::vector<double> &variation = layer.priority.variation();
    mine.push_back(double(key.first >> 32));
    mine.push_back(double(key.first & 0xffffffffULL));
    mine.push_back(double(key.second));
    mine.push_back(layer.ranked ? double(variation.size()) : 0.0);
    if (layer.ranked)
      mine.insert(mine.end(), variation.begin(), variation.end());
  }
  hrt_comm comm = group.group;
  int size = 0;
  if (hrt_status status = hrt_comm_size(comm, &size))
    return status;
  hetero::rt::CallSite here{"hrt_resize_begin_iteration", comm, sizeof(double)};
  double length = double(mine.size());
  std::vector<double> lengths(static_cast<size_t>(size));
  lock.unlock();
  hrt_status status =
      hrt_all_gather(&length, lengths.data(), 1, HRT_FLOAT64, comm);
  lock.lock();
  if (status)
    return status;
  for (double other : lengths)
    if (other != length)
      return hetero::rt::fail(
          HRT_ERROR_INVALID_ARGUMENT, here,
          "the ranks of the migration group observed different "
          "weights (" +
              std::to_string((long long)length) + " and " +
              std::to_string((long long)other) +
              " values of statistics); expected the same layers on "
              "every rank");
  std::vector<double> all(mine.size() * size_t(size));
  lock.unlock();
  if (!mine.empty())
    status = hrt_all_gather(mine.data(), all.data(), (int)mine.size(),
                            HRT_FLOAT64, comm);
  lock.lock();
  if (status)
    return status;
  priority.peers.clear();
  for (int r = 0; r < size; ++r) {
    const double *from = all.data() + mine.size() * size_t(r);
    size_t at = 0;
    for (const auto &entry : priority.layers) {
      const auto &key = entry.first;
      auto high = (unsigned long long)from[at],
           low = (unsigned long long)from[at + 1];
      if (((high << 32) | low) != key.first ||
          (long long)from[at + 2] != key.second)
        return hetero::rt::fail(
            HRT_ERROR_INVALID_ARGUMENT, here,
            "rank " + std::to_string(r) +
                " of the migration group observed other layers; "
                "expected the same layers on every rank");
      auto width = size_t(from[at + 3]);
      at += 4;
      std::vector<std::vector<double>> &ranks = priority.peers[key];
      ranks.resize(size_t(size));
      ranks[size_t(r)].assign(from + at, from + at + width);
      at += width;
    }
  }
  return HRT_SUCCESS;
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
  s.kept.clear();
  s.online.reset();
  s.migration.reset();
  s.priority.reset();
  s.totals = hrt_resize_stats{};
  return HRT_SUCCESS;
}

extern "C" hrt_status hrt_resize_configure_migration(hrt_comm group,
                                                     double ratio,
                                                     unsigned long long ranks) {
  CallSite here{"hrt_resize_configure_migration", group, 2 * sizeof(double)};
  if (!group || !std::isfinite(ratio) || ratio < 0 || ratio >= 1)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "needs a group and a migrated share in [0, 1), got " +
                    std::to_string(ratio));
  ResizeState &s = resize();
  int size = 0, rank = 0;
  if (hrt_status status = hrt_comm_size(group, &size))
    return status;
  if (hrt_status status = hrt_comm_rank(group, &rank))
    return status;
  double mine[2];
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.online)
      return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                  "the online planner sets the migrated shares itself");
    mine[0] = pruneShare(s);
    mine[1] = ratio > 0 && named(ranks) ? ratio : 0.0;
  }
  std::vector<double> shares(size_t(size) * 2);
  if (hrt_status status =
          hrt_all_gather(mine, shares.data(), 2, HRT_FLOAT64, group))
    return status;
  MigrationGroup migration;
  migration.group = group;
  migration.rank = rank;
  int receivers = 0;
  for (int r = 0; r < size; ++r) {
    migration.prune.push_back(shares[size_t(r) * 2]);
    migration.migrate.push_back(shares[size_t(r) * 2 + 1]);
    receivers += migration.migrate.back() > 0 ? 0 : 1;
  }
  if (receivers == 0)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "every rank of the group of " + std::to_string(size) +
                    " would migrate; expected some rank to receive");
  std::lock_guard<std::mutex> lock(s.mutex);
  s.migration = std::move(migration);
  return HRT_SUCCESS;
}

extern "C" hrt_status hrt_resize_configure_online(hrt_comm group, int target,
                                                  int policy,
                                                  long long epoch_iterations,
                                                  unsigned long long seed) {
  CallSite here{"hrt_resize_configure_online", group, 0};
  if (!group || (target != 0 && target != 1) ||
      (policy != HRT_RESIZE_PRUNE && policy != HRT_RESIZE_MIGRATE &&
       policy != HRT_RESIZE_SEMI))
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "needs a group, target 0 (mean) or 1 (min) and policy "
                "HRT_RESIZE_PRUNE, HRT_RESIZE_MIGRATE or HRT_RESIZE_SEMI");
  if (policy != HRT_RESIZE_PRUNE && target != 1)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "migration balances the stragglers against the fastest rank; "
                "expected target 1 (min)");
  int size = 0, rank = 0;
  if (hrt_status status = hrt_comm_size(group, &size))
    return status;
  if (hrt_status status = hrt_comm_rank(group, &rank))
    return status;
  if (hrt_status status = hrt_resize_configure(0, 0, epoch_iterations, seed))
    return status;
  ResizeState &s = resize();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.online.emplace();
  s.online->group = group;
  s.online->target =
      target ? hetero::resize::Target::Min : hetero::resize::Target::Mean;
  s.online->policy = policy;
  if (policy != HRT_RESIZE_PRUNE) {
    s.migration.emplace();
    s.migration->group = group;
    s.migration->rank = rank;
    s.migration->prune.assign(size_t(size), 0.0);
    s.migration->migrate.assign(size_t(size), 0.0);
  }
  return HRT_SUCCESS;
}

extern "C" hrt_status hrt_resize_configure_priority(double epsilon) {
  CallSite here{"hrt_resize_configure_priority", nullptr, 0};
  ResizeState &s = resize();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!std::isfinite(epsilon) || epsilon < 0)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "epsilon must be a finite number >= 0, got " +
                    std::to_string(epsilon));
  if (s.epochIterations < 1)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "the columns are ranked by their change over an epoch; "
                "configure epoch_iterations >= 1 first");
  s.priority.emplace();
  s.priority->epsilon = epsilon;
  return HRT_SUCCESS;
}

extern "C" void hrt_mlir_observe_weight(unsigned long long layer,
                                        long long rows, long long columns,
                                        const float *data) {
  ResizeState &s = resize();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.priority || rows <= 0 || columns <= 0 || !data)
    return;
  LayerStatistics &statistics =
      s.priority->layers.try_emplace({layer, rows}, rows).first->second;
  // The copy at the first observation starts the first epoch; later, a
  // copy at the last iteration of each epoch (once per iteration).
  std::vector<float> *copy = nullptr;
  if (statistics.snapshotIteration < 0) {
    copy = &statistics.snapshot;
    statistics.snapshotIteration = s.iteration;
  } else if ((s.iteration + 1) % s.epochIterations == 0 &&
             statistics.latestIteration != s.iteration &&
             statistics.snapshotIteration != s.iteration) {
    copy = &statistics.latest;
    statistics.latestIteration = s.iteration;
  }
  if (!copy)
    return;
  // W is K x N (a row per contraction column); the statistics read N x K.
  copy->resize(size_t(rows * columns));
  for (long long k = 0; k < rows; ++k)
    for (long long n = 0; n < columns; ++n)
      (*copy)[size_t(n * rows + k)] = data[k * columns + n];
}

extern "C" void hrt_mlir_previous_product(unsigned long long layer,
                                          long long product, long long bytes,
                                          void *data) {
  ResizeState &s = resize();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (bytes <= 0 || !data)
    return;
  // After n keeps of this iteration, the question reads the (n+1)-th value
  // the last one kept: the one this iteration's next keep replaces.
  const std::vector<unsigned char> *value = nullptr;
  auto found = s.kept.find({layer, product});
  if (found != s.kept.end()) {
    const ResizeState::KeptProducts &kept = found->second;
    if (kept.keptThisIteration < kept.values.size() &&
        kept.values[kept.keptThisIteration].size() == size_t(bytes))
      value = &kept.values[kept.keptThisIteration];
  }
  if (value)
    std::memcpy(data, value->data(), size_t(bytes));
  else
    std::memset(data, 0, size_t(bytes));
}

extern "C" void hrt_mlir_keep_product(unsigned long long layer,
                                      long long product, long long bytes,
                                      const void *data) {
  ResizeState &s = resize();
  std::lock_guard<std::mutex> lock(s.mutex);
  // Nothing reads the values of a rank that never prunes.
  if (bytes <= 0 || !data || !(pruneShare(s) > 0 || s.online))
    return;
  ResizeState::KeptProducts &kept = s.kept[{layer, product}];
  if (kept.keptThisIteration == kept.values.size())
    kept.values.emplace_back();
  std::vector<unsigned char> &value = kept.values[kept.keptThisIteration++];
  const auto *begin = static_cast<const unsigned char *>(data);
  value.assign(begin, begin + bytes);
}

extern "C" hrt_status hrt_resize_begin_iteration(long long iteration) {
  ResizeState &s = resize();
  std::unique_lock<std::mutex> lock(s.mutex);
  // What the last iteration kept is what this one's questions read.
  for (auto &[key, kept] : s.kept) {
    kept.values.resize(kept.keptThisIteration);
    kept.keptThisIteration = 0;
  }
  s.iteration = iteration;
  s.iterationStart = hrt_wtime();
  s.communicationAtStart = communicationSeconds();
  s.gemmSeconds = 0;
  s.migratedSeconds = 0;
  s.columnsAsked = s.columnsKept = 0;
  // A receiver splits a source's columns by the source's statistics, so
  // when an epoch starts the group ranks its layers and shares them.
  if (s.priority && s.migration && s.epochIterations > 0 &&
      iteration % s.epochIterations == 0)
    return exchangePriorities(s, lock);
  return HRT_SUCCESS;
}

/// A rank straggles when its busy time exceeds T_ref by more than this
/// share: measured times jitter by a few percent, and pruning that jitter
/// costs accuracy, migrating it back and forth more than it balances.
constexpr double kNoiseGuard = 0.05;

/// What one rank tells its group at an iteration boundary: its
/// unpruned-equivalent busy and GEMM times, whether its busy time moved,
/// and (NaN when it pruned nothing) its pruned share and the extraction
/// cost it measured at that share, and its time blocked in communication.
enum RecordField {
  kBusyMs,
  kGemmMs,
  kRefresh,
  kPrunedShare,
  kExtractMs,
  kCommunicationMs,
  kRecordFields
};

/// SEMI fits Eq. 2's extraction cost to at most this many recent samples
/// (shared/seeds/000-zero-resizing.md 2.9).
constexpr size_t kExtractionSamples = 50;

/// SEMI's extraction cost from the group's history (spec 2.9): the cost E
/// of a pruned share, a least-squares line through the samples and the
/// origin (nothing pruned, nothing extracted; 0 until a rank has pruned).
static hetero::resize::CostFunction
extractionCost(const std::deque<std::pair<double, double>> &samples) {
  std::vector<double> x = {0.0}, y = {0.0};
  for (const auto &[share, ms] : samples) {
    x.push_back(share);
    y.push_back(ms);
  }
  if (!hetero::resize::CostFit::check(x, y, 1).empty())
    return [](double) { return 0.0; };
  hetero::resize::CostFit fit = hetero::resize::CostFit::fit(x, y, 1);
  return [fit](double share) { return fit(share); };
}

static hetero::resize::SemiCosts semiCosts(const OnlinePlanner &planner) {
  hetero::resize::SemiCosts costs;
  // Comm: the receivers' partial products return through the layer's own
  // collective (summed products) or an all-reduce in place of its
  // all-gather (gathered products); what that adds is measured.
  costs.communicate = hetero::resize::communicationCost(
      {planner.migratingCommunication.begin(),
       planner.migratingCommunication.end()},
      {planner.stillCommunication.begin(), planner.stillCommunication.end()});
  costs.extract = extractionCost(planner.extraction);
  return costs;
}

extern "C" hrt_status hrt_resize_end_iteration(double *ratios, double *migrated,
                                               int capacity, int *changed) {
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
  // This iteration's times, as if nothing had been pruned or migrated:
  // the GEMMs run for other ranks' columns are not this rank's own work.
  double wallMs = (hrt_wtime() - s.iterationStart) * 1e3;
  double communicationMs =
      (communicationSeconds() - s.communicationAtStart) * 1e3;
  double blockedMs = communicationMs + s.migratedSeconds * 1e3;
  double pruned = s.columnsAsked > 0
                      ? 1.0 - double(s.columnsKept) / double(s.columnsAsked)
                      : 0.0;
  double busyMs = std::max(0.0, wallMs - blockedMs);
  double gemmMs = s.gemmSeconds * 1e3;
  // SEMI's extraction cost: the GEMM time beyond the kept share of the
  // last unpruned GEMM time. The other policies send NaN in its place.
  double prunedShare = std::nan(""), extractMs = std::nan("");
  bool semi = planner.policy == HRT_RESIZE_SEMI;
  if (semi && pruned > 0 && planner.unprunedGemmMs > 0) {
    prunedShare = pruned;
    extractMs = gemmMs - (1.0 - pruned) * planner.unprunedGemmMs;
  } else if (semi && !(pruned > 0) && gemmMs > 0) {
    planner.unprunedGemmMs = gemmMs;
  }
  hetero::resize::RankTimes times =
      hetero::resize::unprunedEquivalent({busyMs, gemmMs}, pruned);
  // A pre-test iteration's times are no reference for training.
  bool refresh = !planner.pretest &&
                 (!planner.monitor || planner.monitor->observe(times.busyMs));
  double record[kRecordFields] = {times.busyMs,        times.gemmMs,
                                  refresh ? 1.0 : 0.0, prunedShare,
                                  extractMs,           communicationMs};
  std::vector<double> records(static_cast<size_t>(size) * kRecordFields);
  lock.unlock();
  if (hrt_status status = hrt_all_gather(record, records.data(), kRecordFields,
                                         HRT_FLOAT64, planner.group))
    return status;
  lock.lock();
  std::vector<double> busy(static_cast<size_t>(size)),
      gemm(static_cast<size_t>(size));
  bool anyRefresh = false, firstCosts = planner.extraction.empty();
  double leastCommunicationMs = records[kCommunicationMs];
  for (int r = 0; r < size; ++r) {
    const double *from = &records[size_t(r) * kRecordFields];
    leastCommunicationMs =
        std::min(leastCommunicationMs, from[kCommunicationMs]);
    busy[size_t(r)] = from[kBusyMs];
    gemm[size_t(r)] = from[kGemmMs];
    anyRefresh |= from[kRefresh] != 0.0;
    if (std::isfinite(from[kPrunedShare]) && std::isfinite(from[kExtractMs]))
      planner.extraction.emplace_back(from[kPrunedShare], from[kExtractMs]);
  }
  while (planner.extraction.size() > kExtractionSamples)
    planner.extraction.pop_front();
  // The iteration ran the migrated shares planned before it.
  double migratedInForce = 0;
  for (double share : planner.migrated)
    migratedInForce += share;
  bool firstMigration = false;
  if (semi && migratedInForce > 0) {
    firstMigration = planner.migratingCommunication.empty();
    planner.migratingCommunication.emplace_back(migratedInForce,
                                                leastCommunicationMs);
    if (planner.migratingCommunication.size() > kExtractionSamples)
      planner.migratingCommunication.pop_front();
  } else if (semi) {
    planner.stillCommunication.push_back(leastCommunicationMs);
    if (planner.stillCommunication.size() > kExtractionSamples)
      planner.stillCommunication.pop_front();
  }
  // T_ref stays until some rank's busy time moved by more than 10%; then
  // every rank takes the new times as its reference. SEMI also re-plans
  // when its first extraction cost and its first migration's communication
  // arrive, and at epoch boundaries, where the history has grown.
  bool epochEnds =
      s.epochIterations > 0 && (s.iteration + 1) % s.epochIterations == 0;
  bool newCosts = semi && ((firstCosts && !planner.extraction.empty()) ||
                           firstMigration || epochEnds);
  if (planner.pretest) {
    // The samples are all a pre-test iteration leaves; training starts
    // with no shares.
    planner.pretest = false;
    planner.ratios.assign(size_t(size), 0.0);
    planner.migrated.assign(size_t(size), 0.0);
    s.ratio = 0;
    if (s.migration) {
      s.migration->prune = planner.ratios;
      s.migration->migrate = planner.migrated;
    }
  } else if (anyRefresh || newCosts) {
    if (anyRefresh)
      planner.monitor.emplace(times.busyMs, 0.10, /*symmetric=*/true);
    std::vector<double> pruned, moved(size_t(size), 0.0);
    if (planner.policy != HRT_RESIZE_PRUNE) {
      std::vector<hetero::resize::RankLoad> loads;
      for (int r = 0; r < size; ++r)
        loads.push_back({busy[size_t(r)], gemm[size_t(r)], 1.0});
      hetero::resize::SemiOptions options;
      options.noiseGuard = kNoiseGuard;
      std::vector<hetero::resize::RankPlan> plans =
          planner.policy == HRT_RESIZE_MIGRATE
              ? hetero::resize::migrationPlan(loads, kNoiseGuard)
              : hetero::resize::semiPlan(loads, semiCosts(planner), options);
      for (const hetero::resize::RankPlan &plan : plans)
        pruned.push_back(plan.prune);
      for (int r = 0; r < size; ++r)
        moved[size_t(r)] = plans[size_t(r)].migrate;
    } else {
      pruned = hetero::resize::pruningRatios(busy, gemm, planner.target,
                                             hetero::resize::kDefaultMaxRatio,
                                             kNoiseGuard);
    }
    *changed = pruned != planner.ratios || moved != planner.migrated;
    planner.ratios = std::move(pruned);
    planner.migrated = std::move(moved);
    s.ratio = planner.ratios[size_t(rank)];
    if (s.migration) {
      s.migration->prune = planner.ratios;
      s.migration->migrate = planner.migrated;
    }
  }
  for (int r = 0; r < std::min(size, capacity); ++r) {
    if (ratios)
      ratios[r] = planner.ratios[size_t(r)];
    if (migrated)
      migrated[r] =
          planner.migrated.empty() ? 0.0 : planner.migrated[size_t(r)];
  }
  return HRT_SUCCESS;
}

extern "C" hrt_status hrt_resize_pretest(int rank, double prune,
                                         double migrate) {
  ResizeState &s = resize();
  std::lock_guard<std::mutex> lock(s.mutex);
  CallSite here{"hrt_resize_pretest", s.online ? s.online->group : nullptr, 0};
  if (!s.online || s.online->policy != HRT_RESIZE_SEMI || !s.migration)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "the pre-test fits SEMI's costs; configure the online "
                "planner with HRT_RESIZE_SEMI first");
  int size = int(s.migration->migrate.size());
  bool everyRank = rank == -1;
  if (rank < -1 || rank >= size || !std::isfinite(prune) || prune < 0 ||
      !std::isfinite(migrate) || migrate < 0 || prune + migrate >= 1 ||
      (everyRank && migrate > 0))
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "needs a rank of the group of " + std::to_string(size) +
                    " (or -1: every rank prunes, none migrates) and shares "
                    ">= 0 with a sum below 1, got rank " +
                    std::to_string(rank) + ", prune " + std::to_string(prune) +
                    ", migrate " + std::to_string(migrate));
  OnlinePlanner &planner = *s.online;
  planner.pretest = true;
  planner.ratios.assign(size_t(size), everyRank ? prune : 0.0);
  planner.migrated.assign(size_t(size), 0.0);
  if (!everyRank) {
    planner.ratios[size_t(rank)] = prune;
    planner.migrated[size_t(rank)] = migrate;
  }
  s.migration->prune = planner.ratios;
  s.migration->migrate = planner.migrated;
  s.ratio = planner.ratios[size_t(s.migration->rank)];
  return HRT_SUCCESS;
}

extern "C" hrt_status hrt_resize_end_pretest(double share, double *extract_ms,
                                             double *communicate_ms) {
  ResizeState &s = resize();
  std::lock_guard<std::mutex> lock(s.mutex);
  CallSite here{"hrt_resize_end_pretest", nullptr, 0};
  if (!s.online || s.online->policy != HRT_RESIZE_SEMI)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "the pre-test fits SEMI's costs; configure the online "
                "planner with HRT_RESIZE_SEMI first");
  // What the pre-test's iterations planned and kept is not training's.
  s.plans.clear();
  s.kept.clear();
  if (s.migration)
    s.migration->plans.clear();
  if (s.priority) {
    s.priority->layers.clear();
    s.priority->peers.clear();
  }
  s.totals = hrt_resize_stats{};
  hetero::resize::SemiCosts costs = semiCosts(*s.online);
  if (extract_ms)
    *extract_ms = costs.extract(share);
  if (communicate_ms)
    *communicate_ms = costs.communicate(share);
  return HRT_SUCCESS;
}

extern "C" void hrt_mlir_gemm_mark(int event) {
  ResizeState &s = resize();
  std::lock_guard<std::mutex> lock(s.mutex);
  double now = hrt_wtime();
  // Events 0 and 1 bracket the rank's own GEMMs, 2 and 3 those it runs for
  // other ranks' migrated columns.
  bool own = event == HRT_GEMM_BEGIN || event == HRT_GEMM_END;
  double &start = own ? s.gemmStart : s.migratedStart;
  if (event == HRT_GEMM_BEGIN || event == HRT_GEMM_BEGIN_MIGRATED) {
    start = now;
    return;
  }
  if (start < 0)
    return;
  // A slower device runs the same GEMM `slowdown` times as long: that is
  // the GEMM's time, and the rank sleeps the difference. Sleeps shorter
  // than a millisecond would overshoot, so they add up first; a GEMM of
  // microseconds (in BLAS) is counted at its emulated time all the same,
  // not at whatever share of a pending sleep its iteration happened to pay.
  if (!s.slowdown) {
    auto found = s.slowdowns.find(worldRank());
    s.slowdown =
        hetero::rt::Slowdown{found == s.slowdowns.end() ? 1.0 : found->second};
  }
  double took = s.slowdown->pay(now - start);
  (own ? s.gemmSeconds : s.migratedSeconds) += took;
  if (!own)
    s.totals.migrated_gemm_seconds += took;
  start = -1;
}

namespace hetero::rt {

hrt_status configureSlowGemmFromEnvironment(const CallSite &site) {
  ResizeState &s = ::resize();
  s.slowdown.reset();
  return readRankFactors("HETERO_RT_SLOW_GEMM", site, s.slowdowns);
}

} // namespace hetero::rt

extern "C" long long hrt_mlir_prune_plan(unsigned long long layer,
                                         long long columns, long long *kept) {
  ResizeState &s = resize();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (columns <= 0)
    return 0;
  s.columnsAsked += columns;
  s.totals.columns_asked += columns;
  double prune = pruneShare(s), migrate = migrateShare(s);
  // Priority statistics count every iteration, pruned or not.
  if (!(prune > 0) && !(migrate > 0) && !s.priority) {
    for (long long j = 0; j < columns; ++j)
      kept[j] = j;
    s.columnsKept += columns;
    s.totals.columns_kept += columns;
    return columns;
  }
  Plan &plan = s.plans[{layer, columns}];
  if (plan.iteration != s.iteration) {
    plan.iteration = s.iteration;
    LayerStatistics *statistics = nullptr;
    if (s.priority) {
      auto found = s.priority->layers.find({layer, columns});
      if (found != s.priority->layers.end())
        statistics = &found->second;
    }
    if (statistics)
      rankAtEpochBoundary(s, *statistics);
    // ZERO-Pri once the layer's columns are ranked (ZERO-Rd before); with
    // PriDiff, a pruning rank prunes more of a layer whose columns hardly
    // moved over the last epoch.
    // With migration, the statistics the group exchanged, as the
    // receivers of this rank's columns read them.
    const std::vector<double> *variation =
        statistics && statistics->ranked ? &statistics->priority.variation()
                                         : nullptr;
    if (statistics && s.migration)
      variation = peerStatistics(s, layer, columns, s.migration->rank);
    hetero::resize::ColumnSplit split =
        splitFor(s, layer, columns, variation, prune, migrate);
    // The migrated columns are trained (by the receivers): only the rest
    // counts as pruned in the statistics.
    if (statistics) {
      std::vector<int64_t> computed = split.kept;
      computed.insert(computed.end(), split.migrated.begin(),
                      split.migrated.end());
      std::sort(computed.begin(), computed.end());
      statistics->priority.recordIteration(
          hetero::resize::prunedSet(computed, columns));
    }
    plan.kept = std::move(split.kept);
    plan.migrated = (long long)split.migrated.size();
  }
  for (size_t j = 0; j < plan.kept.size(); ++j)
    kept[j] = plan.kept[j];
  s.columnsKept += (long long)plan.kept.size();
  s.totals.columns_kept += (long long)plan.kept.size();
  s.totals.columns_migrated += plan.migrated;
  return (long long)plan.kept.size();
}

extern "C" hrt_status hrt_resize_get_stats(hrt_resize_stats *stats) {
  if (!stats)
    return fail(HRT_ERROR_INVALID_ARGUMENT,
                CallSite{"hrt_resize_get_stats", nullptr, 0},
                "needs a place for the statistics");
  ResizeState &s = resize();
  std::lock_guard<std::mutex> lock(s.mutex);
  *stats = s.totals;
  return HRT_SUCCESS;
}

namespace {

/// The columns shard `source` of the group migrates of `layer` this
/// iteration, as `source` computes them for hrt_mlir_prune_plan (the same
/// on every rank); null when it migrates none. Called under the lock.
const std::vector<int64_t> *migratedColumns(ResizeState &s,
                                            unsigned long long layer,
                                            long long columns,
                                            long long source) {
  if (!s.migration || columns <= 0 || source < 0 ||
      source >= (long long)s.migration->migrate.size())
    return nullptr;
  MigrationGroup &group = *s.migration;
  double share = group.migrate[size_t(source)];
  if (!(share > 0))
    return nullptr;
  Migrated &plan = group.plans[{layer, columns, int(source)}];
  if (plan.iteration != s.iteration) {
    plan.iteration = s.iteration;
    plan.columns = splitFor(s, layer, columns,
                            peerStatistics(s, layer, columns, int(source)),
                            group.prune[size_t(source)], share)
                       .migrated;
  }
  return plan.columns.empty() ? nullptr : &plan.columns;
}

/// This rank's block of the `count` columns `source` migrates: [begin,
/// end) in their list, empty for the source itself and for a rank that
/// migrates columns of its own.
hetero::resize::Block receivedBlock(const MigrationGroup &group,
                                    long long source, long long count) {
  std::vector<bool> migrating;
  for (double other : group.migrate)
    migrating.push_back(other > 0);
  if (source != group.rank)
    for (const hetero::resize::Block &block : hetero::resize::migrationBlocks(
             (int64_t)group.migrate.size(), source, count, migrating))
      if (block.rank == group.rank)
        return block;
  return hetero::resize::Block{group.rank, 0, 0};
}

} // namespace

extern "C" long long hrt_mlir_migration_plan(unsigned long long layer,
                                             long long columns,
                                             long long source,
                                             long long *received) {
  ResizeState &s = resize();
  std::lock_guard<std::mutex> lock(s.mutex);
  const std::vector<int64_t> *migrated =
      migratedColumns(s, layer, columns, source);
  if (!migrated)
    return -1;
  hetero::resize::Block block =
      receivedBlock(*s.migration, source, (long long)migrated->size());
  for (int64_t j = block.begin; j < block.end; ++j)
    received[j - block.begin] = (*migrated)[size_t(j)];
  return block.size();
}

extern "C" long long hrt_mlir_migrated_columns(unsigned long long layer,
                                               long long columns,
                                               long long source,
                                               long long *first,
                                               long long *migrated) {
  ResizeState &s = resize();
  std::lock_guard<std::mutex> lock(s.mutex);
  *first = 0;
  const std::vector<int64_t> *all = migratedColumns(s, layer, columns, source);
  if (!all)
    return 0;
  std::copy(all->begin(), all->end(), migrated);
  *first = receivedBlock(*s.migration, source, (long long)all->size()).begin;
  return (long long)all->size();
}
