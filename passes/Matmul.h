//===- Matmul.h - a matmul of any-rank lhs as linalg ------------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The linalg form of `lhs x rhs` that hetero-prunable-to-linalg and
// hetero-resize emit for a product of a prunable matmul, so that the
// unpruned path of a resized layer is the very code of the unresized one;
// and the product on some contraction columns only, which hetero-resize
// runs for a rank's kept columns and hetero-partition-tp for the columns a
// straggler migrates.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_PASSES_MATMUL_H
#define HETERO_PASSES_MATMUL_H

#include "hetero/Dialect/Hetero.h"

#include "mlir/IR/Builders.h"

namespace hetero {

/// Whether buildMatmul can collapse `lhs`: rank 2, or static dimensions
/// before its last.
bool hasStaticLeadingDimensions(mlir::RankedTensorType lhs);

/// lhs: [..., M, K] (leading dimensions static), rhs: [K, N] -> a zero-filled
/// linalg.matmul on the lhs collapsed to [prod(...) * M, K], expanded back
/// to `resultType` ([..., M, N]) afterwards; or failure when the leading
/// dimensions are dynamic.
mlir::FailureOr<mlir::Value> buildMatmul(mlir::OpBuilder &builder,
                                         mlir::Location loc, mlir::Value lhs,
                                         mlir::Value rhs,
                                         mlir::RankedTensorType resultType);

/// `type` with dimension `axis` unknown: a pruned operand or product.
mlir::RankedTensorType withDynamicAxis(mlir::RankedTensorType type,
                                       int64_t axis);

/// The product `product` of a prunable matmul's `lhs` and `rhs` on the
/// contraction columns `kept` only (hetero-resize's pruned path):
///   forward:      X[.., kept] x W[kept, :]                  (full-size Y)
///   grad_input:   impute(G x W^T[:, kept]) along dX's columns
///   grad_weight:  impute(X^T[kept, :] x G) along dW's rows
/// The lhs's leading dimensions must be static. Same imputation reads the
/// imputed values from `previous` (of the result's type). `rhsSelected`:
/// the rhs holds only the kept columns' slices already (along
/// prunedRhsAxis), in the order of `kept`.
mlir::Value buildPrunedProduct(mlir::OpBuilder &builder, mlir::Location loc,
                               MatmulProduct product, mlir::Value lhs,
                               mlir::Value rhs, mlir::Value kept,
                               mlir::RankedTensorType resultType,
                               Imputation imputation, mlir::Value previous = {},
                               bool rhsSelected = false);

/// The axis of the rhs that buildPrunedProduct selects the kept columns
/// along: the weight's rows in the forward product, the columns of its
/// transpose in grad_input; -1 for grad_weight, whose rhs is not pruned.
int64_t prunedRhsAxis(MatmulProduct product);

} // namespace hetero

#endif // HETERO_PASSES_MATMUL_H
