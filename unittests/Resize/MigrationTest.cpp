//===- MigrationTest.cpp - renumbering and blocks -------------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Resize/Migration.h"

#include <gtest/gtest.h>

using namespace hetero::resize;

namespace {

// Fig. 4: n = 3, straggler task-1 (rank 0). Task-2: (2 + 3 - 1) % 3 = 1
// takes the first migrated column, task-3 the second.
TEST(Migration, FigureFour) {
  EXPECT_EQ(virtualRank(1, 3, 0), 1);
  EXPECT_EQ(virtualRank(2, 3, 0), 2);
  EXPECT_EQ(virtualRank(0, 3, 0), 0);
  std::vector<Block> blocks = migrationBlocks(3, 0, 2);
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].rank, 1);
  EXPECT_EQ(blocks[0].begin, 0);
  EXPECT_EQ(blocks[0].end, 1);
  EXPECT_EQ(blocks[1].rank, 2);
  EXPECT_EQ(blocks[1].begin, 1);
  EXPECT_EQ(blocks[1].end, 2);
}

// I11: for every n in [2, 64], s, c in [0, 256]: the blocks partition
// [0, c) in increasing virtual number, sizes differ by at most one (larger
// first), none for the straggler.
TEST(Migration, BlocksPartitionTheColumns) {
  for (int64_t n = 2; n <= 64; ++n)
    for (int64_t s = 0; s < n; ++s)
      for (int64_t c = 0; c <= 256; c += (n > 8 ? 17 : 1)) {
        std::vector<Block> blocks = migrationBlocks(n, s, c);
        ASSERT_EQ(int64_t(blocks.size()), n - 1);
        int64_t next = 0, previousVirtual = 0;
        int64_t smallest = c, largest = 0, previousSize = c + 1;
        for (const Block &block : blocks) {
          EXPECT_NE(block.rank, s);
          int64_t v = virtualRank(block.rank, n, s);
          EXPECT_EQ(v, previousVirtual + 1);
          previousVirtual = v;
          EXPECT_EQ(block.begin, next);
          next = block.end;
          smallest = std::min(smallest, block.size());
          largest = std::max(largest, block.size());
          EXPECT_LE(block.size(), previousSize);
          previousSize = block.size();
        }
        EXPECT_EQ(next, c);
        EXPECT_LE(largest - smallest, 1);
      }
}

// Ranks that migrate themselves receive nothing; the others are numbered
// by (rank - s) mod n.
TEST(Migration, SeveralStragglers) {
  std::vector<bool> migrating = {false, true, false, true, false};
  std::vector<Block> blocks = migrationBlocks(5, 3, 7, migrating);
  ASSERT_EQ(blocks.size(), 3u);
  EXPECT_EQ(blocks[0].rank, 4);
  EXPECT_EQ(blocks[1].rank, 0);
  EXPECT_EQ(blocks[2].rank, 2);
  EXPECT_EQ(blocks[0].size(), 3);
  EXPECT_EQ(blocks[1].size(), 2);
  EXPECT_EQ(blocks[2].size(), 2);
}

TEST(Migration, Checks) {
  EXPECT_EQ(checkMigration(2, 1, 0), "");
  EXPECT_NE(checkMigration(1, 0, 4), "");
  EXPECT_NE(checkMigration(4, 4, 4), "");
  EXPECT_NE(checkMigration(4, -1, 4), "");
  EXPECT_NE(checkMigration(4, 0, -1), "");
}

} // namespace
