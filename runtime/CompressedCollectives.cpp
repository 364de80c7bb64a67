//===- CompressedCollectives.cpp - all-reduce of compressed gradients -----===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The schemes (all-gather, all-to-all with re-compression, and the
// hierarchical one over nodes) are written once against Kernels: where the
// buffers live, how they are compressed, summed and moved. The host's
// kernels work on host buffers; with HRT_PLACEMENT_DEVICE the device
// kernels that libhetero_rt_cuda registers work on device buffers, and the
// payloads cross to the host only for a backend that moves host memory.
// The payloads' layout is CompressedPayload.h's.
//
//===----------------------------------------------------------------------===//

#include "CompressedPayload.h"
#include "Runtime.h"
#include "hetero-rt/compress.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

namespace payload = hetero::rt::payload;
using payload::dgcCapacity;
using payload::dgcSample;
using payload::header;
using payload::keptCount;
using payload::rankSeed;
using payload::valuesAt;

template <typename T> T *at(char *payload, size_t offset) {
  return reinterpret_cast<T *>(payload + offset);
}

template <typename T> const T *at(const char *payload, size_t offset) {
  return reinterpret_cast<const T *>(payload + offset);
}

/// Payloads hold 4-byte fields at offsets that are multiples of 4 from
/// their start; gathered side by side, each starts at a multiple of this.
constexpr size_t kPayloadAlignment = 8;

size_t alignedSlot(size_t bytes) {
  return (bytes + kPayloadAlignment - 1) / kPayloadAlignment *
         kPayloadAlignment;
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

void compressOnHost(const hrt_compression &spec, const float *g, size_t n,
                    uint64_t seed, char *payload) {
  size_t k = keptCount(spec, n), head = header(spec.compressor);
  size_t values = valuesAt(spec, n);
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
    hrt_topk(g, n, k, at<uint32_t>(payload, head), at<float>(payload, values));
    return;
  case HRT_COMPRESS_RANDOMK:
    hrt_randomk(g, n, k, seed, at<uint32_t>(payload, head),
                at<float>(payload, values));
    return;
  case HRT_COMPRESS_DGC:
    *at<uint32_t>(payload, 0) = uint32_t(
        hrt_dgc(g, n, spec.ratio, dgcSample(n), seed, dgcCapacity(spec, n),
                at<uint32_t>(payload, head), at<float>(payload, values)));
    return;
  case HRT_COMPRESS_EFSIGNSGD:
    *at<float>(payload, 0) = hrt_efsignsgd(g, n, at<uint32_t>(payload, head));
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
    hrt_pack_signs(g, n, at<uint32_t>(payload, head));
    return;
  }
  case HRT_COMPRESS_QSGD:
    *at<float>(payload, 0) =
        hrt_qsgd(g, n, spec.levels, seed, at<int8_t>(payload, head));
    return;
  }
}

/// out += decompress(payload).
void decompressAddOnHost(const hrt_compression &spec, const char *payload,
                         size_t n, float *out) {
  size_t head = header(spec.compressor), values = valuesAt(spec, n);
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
  case HRT_COMPRESS_DGC: {
    size_t count = spec.compressor == HRT_COMPRESS_DGC
                       ? *at<uint32_t>(payload, 0)
                       : keptCount(spec, n);
    hrt_scatter_add(at<uint32_t>(payload, head), at<float>(payload, values),
                    count, out);
    return;
  }
  case HRT_COMPRESS_EFSIGNSGD:
  case HRT_COMPRESS_ONEBIT: {
    bool onebit = spec.compressor == HRT_COMPRESS_ONEBIT;
    float positive = *at<float>(payload, 0);
    float negative = onebit ? *at<float>(payload, 4) : positive;
    const uint32_t *words = at<uint32_t>(payload, head);
    for (size_t i = 0; i < n; ++i)
      out[i] += (words[i / 32] >> (i % 32) & 1) ? -negative : positive;
    return;
  }
  case HRT_COMPRESS_QSGD: {
    const int8_t *steps = at<int8_t>(payload, head);
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

/// The device side libhetero_rt_cuda registered, if it is loaded.
std::atomic<const hrt_device_compression *> deviceOps{nullptr};

/// Where a compressed all-reduce's buffers live and how they are
/// compressed, summed and exchanged.
class Kernels {
public:
  virtual ~Kernels() = default;
  /// `bytes` of zeroed memory, and its release.
  virtual void *allocate(size_t bytes) = 0;
  virtual void release(void *pointer) = 0;
  virtual void copy(void *to, const void *from, size_t bytes) = 0;
  virtual void compress(const hrt_compression &spec, const float *g, size_t n,
                        uint64_t seed, char *payload) = 0;
  virtual void decompressAdd(const hrt_compression &spec, const char *payload,
                             size_t n, float *out) = 0;
  /// y = alpha x + beta y.
  virtual void axpby(float alpha, const float *x, float beta, float *y,
                     size_t n) = 0;
  /// Runs `collective` on addresses the backend takes for `send` (of
  /// `sendBytes`, read) and `recv` (of `recvBytes`, written; it may be
  /// `send`). `Rooted::root` and `Rooted::leaf` name the rank's role in a
  /// rooted collective: a reduce's leaf receives nothing, a broadcast's
  /// leaf sends nothing, so neither is staged.
  enum class Rooted { no, root, leaf };
  virtual hrt_status
  exchange(const void *send, size_t sendBytes, void *recv, size_t recvBytes,
           const std::function<hrt_status(const void *, void *)> &collective,
           Rooted role = Rooted::no) = 0;
};

class HostKernels final : public Kernels {
public:
  void *allocate(size_t bytes) override { return std::calloc(bytes, 1); }
  void release(void *pointer) override { std::free(pointer); }
  void copy(void *to, const void *from, size_t bytes) override {
    std::memcpy(to, from, bytes);
  }
  void compress(const hrt_compression &spec, const float *g, size_t n,
                uint64_t seed, char *payload) override {
    compressOnHost(spec, g, n, seed, payload);
  }
  void decompressAdd(const hrt_compression &spec, const char *payload, size_t n,
                     float *out) override {
    decompressAddOnHost(spec, payload, n, out);
  }
  void axpby(float alpha, const float *x, float beta, float *y,
             size_t n) override {
    if (beta == 0.0f) {
      for (size_t i = 0; i < n; ++i)
        y[i] = x[i] * alpha;
      return;
    }
    for (size_t i = 0; i < n; ++i)
      y[i] = beta * y[i] + alpha * x[i];
  }
  hrt_status
  exchange(const void *send, size_t, void *recv, size_t,
           const std::function<hrt_status(const void *, void *)> &collective,
           Rooted) override {
    return collective(send, recv);
  }
};

class DeviceKernels final : public Kernels {
public:
  explicit DeviceKernels(const hrt_device_compression &ops) : ops(ops) {}
  void *allocate(size_t bytes) override { return ops.allocate(bytes); }
  void release(void *pointer) override { ops.release(pointer); }
  void copy(void *to, const void *from, size_t bytes) override {
    ops.copy(to, from, bytes);
  }
  void compress(const hrt_compression &spec, const float *g, size_t n,
                uint64_t seed, char *payload) override {
    ops.compress(&spec, g, n, seed, payload);
  }
  void decompressAdd(const hrt_compression &spec, const char *payload, size_t n,
                     float *out) override {
    ops.decompress_add(&spec, payload, n, out);
  }
  void axpby(float alpha, const float *x, float beta, float *y,
             size_t n) override {
    ops.axpby(alpha, x, beta, y, n);
  }
  hrt_status
  exchange(const void *send, size_t sendBytes, void *recv, size_t recvBytes,
           const std::function<hrt_status(const void *, void *)> &collective,
           Rooted role) override {
    // NCCL moves device memory, each operation ordered after the kernels
    // queued on this thread's stream (hrt_register_compute_stream).
    if (!hetero::rt::mpiBackendActive())
      return collective(send, recv);
    // MPI moves host memory: the payloads cross, not the gradients. Of a
    // rooted collective in place (a broadcast) the leaf has nothing to
    // send and the root nothing to receive; of one out of place (a
    // reduce) the leaf has nothing to receive.
    bool inPlace = recv == send;
    bool sends = !(inPlace && role == Rooted::leaf);
    bool receives = inPlace ? role != Rooted::root : role != Rooted::leaf;
    std::vector<char> hostSend(sendBytes), hostRecv;
    if (sends)
      ops.copy(hostSend.data(), send, sendBytes);
    char *into = hostSend.data();
    if (!inPlace) {
      hostRecv.resize(recvBytes);
      into = hostRecv.data();
    }
    if (hrt_status status = collective(hostSend.data(), into))
      return status;
    if (receives)
      ops.copy(recv, into, recvBytes);
    return HRT_SUCCESS;
  }

private:
  const hrt_device_compression &ops;
};

/// `bytes` of zeroed memory where `kernels` work, released with it.
class Buffer {
public:
  Buffer(Kernels &kernels, size_t bytes)
      : kernels(kernels), pointer(bytes ? kernels.allocate(bytes) : nullptr) {}
  ~Buffer() {
    if (pointer)
      kernels.release(pointer);
  }
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
  char *bytes() const { return static_cast<char *>(pointer); }
  float *floats() const { return static_cast<float *>(pointer); }

private:
  Kernels &kernels;
  void *pointer;
};

/// Compresses g (plus the residual, which keeps what was not sent) into
/// `payload` (zeroed, of payload::bytes).
void compressWithFeedback(Kernels &kernels, const hrt_compression &spec,
                          const float *g, size_t n, int rank, char *payload) {
  uint64_t seed = rankSeed(spec, rank);
  if (!spec.residual) {
    kernels.compress(spec, g, n, seed, payload);
    return;
  }
  Buffer corrected(kernels, n * sizeof(float)),
      sent(kernels, n * sizeof(float));
  kernels.copy(corrected.floats(), g, n * sizeof(float));
  kernels.axpby(1.0f, spec.residual, 1.0f, corrected.floats(), n);
  kernels.compress(spec, corrected.floats(), n, seed, payload);
  kernels.decompressAdd(spec, payload, n, sent.floats());
  kernels.copy(spec.residual, corrected.floats(), n * sizeof(float));
  kernels.axpby(-1.0f, sent.floats(), 1.0f, spec.residual, n);
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

/// Every rank's `slot` bytes of `mine`, side by side in `all`.
hrt_status allGatherSlots(Kernels &kernels, const char *mine, char *all,
                          size_t slot, int size, hrt_comm comm) {
  return kernels.exchange(
      mine, slot, all, slot * size, [&](const void *send, void *recv) {
        return hrt_all_gather(send, recv, slot, HRT_UINT8, comm);
      });
}

/// The flat schemes: `result` (n zeroed floats) += every rank's
/// decompressed data.
hrt_status flatSum(Kernels &kernels, const float *data, size_t n,
                   const hrt_compression &spec, hrt_comm comm, int rank,
                   int size, float *result) {
  if (spec.scheme != HRT_SCHEME_ALLTOALL) {
    size_t slot = alignedSlot(payload::bytes(spec, n));
    Buffer mine(kernels, slot), all(kernels, slot * size);
    compressWithFeedback(kernels, spec, data, n, rank, mine.bytes());
    if (hrt_status status = allGatherSlots(kernels, mine.bytes(), all.bytes(),
                                           slot, size, comm))
      return status;
    for (int r = 0; r < size; ++r)
      kernels.decompressAdd(spec, all.bytes() + r * slot, n, result);
    return HRT_SUCCESS;
  }
  // Chunk c: [c n / P, (c + 1) n / P), padded to the largest chunk.
  auto begin = [&](int c) { return size_t(c) * n / size_t(size); };
  size_t largest = 0;
  for (int c = 0; c < size; ++c)
    largest = std::max(largest, begin(c + 1) - begin(c));
  size_t slot = 0;
  for (int c = 0; c < size; ++c)
    slot = std::max(slot, payload::bytes(chunkSpec(spec, c), largest));
  slot = alignedSlot(slot);
  // Each chunk compressed once, with error feedback on its slice of the
  // residual.
  Buffer outgoing(kernels, slot * size), incoming(kernels, slot * size);
  for (int c = 0; c < size; ++c) {
    hrt_compression chunk = chunkSpec(spec, c);
    if (spec.residual)
      chunk.residual = spec.residual + begin(c);
    compressWithFeedback(kernels, chunk, data + begin(c),
                         begin(c + 1) - begin(c), rank,
                         outgoing.bytes() + c * slot);
  }
  if (hrt_status status = kernels.exchange(
          outgoing.bytes(), slot * size, incoming.bytes(), slot * size,
          [&](const void *send, void *recv) {
            return hrt_all_to_all(send, recv, slot, HRT_UINT8, comm);
          }))
    return status;
  // Aggregate this rank's chunk, then compress the sum once more.
  hrt_compression own = chunkSpec(spec, rank);
  size_t length = begin(rank + 1) - begin(rank);
  Buffer aggregate(kernels, length * sizeof(float));
  for (int r = 0; r < size; ++r)
    kernels.decompressAdd(own, incoming.bytes() + r * slot, length,
                          aggregate.floats());
  Buffer summed(kernels, slot), gathered(kernels, slot * size);
  kernels.compress(own, aggregate.floats(), length, rankSeed(own, rank),
                   summed.bytes());
  if (hrt_status status = allGatherSlots(kernels, summed.bytes(),
                                         gathered.bytes(), slot, size, comm))
    return status;
  for (int c = 0; c < size; ++c)
    kernels.decompressAdd(chunkSpec(spec, c), gathered.bytes() + c * slot,
                          begin(c + 1) - begin(c), result + begin(c));
  return HRT_SUCCESS;
}

/// data <- the sum or mean of every rank's compressed data: flat, or with
/// nodes a dense sum inside each node, the flat scheme among the nodes'
/// first ranks and a broadcast inside each node.
hrt_status compressedAllReduce(Kernels &kernels, float *data, size_t n,
                               const hrt_compression &spec, hrt_reduce_op op,
                               hrt_comm comm, int rank, int size) {
  Buffer result(kernels, n * sizeof(float));
  int nodeSize = spec.node_size;
  if (nodeSize > 1 && nodeSize < size && size % nodeSize == 0) {
    hrt_comm node = nullptr, cross = nullptr;
    if (hrt_status status = nodeComms(comm, rank, nodeSize, node, cross))
      return status;
    Buffer sum(kernels, n * sizeof(float));
    Kernels::Rooted role =
        rank % nodeSize == 0 ? Kernels::Rooted::root : Kernels::Rooted::leaf;
    if (hrt_status status = kernels.exchange(
            data, n * sizeof(float), sum.floats(), n * sizeof(float),
            [&](const void *send, void *recv) {
              return hrt_reduce(send, recv, n, HRT_FLOAT32, HRT_SUM, 0, node);
            },
            role))
      return status;
    if (role == Kernels::Rooted::root) {
      hrt_compression flat = spec;
      flat.node_size = 1;
      int crossRank = 0, crossSize = 1;
      if (hrt_status status = hrt_comm_rank(cross, &crossRank))
        return status;
      if (hrt_status status = hrt_comm_size(cross, &crossSize))
        return status;
      if (hrt_status status = flatSum(kernels, sum.floats(), n, flat, cross,
                                      crossRank, crossSize, result.floats()))
        return status;
    }
    if (hrt_status status = kernels.exchange(
            result.floats(), n * sizeof(float), result.floats(),
            n * sizeof(float),
            [&](const void *, void *buffer) {
              return hrt_broadcast(buffer, n, HRT_FLOAT32, 0, node);
            },
            role))
      return status;
  } else if (hrt_status status = flatSum(kernels, data, n, spec, comm, rank,
                                         size, result.floats())) {
    return status;
  }
  float scale = op == HRT_AVG ? 1.0f / float(size) : 1.0f;
  kernels.axpby(scale, result.floats(), 0.0f, data, n);
  return HRT_SUCCESS;
}

} // namespace

const hrt_device_compression *
hetero::rt::deviceCompressionFor(const void *data) {
  const hrt_device_compression *device = deviceOps.load();
  return device && data && device->is_device(data) ? device : nullptr;
}

extern "C" void
hrt_register_device_compression(const hrt_device_compression *ops) {
  deviceOps.store(ops);
}

extern "C" size_t hrt_compressed_size(const hrt_compression *spec, size_t n) {
  return payload::bytes(*spec, n);
}

extern "C" void hrt_compress_payload(const hrt_compression *spec,
                                     const float *g, size_t n, uint64_t seed,
                                     void *payload) {
  compressOnHost(*spec, g, n, seed, static_cast<char *>(payload));
}

extern "C" void hrt_decompress_add(const hrt_compression *spec,
                                   const void *payload, size_t n, float *out) {
  decompressAddOnHost(*spec, static_cast<const char *>(payload), n, out);
}

extern "C" void hrt_compress_roundtrip_add(const hrt_compression *spec,
                                           const float *g, size_t n, int rank,
                                           float *out) {
  HostKernels kernels;
  Buffer compressed(kernels, payload::bytes(*spec, n));
  compressWithFeedback(kernels, *spec, g, n, rank, compressed.bytes());
  decompressAddOnHost(*spec, compressed.bytes(), n, out);
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
  const hrt_device_compression *device = nullptr;
  if (spec->placement == HRT_PLACEMENT_DEVICE) {
    device = deviceOps.load();
    if (!device)
      return invalid("placement on the device needs the device kernels of "
                     "libhetero_rt_cuda, which is not loaded");
    for (auto [buffer, role] :
         {std::pair<const void *, const char *>{data, "data"},
          {spec->residual, "residual"}})
      if (buffer && n && !device->is_device(buffer))
        return invalid(std::string("placement on the device needs the ") +
                       role + " in device memory; it is host memory");
  } else if (spec->placement != HRT_PLACEMENT_HOST) {
    return invalid("unknown placement " + std::to_string(spec->placement));
  } else if (hrt_status status = hetero::rt::checkHostCollective(
                 here, {{data, n * sizeof(float), "data"},
                        {spec->residual, n * sizeof(float), "residual"}})) {
    return status;
  }
  // Host payloads and sums; a backend on device memory stages their
  // exchanges.
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
  if (device) {
    DeviceKernels kernels(*device);
    hrt_status status =
        compressedAllReduce(kernels, data, n, *spec, op, comm, rank, size);
    device->synchronize();
    return status;
  }
  HostKernels kernels;
  return compressedAllReduce(kernels, data, n, *spec, op, comm, rank, size);
}
