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
// error with the call that failed and aborts: generated code has no error
// path.
//
//===----------------------------------------------------------------------===//

#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#define HRT_CUDA_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

/// Reports `result` of `call` and aborts when it is an error.
void check(CUresult result, const char *call) {
  if (result == CUDA_SUCCESS)
    return;
  const char *name = "unknown";
  const char *text = "unknown error";
  cuGetErrorName(result, &name);
  cuGetErrorString(result, &text);
  std::fprintf(stderr, "hetero GPU runtime: %s failed: %s (%s)\n", call, name,
               text);
  std::fflush(stderr);
  std::abort();
}

#define CUDA_CHECK(expression) check((expression), #expression)

int defaultDevice = 0;

/// Makes the primary context of the default device current on this thread.
void ensureContext() {
  static thread_local bool ready = false;
  if (ready)
    return;
  CUDA_CHECK(cuInit(0));
  CUdevice device;
  CUDA_CHECK(cuDeviceGet(&device, defaultDevice));
  CUcontext context;
  CUDA_CHECK(cuDevicePrimaryCtxRetain(&context, device));
  CUDA_CHECK(cuCtxSetCurrent(context));
  ready = true;
}

} // namespace

HRT_CUDA_EXPORT void mgpuSetDefaultDevice(int32_t device) {
  defaultDevice = device;
}

HRT_CUDA_EXPORT void *mgpuModuleLoad(void *data, size_t /*size*/) {
  ensureContext();
  CUmodule module = nullptr;
  CUDA_CHECK(cuModuleLoadData(&module, data));
  return module;
}

HRT_CUDA_EXPORT void *mgpuModuleLoadJIT(void *data, int optLevel) {
  ensureContext();
  CUmodule module = nullptr;
  CUjit_option options[] = {CU_JIT_OPTIMIZATION_LEVEL};
  void *values[] = {reinterpret_cast<void *>(intptr_t(optLevel))};
  CUDA_CHECK(cuModuleLoadDataEx(&module, data, 1, options, values));
  return module;
}

HRT_CUDA_EXPORT void mgpuModuleUnload(void *module) {
  CUDA_CHECK(cuModuleUnload(static_cast<CUmodule>(module)));
}

HRT_CUDA_EXPORT void *mgpuModuleGetFunction(void *module, const char *name) {
  CUfunction function = nullptr;
  CUDA_CHECK(
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
  CUDA_CHECK(cuLaunchKernel(static_cast<CUfunction>(function), gridX, gridY,
                            gridZ, blockX, blockY, blockZ, sharedBytes,
                            static_cast<CUstream>(stream), params, extra));
}

HRT_CUDA_EXPORT void *mgpuStreamCreate() {
  ensureContext();
  CUstream stream = nullptr;
  CUDA_CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  return stream;
}

HRT_CUDA_EXPORT void mgpuStreamDestroy(void *stream) {
  CUDA_CHECK(cuStreamDestroy(static_cast<CUstream>(stream)));
}

HRT_CUDA_EXPORT void mgpuStreamSynchronize(void *stream) {
  CUDA_CHECK(cuStreamSynchronize(static_cast<CUstream>(stream)));
}

HRT_CUDA_EXPORT void mgpuStreamWaitEvent(void *stream, void *event) {
  CUDA_CHECK(cuStreamWaitEvent(static_cast<CUstream>(stream),
                               static_cast<CUevent>(event), 0));
}

HRT_CUDA_EXPORT void *mgpuEventCreate() {
  ensureContext();
  CUevent event = nullptr;
  CUDA_CHECK(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));
  return event;
}

HRT_CUDA_EXPORT void mgpuEventDestroy(void *event) {
  CUDA_CHECK(cuEventDestroy(static_cast<CUevent>(event)));
}

HRT_CUDA_EXPORT void mgpuEventSynchronize(void *event) {
  CUDA_CHECK(cuEventSynchronize(static_cast<CUevent>(event)));
}

HRT_CUDA_EXPORT void mgpuEventRecord(void *event, void *stream) {
  CUDA_CHECK(cuEventRecord(static_cast<CUevent>(event),
                           static_cast<CUstream>(stream)));
}

HRT_CUDA_EXPORT void *mgpuMemAlloc(uint64_t bytes, void * /*stream*/,
                                   bool hostShared) {
  ensureContext();
  CUdeviceptr pointer = 0;
  if (bytes == 0)
    return nullptr;
  if (hostShared)
    CUDA_CHECK(cuMemAllocManaged(&pointer, bytes, CU_MEM_ATTACH_GLOBAL));
  else
    CUDA_CHECK(cuMemAlloc(&pointer, bytes));
  return reinterpret_cast<void *>(pointer);
}

HRT_CUDA_EXPORT void mgpuMemFree(void *pointer, void * /*stream*/) {
  if (pointer)
    CUDA_CHECK(cuMemFree(reinterpret_cast<CUdeviceptr>(pointer)));
}

HRT_CUDA_EXPORT void mgpuMemcpy(void *destination, void *source, size_t bytes,
                                void *stream) {
  CUDA_CHECK(cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(destination),
                           reinterpret_cast<CUdeviceptr>(source), bytes,
                           static_cast<CUstream>(stream)));
}

HRT_CUDA_EXPORT void mgpuMemset32(void *destination, unsigned int value,
                                  size_t count, void *stream) {
  CUDA_CHECK(cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(destination), value,
                              count, static_cast<CUstream>(stream)));
}

HRT_CUDA_EXPORT void mgpuMemset16(void *destination, unsigned short value,
                                  size_t count, void *stream) {
  CUDA_CHECK(cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(destination), value,
                              count, static_cast<CUstream>(stream)));
}
