//===- CompressedDevice.cpp - the device side of compressed all-reduces ---===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The kernels a compressed all-reduce with HRT_PLACEMENT_DEVICE runs
// (hrt_device_compression in include/hetero-rt/compress.h), registered with
// libhetero_rt when this library is loaded. Payloads are laid out as the
// host's (CompressedPayload.h); everything runs on the calling thread's
// stream, and a scalar the host computes or needs (a scale, a norm, DGC's
// count and threshold, random-k's indices) crosses in a small copy.
//
//===----------------------------------------------------------------------===//

#include "../../CompressedPayload.h"
#include "Context.h"
#include "hetero-rt/compress.h"
#include "hetero-rt/compress_cuda.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace {

namespace payload = hetero::rt::payload;
using hetero::rt::cuda::ensureContext;
using hetero::rt::cuda::threadStream;

void *stream() { return threadStream(); }

/// Ends the process when a kernel's launch failed.
void launched(int status, const char *kernel) {
  if (status != 0)
    hetero::rt::cuda::fail((std::string("compressed all-reduce: ") + kernel +
                            " failed to launch (CUDA error " +
                            std::to_string(status) + ")")
                               .c_str());
}

template <typename T> T *at(char *base, size_t offset) {
  return reinterpret_cast<T *>(base + offset);
}
template <typename T> const T *at(const char *base, size_t offset) {
  return reinterpret_cast<const T *>(base + offset);
}

int isDevice(const void *pointer) {
  // Without a usable driver nothing is device memory (the caller then
  // compresses on the host) rather than the process ending here.
  static const bool driver = cuInit(0) == CUDA_SUCCESS;
  if (!driver)
    return 0;
  ensureContext();
  CUmemorytype type = CUmemorytype(0);
  CUresult result =
      cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                            reinterpret_cast<CUdeviceptr>(pointer));
  return result == CUDA_SUCCESS && type == CU_MEMORYTYPE_DEVICE;
}

void *allocate(size_t bytes) {
  if (bytes == 0)
    return nullptr;
  ensureContext();
  hetero::rt::cuda::ensureCachingPool();
  CUdeviceptr pointer = 0;
  HRT_CUDA_CHECK(cuMemAllocAsync(&pointer, bytes, threadStream()));
  HRT_CUDA_CHECK(cuMemsetD8Async(pointer, 0, bytes, threadStream()));
  return reinterpret_cast<void *>(pointer);
}

void release(void *pointer) {
  if (pointer)
    HRT_CUDA_CHECK(
        cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(pointer), threadStream()));
}

void synchronize() {
  ensureContext();
  HRT_CUDA_CHECK(cuStreamSynchronize(threadStream()));
}

void copy(void *to, const void *from, size_t bytes) {
  ensureContext();
  if (bytes)
    HRT_CUDA_CHECK(cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(to),
                                 reinterpret_cast<CUdeviceptr>(from), bytes,
                                 threadStream()));
  synchronize();
}

void axpby(float alpha, const float *x, float beta, float *y, size_t n) {
  if (n)
    launched(hrt_cuda_axpby(alpha, x, beta, y, n, stream()), "axpby");
}

/// DGC's threshold from the magnitudes at the positions `seed` draws, as
/// the host kernel finds it.
float dgcThreshold(const hrt_compression &spec, const float *g, size_t n,
                   uint64_t seed) {
  size_t sample = std::max<size_t>(1, payload::dgcSample(n));
  std::vector<uint32_t> positions(sample);
  hrt_dgc_sample(n, sample, seed, positions.data());
  uint32_t *onDevice = static_cast<uint32_t *>(allocate(4 * sample));
  float *values = static_cast<float *>(allocate(4 * sample));
  copy(onDevice, positions.data(), 4 * sample);
  launched(hrt_cuda_gather(g, onDevice, sample, values, stream()), "gather");
  std::vector<float> magnitudes(sample);
  copy(magnitudes.data(), values, 4 * sample);
  release(onDevice);
  release(values);
  for (float &magnitude : magnitudes)
    magnitude = std::fabs(magnitude);
  return hrt_dgc_threshold(magnitudes.data(), sample, spec.ratio);
}

void compress(const hrt_compression *spec, const float *g, size_t n,
              uint64_t seed, char *out) {
  if (n == 0)
    return; // the zeroed payload: no entries, zero scalars
  ensureContext();
  size_t head = payload::header(spec->compressor);
  size_t k = payload::keptCount(*spec, n);
  uint32_t *indices = at<uint32_t>(out, head);
  float *values = at<float>(out, payload::valuesAt(*spec, n));
  switch (spec->compressor) {
  case HRT_COMPRESS_NONE:
    copy(out, g, 4 * n);
    return;
  case HRT_COMPRESS_FP16:
    launched(hrt_cuda_to_fp16(g, n, at<uint16_t>(out, 0), stream()), "fp16");
    return;
  case HRT_COMPRESS_BF16:
    launched(hrt_cuda_to_bf16(g, n, at<uint16_t>(out, 0), stream()), "bf16");
    return;
  case HRT_COMPRESS_TOPK:
    launched(hrt_cuda_topk(g, n, k, indices, values, stream()), "topk");
    return;
  case HRT_COMPRESS_RANDOMK: {
    std::vector<uint32_t> chosen(k);
    hrt_randomk_indices(n, k, seed, chosen.data());
    copy(indices, chosen.data(), 4 * k);
    launched(hrt_cuda_gather(g, indices, k, values, stream()), "gather");
    return;
  }
  case HRT_COMPRESS_DGC: {
    float threshold = dgcThreshold(*spec, g, n, seed);
    size_t kept = 0;
    launched(hrt_cuda_dgc(g, n, threshold, payload::dgcCapacity(*spec, n),
                          indices, values, &kept, stream()),
             "dgc");
    uint32_t count = uint32_t(kept);
    copy(out, &count, 4);
    return;
  }
  case HRT_COMPRESS_EFSIGNSGD: {
    float scale = 0.0f;
    launched(hrt_cuda_efsignsgd(g, n, indices, &scale, stream()), "efsignsgd");
    copy(out, &scale, 4);
    return;
  }
  case HRT_COMPRESS_ONEBIT: {
    float means[2] = {0.0f, 0.0f};
    launched(hrt_cuda_onebit(g, n, indices, &means[0], &means[1], stream()),
             "onebit");
    copy(out, means, 8);
    return;
  }
  case HRT_COMPRESS_QSGD: {
    float norm = 0.0f;
    launched(hrt_cuda_qsgd(g, n, spec->levels, seed, at<int8_t>(out, head),
                           &norm, stream()),
             "qsgd");
    copy(out, &norm, 4);
    return;
  }
  }
}

void decompressAdd(const hrt_compression *spec, const char *in, size_t n,
                   float *out) {
  if (n == 0)
    return;
  ensureContext();
  size_t head = payload::header(spec->compressor);
  const uint32_t *indices = at<uint32_t>(in, head);
  const float *values = at<float>(in, payload::valuesAt(*spec, n));
  // Casts and QSGD decode into a scratch buffer, which is then added.
  auto decodedAdd = [&](auto decode) {
    float *scratch = static_cast<float *>(allocate(4 * n));
    decode(scratch);
    axpby(1.0f, scratch, 1.0f, out, n);
    release(scratch);
  };
  float header[2] = {0.0f, 0.0f};
  if (head)
    copy(header, in, head);
  switch (spec->compressor) {
  case HRT_COMPRESS_NONE:
    axpby(1.0f, at<float>(in, 0), 1.0f, out, n);
    return;
  case HRT_COMPRESS_FP16:
  case HRT_COMPRESS_BF16:
    decodedAdd([&](float *scratch) {
      const uint16_t *halves = at<uint16_t>(in, 0);
      launched(spec->compressor == HRT_COMPRESS_FP16
                   ? hrt_cuda_from_fp16(halves, n, scratch, stream())
                   : hrt_cuda_from_bf16(halves, n, scratch, stream()),
               "cast");
    });
    return;
  case HRT_COMPRESS_TOPK:
  case HRT_COMPRESS_RANDOMK:
  case HRT_COMPRESS_DGC: {
    size_t count = payload::keptCount(*spec, n);
    if (spec->compressor == HRT_COMPRESS_DGC) {
      uint32_t kept = 0;
      std::memcpy(&kept, header, 4);
      count = kept;
    }
    if (count)
      launched(hrt_cuda_scatter_add(indices, values, count, out, stream()),
               "scatter_add");
    return;
  }
  case HRT_COMPRESS_EFSIGNSGD:
  case HRT_COMPRESS_ONEBIT: {
    // The words: EFSignSGD's scale either way, 1-bit SGD's two means.
    float positive = header[0];
    float negative =
        spec->compressor == HRT_COMPRESS_ONEBIT ? header[1] : positive;
    launched(hrt_cuda_unpack_signs_add(indices, n, positive, negative, out,
                                       stream()),
             "unpack_signs_add");
    return;
  }
  case HRT_COMPRESS_QSGD:
    decodedAdd([&](float *scratch) {
      launched(hrt_cuda_qsgd_decompress(at<int8_t>(in, head), n, spec->levels,
                                        header[0], scratch, stream()),
               "qsgd_decompress");
    });
    return;
  }
}

const hrt_device_compression kDeviceCompression = {
    isDevice, allocate,      release, copy,
    compress, decompressAdd, axpby,   synchronize};

/// Registered when the library is loaded, so that every later compressed
/// all-reduce of the process can run on the device.
__attribute__((constructor)) void registerDeviceCompression() {
  hrt_register_device_compression(&kDeviceCompression);
}

} // namespace
