//===- OptimizerUpdate.h - optimizer steps on parameter globals -*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Builds the update of a `hetero.pipeline`'s optimizer (#hetero.sgd,
// #hetero.adam) as element-wise linalg on tensors that read and write the
// parameter globals, for hetero-lower-pipeline's step and reference step.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_PASSES_OPTIMIZERUPDATE_H
#define HETERO_PASSES_OPTIMIZERUPDATE_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace hetero {

/// The optimizer of one pipeline and the globals that hold its state.
class OptimizerUpdate {
public:
  /// Creates the state globals of `optimizer` (an SgdAttr or AdamAttr) for
  /// `params` next to them in `symbols`: `@<param>_momentum` for SGD with
  /// momentum, `@<param>_adam_m`, `@<param>_adam_v` and one step counter
  /// `@<counterPrefix>_optimizer_steps` for Adam. With `varianceReplicas`
  /// N > 0, Adam also keeps `@<param>_adam_m2`, a first moment decayed with
  /// beta2, and takes its step with the second moment rebuilt as
  /// m2^2 + max(v - m2^2, 0) / N (SDPipe's variance rescale).
  OptimizerUpdate(mlir::Attribute optimizer,
                  llvm::ArrayRef<mlir::memref::GlobalOp> params,
                  llvm::StringRef counterPrefix, mlir::SymbolTable &symbols,
                  int64_t varianceReplicas = 0);

  /// The suffixes of the state globals `optimizer` keeps per parameter,
  /// each a copy of the parameter's shape.
  static llvm::SmallVector<llvm::StringRef, 3>
  stateSuffixes(mlir::Attribute optimizer, int64_t varianceReplicas = 0);

  /// Starts one optimizer step in the function being built at `builder`'s
  /// insertion point (Adam: advances the step counter and computes the bias
  /// corrections). Call once per step function before update().
  void beginStep(mlir::OpBuilder &builder, mlir::Location loc);

  /// Updates `param` with the gradient `gradientSum * scale`, in place in
  /// its global and those of its optimizer state.
  void update(mlir::OpBuilder &builder, mlir::Location loc,
              mlir::memref::GlobalOp param, mlir::Value gradientSum,
              double scale);

  /// The globals of `param`'s optimizer state (momentum, Adam's moments).
  llvm::ArrayRef<mlir::memref::GlobalOp> stateOf(mlir::memref::GlobalOp param);
  /// Adam's step counter, or null.
  mlir::memref::GlobalOp stepCounter() const { return steps; }

private:
  mlir::Attribute optimizer;
  int64_t varianceReplicas;
  llvm::DenseMap<mlir::Operation *,
                 llvm::SmallVector<mlir::memref::GlobalOp, 2>>
      state;
  mlir::memref::GlobalOp steps;
  // Adam's bias corrections 1 - beta^t of the step being built.
  mlir::Value correction1, correction2;
};

/// A zero-initialised global `<param>_<suffix>` of `param`'s type right
/// after it, its name made unique in `symbols`.
mlir::memref::GlobalOp createStateGlobal(mlir::memref::GlobalOp param,
                                         llvm::StringRef suffix,
                                         mlir::SymbolTable &symbols);

/// The tensor value of `global` at the builder's insertion point.
mlir::Value readGlobal(mlir::OpBuilder &builder, mlir::Location loc,
                       mlir::memref::GlobalOp global);

} // namespace hetero

#endif // HETERO_PASSES_OPTIMIZERUPDATE_H
