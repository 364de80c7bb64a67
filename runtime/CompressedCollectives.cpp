//===- CompressedCollectives.cpp - all-reduce of compressed gradients -----===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Each compressor has a fixed-size payload for n elements, so payloads can
// be all-gathered and exchanged all-to-all as plain bytes:
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
//===----------------------------------------------------------------------===//

#include "Runtime.h"
#include "hetero-rt/compress.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

namespace {

size_t keptCount(const hrt_compression &spec, size_t n) {
  if (n == 0)
    return 0;
  double wanted = std::ceil(std::clamp(spec.ratio, 0.0, 1.0) * double(n));
  return std::clamp<size_t>(size_t(wanted), 1, n);
}

size_t signWords(size_t n) { return (n + 31) / 32; }

/// The seed a rank compresses with: random-k's indices must agree across
/// ranks; the noise of QSGD and DGC's sample should not.
uint64_t rankSeed(const hrt_compression &spec, int rank) {
  if (spec.compressor == HRT_COMPRESS_RANDOMK)
    return spec.seed;
  return spec.seed ^ (uint64_t(rank + 1) * 0x9e3779b97f4a7c15ULL);
}

/// Payloads hold 4-byte fields at offsets that are multiples of 4 from
/// their start; gathered side by side, each starts at a multiple of this.
constexpr size_t kPayloadAlignment = 8;

size_t alignedSlot(size_t bytes) {
  return (bytes + kPayloadAlignment - 1) / kPayloadAlignment *
         kPayloadAlignment;
}

template <typename T> T *at(char *payload, size_t offset) {
  return reinterpret_cast<T *>(payload + offset);
}

template <typename T> const T *at(const char *payload, size_t offset) {
  return reinterpret_cast<const T *>(payload + offset);
}

/// out[i] += values[i] over [0, n), with `decode(begin, length, values)`
/// filling a cache-sized block of values at a time.
template <typename Decode> void forChunks(size_t n, Decode decode, float *out) {
  constexpr size_t kBlock = 4096;
  float values[kBlock];
  for (size_t begin = 0; begin < n; begin += kBlock) {
    size_t length = std::min(kBlock, n - begin);
    decode(begin, length, values);
    for (size_t i = 0; i < length; ++i)
      out[begin + i] += values[i];
  }
}

void compress(const hrt_compression &spec, const float *g, size_t n, int rank,
              char *payload) {
  uint64_t seed = rankSeed(spec, rank);
  size_t k = keptCount(spec, n);
  switch (spec.compressor) {
  case HRT_COMPRESS_NONE:
    std::memcpy(payload, g, n * sizeof(float));
    return;
  case HRT_COMPRESS_FP16:
    hrt_to_fp16(g, n, at<uint16_t>(payload, 0));
    return;
  case HRT_COMPRESS_BF16:
    hrt_to_bf16(g, n, at<uint16_t>(payload, 0));
    return;
  case HRT_COMPRESS_TOPK:
    hrt_topk(g, n, k, at<uint32_t>(payload, 0), at<float>(payload, 4 * k));
    return;
  case HRT_COMPRESS_RANDOMK:
    hrt_randomk(g, n, k, seed, at<uint32_t>(payload, 0),
                at<float>(payload, 4 * k));
    return;
  case HRT_COMPRESS_DGC: {
    size_t capacity = std::min(n, 2 * k);
    size_t sample = std::min<size_t>(n, std::max<size_t>(1000, n / 100));
    *at<uint32_t>(payload, 0) = uint32_t(hrt_dgc(
        g, n, spec.ratio, sample, seed, capacity, at<uint32_t>(payload, 4),
        at<float>(payload, 4 + 4 * capacity)));
    return;
  }
  case HRT_COMPRESS_EFSIGNSGD:
    *at<float>(payload, 0) = hrt_efsignsgd(g, n, at<uint32_t>(payload, 4));
    return;
  case HRT_COMPRESS_ONEBIT: {
    double positive = 0.0, negative = 0.0;
    size_t positives = 0;
    for (size_t i = 0; i < n; ++i) {
      bool isNegative = std::signbit(g[i]);
      (isNegative ? negative : positive) += std::fabs(g[i]);
      positives += !isNegative;
    }
    *at<float>(payload, 0) = positives ? float(positive / positives) : 0.0f;
    *at<float>(payload, 4) =
        n > positives ? float(negative / (n - positives)) : 0.0f;
    hrt_pack_signs(g, n, at<uint32_t>(payload, 8));
    return;
  }
  case HRT_COMPRESS_QSGD:
    *at<float>(payload, 0) =
        hrt_qsgd(g, n, spec.levels, seed, at<int8_t>(payload, 4));
    return;
  }
}

/// out += decompress(payload).
void decompressAdd(const hrt_compression &spec, const char *payload, size_t n,
                   float *out) {
  size_t k = keptCount(spec, n);
  switch (spec.compressor) {
  case HRT_COMPRESS_NONE:
    for (size_t i = 0; i < n; ++i)
      out[i] += at<float>(payload, 0)[i];
    return;
  case HRT_COMPRESS_FP16:
  case HRT_COMPRESS_BF16: {
    auto convert =
        spec.compressor == HRT_COMPRESS_FP16 ? hrt_from_fp16 : hrt_from_bf16;
    const uint16_t *halves = at<uint16_t>(payload, 0);
    forChunks(
        n,
        [&](size_t begin, size_t length, float *values) {
          convert(halves + begin, length, values);
        },
        out);
    return;
  }
  case HRT_COMPRESS_TOPK:
  case HRT_COMPRESS_RANDOMK:
    hrt_scatter_add(at<uint32_t>(payload, 0), at<float>(payload, 4 * k), k,
                    out);
    return;
  case HRT_COMPRESS_DGC: {
    size_t capacity = std::min(n, 2 * k);
    hrt_scatter_add(at<uint32_t>(payload, 4),
                    at<float>(payload, 4 + 4 * capacity),
                    *at<uint32_t>(payload, 0), out);
    return;
  }
  case HRT_COMPRESS_EFSIGNSGD:
  case HRT_COMPRESS_ONEBIT: {
    bool onebit = spec.compressor == HRT_COMPRESS_ONEBIT;
    float positive = *at<float>(payload, 0);
    float negative = onebit ? *at<float>(payload, 4) : positive;
    const uint32_t *words = at<uint32_t>(payload, onebit ? 8 : 4);
    for (size_t i = 0; i < n; ++i)
      out[i] += (words[i / 32] >> (i % 32) & 1) ? -negative : positive;
    return;
  }
  case HRT_COMPRESS_QSGD: {
    const int8_t *steps = at<int8_t>(payload, 4);
    float norm = *at<float>(payload, 0);
    forChunks(
        n,
        [&](size_t begin, size_t length, float *values) {
          hrt_qsgd_decompress(steps + begin, length, spec.levels, norm, values);
        },
        out);
    return;
  }
  }
}

/// Compresses g (plus the residual, which keeps what was not sent).
void compressWithFeedback(const hrt_compression &spec, const float *g, size_t n,
                          int rank, std::vector<char> &payload) {
  payload.assign(hrt_compressed_size(&spec, n), 0);
  if (!spec.residual) {
    compress(spec, g, n, rank, payload.data());
    return;
  }
  std::vector<float> corrected(n), sent(n, 0.0f);
  for (size_t i = 0; i < n; ++i)
    corrected[i] = g[i] + spec.residual[i];
  compress(spec, corrected.data(), n, rank, payload.data());
  decompressAdd(spec, payload.data(), n, sent.data());
  for (size_t i = 0; i < n; ++i)
    spec.residual[i] = corrected[i] - sent[i];
}

/// The spec of chunk c under the all-to-all scheme: its own seed, no
/// residual (the caller points it at the chunk's slice where it applies).
hrt_compression chunkSpec(const hrt_compression &spec, int chunk) {
  hrt_compression result = spec;
  result.seed = spec.seed + uint64_t(chunk) + 1;
  result.residual = nullptr;
  return result;
}

/// The node and cross-node communicators of `comm` for nodes of `nodeSize`
/// consecutive ranks, split on first use and kept with `comm`.
hrt_status nodeComms(hrt_comm comm, int rank, int nodeSize, hrt_comm &node,
                     hrt_comm &cross) {
  if (auto found = comm->nodeComms.find(nodeSize);
      found != comm->nodeComms.end()) {
    std::tie(node, cross) = found->second;
    return HRT_SUCCESS;
  }
  if (hrt_status status = hrt_comm_split(comm, rank / nodeSize, rank, &node))
    return status;
  if (hrt_status status = hrt_comm_split(comm, rank % nodeSize, rank, &cross)) {
    hrt_comm_free(node);
    return status;
  }
  comm->nodeComms[nodeSize] = {node, cross};
  return HRT_SUCCESS;
}

} // namespace

/// Dense sum inside each node, the flat compressed all-reduce among the
/// nodes' first ranks, a broadcast inside each node.
static hrt_status hierarchicalAllReduce(float *data, size_t n,
                                        const hrt_compression &spec,
                                        hrt_reduce_op op, hrt_comm comm,
                                        int rank, int size, int nodeSize) {
  hrt_comm node = nullptr, cross = nullptr;
  if (hrt_status status = nodeComms(comm, rank, nodeSize, node, cross))
    return status;
  std::vector<float> sum(n);
  if (hrt_status status =
          hrt_reduce(data, sum.data(), n, HRT_FLOAT32, HRT_SUM, 0, node))
    return status;
  if (rank % nodeSize == 0) {
    hrt_compression flat = spec;
    flat.node_size = 1;
    if (hrt_status status =
            hrt_compressed_all_reduce(sum.data(), n, &flat, HRT_SUM, cross))
      return status;
  }
  if (hrt_status status = hrt_broadcast(sum.data(), n, HRT_FLOAT32, 0, node))
    return status;
  float scale = op == HRT_AVG ? 1.0f / float(size) : 1.0f;
  for (size_t i = 0; i < n; ++i)
    data[i] = sum[i] * scale;
  return HRT_SUCCESS;
}

extern "C" size_t hrt_compressed_size(const hrt_compression *spec, size_t n) {
  size_t k = keptCount(*spec, n);
  switch (spec->compressor) {
  case HRT_COMPRESS_NONE:
    return 4 * n;
  case HRT_COMPRESS_FP16:
  case HRT_COMPRESS_BF16:
    return 2 * n;
  case HRT_COMPRESS_TOPK:
  case HRT_COMPRESS_RANDOMK:
    return 8 * k;
  case HRT_COMPRESS_DGC:
    return 4 + 8 * std::min(n, 2 * k);
  case HRT_COMPRESS_EFSIGNSGD:
    return 4 + 4 * signWords(n);
  case HRT_COMPRESS_ONEBIT:
    return 8 + 4 * signWords(n);
  case HRT_COMPRESS_QSGD:
    return 4 + n;
  }
  return 0;
}

extern "C" void hrt_compress_roundtrip_add(const hrt_compression *spec,
                                           const float *g, size_t n, int rank,
                                           float *out) {
  std::vector<char> payload;
  compressWithFeedback(*spec, g, n, rank, payload);
  decompressAdd(*spec, payload.data(), n, out);
}

extern "C" hrt_status hrt_compressed_all_reduce(float *data, size_t n,
                                                const hrt_compression *spec,
                                                hrt_reduce_op op,
                                                hrt_comm comm) {
  hetero::rt::CallSite here{"hrt_compressed_all_reduce", comm,
                            n * sizeof(float)};
  auto invalid = [&](const std::string &detail) {
    return hetero::rt::fail(HRT_ERROR_INVALID_ARGUMENT, here, detail);
  };
  if (hrt_status status = hetero::rt::checkHostCollective(here))
    return status;
  if (!spec || (!data && n))
    return invalid("the spec and the data must not be null");
  if (hrt_status status = hetero::rt::checkHostCollective(
          here, {{data, n * sizeof(float), "data"},
                 {spec->residual, n * sizeof(float), "residual"}}))
    return status;
  // Payloads and sums are host buffers; a backend on device memory stages
  // their exchanges.
  hetero::rt::HostBuffers hostBuffers;
  if (spec->compressor < HRT_COMPRESS_NONE ||
      spec->compressor > HRT_COMPRESS_QSGD)
    return invalid("unknown compressor " + std::to_string(spec->compressor));
  bool sparsifier = spec->compressor == HRT_COMPRESS_TOPK ||
                    spec->compressor == HRT_COMPRESS_DGC ||
                    spec->compressor == HRT_COMPRESS_RANDOMK;
  if (sparsifier && !(spec->ratio > 0.0 && spec->ratio <= 1.0))
    return invalid("the kept ratio must be in (0, 1], got " +
                   std::to_string(spec->ratio));
  if (spec->compressor == HRT_COMPRESS_QSGD &&
      !(spec->levels >= 1 && spec->levels <= 127))
    return invalid("QSGD needs 1 to 127 levels, got " +
                   std::to_string(spec->levels));
  if (spec->scheme < HRT_SCHEME_ALLREDUCE || spec->scheme > HRT_SCHEME_ALLTOALL)
    return invalid("unknown scheme " + std::to_string(spec->scheme));
  if (op != HRT_SUM && op != HRT_AVG)
    return invalid("compressed gradients are summed or averaged, not "
                   "reduced with operation " +
                   std::to_string(int(op)));
  if (n > size_t(UINT32_MAX))
    return invalid("sparse payloads index at most 2^32 elements");
  int rank = 0, size = 1;
  if (hrt_status status = hrt_comm_rank(comm, &rank))
    return status;
  if (hrt_status status = hrt_comm_size(comm, &size))
    return status;
  int nodeSize = spec->node_size;
  if (nodeSize > 1 && nodeSize < size && size % nodeSize == 0)
    return hierarchicalAllReduce(data, n, *spec, op, comm, rank, size,
                                 nodeSize);
  std::vector<char> mine;
  std::vector<float> result(n, 0.0f);
  if (spec->scheme != HRT_SCHEME_ALLTOALL) {
    compressWithFeedback(*spec, data, n, rank, mine);
    mine.resize(alignedSlot(mine.size()), 0);
    std::vector<char> all(mine.size() * size);
    if (hrt_status status = hrt_all_gather(mine.data(), all.data(), mine.size(),
                                           HRT_UINT8, comm))
      return status;
    for (int r = 0; r < size; ++r)
      decompressAdd(*spec, all.data() + r * mine.size(), n, result.data());
  } else {
    // Chunk c: [c n / P, (c + 1) n / P), padded to the largest chunk.
    auto begin = [&](int c) { return size_t(c) * n / size_t(size); };
    size_t largest = 0;
    for (int c = 0; c < size; ++c)
      largest = std::max(largest, begin(c + 1) - begin(c));
    size_t slot = 0;
    for (int c = 0; c < size; ++c) {
      hrt_compression chunk = chunkSpec(*spec, c);
      slot = std::max(slot, hrt_compressed_size(&chunk, largest));
    }
    slot = alignedSlot(slot);
    // Each chunk compressed once, with error feedback on its slice of the
    // residual.
    std::vector<char> outgoing(slot * size, 0), incoming(slot * size, 0);
    std::vector<char> payload;
    for (int c = 0; c < size; ++c) {
      hrt_compression chunk = chunkSpec(*spec, c);
      if (spec->residual)
        chunk.residual = spec->residual + begin(c);
      compressWithFeedback(chunk, data + begin(c), begin(c + 1) - begin(c),
                           rank, payload);
      std::memcpy(outgoing.data() + c * slot, payload.data(), payload.size());
    }
    if (hrt_status status = hrt_all_to_all(outgoing.data(), incoming.data(),
                                           slot, HRT_UINT8, comm))
      return status;
    // Aggregate this rank's chunk, then compress the sum once more.
    hrt_compression own = chunkSpec(*spec, rank);
    size_t length = begin(rank + 1) - begin(rank);
    std::vector<float> aggregate(length, 0.0f);
    for (int r = 0; r < size; ++r)
      decompressAdd(own, incoming.data() + r * slot, length, aggregate.data());
    std::vector<char> summed(slot, 0), gathered(slot * size, 0);
    compress(own, aggregate.data(), length, rank, summed.data());
    if (hrt_status status = hrt_all_gather(summed.data(), gathered.data(), slot,
                                           HRT_UINT8, comm))
      return status;
    for (int c = 0; c < size; ++c) {
      hrt_compression chunk = chunkSpec(*spec, c);
      decompressAdd(chunk, gathered.data() + c * slot, begin(c + 1) - begin(c),
                    result.data() + begin(c));
    }
  }
  float scale = op == HRT_AVG ? 1.0f / float(size) : 1.0f;
  for (size_t i = 0; i < n; ++i)
    data[i] = result[i] * scale;
  return HRT_SUCCESS;
}
