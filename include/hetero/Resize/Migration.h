//===- Migration.h - where a straggler's columns go -------------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free. Lightweight workload migration (MIG,
// shared/seeds/000-zero-resizing.md section 2.7): a straggler s broadcasts
// c contraction columns (the tail of its priority order) of a prunable
// matmul; the other ranks each compute a block of them and the partial
// products come back by reduce, or, where the layer already all-reduces
// (a column-parallel dX, a row-parallel Y), by adding into the receiver's
// own operand of that all-reduce.
//
// Receivers take virtual numbers r' = (r + n - s) mod n (the straggler is
// 0); receiver r' computes block r' of the migrated columns, blocks
// partitioning [0, c) in increasing virtual number with sizes differing by
// at most one, the larger first. With several migrating stragglers, each
// partitions its columns over the ranks that do not migrate.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_RESIZE_MIGRATION_H
#define HETERO_RESIZE_MIGRATION_H

#include <cstdint>
#include <string>
#include <vector>

namespace hetero::resize {

/// Rank `rank`'s number when `straggler` migrates: (rank + n - s) mod n.
int64_t virtualRank(int64_t rank, int64_t ranks, int64_t straggler);

/// One receiver's share: positions [begin, end) of the migrated columns.
struct Block {
  int64_t rank = 0;
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
};

/// A message when (ranks, straggler, columns) cannot migrate: ranks >= 2,
/// 0 <= straggler < ranks, columns >= 0.
std::string checkMigration(int64_t ranks, int64_t straggler, int64_t columns);

/// The blocks of `columns` migrated by `straggler`, one per receiver in
/// increasing virtual number. `migrating` (empty, or one flag per rank)
/// marks the ranks that migrate themselves and so receive nothing.
std::vector<Block> migrationBlocks(int64_t ranks, int64_t straggler,
                                   int64_t columns,
                                   const std::vector<bool> &migrating = {});

} // namespace hetero::resize

#endif // HETERO_RESIZE_MIGRATION_H
