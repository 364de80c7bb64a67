//===- MatmulToCublas.cpp - f32 matmuls on buffers as cuBLAS calls --------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The GEMMs of a step are the work a GPU is bought for; generated kernels
// keep the element-wise and reduction work, and the f32 matmuls go to
// cuBLAS through libhetero_rt_cuda's hrt_cuda_sgemm (include/hetero-rt/
// gpu.h). A product qualifies when it is one GEMM (Gemm.h): a matmul, a
// batched or transposed product, or a contraction written as a
// linalg.generic (as derived adjoints are), its f32 buffers with unit
// stride along one of their matrix dimensions; a batch is one strided
// batched call. A zero fill of the output right before the product becomes
// cuBLAS's beta = 0.
//
//===----------------------------------------------------------------------===//

#include "Gemm.h"
#include "hetero/Passes/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"

namespace hetero {
#define GEN_PASS_DEF_HETEROMATMULTOCUBLAS
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;

namespace {

constexpr StringLiteral kSgemm = "hrt_cuda_sgemm";

struct MatmulToCublasPass
    : hetero::impl::HeteroMatmulToCublasBase<MatmulToCublasPass> {
  void runOnOperation() override {
    if (failed(hetero::replaceGemmsWithCalls(getOperation(), kSgemm,
                                             getArgument())))
      signalPassFailure();
  }
};

} // namespace
