//===- Zen.cpp - Zen's hierarchical hashing for sparse gradients ----------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Sparse/Zen.h"
#include "hetero/Support/Hash.h"
#include "hetero/Support/Parallel.h"

#include <algorithm>

namespace hetero::sparse {

namespace {

/// A hash of 64 bits scaled onto [0, range) by a multiplication, not a
/// division.
int64_t scaled(uint64_t hash, int64_t range) {
  return int64_t((unsigned __int128)hash * uint64_t(range) >> 64);
}

/// h_seed of an index already mixed once: every hash of an index shares
/// that first mixing.
int64_t hashOf(uint64_t seed, uint64_t mixed, int64_t range) {
  return scaled(splitMix64(seed ^ mixed), range);
}

} // namespace

int64_t partitionOf(uint32_t index, const HashSeeds &seeds,
                    int64_t partitions) {
  return hashOf(seeds.partition, splitMix64(index), partitions);
}

HashMemory::HashMemory(int64_t partitions, int64_t probedSlots,
                       int64_t serialSlots, const HashSeeds &seeds)
    : partitionCount(std::max<int64_t>(partitions, 1)),
      probed(std::max<int64_t>(probedSlots, 1)),
      serial(std::max<int64_t>(serialSlots, 1)),
      memory(new std::atomic<uint32_t>[size_t(partitionCount) *
                                       size_t(probed + serial)]),
      claimed(new std::atomic<int64_t>[size_t(partitionCount)]), seeds(seeds) {
  for (int64_t i = 0; i < partitionCount * (probed + serial); ++i)
    memory[i].store(kEmpty, std::memory_order_relaxed);
  for (int64_t p = 0; p < partitionCount; ++p)
    claimed[p].store(0, std::memory_order_relaxed);
}

int64_t HashMemory::probeSlot(uint32_t index, int k) const {
  return hashOf(seeds.probe[k], splitMix64(index), probed);
}

bool HashMemory::insert(uint32_t index) {
  uint64_t mixed = splitMix64(index);
  int64_t p = hashOf(seeds.partition, mixed, partitionCount);
  std::atomic<uint32_t> *x = memory.get() + p * (probed + serial);
  for (int k = 0; k < 3; ++k) {
    // Write and read back in one step: the slot is this index's only if
    // it was empty. A slot seen taken is passed over without the
    // exchange.
    std::atomic<uint32_t> &slot = x[hashOf(seeds.probe[k], mixed, probed)];
    uint32_t expected = kEmpty;
    if (slot.load(std::memory_order_relaxed) == kEmpty &&
        slot.compare_exchange_strong(expected, index,
                                     std::memory_order_relaxed))
      return true;
  }
  int64_t q = claimed[p].fetch_add(1, std::memory_order_relaxed);
  if (q >= serial)
    return false;
  x[probed + q].store(index, std::memory_order_relaxed);
  return true;
}

std::vector<uint32_t> HashMemory::extract(int64_t p) const {
  const std::atomic<uint32_t> *x = memory.get() + p * (probed + serial);
  int64_t used = std::min(claimed[p].load(std::memory_order_relaxed), serial);
  std::vector<uint32_t> held;
  for (int64_t q = 0; q < probed + used; ++q) {
    uint32_t index = x[q].load(std::memory_order_relaxed);
    if (index != kEmpty)
      held.push_back(index);
  }
  return held;
}

int64_t HashMemory::serialUsed() const {
  int64_t used = 0;
  for (int64_t p = 0; p < partitionCount; ++p)
    used += std::min(claimed[p].load(std::memory_order_relaxed), serial);
  return used;
}

int64_t defaultProbedSlots(size_t indices, int64_t partitions) {
  return std::max<int64_t>(
      16, 2 * ((int64_t(indices) + partitions - 1) / partitions));
}

namespace {

/// Hashes the indices `forEach` yields into a memory of `probedPer` slots
/// a partition (and a tenth of that serial) on `threads` threads, then
/// reads each partition out. Empty when a serial memory overflowed.
template <typename ForEach>
std::optional<std::vector<std::vector<uint32_t>>>
hashInto(int64_t probedPer, int64_t partitions, const HashSeeds &seeds,
         unsigned threads, size_t work, ForEach forEach) {
  HashMemory memory(partitions, probedPer, probedPer / 10, seeds);
  std::atomic<bool> overflowed{false};
  parallelChunks(threads, work, [&](size_t begin, size_t end) {
    forEach(begin, end, [&](uint32_t index) {
      if (!memory.insert(index))
        overflowed.store(true, std::memory_order_relaxed);
    });
  });
  if (overflowed.load())
    return std::nullopt;
  std::vector<std::vector<uint32_t>> parts(partitions);
  parallelChunks(threads, size_t(partitions), [&](size_t begin, size_t end) {
    for (size_t p = begin; p < end; ++p)
      parts[p] = memory.extract(int64_t(p));
  });
  return parts;
}

/// hashInto into the default memory for `indices` indices, doubled until
/// no serial memory overflows.
template <typename ForEach>
std::vector<std::vector<uint32_t>>
hashGrowing(size_t indices, int64_t partitions, const HashSeeds &seeds,
            unsigned threads, size_t work, ForEach forEach) {
  for (int64_t probed = defaultProbedSlots(indices, partitions);; probed *= 2)
    if (auto parts =
            hashInto(probed, partitions, seeds, threads, work, forEach))
      return std::move(*parts);
}

} // namespace

std::optional<std::vector<std::vector<uint32_t>>>
partitionIndices(const std::vector<uint32_t> &indices, int64_t partitions,
                 const HashSeeds &seeds, int64_t probedPer, int threads) {
  auto forEach = [&](size_t begin, size_t end, auto insert) {
    for (size_t i = begin; i < end; ++i)
      insert(indices[i]);
  };
  if (probedPer > 0)
    return hashInto(probedPer, partitions, seeds, unsigned(threads),
                    indices.size(), forEach);
  return hashGrowing(indices.size(), partitions, seeds, unsigned(threads),
                     indices.size(), forEach);
}

std::vector<std::vector<uint32_t>>
hierarchicalHash(const float *gradient, size_t size, int64_t partitions,
                 const HashSeeds &seeds, int threads) {
  // Each thread collects the non-zero indices of its range (Alg 3.2's I),
  // which sizes the memory, then hashes the indices it found.
  std::vector<std::vector<uint32_t>> found(size_t(std::max(threads, 1)));
  size_t chunk = (size + found.size() - 1) / found.size();
  parallelChunks(unsigned(found.size()), size, [&](size_t begin, size_t end) {
    std::vector<uint32_t> &mine = found[begin / std::max<size_t>(chunk, 1)];
    for (size_t i = begin; i < end; ++i)
      if (gradient[i] != 0.0f)
        mine.push_back(uint32_t(i));
  });
  size_t nonZeros = 0;
  for (const std::vector<uint32_t> &mine : found)
    nonZeros += mine.size();
  auto forEach = [&](size_t begin, size_t end, auto insert) {
    for (size_t t = begin; t < end; ++t)
      for (uint32_t index : found[t])
        insert(index);
  };
  return hashGrowing(nonZeros, partitions, seeds, unsigned(threads),
                     found.size(), forEach);
}

std::vector<std::vector<uint32_t>>
allPartitionMembers(int64_t size, int64_t partitions, const HashSeeds &seeds) {
  std::vector<std::vector<uint32_t>> members(partitions);
  for (int64_t i = 0; i < size; ++i)
    members[partitionOf(uint32_t(i), seeds, partitions)].push_back(uint32_t(i));
  return members;
}

std::vector<uint32_t> partitionMembers(int64_t size, int64_t p,
                                       int64_t partitions,
                                       const HashSeeds &seeds) {
  return allPartitionMembers(size, partitions, seeds)[p];
}

std::vector<uint32_t> encodeHashBitmap(const std::vector<uint32_t> &indices,
                                       const std::vector<uint32_t> &members) {
  std::vector<uint32_t> words((members.size() + 31) / 32, 0);
  size_t position = 0;
  for (uint32_t index : indices) {
    // Both lists ascend: walk the members to the index's position.
    while (position < members.size() && members[position] < index)
      ++position;
    if (position < members.size() && members[position] == index)
      words[position / 32] |= 1u << (position % 32);
  }
  return words;
}

std::vector<uint32_t> decodeHashBitmap(const std::vector<uint32_t> &words,
                                       const std::vector<uint32_t> &members) {
  std::vector<uint32_t> indices;
  for (size_t position = 0; position < members.size(); ++position)
    if (words[position / 32] >> (position % 32) & 1)
      indices.push_back(members[position]);
  return indices;
}

double imbalance(const std::vector<int64_t> &loads) {
  if (loads.empty())
    return 1.0;
  double total = 0.0, largest = 0.0;
  for (int64_t load : loads) {
    total += double(load);
    largest = std::max(largest, double(load));
  }
  return total > 0.0 ? largest / (total / double(loads.size())) : 1.0;
}

} // namespace hetero::sparse
