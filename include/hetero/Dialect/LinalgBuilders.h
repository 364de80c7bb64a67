//===- LinalgBuilders.h - linalg ops that model builders share --*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// What the model builders (lib/Models, lib/Import) emit most: a
// linalg.generic of one tensor result whose body is one expression.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_DIALECT_LINALGBUILDERS_H
#define HETERO_DIALECT_LINALGBUILDERS_H

#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/Builders.h"

namespace hetero {

/// The body of buildGeneric: the yielded value from the block's arguments
/// (the inputs' elements, then the output's).
using GenericBody = llvm::function_ref<mlir::Value(
    mlir::OpBuilder &, mlir::Location, mlir::ValueRange)>;

/// A linalg.generic over `inputs` (read through `maps`, then the output's
/// map) into `init`, with `iterators`; its body yields body(arguments).
/// Returns its tensor result.
mlir::Value buildGeneric(mlir::OpBuilder &builder, mlir::Location loc,
                         mlir::ValueRange inputs,
                         llvm::ArrayRef<mlir::AffineMap> maps, mlir::Value init,
                         llvm::ArrayRef<mlir::utils::IteratorType> iterators,
                         GenericBody body);

} // namespace hetero

#endif // HETERO_DIALECT_LINALGBUILDERS_H
