//===- Priority.cpp - which columns a straggler prunes --------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Resize/Priority.h"

#include "hetero/Support/Hash.h"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace hetero::resize;

std::vector<double>
hetero::resize::columnChange(const std::vector<float> &now,
                             const std::vector<float> &snapshot, int64_t rows,
                             int64_t columns) {
  std::vector<double> change(size_t(std::max<int64_t>(columns, 0)), 0.0);
  if (rows <= 0)
    return change;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < columns; ++j) {
      size_t at = size_t(i * columns + j);
      change[size_t(j)] += std::fabs(double(now[at]) - double(snapshot[at]));
    }
  for (double &c : change)
    c /= double(rows);
  return change;
}

std::vector<int64_t>
hetero::resize::priorityOrder(const std::vector<double> &variation) {
  std::vector<int64_t> order(variation.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return variation[size_t(a)] > variation[size_t(b)];
  });
  return order;
}

/// The next draw of a SplitMix64 sequence at `state`: a fixed generator, so
/// that every rank and every standard library draws the same permutation.
static uint64_t next(uint64_t &state) {
  uint64_t value = hetero::splitMix64(state);
  state += 0x9E3779B97F4A7C15ULL;
  return value;
}

std::vector<int64_t> hetero::resize::randomOrder(int64_t columns,
                                                 uint64_t seed) {
  std::vector<int64_t> order(size_t(std::max<int64_t>(columns, 0)));
  std::iota(order.begin(), order.end(), 0);
  uint64_t state = seed;
  for (size_t i = order.size(); i > 1; --i)
    std::swap(order[i - 1], order[next(state) % i]);
  return order;
}

uint64_t hetero::resize::randomSeed(uint64_t globalSeed, uint64_t layer,
                                    uint64_t epoch) {
  uint64_t state = globalSeed;
  uint64_t mixed = next(state) ^ layer;
  state = mixed;
  mixed = next(state) ^ epoch;
  state = mixed;
  return next(state);
}

std::vector<int64_t>
hetero::resize::keptColumns(const std::vector<int64_t> &order, double ratio) {
  return splitColumns(order, ratio, 0).kept;
}

ColumnSplit hetero::resize::splitColumns(const std::vector<int64_t> &order,
                                         double pruneRatio,
                                         double migrateRatio) {
  auto columns = int64_t(order.size());
  int64_t pruned = prunedColumns(columns, pruneRatio);
  int64_t migrated = 0;
  if (migrateRatio > 0)
    migrated =
        std::min(int64_t(std::floor(
                     std::min(migrateRatio, 1.0) * double(columns) + 1e-9)),
                 std::max<int64_t>(columns - pruned - 1, 0));
  int64_t kept = columns - pruned - migrated;
  ColumnSplit split;
  split.kept.assign(order.begin(), order.begin() + kept);
  split.migrated.assign(order.begin() + kept, order.begin() + kept + migrated);
  std::sort(split.kept.begin(), split.kept.end());
  std::sort(split.migrated.begin(), split.migrated.end());
  return split;
}

std::vector<int64_t> hetero::resize::prunedSet(const std::vector<int64_t> &kept,
                                               int64_t columns) {
  std::vector<int64_t> pruned;
  size_t next = 0;
  for (int64_t j = 0; j < columns; ++j) {
    if (next < kept.size() && kept[next] == j) {
      ++next;
      continue;
    }
    pruned.push_back(j);
  }
  return pruned;
}

double hetero::resize::layerRatio(const std::vector<double> &variation,
                                  double ratio, double threshold, double gamma,
                                  double maxRatio) {
  if (variation.empty())
    return 0;
  auto candidates = std::count_if(variation.begin(), variation.end(),
                                  [&](double v) { return v < threshold; });
  double share = double(candidates) / double(variation.size());
  return std::min(maxRatio, std::max(ratio, gamma * share));
}

ColumnPriority::ColumnPriority(int64_t columns, double prunedShare)
    : stats(size_t(std::max<int64_t>(columns, 0)), 1.0),
      ranking(priorityOrder(stats)), prunedIterations(stats.size(), 0),
      prunedShare(prunedShare) {}

void ColumnPriority::recordIteration(const std::vector<int64_t> &pruned) {
  ++iterations;
  for (int64_t j : pruned)
    if (j >= 0 && j < columns())
      ++prunedIterations[size_t(j)];
}

const std::vector<int64_t> &
ColumnPriority::endEpoch(const std::vector<double> &change) {
  for (size_t j = 0; j < stats.size() && j < change.size(); ++j) {
    bool pruned = iterations > 0 && double(prunedIterations[j]) >=
                                        prunedShare * double(iterations);
    if (!pruned)
      stats[j] = change[j];
  }
  ranking = priorityOrder(stats);
  std::fill(prunedIterations.begin(), prunedIterations.end(), 0);
  iterations = 0;
  return ranking;
}
