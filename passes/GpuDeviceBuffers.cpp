//===- GpuDeviceBuffers.cpp - a step's temporaries in device memory -------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// After bufferization every temporary of a step is a memref.alloc, which the
// CPU lowering turns into malloc. For the GPU the buffers the kernels work
// on must be device memory: each allocation becomes a gpu.alloc (through
// libhetero_rt_cuda's stream-ordered caching allocator), each deallocation
// a gpu.dealloc, and each memref.copy a linalg.copy, which the pipeline
// then runs as a kernel like the other loop nests. The async forms are
// used (the GPU-to-LLVM lowering lowers those), each waited for at once.
//
// A buffer the host itself reads or writes (a memref.load or store outside
// the structured ops, a call that receives it) stays in host memory: the
// deallocation's ownership lists are such buffers.
//
//===----------------------------------------------------------------------===//

#include "hetero/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace hetero {
#define GEN_PASS_DEF_HETEROGPUDEVICEBUFFERS
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;

namespace {

/// Runs `build` (which creates one async gpu op after the token it is
/// given, returning the op's token) on a fresh stream and waits for it.
template <typename Build>
void awaited(OpBuilder &b, Location loc, Build build) {
  Type token = gpu::AsyncTokenType::get(b.getContext());
  Value start =
      gpu::WaitOp::create(b, loc, token, ValueRange{}).getAsyncToken();
  Value done = build(token, start);
  gpu::WaitOp::create(b, loc, Type(), ValueRange{done});
}

/// Whether host code reads or writes `buffer` or one of its views: a load
/// or store that is not part of a structured op (those become kernels), or
/// a call that receives it.
bool hostAccessed(Value buffer) {
  SmallVector<Value> worklist = {buffer};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == value) {
        worklist.push_back(user->getResult(0));
      } else if (isa<memref::LoadOp, memref::StoreOp, func::CallOp>(user) &&
                 !user->getParentOfType<linalg::LinalgOp>()) {
        return true;
      }
    }
  }
  return false;
}

struct GpuDeviceBuffersPass
    : hetero::impl::HeteroGpuDeviceBuffersBase<GpuDeviceBuffersPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    llvm::DenseSet<Value> hostBuffers;
    getOperation().walk([&](Operation *op) {
      if (auto alloc = dyn_cast<memref::AllocOp>(op);
          alloc && hostAccessed(alloc.getResult()))
        hostBuffers.insert(alloc.getResult());
      else if (isa<memref::AllocOp, memref::DeallocOp, memref::CopyOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        if (!alloc.getType().getLayout().isIdentity()) {
          alloc.emitError("hetero-gpu-device-buffers: an allocation with a "
                          "layout is not supported; expected the identity "
                          "layout that bufferization gives temporaries");
          return signalPassFailure();
        }
        Value memref;
        awaited(b, loc, [&](Type token, Value start) {
          auto device = gpu::AllocOp::create(
              b, loc, alloc.getType(), token, ValueRange{start},
              alloc.getDynamicSizes(), alloc.getSymbolOperands(),
              /*hostShared=*/false);
          memref = device.getMemref();
          return device.getAsyncToken();
        });
        alloc.replaceAllUsesWith(memref);
      } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
        if (hostBuffers.contains(dealloc.getMemref()))
          continue;
        awaited(b, loc, [&](Type token, Value start) {
          return gpu::DeallocOp::create(b, loc, token, ValueRange{start},
                                        dealloc.getMemref())
              .getAsyncToken();
        });
      } else {
        auto copy = cast<memref::CopyOp>(op);
        linalg::CopyOp::create(b, loc, copy.getSource(), copy.getTarget());
      }
      op->erase();
    }
  }
};

} // namespace
