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
//    slots; an index whose three slots are taken goes to a serial region
//    of r2 = r1 / 10 slots (Alg 3.2). Threads fill the slots in parallel,
//    and reading the memory out in slot order gives each partition's
//    indices without a sort;
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

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace hetero::sparse {

struct HashSeeds {
  uint64_t partition = 0x5a454e;
  uint64_t probe[3] = {1, 2, 3};
};

/// h0: the partition of `index` among `partitions`.
int64_t partitionOf(uint32_t index, const HashSeeds &seeds, int64_t partitions);

/// Alg 3.2's memory: for each of `partitions` partitions, r1 `probed` slots
/// that the k = 3 probe hashes address, then r2 `serial` slots taken in
/// turn through an atomic counter. Any number of threads may insert at
/// once without losing an index: a thread claims a slot by compare-and-swap
/// (the thesis's write-and-read check), and an index whose three slots are
/// taken claims the partition's next serial slot.
class HashMemory {
public:
  HashMemory(int64_t partitions, int64_t probed, int64_t serial,
             const HashSeeds &seeds);
  /// Places `index` in partition h0(index). Thread-safe; the indices
  /// inserted must be distinct (a set, as Alg 3.2's I). False when the
  /// index found its slots taken and the serial memory full: it is not
  /// held, and the memory must be sized anew.
  bool insert(uint32_t index);
  /// Alg 3.2's extraction, nonzero() over partition p's memory: the
  /// probed slots held, in slot order, then the serial ones in the order
  /// claimed. No sort: the order is the memory's.
  std::vector<uint32_t> extract(int64_t p) const;
  /// Indices held in serial memory over all partitions.
  int64_t serialUsed() const;
  int64_t partitions() const { return partitionCount; }
  int64_t probedSlots() const { return probed; }
  int64_t serialSlots() const { return serial; }
  /// The probed slot of partition h0(index) that probe `k` (0-2) of
  /// `index` addresses.
  int64_t probeSlot(uint32_t index, int k) const;

private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  int64_t partitionCount, probed, serial;
  std::unique_ptr<std::atomic<uint32_t>[]> memory;
  std::unique_ptr<std::atomic<int64_t>[]> claimed;
  HashSeeds seeds;
};

/// The probed slots a partition gets by default for `indices` indices
/// over `partitions`: twice the mean partition's load, at least 16.
int64_t defaultProbedSlots(size_t indices, int64_t partitions);

/// Alg 3.2 over a set of indices (each once, any order) on `threads`
/// threads: each partition's indices in memory order. `probedPer` slots a
/// partition (0: twice the mean partition's load, at least 16) and a tenth
/// of that in serial memory. Sized by the caller, empty when a partition's
/// serial memory overflows; sized here, a partition that overflows has
/// the whole set hashed again into twice the memory, so nothing is lost.
std::optional<std::vector<std::vector<uint32_t>>>
partitionIndices(const std::vector<uint32_t> &indices, int64_t partitions,
                 const HashSeeds &seeds, int64_t probedPer = 0,
                 int threads = 1);

/// Alg 3.2 over the non-zero elements of `gradient` (`size` values), each
/// of `threads` threads scanning a contiguous range and inserting what it
/// finds: each partition's non-zero indices in memory order.
std::vector<std::vector<uint32_t>>
hierarchicalHash(const float *gradient, size_t size, int64_t partitions,
                 const HashSeeds &seeds, int threads = 1);

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
