//===- Context.cpp - the device, context and stream of a thread -----------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// One device per process: a rank of a job on a machine with several GPUs
// takes the one its local rank names, as the NCCL backend does, so that the
// kernels and the collectives of a rank run on the same device.
//
//===----------------------------------------------------------------------===//

#include "Context.h"
#include "hetero-rt/gpu.h"
#include "hetero-rt/hrt.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <mutex>

namespace hetero::rt::cuda {
namespace {

/// The device mgpuSetDefaultDevice named, or -1 until one is chosen.
std::atomic<int> chosenDevice{-1};

/// The local rank the launcher exported, or 0 outside a job.
int localRank() {
  for (const char *variable : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                               "SLURM_LOCALID", "LOCAL_RANK"})
    if (const char *value = std::getenv(variable)) {
      char *end = nullptr;
      long rank = std::strtol(value, &end, 10);
      if (end != value && *end == '\0' && rank >= 0)
        return int(rank);
    }
  return 0;
}

} // namespace

void check(CUresult result, const char *call) {
  if (result == CUDA_SUCCESS)
    return;
  const char *name = nullptr;
  const char *text = nullptr;
  // A driver too broken to name its errors (the toolkit's stub, say) is
  // reported by number.
  if (cuGetErrorName(result, &name) != CUDA_SUCCESS ||
      cuGetErrorString(result, &text) != CUDA_SUCCESS || !name || !text)
    std::fprintf(stderr, "hetero GPU runtime: %s failed: CUDA error %d\n", call,
                 int(result));
  else
    std::fprintf(stderr, "hetero GPU runtime: %s failed: %s (%s)\n", call, name,
                 text);
  std::fflush(stderr);
  std::_Exit(EXIT_FAILURE);
}

void fail(const char *message) {
  std::fprintf(stderr, "hetero GPU runtime: %s\n", message);
  std::fflush(stderr);
  std::_Exit(EXIT_FAILURE);
}

void selectDevice(int device) { chosenDevice.store(device); }

int device() {
  int device = chosenDevice.load();
  if (device >= 0)
    return device;
  HRT_CUDA_CHECK(cuInit(0));
  int count = 0;
  HRT_CUDA_CHECK(cuDeviceGetCount(&count));
  if (count == 0)
    fail("no CUDA device is visible to this process");
  int expected = -1;
  chosenDevice.compare_exchange_strong(expected, localRank() % count);
  return chosenDevice.load();
}

void ensureContext() {
  static thread_local bool ready = false;
  if (ready)
    return;
  HRT_CUDA_CHECK(cuInit(0));
  CUdevice handle;
  HRT_CUDA_CHECK(cuDeviceGet(&handle, device()));
  CUcontext context;
  HRT_CUDA_CHECK(cuDevicePrimaryCtxRetain(&context, handle));
  HRT_CUDA_CHECK(cuCtxSetCurrent(context));
  ready = true;
}

CUstream threadStream() {
  static thread_local CUstream stream = nullptr;
  if (!stream) {
    ensureContext();
    HRT_CUDA_CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  }
  return stream;
}

namespace {
/// The device's default pool once ensureCachingPool set it to keep memory.
std::atomic<CUmemoryPool> cachingPool{nullptr};
} // namespace

void ensureCachingPool() {
  static std::once_flag once;
  std::call_once(once, [] {
    ensureContext();
    CUdevice handle;
    HRT_CUDA_CHECK(cuDeviceGet(&handle, device()));
    CUmemoryPool pool;
    HRT_CUDA_CHECK(cuDeviceGetDefaultMemPool(&pool, handle));
    cuuint64_t keepAll = ~cuuint64_t(0);
    HRT_CUDA_CHECK(cuMemPoolSetAttribute(
        pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keepAll));
    cachingPool.store(pool);
  });
}

void trimCachingPool() {
  CUmemoryPool pool = cachingPool.load();
  if (!pool)
    return;
  // Memory freed on this thread's stream returns to the pool once the
  // stream reaches the free.
  HRT_CUDA_CHECK(cuStreamSynchronize(threadStream()));
  HRT_CUDA_CHECK(cuMemPoolTrimTo(pool, 0));
}

} // namespace hetero::rt::cuda

HRT_CUDA_EXPORT int hrt_cuda_device(void) { return hetero::rt::cuda::device(); }

HRT_CUDA_EXPORT void *hrt_cuda_stream(void) {
  return hetero::rt::cuda::threadStream();
}

namespace {
/// The NCCL backend orders its operations after this thread's stream on
/// the device once the library is loaded (hrt_register_compute_stream).
__attribute__((constructor)) void registerComputeStream() {
  hrt_register_compute_stream(hrt_cuda_stream);
}
} // namespace
