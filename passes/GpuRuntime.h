//===- GpuRuntime.h - libhetero_rt_cuda declarations for passes -*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The GPU passes call libhetero_rt_cuda's entry points (hetero-rt/gpu.h)
// through private func.func declarations, one per module (RuntimeCalls.h).
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_PASSES_GPURUNTIME_H
#define HETERO_PASSES_GPURUNTIME_H

#include "RuntimeCalls.h"

#include "llvm/ADT/StringSwitch.h"

namespace hetero {

/// The runtime calls that move device buffers on the NCCL backend
/// (`device-collectives`): the collectives and point-to-point transfers,
/// which the backend orders after the caller's stream itself.
inline bool isDeviceCollective(llvm::StringRef callee) {
  return llvm::StringSwitch<bool>(callee)
      .Cases({"hrt_mlir_all_reduce", "hrt_mlir_all_reduce_start",
              "hrt_mlir_all_gather", "hrt_mlir_reduce_scatter",
              "hrt_mlir_broadcast", "hrt_mlir_reduce", "hrt_mlir_all_to_all",
              "hrt_mlir_send", "hrt_mlir_recv"},
             true)
      .Default(false);
}

} // namespace hetero

#endif // HETERO_PASSES_GPURUNTIME_H
