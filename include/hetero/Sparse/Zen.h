//===- Zen.h - Zen's hierarchical hashing for sparse gradients --*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free. Sparse gradients (embedding rows) are synchronised by
// partitioning their non-zero indices with hashes every rank shares:
//
//  - a partition hash h0 sends index i to partition h0(i) in [0, P), so
//    that skewed (Zipf) indices still spread evenly over the P ranks that
//    aggregate them (push);
//  - inside a partition, k = 3 probe hashes place each index in one of r1
//    slots; an index whose three slots are taken goes to a serial overflow
//    region of r2 = r1 / 10 slots. Slots can be filled in parallel; the
//    table keeps every index exactly once;
//  - the aggregated indices of partition p travel back (pull) as a hash
//    bitmap: bit j is set when the j-th index of [0, G) in partition p
//    (in index order) is non-zero. Over all partitions that is G bits,
//    G / 32 words, whatever the density.
//
// The seeds are broadcast at initialisation so that every rank hashes
// alike.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_SPARSE_ZEN_H
#define HETERO_SPARSE_ZEN_H

#include <cstdint>
#include <optional>
#include <vector>

namespace hetero::sparse {

struct HashSeeds {
  uint64_t partition = 0x5a454e;
  uint64_t probe[3] = {1, 2, 3};
};

/// h0: the partition of `index` among `partitions`.
int64_t partitionOf(uint32_t index, const HashSeeds &seeds, int64_t partitions);

/// The second level: r1 probed slots and an overflow region of r1 / 10.
class PartitionTable {
public:
  PartitionTable(int64_t slots, const HashSeeds &seeds);
  /// Inserts `index` once (a repeated index is found, not added again).
  /// Returns false when the slots and the overflow region are all full.
  bool insert(uint32_t index);
  /// The indices held, ascending.
  std::vector<uint32_t> indices() const;
  int64_t overflowUsed() const { return overflow.size(); }

private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  std::vector<uint32_t> slots;
  std::vector<uint32_t> overflow;
  size_t overflowCapacity;
  HashSeeds seeds;
};

/// Splits the non-zero indices (each once, any order) into `partitions`
/// ascending lists through h0 and one table per partition of `slotsPer`
/// slots (0: sized from the input). Empty when a table overflows.
std::optional<std::vector<std::vector<uint32_t>>>
partitionIndices(const std::vector<uint32_t> &indices, int64_t partitions,
                 const HashSeeds &seeds, int64_t slotsPer = 0);

/// The indices of [0, size) in partition p, ascending.
std::vector<uint32_t> partitionMembers(int64_t size, int64_t p,
                                       int64_t partitions,
                                       const HashSeeds &seeds);
/// The same for every partition, in one pass.
std::vector<std::vector<uint32_t>>
allPartitionMembers(int64_t size, int64_t partitions, const HashSeeds &seeds);

/// The hash bitmap of `indices` (ascending, all in partition p of a
/// gradient of `size` elements): ceil(|members of p| / 32) words.
std::vector<uint32_t> encodeHashBitmap(const std::vector<uint32_t> &indices,
                                       const std::vector<uint32_t> &members);
/// The indices a hash bitmap holds, ascending.
std::vector<uint32_t> decodeHashBitmap(const std::vector<uint32_t> &words,
                                       const std::vector<uint32_t> &members);

/// max / mean of `loads` (1 when perfectly balanced).
double imbalance(const std::vector<int64_t> &loads);

} // namespace hetero::sparse

#endif // HETERO_SPARSE_ZEN_H
