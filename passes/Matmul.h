//===- Matmul.h - a matmul of any-rank lhs as linalg ------------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The linalg form of `lhs x rhs` that hetero-prunable-to-linalg and
// hetero-resize emit for a product of a prunable matmul, so that the
// unpruned path of a resized layer is the very code of the unresized one.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_PASSES_MATMUL_H
#define HETERO_PASSES_MATMUL_H

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

} // namespace hetero

#endif // HETERO_PASSES_MATMUL_H
