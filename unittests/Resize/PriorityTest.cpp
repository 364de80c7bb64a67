//===- PriorityTest.cpp - priority pruning and PriDiff --------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Resize/Priority.h"
#include "hetero/Support/Hash.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

using namespace hetero::resize;

namespace {

using Columns = std::vector<int64_t>;

// I12: K = 8, alpha = 0.5, statistics all ones, nothing pruned in epoch 0.
TEST(Priority, FirstEpochTakesTheChanges) {
  ColumnPriority priority(8);
  std::vector<double> change = {.8, .1, .5, .3, .9, .2, .7, .4};
  for (int i = 0; i < 5; ++i)
    priority.recordIteration({});
  priority.endEpoch(change);
  EXPECT_EQ(priority.variation(), change);
  Columns kept = keptColumns(priority.order(), 0.5);
  EXPECT_EQ(kept, (Columns{0, 2, 4, 6}));
  EXPECT_EQ(prunedSet(kept, 8), (Columns{1, 3, 5, 7}));
}

// I13: the straggler prunes Q = {1,3,5,7} all epoch 1; their imputed-zero
// gradients leave them unchanged, but their statistics are kept, so the
// kept set flips. A full refresh would prune them again (the endless loop).
TEST(Priority, IncrementalUpdateRotates) {
  ColumnPriority priority(8);
  priority.endEpoch({.8, .1, .5, .3, .9, .2, .7, .4});
  Columns pruned = prunedSet(keptColumns(priority.order(), 0.5), 8);
  for (int i = 0; i < 10; ++i)
    priority.recordIteration(pruned);
  std::vector<double> change = {.05, 0, .06, 0, .07, 0, .04, 0};
  priority.endEpoch(change);
  EXPECT_EQ(priority.variation(),
            (std::vector<double>{.05, .1, .06, .3, .07, .2, .04, .4}));
  EXPECT_EQ(keptColumns(priority.order(), 0.5), (Columns{1, 3, 5, 7}));
  EXPECT_EQ(keptColumns(priorityOrder(change), 0.5), (Columns{0, 2, 4, 6}));
}

// A column counts as pruned only if the rank pruned it in at least half of
// the epoch's iterations; a rank that never pruned refreshes everything.
TEST(Priority, PrunedForLessThanHalfTheEpochIsRefreshed) {
  ColumnPriority priority(4);
  priority.recordIteration({0, 1});
  priority.recordIteration({0});
  priority.recordIteration({});
  priority.recordIteration({});
  priority.endEpoch({.5, .6, .7, .8});
  // Column 0: 2 of 4 iterations, kept at 1; column 1: 1 of 4, refreshed.
  EXPECT_EQ(priority.variation(), (std::vector<double>{1, .6, .7, .8}));
  priority.endEpoch({.1, .2, .3, .4});
  EXPECT_EQ(priority.variation(), (std::vector<double>{.1, .2, .3, .4}));
}

// I14: PriDiff with K = 10, alpha = 0.5, gamma = 0.8, theta = 1.
TEST(Priority, PriDiff) {
  std::vector<double> variation = {.1, .2, .3, .4, .5, .6, 2, 3, 4, 5};
  double ratio = layerRatio(variation, 0.5, 1.0);
  EXPECT_EQ(ratio, 0.5);
  EXPECT_EQ(keptColumns(priorityOrder(variation), ratio),
            (Columns{5, 6, 7, 8, 9}));
  std::vector<double> more = {.1, .2, .3, .4, .5, .6, .7, .8, .9, 5};
  double more_ratio = layerRatio(more, 0.5, 1.0);
  EXPECT_NEAR(more_ratio, 0.72, 1e-12);
  EXPECT_EQ(keptColumns(priorityOrder(more), more_ratio).size(), 3u);
  EXPECT_EQ(keptColumns(priorityOrder(more), more_ratio), (Columns{7, 8, 9}));
  // Never below Eq. 1's ratio, never above the maximum.
  EXPECT_EQ(layerRatio(variation, 0.9, 1.0), 0.9);
  EXPECT_EQ(layerRatio(std::vector<double>(10, 0.0), 0.5, 1.0, 2.0),
            kDefaultMaxRatio);
}

TEST(Priority, TiesGoToTheLowerIndex) {
  EXPECT_EQ(priorityOrder({1, 1, 2, 1}), (Columns{2, 0, 1, 3}));
}

TEST(Priority, RandomOrderIsASeededPermutation) {
  Columns order = randomOrder(64, 7);
  Columns sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t j = 0; j < 64; ++j)
    EXPECT_EQ(sorted[size_t(j)], j);
  EXPECT_EQ(order, randomOrder(64, 7));
  EXPECT_NE(order, randomOrder(64, 8));
  EXPECT_NE(randomSeed(1, 2, 3), randomSeed(1, 2, 4));
  EXPECT_NE(randomSeed(1, 2, 3), randomSeed(1, 3, 3));
  // A draw's kept columns are its prefix.
  Columns kept = keptColumns(order, 0.25);
  EXPECT_EQ(kept.size(), 48u);
  std::set<int64_t> prefix(order.begin(), order.begin() + 48);
  EXPECT_EQ(std::set<int64_t>(kept.begin(), kept.end()), prefix);
}

TEST(Priority, DrawsArePinned) {
  // What the runtime keeps of layer "l" (8 columns, ratio 0.5, hetero-run's
  // default seed 0) in its first two epochs: every rank and every run, and
  // a resumed one, must draw exactly these, so a change to the draw shows
  // here first.
  uint64_t layer = hetero::hashLayerKey("l", 1);
  EXPECT_EQ(keptColumns(randomOrder(8, randomSeed(0, layer, 0)), 0.5),
            (Columns{0, 2, 3, 7}));
  EXPECT_EQ(keptColumns(randomOrder(8, randomSeed(0, layer, 1)), 0.5),
            (Columns{1, 4, 5, 6}));
}

TEST(Priority, ColumnChangeIsTheMeanOverRows) {
  // 2 x 3, row-major.
  std::vector<float> now = {1, 2, 3, 4, 5, 6}, before = {0, 2, 5, 4, 1, 6};
  std::vector<double> change = columnChange(now, before, 2, 3);
  EXPECT_EQ(change, (std::vector<double>{0.5, 2.0, 1.0}));
}

} // namespace

// Pruning and migration drop disjoint suffixes of one order: the very tail
// is pruned, the columns before it migrate, and one column stays kept.
TEST(Priority, SplitColumnsPrunesTheTailAndMigratesBeforeIt) {
  Columns order = {5, 0, 7, 2, 6, 1, 3, 4};
  ColumnSplit split = splitColumns(order, 0.25, 0.5);
  EXPECT_EQ(split.kept, (Columns{0, 5}));
  EXPECT_EQ(split.migrated, (Columns{1, 2, 6, 7}));
  EXPECT_EQ(prunedSet(split.kept, 8), (Columns{1, 2, 3, 4, 6, 7}));

  ColumnSplit none = splitColumns(order, 0, 0);
  EXPECT_EQ(none.kept, (Columns{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_TRUE(none.migrated.empty());
  EXPECT_EQ(splitColumns(order, 0.5, 0).kept, keptColumns(order, 0.5));

  // Migrating all but one column leaves the first of the order.
  ColumnSplit most = splitColumns(order, 0, 31.0 / 32.0);
  EXPECT_EQ(most.kept, (Columns{5}));
  EXPECT_EQ(most.migrated.size(), 7u);
  ColumnSplit both = splitColumns(order, 0.5, 0.9);
  EXPECT_EQ(both.kept, (Columns{5}));
  EXPECT_EQ(both.migrated, (Columns{0, 2, 7}));
}
