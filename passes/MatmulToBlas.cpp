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
#include "RuntimeCalls.h"
#include "hetero/Passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
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
    ModuleOp module = getOperation();
    SmallVector<hetero::Gemm> gemms;
    module.walk([&](linalg::LinalgOp op) {
      if (std::optional<hetero::Gemm> gemm = hetero::matchGemm(op))
        gemms.push_back(*gemm);
    });
    MLIRContext *context = &getContext();
    Type i64 = IntegerType::get(context, 64);
    Type pointer = LLVM::LLVMPointerType::get(context);
    Type f32 = Float32Type::get(context);
    // (batch, transpose_a, transpose_b, m, n, k, a, lda, stride_a, b, ldb,
    //  stride_b, beta, c, ldc, stride_c)
    FunctionType sgemmType =
        FunctionType::get(context,
                          {i64, i64, i64, i64, i64, i64, pointer, i64, i64,
                           pointer, i64, i64, f32, pointer, i64, i64},
                          {});
    auto arguments = [&](OpBuilder &b, Location loc, const hetero::Gemm &gemm,
                         Value beta) -> SmallVector<Value> {
      auto constant = [&](int64_t value) -> Value {
        return arith::ConstantIntOp::create(b, loc, i64, value);
      };
      Value batch = gemm.batch
                        ? hetero::buildGemmExtent(b, loc, gemm, *gemm.batch)
                        : constant(1);
      Value m = hetero::buildGemmExtent(b, loc, gemm, gemm.m);
      Value n = hetero::buildGemmExtent(b, loc, gemm, gemm.n);
      Value k = hetero::buildGemmExtent(b, loc, gemm, gemm.k);
      hetero::GemmArguments lhs = hetero::buildGemmArguments(b, loc, gemm.a);
      hetero::GemmArguments rhs = hetero::buildGemmArguments(b, loc, gemm.b);
      hetero::GemmArguments out = hetero::buildGemmArguments(b, loc, gemm.c);
      return {batch,
              constant(gemm.a.transposed),
              constant(gemm.b.transposed),
              m,
              n,
              k,
              lhs.address,
              lhs.leading,
              lhs.batchStride,
              rhs.address,
              rhs.leading,
              rhs.batchStride,
              beta,
              out.address,
              out.leading,
              out.batchStride};
    };
    if (failed(hetero::replaceGemmsWithCalls(module, gemms, kSgemm, sgemmType,
                                             getArgument(), arguments)))
      signalPassFailure();
  }
};

} // namespace
