//===- LaunchWrappers.cpp - mgpu* entry points for compiled GPU code ------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The host code that hetero-lower-to-gpu emits (through gpu-to-llvm) loads
// kernels, creates streams and launches through these functions. Debian's
// MLIR packages do not ship libmlir_cuda_runtime, so libhetero_rt_cuda
// provides them over the CUDA driver API. A failing call prints the CUDA
// error with the call that failed and ends the process: generated code has no
// error path.
//
// The streams the host code creates are the calling thread's one stream
// (Context.h), so that kernels, copies and library calls (cuBLAS) run in
// program order without a stream per launch; destroying it is a no-op.
// Allocations are device memory, stream-ordered (cuMemAllocAsync) from the
// device's pool, which keeps what is freed for the next allocation instead
// of returning it to the driver: a step allocates and frees the same
// temporaries every iteration. Managed memory is refused.
//
//===----------------------------------------------------------------------===//

#include "Context.h"

#include <cstdint>

using hetero::rt::cuda::ensureContext;
using hetero::rt::cuda::threadStream;

namespace {

/// `stream`, or the thread's stream when the host code passes none.
CUstream streamOr(void *stream) {
  return stream ? static_cast<CUstream>(stream) : threadStream();
}

} // namespace

HRT_CUDA_EXPORT void mgpuSetDefaultDevice(int32_t device) {
  hetero::rt::cuda::selectDevice(device);
}

HRT_CUDA_EXPORT void *mgpuModuleLoad(void *data, size_t /*size*/) {
  ensureContext();
  CUmodule module = nullptr;
  HRT_CUDA_CHECK(cuModuleLoadData(&module, data));
  return module;
}

HRT_CUDA_EXPORT void *mgpuModuleLoadJIT(void *data, int optLevel) {
  ensureContext();
  CUmodule module = nullptr;
  CUjit_option options[] = {CU_JIT_OPTIMIZATION_LEVEL};
  void *values[] = {reinterpret_cast<void *>(intptr_t(optLevel))};
  HRT_CUDA_CHECK(cuModuleLoadDataEx(&module, data, 1, options, values));
  return module;
}

HRT_CUDA_EXPORT void mgpuModuleUnload(void *module) {
  // The host code unloads its modules from a global destructor, which may
  // run after the CUDA runtime has released the context at exit: the
  // module went with it.
  CUresult result = cuModuleUnload(static_cast<CUmodule>(module));
  if (result != CUDA_ERROR_DEINITIALIZED)
    HRT_CUDA_CHECK(result);
}

HRT_CUDA_EXPORT void *mgpuModuleGetFunction(void *module, const char *name) {
  CUfunction function = nullptr;
  HRT_CUDA_CHECK(
      cuModuleGetFunction(&function, static_cast<CUmodule>(module), name));
  return function;
}

HRT_CUDA_EXPORT void mgpuLaunchKernel(void *function, intptr_t gridX,
                                      intptr_t gridY, intptr_t gridZ,
                                      intptr_t blockX, intptr_t blockY,
                                      intptr_t blockZ, int32_t sharedBytes,
                                      void *stream, void **params, void **extra,
                                      size_t /*paramCount*/) {
  ensureContext();
  HRT_CUDA_CHECK(cuLaunchKernel(static_cast<CUfunction>(function), gridX, gridY,
                                gridZ, blockX, blockY, blockZ, sharedBytes,
                                static_cast<CUstream>(stream), params, extra));
}

HRT_CUDA_EXPORT void *mgpuStreamCreate() { return threadStream(); }

HRT_CUDA_EXPORT void mgpuStreamDestroy(void *stream) {
  if (stream != threadStream())
    HRT_CUDA_CHECK(cuStreamDestroy(static_cast<CUstream>(stream)));
}

HRT_CUDA_EXPORT void mgpuStreamSynchronize(void *stream) {
  HRT_CUDA_CHECK(cuStreamSynchronize(static_cast<CUstream>(stream)));
}

HRT_CUDA_EXPORT void mgpuStreamWaitEvent(void *stream, void *event) {
  HRT_CUDA_CHECK(cuStreamWaitEvent(static_cast<CUstream>(stream),
                                   static_cast<CUevent>(event), 0));
}

HRT_CUDA_EXPORT void *mgpuEventCreate() {
  ensureContext();
  CUevent event = nullptr;
  HRT_CUDA_CHECK(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));
  return event;
}

HRT_CUDA_EXPORT void mgpuEventDestroy(void *event) {
  HRT_CUDA_CHECK(cuEventDestroy(static_cast<CUevent>(event)));
}

HRT_CUDA_EXPORT void mgpuEventSynchronize(void *event) {
  HRT_CUDA_CHECK(cuEventSynchronize(static_cast<CUevent>(event)));
}

HRT_CUDA_EXPORT void mgpuEventRecord(void *event, void *stream) {
  HRT_CUDA_CHECK(cuEventRecord(static_cast<CUevent>(event),
                               static_cast<CUstream>(stream)));
}

HRT_CUDA_EXPORT void *mgpuMemAlloc(uint64_t bytes, void *stream,
                                   bool hostShared) {
  if (hostShared)
    hetero::rt::cuda::fail("gpu.alloc host_shared asks for managed memory, "
                           "which hetero does not use: allocate device "
                           "memory and copy where the host reads");
  if (bytes == 0)
    return nullptr;
  ensureContext();
  hetero::rt::cuda::ensureCachingPool();
  CUdeviceptr pointer = 0;
  HRT_CUDA_CHECK(cuMemAllocAsync(&pointer, bytes, streamOr(stream)));
  return reinterpret_cast<void *>(pointer);
}

HRT_CUDA_EXPORT void mgpuMemFree(void *pointer, void *stream) {
  if (pointer)
    HRT_CUDA_CHECK(cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(pointer),
                                  streamOr(stream)));
}

HRT_CUDA_EXPORT void mgpuMemcpy(void *destination, void *source, size_t bytes,
                                void *stream) {
  HRT_CUDA_CHECK(cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(destination),
                               reinterpret_cast<CUdeviceptr>(source), bytes,
                               static_cast<CUstream>(stream)));
}

HRT_CUDA_EXPORT void mgpuMemset32(void *destination, unsigned int value,
                                  size_t count, void *stream) {
  HRT_CUDA_CHECK(cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(destination),
                                  value, count, static_cast<CUstream>(stream)));
}

HRT_CUDA_EXPORT void mgpuMemset16(void *destination, unsigned short value,
                                  size_t count, void *stream) {
  HRT_CUDA_CHECK(cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(destination),
                                  value, count, static_cast<CUstream>(stream)));
}
