//===- Compress.cpp - gradient compression kernels on the host ------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The loops are written for the auto-vectoriser (no branches in the
// element-wise bodies); element-wise kernels and reductions split large
// buffers across threads.
//
//===----------------------------------------------------------------------===//

#include "hetero-rt/compress.h"
#include "hetero/Support/Parallel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

namespace {

/// Buffers below this many elements stay on one thread.
constexpr size_t kParallelThreshold = size_t(1) << 20;

/// Runs body(begin, end) over [0, n) in contiguous chunks, one per thread.
template <typename Body> void parallelFor(size_t n, Body body) {
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  hetero::parallelChunks(n < kParallelThreshold ? 1 : threads, n, body);
}

/// A sum of per-chunk partial results, in chunk order (deterministic).
template <typename Partial> double parallelSum(size_t n, Partial partial) {
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  size_t chunks = n < kParallelThreshold ? 1 : threads;
  std::vector<double> sums(chunks, 0.0);
  size_t chunk = (n + chunks - 1) / std::max<size_t>(chunks, 1);
  parallelFor(chunks * kParallelThreshold, [&](size_t begin, size_t end) {
    for (size_t c = begin / kParallelThreshold; c < end / kParallelThreshold;
         ++c)
      sums[c] = partial(std::min(n, c * chunk), std::min(n, (c + 1) * chunk));
  });
  double total = 0.0;
  for (double sum : sums)
    total += sum;
  return total;
}

/// splitmix64: a counter-based generator, so element i's random number
/// depends only on (seed, i).
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// Uniform in [0, 1) from (seed, counter).
double uniform(uint64_t seed, uint64_t counter) {
  return double(mix(seed ^ mix(counter)) >> 11) * 0x1.0p-53;
}

uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}

float bitsFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

uint16_t toHalf(float value) {
  uint32_t bits = floatBits(value);
  uint32_t sign = (bits >> 16) & 0x8000u;
  uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude >= 0x7f800000u) // inf or NaN (kept quiet)
    return uint16_t(sign | 0x7c00u | (magnitude > 0x7f800000u ? 0x200u : 0));
  if (magnitude >= 0x477ff000u) // rounds to >= 65520: overflow
    return uint16_t(sign | 0x7c00u);
  if (magnitude < 0x38800000u) {  // below 2^-14: subnormal half or zero
    if (magnitude <= 0x33000000u) // at most half the smallest subnormal
      return uint16_t(sign);
    // The value is full x 2^(exponent - 150); in units of 2^-24 that is
    // full >> (126 - exponent), rounded to nearest even.
    uint32_t exponent = magnitude >> 23;
    uint32_t full = (magnitude & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - exponent;
    uint32_t kept = full >> shift;
    uint32_t rest = full & ((1u << shift) - 1);
    uint32_t midpoint = 1u << (shift - 1);
    kept += rest > midpoint || (rest == midpoint && (kept & 1));
    return uint16_t(sign | kept);
  }
  // Normal: rebias the exponent (127 -> 15) and round the mantissa.
  uint32_t rebased = magnitude - 0x38000000u;
  uint32_t rounded = (rebased + 0xfffu + ((rebased >> 13) & 1)) >> 13;
  return uint16_t(sign | rounded);
}

/// The magnitude top-k ranks by: NaN (a diverged gradient) ranks above
/// everything, so that it is sent and seen, as on the GPU.
float magnitudeOf(float value) {
  return std::isnan(value) ? std::numeric_limits<float>::infinity()
                           : std::fabs(value);
}

float fromHalf(uint16_t half) {
  uint32_t sign = uint32_t(half & 0x8000u) << 16;
  uint32_t exponent = (half >> 10) & 0x1fu;
  uint32_t mantissa = half & 0x3ffu;
  if (exponent == 0x1f)
    return bitsFloat(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    // Zero or subnormal: mantissa x 2^-24.
    float value = float(mantissa) * 0x1.0p-24f;
    return sign ? -value : value;
  }
  return bitsFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

} // namespace

extern "C" void hrt_topk(const float *g, size_t n, size_t k, uint32_t *indices,
                         float *values) {
  k = std::min(k, n);
  if (k == 0)
    return;
  // A threshold t from an evenly strided sample, aimed at about 1.5 k
  // elements at or above it. When at least k are, the k-th largest
  // magnitude is among them, so the exact selection runs on those
  // candidates only; otherwise on everything (t = 0).
  float estimate = 0.0f;
  size_t samples = std::min<size_t>(n, 65536);
  if (samples < n && k < n / 4) {
    std::vector<float> sampled(samples);
    for (size_t i = 0; i < samples; ++i)
      sampled[i] = magnitudeOf(g[i * (n / samples)]);
    size_t rank = std::min(
        samples - 1, size_t(1.5 * double(k) / double(n) * double(samples)));
    std::nth_element(sampled.begin(), sampled.begin() + rank, sampled.end(),
                     std::greater<float>());
    estimate = sampled[rank];
  }
  std::vector<uint32_t> candidates;
  auto collect = [&](float floor) {
    candidates.clear();
    for (size_t i = 0; i < n; ++i)
      if (magnitudeOf(g[i]) >= floor)
        candidates.push_back(uint32_t(i));
  };
  collect(estimate);
  if (candidates.size() < k)
    collect(0.0f);
  std::vector<float> magnitudes(candidates.size());
  for (size_t c = 0; c < candidates.size(); ++c)
    magnitudes[c] = magnitudeOf(g[candidates[c]]);
  std::nth_element(magnitudes.begin(), magnitudes.begin() + (k - 1),
                   magnitudes.end(), std::greater<float>());
  float threshold = magnitudes[k - 1];
  // Everything above the k-th largest magnitude and, in index order, as
  // many equal to it as fill k.
  size_t above = 0;
  for (uint32_t i : candidates)
    above += magnitudeOf(g[i]) > threshold;
  size_t ties = k - above, out = 0;
  for (uint32_t i : candidates) {
    float magnitude = magnitudeOf(g[i]);
    if (magnitude > threshold || (magnitude == threshold && ties > 0)) {
      ties -= magnitude == threshold;
      indices[out] = i;
      values[out++] = g[i];
    }
  }
}

extern "C" void hrt_dgc_sample(size_t n, size_t sample, uint64_t seed,
                               uint32_t *positions) {
  for (size_t i = 0; i < sample && n > 0; ++i)
    positions[i] = uint32_t(size_t(uniform(seed, i) * double(n)) % n);
}

extern "C" float hrt_dgc_threshold(float *magnitudes, size_t sample,
                                   double ratio) {
  if (sample == 0)
    return 0.0f;
  // A ratio outside [0, 1] (NaN included) keeps nothing or everything.
  ratio = ratio > 0.0 ? std::min(ratio, 1.0) : 0.0;
  size_t rank = std::min(sample - 1, size_t(std::ceil(ratio * sample)));
  std::nth_element(magnitudes, magnitudes + rank, magnitudes + sample,
                   std::greater<float>());
  return magnitudes[rank];
}

extern "C" size_t hrt_dgc(const float *g, size_t n, double ratio, size_t sample,
                          uint64_t seed, size_t capacity, uint32_t *indices,
                          float *values) {
  if (n == 0 || capacity == 0)
    return 0;
  sample = std::max<size_t>(1, std::min(sample, n));
  std::vector<uint32_t> positions(sample);
  hrt_dgc_sample(n, sample, seed, positions.data());
  std::vector<float> sampled(sample);
  for (size_t i = 0; i < sample; ++i)
    sampled[i] = std::fabs(g[positions[i]]);
  float threshold = hrt_dgc_threshold(sampled.data(), sample, ratio);
  size_t kept = 0;
  for (size_t i = 0; i < n && kept < capacity; ++i)
    if (std::fabs(g[i]) >= threshold) {
      indices[kept] = uint32_t(i);
      values[kept++] = g[i];
    }
  return kept;
}

extern "C" void hrt_randomk_indices(size_t n, size_t k, uint64_t seed,
                                    uint32_t *indices) {
  k = std::min(k, n);
  // Floyd's algorithm: k distinct indices in k draws.
  std::vector<bool> chosen(n, false);
  for (size_t j = n - k, draw = 0; j < n; ++j, ++draw) {
    size_t t = size_t(mix(seed ^ mix(draw)) % (j + 1));
    chosen[chosen[t] ? j : t] = true;
  }
  size_t out = 0;
  for (size_t i = 0; i < n; ++i)
    if (chosen[i])
      indices[out++] = uint32_t(i);
}

extern "C" void hrt_randomk(const float *g, size_t n, size_t k, uint64_t seed,
                            uint32_t *indices, float *values) {
  k = std::min(k, n);
  hrt_randomk_indices(n, k, seed, indices);
  for (size_t i = 0; i < k; ++i)
    values[i] = g[indices[i]];
}

extern "C" void hrt_pack_signs(const float *g, size_t n, uint32_t *words) {
  size_t count = (n + 31) / 32;
  parallelFor(count, [&](size_t begin, size_t end) {
    for (size_t w = begin; w < end; ++w) {
      uint32_t word = 0;
      size_t base = w * 32, bits = std::min<size_t>(32, n - base);
      if (bits == 32) {
        uint32_t lanes[32];
        std::memcpy(lanes, g + base, sizeof lanes);
        for (size_t b = 0; b < 32; ++b)
          word |= (lanes[b] >> 31) << b;
      } else {
        for (size_t b = 0; b < bits; ++b)
          word |= uint32_t(floatBits(g[base + b]) >> 31) << b;
      }
      words[w] = word;
    }
  });
}

extern "C" void hrt_unpack_signs(const uint32_t *words, size_t n, float scale,
                                 float *out) {
  parallelFor(n, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i)
      out[i] = (words[i / 32] >> (i % 32) & 1) ? -scale : scale;
  });
}

extern "C" float hrt_efsignsgd(const float *g, size_t n, uint32_t *words) {
  hrt_pack_signs(g, n, words);
  if (n == 0)
    return 0.0f;
  double l1 = parallelSum(n, [&](size_t begin, size_t end) {
    double sum = 0.0;
    for (size_t i = begin; i < end; ++i)
      sum += std::fabs(g[i]);
    return sum;
  });
  return float(l1 / double(n));
}

extern "C" float hrt_qsgd(const float *g, size_t n, int levels, uint64_t seed,
                          int8_t *steps) {
  levels = std::clamp(levels, 1, 127);
  double squares = parallelSum(n, [&](size_t begin, size_t end) {
    double sum = 0.0;
    for (size_t i = begin; i < end; ++i)
      sum += double(g[i]) * double(g[i]);
    return sum;
  });
  float norm = float(std::sqrt(squares));
  parallelFor(n, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      double scaled = norm > 0.0f ? std::fabs(g[i]) / norm * levels : 0.0;
      double floor = std::floor(scaled);
      int step = int(floor) + (uniform(seed, i) < scaled - floor ? 1 : 0);
      step = std::min(step, levels);
      steps[i] = int8_t(g[i] < 0.0f ? -step : step);
    }
  });
  return norm;
}

extern "C" void hrt_qsgd_decompress(const int8_t *steps, size_t n, int levels,
                                    float norm, float *out) {
  levels = std::clamp(levels, 1, 127);
  float unit = norm / float(levels);
  parallelFor(n, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i)
      out[i] = float(steps[i]) * unit;
  });
}

extern "C" void hrt_to_fp16(const float *g, size_t n, uint16_t *out) {
  parallelFor(n, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i)
      out[i] = toHalf(g[i]);
  });
}

extern "C" void hrt_from_fp16(const uint16_t *in, size_t n, float *out) {
  // Every half's float, computed once (256 KiB).
  static const std::vector<float> table = [] {
    std::vector<float> values(65536);
    for (uint32_t bits = 0; bits < 65536; ++bits)
      values[bits] = fromHalf(uint16_t(bits));
    return values;
  }();
  const float *lookup = table.data();
  parallelFor(n, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i)
      out[i] = lookup[in[i]];
  });
}

extern "C" void hrt_to_bf16(const float *g, size_t n, uint16_t *out) {
  parallelFor(n, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      uint32_t bits = floatBits(g[i]);
      bool nan = (bits & 0x7fffffffu) > 0x7f800000u;
      uint32_t rounded = bits + 0x7fffu + ((bits >> 16) & 1);
      out[i] = uint16_t(nan ? (bits >> 16) | 0x40u : rounded >> 16);
    }
  });
}

extern "C" void hrt_from_bf16(const uint16_t *in, size_t n, float *out) {
  parallelFor(n, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i)
      out[i] = bitsFloat(uint32_t(in[i]) << 16);
  });
}

extern "C" void hrt_scatter_add(const uint32_t *indices, const float *values,
                                size_t count, float *out) {
  for (size_t i = 0; i < count; ++i)
    out[indices[i]] += values[i];
}
