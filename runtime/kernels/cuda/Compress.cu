//===- Compress.cu - gradient compression kernels on the GPU --------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Device counterparts of runtime/kernels/cpu (include/hetero-rt/
// compress_cuda.h). Buffers are device pointers; work is queued on `stream`.
// Selections (top-k, DGC) keep index order: a block counts its hits, a scan
// (CUB's) turns the counts into offsets, and each block writes its hits in
// order.
// Top-k finds the exact k-th largest magnitude by bisection over the bits
// of |g| (non-negative floats order like their bit patterns).
//
//===----------------------------------------------------------------------===//

#include "hetero-rt/compress_cuda.h"

#include <cub/device/device_scan.cuh>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace {

constexpr int kThreads = 256;

unsigned blocksFor(size_t n) {
  return unsigned(std::max<size_t>(1, (n + kThreads - 1) / kThreads));
}

/// Blocks of a reduction: each thread strides over the input, so that a
/// block adds one partial sum to the result, not one per warp.
constexpr unsigned kReductionBlocks = 2048;
unsigned reductionBlocksFor(size_t n) {
  return std::min(blocksFor(n), kReductionBlocks);
}

/// The sum of `value` over the block (of kThreads threads), in thread 0.
template <typename T> __device__ T blockSum(T value) {
  __shared__ T partial[kThreads / 32];
  __syncthreads(); // a previous call's readers are done with `partial`
  for (int offset = 16; offset > 0; offset /= 2)
    value += __shfl_down_sync(0xffffffffu, value, offset);
  unsigned lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  if (lane == 0)
    partial[warp] = value;
  __syncthreads();
  if (warp != 0)
    return T(0);
  value = lane < kThreads / 32 ? partial[lane] : T(0);
  for (int offset = 16; offset > 0; offset /= 2)
    value += __shfl_down_sync(0xffffffffu, value, offset);
  return value;
}

/// The indices a thread of a reduction visits: i, i + stride, ...
#define FOR_EACH_STRIDED(i, n)                                                 \
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < (n);      \
       i += size_t(gridDim.x) * blockDim.x)

__device__ uint32_t magnitudeKey(float value) {
  return __float_as_uint(value) & 0x7fffffffu;
}

__device__ uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// out[i] = convert(in[i]): the casts.
template <typename In, typename Out, typename Convert>
__global__ void mapElements(const In *in, size_t n, Out *out, Convert convert) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n)
    out[i] = convert(in[i]);
}

struct ToHalf {
  __device__ __half operator()(float x) const { return __float2half_rn(x); }
};
struct FromHalf {
  __device__ float operator()(__half x) const { return __half2float(x); }
};
struct ToBf16 {
  __device__ __nv_bfloat16 operator()(float x) const {
    return __float2bfloat16_rn(x);
  }
};
struct FromBf16 {
  __device__ float operator()(__nv_bfloat16 x) const {
    return __bfloat162float(x);
  }
};

/// One warp packs 32 consecutive signs into one word.
__global__ void packSigns(const float *g, size_t n, uint32_t *words) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  bool negative = i < n && (__float_as_uint(g[i]) >> 31);
  uint32_t word = __ballot_sync(0xffffffffu, negative);
  if ((threadIdx.x & 31) == 0 && i < n)
    words[i / 32] = word;
}

__global__ void unpackSigns(const uint32_t *words, size_t n, float scale,
                            float *out) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n)
    out[i] = (words[i / 32] >> (i % 32) & 1) ? -scale : scale;
}

/// out += +positive for a clear sign bit, -negative for a set one.
__global__ void unpackSignsAdd(const uint32_t *words, size_t n, float positive,
                               float negative, float *out) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n)
    out[i] += (words[i / 32] >> (i % 32) & 1) ? -negative : positive;
}

__global__ void sumAbsAndSquares(const float *g, size_t n, double *sums) {
  double magnitude = 0.0, square = 0.0;
  FOR_EACH_STRIDED(i, n) {
    double value = fabs(double(g[i]));
    magnitude += value;
    square += value * value;
  }
  magnitude = blockSum(magnitude);
  square = blockSum(square);
  if (threadIdx.x == 0) {
    atomicAdd(&sums[0], magnitude);
    atomicAdd(&sums[1], square);
  }
}

/// Sums of |g| over the non-negative and the negative elements (by sign
/// bit), and the count of non-negative ones: 1-bit SGD's two means.
__global__ void sumBySign(const float *g, size_t n, double *sums) {
  double positive = 0.0, negative = 0.0, positives = 0.0;
  FOR_EACH_STRIDED(i, n) {
    double value = fabs(double(g[i]));
    bool isNegative = __float_as_uint(g[i]) >> 31;
    (isNegative ? negative : positive) += value;
    positives += isNegative ? 0.0 : 1.0;
  }
  positive = blockSum(positive);
  negative = blockSum(negative);
  positives = blockSum(positives);
  if (threadIdx.x == 0) {
    atomicAdd(&sums[0], positive);
    atomicAdd(&sums[1], negative);
    atomicAdd(&sums[2], positives);
  }
}

/// y = alpha x + beta y; y is not read when beta is 0.
__global__ void axpby(float alpha, const float *x, float beta, float *y,
                      size_t n) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n)
    y[i] = beta == 0.0f ? alpha * x[i] : alpha * x[i] + beta * y[i];
}

__global__ void quantise(const float *g, size_t n, int levels, uint64_t seed,
                         const double *sums, int8_t *steps) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= n)
    return;
  // As the host kernel: the norm rounded to float, the scaled magnitude
  // in float, so that both round every element to the same step.
  float norm = float(sqrt(sums[1]));
  double scaled =
      norm > 0.0f ? double(fabsf(g[i]) / norm * float(levels)) : 0.0;
  double below = floor(scaled);
  double u = double(mix(seed ^ mix(i)) >> 11) * 0x1.0p-53;
  int step = min(int(below) + (u < scaled - below ? 1 : 0), levels);
  steps[i] = int8_t(g[i] < 0.0f ? -step : step);
}

__global__ void dequantise(const int8_t *steps, size_t n, float unit,
                           float *out) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n)
    out[i] = float(steps[i]) * unit;
}

__global__ void scatterAdd(const uint32_t *indices, const float *values,
                           size_t count, float *out) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < count)
    atomicAdd(&out[indices[i]], values[i]);
}

__global__ void gather(const float *g, const uint32_t *indices, size_t count,
                       float *values) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < count)
    values[i] = g[indices[i]];
}

/// Elements whose magnitude key is at least `floor`.
__global__ void countAtLeast(const float *g, size_t n, uint32_t floor,
                             unsigned long long *count) {
  unsigned long long hits = 0;
  FOR_EACH_STRIDED(i, n) { hits += magnitudeKey(g[i]) >= floor; }
  hits = blockSum(hits);
  if (threadIdx.x == 0 && hits)
    atomicAdd(count, hits);
}

/// The selection predicate: key > above, or key == above and index <=
/// lastTie (lastTie < 0: no ties), or key >= floor when `above` is ~0.
struct Select {
  uint32_t above;
  long long lastTie;
  __device__ bool operator()(const float *g, size_t i) const {
    uint32_t key = magnitudeKey(g[i]);
    return key > above || (key == above && (long long)i <= lastTie);
  }
};

__global__ void countPerBlock(const float *g, size_t n, Select select,
                              uint32_t *counts) {
  __shared__ uint32_t total;
  if (threadIdx.x == 0)
    total = 0;
  __syncthreads();
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  bool hit = i < n && select(g, i);
  unsigned votes = __popc(__ballot_sync(0xffffffffu, hit));
  if ((threadIdx.x & 31) == 0)
    atomicAdd(&total, votes);
  __syncthreads();
  if (threadIdx.x == 0)
    counts[blockIdx.x] = total;
}

/// Writes the hits of each block at its offset, in index order.
__global__ void writeHits(const float *g, size_t n, Select select,
                          const uint32_t *offsets, size_t capacity,
                          uint32_t *indices, float *values) {
  __shared__ uint32_t warpTotals[kThreads / 32];
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  bool hit = i < n && select(g, i);
  unsigned lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  unsigned ballot = __ballot_sync(0xffffffffu, hit);
  if (lane == 0)
    warpTotals[warp] = __popc(ballot);
  __syncthreads();
  uint32_t before = 0;
  for (unsigned w = 0; w < warp; ++w)
    before += warpTotals[w];
  before += __popc(ballot & ((1u << lane) - 1));
  size_t position = offsets[blockIdx.x] + before;
  if (hit && position < capacity) {
    indices[position] = uint32_t(i);
    values[position] = g[i];
  }
}

/// Device scratch of the selections, allocated and freed in order on the
/// selection's stream (cudaFree would wait for the whole device, NCCL's
/// kernels included).
struct Scratch {
  explicit Scratch(cudaStream_t stream) : stream(stream) {}
  cudaStream_t stream;
  unsigned long long *count = nullptr;
  uint32_t *counts = nullptr, *offsets = nullptr;
  void *scan = nullptr;
  size_t scanBytes = 0;
  ~Scratch() {
    for (void *pointer :
         {static_cast<void *>(count), static_cast<void *>(counts),
          static_cast<void *>(offsets), scan})
      if (pointer)
        cudaFreeAsync(pointer, stream);
  }
};

/// Writes the elements `select` keeps, in index order, up to `capacity`;
/// returns how many it kept. The block counts (and a trailing 0) are
/// scanned by CUB, so that offsets[blocks] is the total.
size_t compact(const float *g, size_t n, Select select, size_t capacity,
               uint32_t *indices, float *values, cudaStream_t stream,
               Scratch &scratch) {
  unsigned blocks = blocksFor(n);
  if (!scratch.offsets) {
    cudaMallocAsync(&scratch.counts, sizeof(uint32_t) * (blocks + 1), stream);
    cudaMallocAsync(&scratch.offsets, sizeof(uint32_t) * (blocks + 1), stream);
    cub::DeviceScan::ExclusiveSum(nullptr, scratch.scanBytes, scratch.counts,
                                  scratch.offsets, blocks + 1, stream);
    cudaMallocAsync(&scratch.scan, scratch.scanBytes, stream);
  }
  cudaMemsetAsync(scratch.counts + blocks, 0, sizeof(uint32_t), stream);
  countPerBlock<<<blocks, kThreads, 0, stream>>>(g, n, select, scratch.counts);
  cub::DeviceScan::ExclusiveSum(scratch.scan, scratch.scanBytes, scratch.counts,
                                scratch.offsets, blocks + 1, stream);
  writeHits<<<blocks, kThreads, 0, stream>>>(g, n, select, scratch.offsets,
                                             capacity, indices, values);
  uint32_t kept = 0;
  cudaMemcpyAsync(&kept, scratch.offsets + blocks, sizeof kept,
                  cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
  return std::min<size_t>(kept, capacity);
}

/// Elements of magnitude key >= floor.
unsigned long long countKeys(const float *g, size_t n, uint32_t floor,
                             cudaStream_t stream, Scratch &scratch) {
  if (!scratch.count)
    cudaMallocAsync(&scratch.count, sizeof(unsigned long long), stream);
  cudaMemsetAsync(scratch.count, 0, sizeof(unsigned long long), stream);
  countAtLeast<<<reductionBlocksFor(n), kThreads, 0, stream>>>(g, n, floor,
                                                               scratch.count);
  unsigned long long count = 0;
  cudaMemcpyAsync(&count, scratch.count, sizeof count, cudaMemcpyDeviceToHost,
                  stream);
  cudaStreamSynchronize(stream);
  return count;
}

cudaStream_t asStream(void *stream) {
  return static_cast<cudaStream_t>(stream);
}

int status() { return int(cudaGetLastError()); }

} // namespace

namespace {

/// Launches the cast `convert` over n elements viewed as In and Out.
template <typename In, typename Out, typename Convert>
int castElements(const void *in, size_t n, void *out, Convert convert,
                 void *stream) {
  mapElements<<<blocksFor(n), kThreads, 0, asStream(stream)>>>(
      static_cast<const In *>(in), n, static_cast<Out *>(out), convert);
  return status();
}

} // namespace

extern "C" int hrt_cuda_to_fp16(const float *g, size_t n, uint16_t *out,
                                void *stream) {
  return castElements<float, __half>(g, n, out, ToHalf(), stream);
}

extern "C" int hrt_cuda_from_fp16(const uint16_t *in, size_t n, float *out,
                                  void *stream) {
  return castElements<__half, float>(in, n, out, FromHalf(), stream);
}

extern "C" int hrt_cuda_to_bf16(const float *g, size_t n, uint16_t *out,
                                void *stream) {
  return castElements<float, __nv_bfloat16>(g, n, out, ToBf16(), stream);
}

extern "C" int hrt_cuda_from_bf16(const uint16_t *in, size_t n, float *out,
                                  void *stream) {
  return castElements<__nv_bfloat16, float>(in, n, out, FromBf16(), stream);
}

extern "C" int hrt_cuda_pack_signs(const float *g, size_t n, uint32_t *words,
                                   void *stream) {
  packSigns<<<blocksFor(n), kThreads, 0, asStream(stream)>>>(g, n, words);
  return status();
}

extern "C" int hrt_cuda_unpack_signs(const uint32_t *words, size_t n,
                                     float scale, float *out, void *stream) {
  unpackSigns<<<blocksFor(n), kThreads, 0, asStream(stream)>>>(words, n, scale,
                                                               out);
  return status();
}

extern "C" int hrt_cuda_unpack_signs_add(const uint32_t *words, size_t n,
                                         float positive, float negative,
                                         float *out, void *stream) {
  unpackSignsAdd<<<blocksFor(n), kThreads, 0, asStream(stream)>>>(
      words, n, positive, negative, out);
  return status();
}

namespace {

/// Queues the sums of |g| and g^2, then `then(sums)` on the same stream,
/// and returns the two sums to the host.
template <typename Then>
void sumsThen(const float *g, size_t n, void *stream, Then then,
              double host[2]) {
  double *sums = nullptr;
  cudaMallocAsync(&sums, 2 * sizeof(double), asStream(stream));
  cudaMemsetAsync(sums, 0, 2 * sizeof(double), asStream(stream));
  sumAbsAndSquares<<<reductionBlocksFor(n), kThreads, 0, asStream(stream)>>>(
      g, n, sums);
  then(sums);
  cudaMemcpyAsync(host, sums, 2 * sizeof(double), cudaMemcpyDeviceToHost,
                  asStream(stream));
  cudaFreeAsync(sums, asStream(stream));
  cudaStreamSynchronize(asStream(stream));
}

} // namespace

extern "C" int hrt_cuda_efsignsgd(const float *g, size_t n, uint32_t *words,
                                  float *scale, void *stream) {
  double host[2] = {0.0, 0.0};
  sumsThen(
      g, n, stream,
      [&](double *) {
        packSigns<<<blocksFor(n), kThreads, 0, asStream(stream)>>>(g, n, words);
      },
      host);
  *scale = n ? float(host[0] / double(n)) : 0.0f;
  return status();
}

extern "C" int hrt_cuda_onebit(const float *g, size_t n, uint32_t *words,
                               float *positive, float *negative, void *stream) {
  double *sums = nullptr;
  cudaMallocAsync(&sums, 3 * sizeof(double), asStream(stream));
  cudaMemsetAsync(sums, 0, 3 * sizeof(double), asStream(stream));
  sumBySign<<<reductionBlocksFor(n), kThreads, 0, asStream(stream)>>>(g, n,
                                                                      sums);
  packSigns<<<blocksFor(n), kThreads, 0, asStream(stream)>>>(g, n, words);
  double host[3] = {0.0, 0.0, 0.0};
  cudaMemcpyAsync(host, sums, sizeof host, cudaMemcpyDeviceToHost,
                  asStream(stream));
  cudaFreeAsync(sums, asStream(stream));
  cudaStreamSynchronize(asStream(stream));
  double positives = host[2], negatives = double(n) - positives;
  *positive = positives > 0.0 ? float(host[0] / positives) : 0.0f;
  *negative = negatives > 0.0 ? float(host[1] / negatives) : 0.0f;
  return status();
}

extern "C" int hrt_cuda_axpby(float alpha, const float *x, float beta, float *y,
                              size_t n, void *stream) {
  axpby<<<blocksFor(n), kThreads, 0, asStream(stream)>>>(alpha, x, beta, y, n);
  return status();
}

extern "C" int hrt_cuda_qsgd(const float *g, size_t n, int levels,
                             uint64_t seed, int8_t *steps, float *norm,
                             void *stream) {
  levels = std::min(std::max(levels, 1), 127);
  double host[2] = {0.0, 0.0};
  sumsThen(
      g, n, stream,
      [&](double *sums) {
        quantise<<<blocksFor(n), kThreads, 0, asStream(stream)>>>(
            g, n, levels, seed, sums, steps);
      },
      host);
  *norm = float(std::sqrt(host[1]));
  return status();
}

extern "C" int hrt_cuda_qsgd_decompress(const int8_t *steps, size_t n,
                                        int levels, float norm, float *out,
                                        void *stream) {
  levels = std::min(std::max(levels, 1), 127);
  dequantise<<<blocksFor(n), kThreads, 0, asStream(stream)>>>(
      steps, n, norm / float(levels), out);
  return status();
}

extern "C" int hrt_cuda_scatter_add(const uint32_t *indices,
                                    const float *values, size_t count,
                                    float *out, void *stream) {
  scatterAdd<<<blocksFor(count), kThreads, 0, asStream(stream)>>>(
      indices, values, count, out);
  return status();
}

extern "C" int hrt_cuda_gather(const float *g, const uint32_t *indices,
                               size_t count, float *values, void *stream) {
  gather<<<blocksFor(count), kThreads, 0, asStream(stream)>>>(g, indices, count,
                                                              values);
  return status();
}

extern "C" int hrt_cuda_topk(const float *g, size_t n, size_t k,
                             uint32_t *indices, float *values, void *stream) {
  k = std::min(k, n);
  if (k == 0)
    return 0;
  cudaStream_t s = asStream(stream);
  Scratch scratch(s);
  // The largest key T with at least k elements at or above it.
  uint32_t threshold = 0;
  for (int bit = 30; bit >= 0; --bit) {
    uint32_t candidate = threshold | (1u << bit);
    if (countKeys(g, n, candidate, s, scratch) >= k)
      threshold = candidate;
  }
  unsigned long long above =
      threshold == 0x7fffffffu ? 0 : countKeys(g, n, threshold + 1, s, scratch);
  size_t ties = k - size_t(above);
  // The index of the last tie kept, the ties-th key equal to T in index
  // order: compact every key >= T and walk them on the host.
  long long lastTie = -1;
  if (ties > 0) {
    size_t atLeast = size_t(countKeys(g, n, threshold, s, scratch));
    uint32_t *allIndices = nullptr;
    float *allValues = nullptr;
    cudaMallocAsync(&allIndices, sizeof(uint32_t) * atLeast, s);
    cudaMallocAsync(&allValues, sizeof(float) * atLeast, s);
    Scratch tieScratch(s);
    size_t found = compact(g, n, Select{threshold, (long long)n}, atLeast,
                           allIndices, allValues, s, tieScratch);
    std::vector<uint32_t> hostIndices(found);
    std::vector<float> hostValues(found);
    cudaMemcpyAsync(hostIndices.data(), allIndices, sizeof(uint32_t) * found,
                    cudaMemcpyDeviceToHost, s);
    cudaMemcpyAsync(hostValues.data(), allValues, sizeof(float) * found,
                    cudaMemcpyDeviceToHost, s);
    cudaStreamSynchronize(s);
    size_t seen = 0;
    for (size_t j = 0; j < found && seen < ties; ++j) {
      uint32_t bits;
      std::memcpy(&bits, &hostValues[j], sizeof bits);
      if ((bits & 0x7fffffffu) == threshold && ++seen == ties)
        lastTie = hostIndices[j];
    }
    cudaFreeAsync(allIndices, s);
    cudaFreeAsync(allValues, s);
  }
  compact(g, n, Select{threshold, lastTie}, k, indices, values, s, scratch);
  return status();
}

extern "C" int hrt_cuda_dgc(const float *g, size_t n, float threshold,
                            size_t capacity, uint32_t *indices, float *values,
                            size_t *kept, void *stream) {
  // Keys >= T: key > T - 1 (T = 0 keeps everything).
  uint32_t key;
  float magnitude = std::fabs(threshold);
  std::memcpy(&key, &magnitude, sizeof key);
  // key >= T is key > T - 1; for T = 0, key > 0 or key == 0 anywhere.
  Select select = key == 0 ? Select{0, (long long)n} : Select{key - 1, -1};
  Scratch scratch(asStream(stream));
  *kept = compact(g, n, select, capacity, indices, values, asStream(stream),
                  scratch);
  return status();
}
