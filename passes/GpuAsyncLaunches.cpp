//===- GpuAsyncLaunches.cpp - kernels queued, the host waits at the edges
//--===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Upstream lowers a synchronous gpu.launch_func to a launch followed by a
// wait for the stream, so the host stops after every kernel. In hetero's GPU
// runtime every launch, copy, allocation and cuBLAS call of a thread goes
// to the thread's one stream (mgpuStreamCreate returns it), which keeps them
// in program order without the host waiting in between. So this pass,
// after kernel outlining:
//
// - makes every gpu.launch_func asynchronous, on the stream of a fresh
//   `gpu.wait async` (the thread's stream), and waits for none;
// - drops the host waits after stream-ordered allocations and frees
//   (gpu.alloc and gpu.dealloc, which the pool serves in stream order);
// - waits for the stream (hrt_cuda_synchronize) before every call of a
//   runtime function outside libhetero_rt_cuda: those may read or write
//   device data from other streams or time the work (task marks). With
//   `device-collectives`, the collectives and point-to-point calls are the
//   exception: the NCCL backend makes their streams wait for an event on
//   the thread's stream, so the host does not wait for its kernels.
//
// Copies the host reads (gpu.memcpy, hrt_cuda_copy, staging) and cuBLAS
// calls keep waiting where they are.
//
//===----------------------------------------------------------------------===//

#include "GpuRuntime.h"
#include "hetero/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace hetero {
#define GEN_PASS_DEF_HETEROGPUASYNCLAUNCHES
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kSynchronize = "hrt_cuda_synchronize";

/// Whether the blocking `wait` only waits for stream-ordered allocations
/// and frees.
bool waitsForMemoryOnly(gpu::WaitOp wait) {
  if (wait.getAsyncToken() || wait.getAsyncDependencies().empty())
    return false;
  return llvm::all_of(wait.getAsyncDependencies(), [](Value token) {
    return isa_and_nonnull<gpu::AllocOp, gpu::DeallocOp>(token.getDefiningOp());
  });
}

/// Whether a call of `callee` leaves this module's device work for a
/// runtime that does not order itself after the thread's stream.
bool leavesTheStream(func::FuncOp callee, bool deviceCollectives) {
  StringRef name = callee.getSymName();
  return callee.isDeclaration() && !name.starts_with("hrt_cuda_") &&
         !name.starts_with("mgpu") &&
         !(deviceCollectives && hetero::isDeviceCollective(name));
}

struct GpuAsyncLaunchesPass
    : hetero::impl::HeteroGpuAsyncLaunchesBase<GpuAsyncLaunchesPass> {
  using HeteroGpuAsyncLaunchesBase::HeteroGpuAsyncLaunchesBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    SmallVector<gpu::LaunchFuncOp> launches;
    SmallVector<gpu::WaitOp> waits;
    SmallVector<func::CallOp> calls;
    module.walk([&](Operation *op) {
      if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op);
          launch && !launch.getAsyncToken())
        launches.push_back(launch);
      else if (auto wait = dyn_cast<gpu::WaitOp>(op);
               wait && waitsForMemoryOnly(wait))
        waits.push_back(wait);
      else if (auto call = dyn_cast<func::CallOp>(op))
        if (auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
            callee && leavesTheStream(callee, deviceCollectives))
          calls.push_back(call);
    });

    Type token = gpu::AsyncTokenType::get(context);
    for (gpu::LaunchFuncOp launch : launches) {
      OpBuilder b(launch);
      Location loc = launch.getLoc();
      Value stream =
          gpu::WaitOp::create(b, loc, token, ValueRange{}).getAsyncToken();
      std::optional<gpu::KernelDim3> cluster;
      if (launch.hasClusterSize())
        cluster = launch.getClusterSizeOperandValues();
      gpu::LaunchFuncOp::create(
          b, loc, launch.getKernel(), launch.getGridSizeOperandValues(),
          launch.getBlockSizeOperandValues(),
          launch.getDynamicSharedMemorySize(), launch.getKernelOperands(),
          token, ValueRange{stream}, cluster);
      launch.erase();
    }
    for (gpu::WaitOp wait : waits)
      wait.erase();
    if (calls.empty())
      return;
    func::FuncOp synchronize = hetero::declareRuntimeFunction(
        module, kSynchronize, FunctionType::get(context, {}, {}),
        getArgument());
    if (!synchronize)
      return signalPassFailure();
    for (func::CallOp call : calls) {
      OpBuilder b(call);
      func::CallOp::create(b, call.getLoc(), synchronize, ValueRange{});
    }
  }
};

} // namespace
