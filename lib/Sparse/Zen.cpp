//===- Zen.cpp - Zen's hierarchical hashing for sparse gradients ----------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Sparse/Zen.h"
#include "hetero/Support/Hash.h"

#include <algorithm>

namespace hetero::sparse {

int64_t partitionOf(uint32_t index, const HashSeeds &seeds,
                    int64_t partitions) {
  return int64_t(splitMix64(seeds.partition ^ splitMix64(index)) %
                 uint64_t(partitions));
}

PartitionTable::PartitionTable(int64_t slotCount, const HashSeeds &seeds)
    : slots(std::max<int64_t>(slotCount, 1), kEmpty),
      overflowCapacity(std::max<size_t>(size_t(slotCount) / 10, 1)),
      seeds(seeds) {}

bool PartitionTable::insert(uint32_t index) {
  uint32_t *free = nullptr;
  for (uint64_t seed : seeds.probe) {
    uint32_t &slot = slots[splitMix64(seed ^ splitMix64(index)) % slots.size()];
    if (slot == index)
      return true;
    if (slot == kEmpty && !free)
      free = &slot;
  }
  if (free) {
    *free = index;
    return true;
  }
  if (std::find(overflow.begin(), overflow.end(), index) != overflow.end())
    return true;
  if (overflow.size() >= overflowCapacity)
    return false;
  overflow.push_back(index);
  return true;
}

std::vector<uint32_t> PartitionTable::indices() const {
  std::vector<uint32_t> held;
  for (uint32_t slot : slots)
    if (slot != kEmpty)
      held.push_back(slot);
  held.insert(held.end(), overflow.begin(), overflow.end());
  std::sort(held.begin(), held.end());
  return held;
}

std::optional<std::vector<std::vector<uint32_t>>>
partitionIndices(const std::vector<uint32_t> &indices, int64_t partitions,
                 const HashSeeds &seeds, int64_t slotsPer) {
  std::vector<std::vector<uint32_t>> routed(partitions);
  for (uint32_t index : indices)
    routed[partitionOf(index, seeds, partitions)].push_back(index);
  std::vector<std::vector<uint32_t>> result;
  for (const std::vector<uint32_t> &members : routed) {
    // Twice the expected load keeps the probed slots mostly free.
    int64_t slots =
        slotsPer > 0 ? slotsPer : std::max<int64_t>(16, 2 * members.size());
    PartitionTable table(slots, seeds);
    for (uint32_t index : members)
      if (!table.insert(index))
        return std::nullopt;
    result.push_back(table.indices());
  }
  return result;
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
