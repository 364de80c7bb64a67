//===- Shards.h - tensor-parallel slices and the whole -----------*- C++
//-*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// A tensor-parallel rank holds a slice of each sharded global (a parameter,
// its optimizer state). Files (--save, --load, disk checkpoints) hold the
// whole tensor, so that they read the same at any number of shards: the
// slices are gathered for the writer, and each rank takes its slice of
// what it read.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_TOOLS_HETERO_RUN_SHARDS_H
#define HETERO_TOOLS_HETERO_RUN_SHARDS_H

#include "hetero-rt/hrt.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hetero {

/// A tensor of `shape` (the whole) split `shards` ways along `dim`, read
/// row-major as [outer][shards x extent][inner]: a shard's slice is
/// [outer][extent][inner].
struct ShardLayout {
  ShardLayout(const std::vector<int64_t> &shape, int64_t dim, int64_t shards);

  /// Where row `o` of shard `s`'s slice starts in the whole tensor, and in
  /// the slice.
  size_t whole(int64_t s, int64_t o) const {
    return size_t((o * shards + s) * extent * inner);
  }
  size_t slice(int64_t o) const { return size_t(o * extent * inner); }
  size_t row() const { return size_t(extent * inner); }
  /// The elements of one slice.
  size_t sliceElements() const { return size_t(outer) * row(); }

  int64_t shards, extent, outer = 1, inner = 1;
};

/// The whole tensor from the slices of the ranks of `group`, one per shard
/// in shard order: every rank of the group calls it with its slice and
/// receives the whole. Collective over `group`; "" or what went wrong.
std::string gatherShards(const float *slice, const ShardLayout &layout,
                         hrt_comm group, std::vector<float> &whole);

/// Shard `shard`'s slice of the whole tensor.
void sliceShard(const std::vector<float> &whole, const ShardLayout &layout,
                int64_t shard, float *slice);

} // namespace hetero

#endif // HETERO_TOOLS_HETERO_RUN_SHARDS_H
