//===- Migration.cpp - where a straggler's columns go ---------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Resize/Migration.h"

using namespace hetero::resize;

int64_t hetero::resize::virtualRank(int64_t rank, int64_t ranks,
                                    int64_t straggler) {
  return (rank + ranks - straggler) % ranks;
}

std::string hetero::resize::checkMigration(int64_t ranks, int64_t straggler,
                                           int64_t columns) {
  if (ranks < 2)
    return "migration needs at least 2 ranks, got " + std::to_string(ranks);
  if (straggler < 0 || straggler >= ranks)
    return "straggler " + std::to_string(straggler) + " is not a rank of 0.." +
           std::to_string(ranks - 1);
  if (columns < 0)
    return "columns must be >= 0, got " + std::to_string(columns);
  return "";
}

std::vector<Block>
hetero::resize::migrationBlocks(int64_t ranks, int64_t straggler,
                                int64_t columns,
                                const std::vector<bool> &migrating) {
  std::vector<int64_t> receivers;
  for (int64_t v = 1; v < ranks; ++v) {
    int64_t rank = (straggler + v) % ranks;
    if (migrating.empty() || !migrating[size_t(rank)])
      receivers.push_back(rank);
  }
  std::vector<Block> blocks;
  if (receivers.empty())
    return blocks;
  auto count = int64_t(receivers.size());
  int64_t base = columns / count, extra = columns % count, begin = 0;
  for (int64_t i = 0; i < count; ++i) {
    int64_t size = base + (i < extra ? 1 : 0);
    blocks.push_back({receivers[size_t(i)], begin, begin + size});
    begin += size;
  }
  return blocks;
}
