//===- MatmulToBlas.cpp - f32 products on buffers as host GEMM calls ------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// A product lowered to loops runs at a small fraction of what a core does in
// an optimised GEMM. This pass sends every f32 product of a bufferized CPU
// step that is one (batched, transposed or not) GEMM (Gemm.h) to the
// runtime's hrt_cpu_sgemm (include/hetero-rt/blas.h): OpenBLAS's
// cblas_sgemm, with the views' strides as leading dimensions, so that
// slices, transposed operands and attention's per-head batches need no
// copy. Other contractions are left to the loops.
//
//===----------------------------------------------------------------------===//

#include "Gemm.h"
#include "hetero/Passes/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"

namespace hetero {
#define GEN_PASS_DEF_HETEROMATMULTOBLAS
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;

namespace {

constexpr StringLiteral kSgemm = "hrt_cpu_sgemm";

struct MatmulToBlasPass
    : hetero::impl::HeteroMatmulToBlasBase<MatmulToBlasPass> {
  void runOnOperation() override {
    if (failed(hetero::replaceGemmsWithCalls(getOperation(), kSgemm,
                                             getArgument())))
      signalPassFailure();
  }
};

} // namespace
