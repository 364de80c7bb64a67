//===- Gemm.h - linalg products on buffers as BLAS GEMMs --------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// hetero-matmul-to-blas (CPU, OpenBLAS) and hetero-matmul-to-cublas (GPU)
// replace the f32 products of a bufferized step with calls of a GEMM. Both
// recognise the products here: any linalg op on f32 buffers that is a
// contraction (a linalg.matmul, linalg.batch_matmul, linalg.matmul with
// transposing indexing maps, or a linalg.generic whose body multiplies and
// accumulates) with one M, one N and one K loop and at most one batch loop,
// whose operands each have unit stride along one of their two matrix
// dimensions. Such an op is
//
//   C[b] = op(A[b]) op(B[b]) + beta C[b]     for every batch index b
//
// with op() a transpose or not, on row-major matrices with leading
// dimensions, as cblas_sgemm takes them.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_PASSES_GEMM_H
#define HETERO_PASSES_GEMM_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>

namespace hetero {

/// One operand of a GEMM as it lies in memory: the buffer and which of its
/// dimensions hold the matrix's rows, its columns and the batch.
struct GemmOperand {
  mlir::Value buffer;
  /// Dimensions of `buffer`; batchDim is nullopt for an operand that is the
  /// same matrix for every batch index (a stride of 0).
  unsigned rowDim = 0, columnDim = 0;
  std::optional<unsigned> batchDim;
  /// Whether the matrix's rows are contiguous in memory (unit stride along
  /// the columns) or its columns are (op() transposes it).
  bool transposed = false;
};

/// A product that is one (batched) row-major GEMM, C = op(A) op(B) + beta C.
struct Gemm {
  mlir::linalg::LinalgOp op;
  /// A is M x K, B is K x N and C is M x N, after swapping the operands
  /// when the op's output is stored column by column (C^T = B^T A^T).
  GemmOperand a, b, c;
  /// The op's loops of M, N and K and the batch (after the swap).
  unsigned m = 0, n = 0, k = 0;
  std::optional<unsigned> batch;
  /// The fill of 0.0 of C right before the op, if any: beta = 0 then, and
  /// the fill goes.
  mlir::linalg::FillOp zeroFill;
};

/// `op` as a GEMM when it is one; nullopt otherwise.
std::optional<Gemm> matchGemm(mlir::linalg::LinalgOp op);

/// The i64 and pointer values that pass one operand to a GEMM call.
struct GemmArguments {
  mlir::Value address;     // !llvm.ptr to the first element of the view
  mlir::Value leading;     // the distance between rows (columns if transposed)
  mlir::Value batchStride; // the distance between the batch's matrices
};

/// The arguments of `operand`, built before the product.
GemmArguments buildGemmArguments(mlir::OpBuilder &builder, mlir::Location loc,
                                 const GemmOperand &operand);

/// The extent of loop `loop` of the product, as an i64.
mlir::Value buildGemmExtent(mlir::OpBuilder &builder, mlir::Location loc,
                            const Gemm &gemm, unsigned loop);

/// Replaces every GEMM of `module` (and the zero fill before it, if any)
/// with a call of the runtime function `callee` in the runtime's GEMM ABI
/// (hrt_cpu_sgemm's, hetero-rt/blas.h, which hrt_cuda_sgemm shares),
/// declared in `module` once; failure (reported as `pass`'s) when a symbol
/// of that name stands in the way.
mlir::LogicalResult replaceGemmsWithCalls(mlir::ModuleOp module,
                                          llvm::StringRef callee,
                                          llvm::StringRef pass);

} // namespace hetero

#endif // HETERO_PASSES_GEMM_H
