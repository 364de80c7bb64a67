//===- Memory.cpp - device copies of globals, host staging ----------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The memory side of a GPU step (hetero-gpu-device-buffers): the program's
// globals (parameters, optimizer state, constants) get one device copy each,
// made on first use and kept until hrt_cuda_release, and runtime calls that
// work on host memory get pinned host copies of device buffers.
//
//===----------------------------------------------------------------------===//

#include "Context.h"
#include "hetero-rt/gpu.h"

#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

namespace {

using hetero::rt::cuda::ensureContext;
using hetero::rt::cuda::threadStream;

struct Mirror {
  CUdeviceptr device = 0;
  size_t bytes = 0;
};

/// The device copies, by host address.
struct Mirrors {
  std::mutex mutex;
  std::unordered_map<void *, Mirror> byHost;
};
Mirrors &mirrors() {
  static Mirrors *all = new Mirrors; // outlives the static destructors
  return *all;
}

/// Pinned host buffers handed out by hrt_cuda_stage_in, by size, for reuse.
struct Staging {
  std::mutex mutex;
  std::multimap<size_t, void *> free;
  std::unordered_map<void *, size_t> sizes;
};
Staging &staging() {
  static Staging *all = new Staging;
  return *all;
}

void synchronize() { HRT_CUDA_CHECK(cuStreamSynchronize(threadStream())); }

void copyBytes(void *destination, const void *source, size_t bytes) {
  if (bytes == 0)
    return;
  HRT_CUDA_CHECK(cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(destination),
                               reinterpret_cast<CUdeviceptr>(source), bytes,
                               threadStream()));
  synchronize();
}

size_t bytesOf(int64_t bytes, const char *entry) {
  if (bytes < 0)
    hetero::rt::cuda::fail(
        (std::string(entry) + ": a negative size, " + std::to_string(bytes))
            .c_str());
  return size_t(bytes);
}

} // namespace

HRT_CUDA_EXPORT void *hrt_cuda_mirror(void *host, int64_t bytes) {
  size_t size = bytesOf(bytes, "hrt_cuda_mirror");
  Mirrors &all = mirrors();
  std::lock_guard<std::mutex> lock(all.mutex);
  auto found = all.byHost.find(host);
  if (found != all.byHost.end()) {
    if (found->second.bytes != size)
      hetero::rt::cuda::fail(
          ("hrt_cuda_mirror: the buffer at " +
           std::to_string(reinterpret_cast<uintptr_t>(host)) + " has " +
           std::to_string(found->second.bytes) +
           " bytes on the device, asked for " + std::to_string(size))
              .c_str());
    return reinterpret_cast<void *>(found->second.device);
  }
  ensureContext();
  Mirror mirror;
  mirror.bytes = size;
  if (size > 0) {
    HRT_CUDA_CHECK(cuMemAlloc(&mirror.device, size));
    HRT_CUDA_CHECK(
        cuMemcpyHtoDAsync(mirror.device, host, size, threadStream()));
    synchronize();
  }
  all.byHost.emplace(host, mirror);
  return reinterpret_cast<void *>(mirror.device);
}

namespace {
/// Copies every device copy to its host buffer, or every host buffer to its
/// device copy.
void copyMirrors(bool toHost) {
  Mirrors &all = mirrors();
  std::lock_guard<std::mutex> lock(all.mutex);
  if (all.byHost.empty())
    return;
  ensureContext();
  for (auto &[host, mirror] : all.byHost) {
    if (!mirror.bytes)
      continue;
    if (toHost)
      HRT_CUDA_CHECK(
          cuMemcpyDtoHAsync(host, mirror.device, mirror.bytes, threadStream()));
    else
      HRT_CUDA_CHECK(
          cuMemcpyHtoDAsync(mirror.device, host, mirror.bytes, threadStream()));
  }
  synchronize();
}
} // namespace

HRT_CUDA_EXPORT void hrt_cuda_mirror_copy(void *host, int64_t bytes,
                                          int to_device) {
  size_t size = bytesOf(bytes, "hrt_cuda_mirror_copy");
  Mirrors &all = mirrors();
  std::lock_guard<std::mutex> lock(all.mutex);
  auto found = all.byHost.find(host);
  if (found == all.byHost.end() || size == 0)
    return;
  if (found->second.bytes != size)
    hetero::rt::cuda::fail(("hrt_cuda_mirror_copy: the buffer at " +
                            std::to_string(reinterpret_cast<uintptr_t>(host)) +
                            " has " + std::to_string(found->second.bytes) +
                            " bytes on the device, asked to copy " +
                            std::to_string(size))
                               .c_str());
  ensureContext();
  if (to_device)
    HRT_CUDA_CHECK(
        cuMemcpyHtoDAsync(found->second.device, host, size, threadStream()));
  else
    HRT_CUDA_CHECK(
        cuMemcpyDtoHAsync(host, found->second.device, size, threadStream()));
  synchronize();
}

HRT_CUDA_EXPORT void hrt_cuda_mirrors_to_host(void) { copyMirrors(true); }

HRT_CUDA_EXPORT void hrt_cuda_mirrors_to_device(void) { copyMirrors(false); }

HRT_CUDA_EXPORT int64_t hrt_cuda_mirror_count(int64_t *bytes) {
  Mirrors &all = mirrors();
  std::lock_guard<std::mutex> lock(all.mutex);
  if (bytes) {
    *bytes = 0;
    for (auto &entry : all.byHost)
      *bytes += int64_t(entry.second.bytes);
  }
  return int64_t(all.byHost.size());
}

HRT_CUDA_EXPORT int64_t hrt_cuda_release(void) {
  Mirrors &all = mirrors();
  Staging &pinned = staging();
  std::scoped_lock lock(all.mutex, pinned.mutex);
  if (all.byHost.empty() && pinned.sizes.empty()) {
    // A step's temporaries alone may still sit in the pool.
    hetero::rt::cuda::trimCachingPool();
    return 0;
  }
  ensureContext();
  // Work queued on the stream may still read the copies.
  synchronize();
  int64_t freed = 0;
  for (auto &[host, mirror] : all.byHost) {
    if (mirror.bytes)
      HRT_CUDA_CHECK(cuMemFree(mirror.device));
    freed += int64_t(mirror.bytes);
  }
  all.byHost.clear();
  for (auto &[size, host] : pinned.free) {
    HRT_CUDA_CHECK(cuMemFreeHost(host));
    pinned.sizes.erase(host);
  }
  pinned.free.clear();
  hetero::rt::cuda::trimCachingPool();
  return freed;
}

HRT_CUDA_EXPORT void hrt_cuda_synchronize(void) {
  ensureContext();
  synchronize();
}

HRT_CUDA_EXPORT void hrt_cuda_copy(void *destination, const void *source,
                                   int64_t bytes) {
  ensureContext();
  copyBytes(destination, source, bytesOf(bytes, "hrt_cuda_copy"));
}

HRT_CUDA_EXPORT void *hrt_cuda_stage_in(const void *device, int64_t bytes,
                                        int32_t copyIn) {
  size_t size = bytesOf(bytes, "hrt_cuda_stage_in");
  ensureContext();
  void *host = nullptr;
  {
    Staging &all = staging();
    std::lock_guard<std::mutex> lock(all.mutex);
    auto fit = all.free.lower_bound(size);
    // A reused buffer at most twice the size asked for.
    if (fit != all.free.end() && fit->first <= 2 * size + 4096) {
      host = fit->second;
      all.free.erase(fit);
    }
  }
  if (!host) {
    size_t capacity = size ? size : 1;
    HRT_CUDA_CHECK(cuMemHostAlloc(&host, capacity, 0));
    Staging &all = staging();
    std::lock_guard<std::mutex> lock(all.mutex);
    all.sizes[host] = capacity;
  }
  if (copyIn)
    copyBytes(host, device, size);
  return host;
}

HRT_CUDA_EXPORT void hrt_cuda_stage_out(void *host, void *device, int64_t bytes,
                                        int32_t copyOut) {
  size_t size = bytesOf(bytes, "hrt_cuda_stage_out");
  if (copyOut)
    copyBytes(device, host, size);
  Staging &all = staging();
  std::lock_guard<std::mutex> lock(all.mutex);
  auto known = all.sizes.find(host);
  if (known == all.sizes.end())
    hetero::rt::cuda::fail("hrt_cuda_stage_out: the host buffer was not "
                           "handed out by hrt_cuda_stage_in");
  all.free.emplace(known->second, host);
}
