//===- Context.h - the device, context and stream of a thread ---*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// libhetero_rt_cuda's shared state: which device the process works on, the
// primary context made current on each calling thread, and the one stream a
// thread's kernels, copies and library calls share.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_RUNTIME_KERNELS_CUDA_CONTEXT_H
#define HETERO_RUNTIME_KERNELS_CUDA_CONTEXT_H

#include <cuda.h>

namespace hetero::rt::cuda {

/// Reports `result` of `call` and ends the process (status 1) when it is an
/// error: compiled code has no error path.
void check(CUresult result, const char *call);

/// Prints `message` as the GPU runtime's and ends the process (status 1;
/// a job launcher then ends the job). Not abort(): the tools that load the
/// runtime would print a crash report for what is a reported error.
[[noreturn]] void fail(const char *message);

/// Names the device every later context is made on (mgpuSetDefaultDevice).
void selectDevice(int device);

/// Makes the primary context of the process's device current on this
/// thread, selecting the device on the first call.
void ensureContext();

/// The process's device.
int device();

/// This thread's stream, created on the first call.
CUstream threadStream();

/// Makes the device's default memory pool keep freed memory (a release
/// threshold of all of it), once per process.
void ensureCachingPool();

/// Returns the memory the pool keeps for reuse to the driver, after the
/// frees queued on this thread's stream, when ensureCachingPool made it
/// keep any.
void trimCachingPool();

} // namespace hetero::rt::cuda

#define HRT_CUDA_CHECK(expression)                                             \
  ::hetero::rt::cuda::check((expression), #expression)
#define HRT_CUDA_EXPORT extern "C" __attribute__((visibility("default")))

#endif // HETERO_RUNTIME_KERNELS_CUDA_CONTEXT_H
