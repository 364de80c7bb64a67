//===- Shards.cpp - tensor-parallel slices and the whole ------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "Shards.h"

#include <algorithm>

using namespace hetero;

ShardLayout::ShardLayout(const std::vector<int64_t> &shape, int64_t dim,
                         int64_t shards)
    : shards(shards), extent(shape[size_t(dim)] / shards) {
  for (int64_t i = 0; i < dim; ++i)
    outer *= shape[size_t(i)];
  for (size_t i = size_t(dim) + 1; i < shape.size(); ++i)
    inner *= shape[i];
}

std::string hetero::gatherShards(const float *slice, const ShardLayout &layout,
                                 hrt_comm group, std::vector<float> &whole) {
  size_t perShard = layout.sliceElements();
  std::vector<float> slices(perShard * size_t(layout.shards));
  if (hrt_all_gather(slice, slices.data(), perShard, HRT_FLOAT32, group) !=
      HRT_SUCCESS)
    return hrt_last_error();
  whole.assign(slices.size(), 0.0f);
  for (int64_t s = 0; s < layout.shards; ++s)
    for (int64_t o = 0; o < layout.outer; ++o)
      std::copy_n(&slices[size_t(s) * perShard + layout.slice(o)], layout.row(),
                  &whole[layout.whole(s, o)]);
  return "";
}

void hetero::sliceShard(const std::vector<float> &whole,
                        const ShardLayout &layout, int64_t shard,
                        float *slice) {
  for (int64_t o = 0; o < layout.outer; ++o)
    std::copy_n(&whole[layout.whole(shard, o)], layout.row(),
                slice + layout.slice(o));
}
