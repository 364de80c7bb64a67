//===- GpuFuseElementwise.cpp - element-wise chains as one kernel ---------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Every linalg op becomes a kernel on the GPU, and each kernel reads its
// inputs from and writes its result to device memory. A chain of
// element-wise ops (a bias, then an activation, then a scale) is memory
// bound: fused into one op it is one launch and one pass over memory.
// Upstream's element-wise fusion does that; this pass runs it on tensors
// with one restriction. A producer is fused into a linalg.generic that is
// not a contraction only: fused into a product (a one-hot embedding
// matrix into the product that reads it), the product would stop being
// a linalg.matmul and lose its cuBLAS call (hetero-matmul-to-cublas) for
// a generated kernel tens of times slower.
//
//===----------------------------------------------------------------------===//

#include "hetero/Passes/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace hetero {
#define GEN_PASS_DEF_HETEROGPUFUSEELEMENTWISE
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;

namespace {

/// Whether the producer of `operand` may be fused into its consumer.
bool fusable(OpOperand *operand) {
  auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
  return consumer && !linalg::isaContractionOpInterface(consumer);
}

struct GpuFuseElementwisePass
    : hetero::impl::HeteroGpuFuseElementwiseBase<GpuFuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, fusable);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
