//===- MatmulToCublas.cpp - f32 matmuls on buffers as cuBLAS calls --------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The GEMMs of a step are the work a GPU is bought for; generated kernels
// keep the element-wise and reduction work, and the f32 matmuls go to
// cuBLAS through libhetero_rt_cuda's hrt_cuda_sgemm (include/hetero-rt/
// gpu.h). A matmul qualifies when it is one GEMM (Gemm.h) of row-major
// operands: its buffers are f32 with unit stride along their rows, and it
// has the default indexing maps. A zero fill of the output right
// before the product becomes cuBLAS's beta = 0.
//
//===----------------------------------------------------------------------===//

#include "Gemm.h"
#include "GpuRuntime.h"
#include "hetero/Passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
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
    ModuleOp module = getOperation();
    // hrt_cuda_sgemm takes row-major operands and one matrix each; other
    // products stay generated kernels.
    SmallVector<hetero::Gemm> gemms;
    module.walk([&](linalg::MatmulOp matmul) {
      if (std::optional<hetero::Gemm> gemm = hetero::matchGemm(
              matmul, {/*transposes=*/false, /*batches=*/false}))
        gemms.push_back(*gemm);
    });
    MLIRContext *context = &getContext();
    Type i64 = IntegerType::get(context, 64);
    Type pointer = LLVM::LLVMPointerType::get(context);
    Type f32 = Float32Type::get(context);
    FunctionType sgemmType = FunctionType::get(
        context, {i64, i64, i64, pointer, i64, pointer, i64, f32, pointer, i64},
        {});
    auto arguments = [](OpBuilder &b, Location loc, const hetero::Gemm &gemm,
                        Value beta) -> SmallVector<Value> {
      hetero::GemmArguments lhs = hetero::buildGemmArguments(b, loc, gemm.a);
      hetero::GemmArguments rhs = hetero::buildGemmArguments(b, loc, gemm.b);
      hetero::GemmArguments out = hetero::buildGemmArguments(b, loc, gemm.c);
      return {hetero::buildGemmExtent(b, loc, gemm, gemm.m),
              hetero::buildGemmExtent(b, loc, gemm, gemm.n),
              hetero::buildGemmExtent(b, loc, gemm, gemm.k),
              lhs.address,
              lhs.leading,
              rhs.address,
              rhs.leading,
              beta,
              out.address,
              out.leading};
    };
    if (failed(hetero::replaceGemmsWithCalls(module, gemms, kSgemm, sgemmType,
                                             getArgument(), arguments)))
      signalPassFailure();
  }
};

} // namespace
