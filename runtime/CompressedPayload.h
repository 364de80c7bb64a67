//===- CompressedPayload.h - the layout of a compressed payload -*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Each compressor has a fixed-size payload for n elements, so payloads can
// be all-gathered and exchanged all-to-all as plain bytes. A payload is a
// header of float32 or uint32 scalars, then its arrays:
//
//   none            n float32
//   fp16, bf16      n 16-bit values
//   topk, randomk   k uint32 indices, then k float32 values (k = ceil(r n))
//   dgc             a uint32 count, then 2k indices and 2k values
//   efsignsgd       the float32 scale, then ceil(n/32) sign words
//   onebit          the float32 means of the positive and of the negative
//                   elements, then ceil(n/32) sign words (1-bit SGD)
//   qsgd            the float32 norm, then n int8 steps
//
// The host kernels (CompressedCollectives.cpp) and the device kernels
// (kernels/cuda/CompressedDevice.cpp) both write and read it from here.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_RUNTIME_COMPRESSEDPAYLOAD_H
#define HETERO_RUNTIME_COMPRESSEDPAYLOAD_H

#include "hetero-rt/compress.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace hetero::rt::payload {

/// The k of a sparsifier (top-k, random-k, DGC's target): ceil(ratio n),
/// at least 1 of a non-empty buffer.
inline size_t keptCount(const hrt_compression &spec, size_t n) {
  if (n == 0)
    return 0;
  double wanted = std::ceil(std::clamp(spec.ratio, 0.0, 1.0) * double(n));
  return std::clamp<size_t>(size_t(wanted), 1, n);
}

inline size_t signWords(size_t n) { return (n + 31) / 32; }

/// DGC keeps at most twice its target.
inline size_t dgcCapacity(const hrt_compression &spec, size_t n) {
  return std::min(n, 2 * keptCount(spec, n));
}

/// The elements DGC samples for its threshold.
inline size_t dgcSample(size_t n) {
  return std::min<size_t>(n, std::max<size_t>(1000, n / 100));
}

/// The seed a rank compresses with: random-k's indices must agree across
/// ranks; the noise of QSGD and DGC's sample should not.
inline uint64_t rankSeed(const hrt_compression &spec, int rank) {
  if (spec.compressor == HRT_COMPRESS_RANDOMK)
    return spec.seed;
  return spec.seed ^ (uint64_t(rank + 1) * 0x9e3779b97f4a7c15ULL);
}

/// Bytes of scalars before the arrays.
inline size_t header(hrt_compressor compressor) {
  switch (compressor) {
  case HRT_COMPRESS_DGC:
  case HRT_COMPRESS_EFSIGNSGD:
  case HRT_COMPRESS_QSGD:
    return 4;
  case HRT_COMPRESS_ONEBIT:
    return 8;
  default:
    return 0;
  }
}

/// The (index, value) entries a sparse payload has room for: its indices
/// start after the header, its values after the indices.
inline size_t entries(const hrt_compression &spec, size_t n) {
  switch (spec.compressor) {
  case HRT_COMPRESS_TOPK:
  case HRT_COMPRESS_RANDOMK:
    return keptCount(spec, n);
  case HRT_COMPRESS_DGC:
    return dgcCapacity(spec, n);
  default:
    return 0;
  }
}

inline size_t valuesAt(const hrt_compression &spec, size_t n) {
  return header(spec.compressor) + 4 * entries(spec, n);
}

/// Bytes of the whole payload.
inline size_t bytes(const hrt_compression &spec, size_t n) {
  size_t arrays = 0;
  switch (spec.compressor) {
  case HRT_COMPRESS_NONE:
    arrays = 4 * n;
    break;
  case HRT_COMPRESS_FP16:
  case HRT_COMPRESS_BF16:
    arrays = 2 * n;
    break;
  case HRT_COMPRESS_TOPK:
  case HRT_COMPRESS_RANDOMK:
  case HRT_COMPRESS_DGC:
    arrays = 8 * entries(spec, n);
    break;
  case HRT_COMPRESS_EFSIGNSGD:
  case HRT_COMPRESS_ONEBIT:
    arrays = 4 * signWords(n);
    break;
  case HRT_COMPRESS_QSGD:
    arrays = n;
    break;
  }
  return header(spec.compressor) + arrays;
}

} // namespace hetero::rt::payload

#endif // HETERO_RUNTIME_COMPRESSEDPAYLOAD_H
