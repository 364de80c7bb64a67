//===- Autodiff.h - reverse-mode differentiation of tensor functions -*- C++
//-*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Reverse-mode differentiation of a func.func on tensors, as
// hetero-derive-backward applies it to stage functions. The derived
// function re-runs the forward's computation (its primal values) and then
// applies the chain rule op by op in reverse, accumulating each value's
// adjoint:
//
//  * linalg.generic: for each differentiable operand, one linalg.generic
//    over the op's iteration space, reduction along the loops its indexing
//    map does not use, whose body is the forward body differentiated in
//    forward mode with respect to that operand's element, times the
//    result's adjoint. Element-wise maps, broadcasts, sum reductions
//    (`out + h(...)`, products included: the adjoint of a contraction is a
//    contraction, which the BLAS and cuBLAS passes recognise) and max/min
//    reductions (the adjoint goes to the elements equal to the result).
//    Named linalg ops are generalised first; linalg.softmax is decomposed.
//  * tensor.extract_slice, insert_slice, expand_shape, collapse_shape,
//    concat and empty; hetero.prunable_matmul (its grad_input and
//    grad_weight products, under the layer's key); func.call of a private
//    function (whose own derivative is created once and called).
//  * Integer values (token ids, masks from compares) carry no gradient.
//
// What cannot be differentiated is an error naming the op, the function
// and why.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_PASSES_AUTODIFF_H
#define HETERO_PASSES_AUTODIFF_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/DenseMap.h"

namespace hetero {

/// What a derived function computes.
struct GradientRequest {
  /// The forward arguments whose gradients the derived function returns,
  /// in argument order (each must be a floating-point ranked tensor).
  llvm::SmallVector<bool> wrt;
  /// True: the forward returns one scalar loss (tensor<f32>) whose
  /// gradient is 1 and the derived function takes no result gradient.
  /// False: the derived function takes one gradient per floating-point
  /// tensor result, after the forward's arguments.
  bool loss = false;
};

/// Derives the reverse-mode gradients of module functions. The callees of
/// the functions it differentiates are differentiated once each and
/// reused.
class Differentiator {
public:
  explicit Differentiator(mlir::ModuleOp module);

  /// Creates `name`, the derivative of `forward` for `request`: it takes
  /// the forward's arguments, then (unless request.loss) the gradients of
  /// the forward's floating-point results, and returns the gradients of the
  /// `wrt` arguments. Null after a diagnostic.
  mlir::func::FuncOp derive(mlir::func::FuncOp forward, llvm::StringRef name,
                            const GradientRequest &request);

  /// A private callee's derivative in two parts, so that a caller's
  /// backward runs the callee's forward once: `augmented(arguments) ->
  /// (results..., residuals...)` computes the results and keeps what the
  /// reverse part reads; `reverse(arguments..., residuals..., result
  /// gradients...) -> argument gradients` (every floating-point tensor
  /// argument's) applies the chain rule without re-computing.
  struct CalleeDerivative {
    mlir::func::FuncOp augmented, reverse;
  };

private:
  /// The derivative of private callee `callee`, derived on first use; null
  /// after a diagnostic.
  const CalleeDerivative *calleeDerivative(mlir::func::FuncOp callee);

  mlir::ModuleOp module;
  mlir::SymbolTable symbols;
  llvm::DenseMap<mlir::Operation *, CalleeDerivative> callees;
  friend class FunctionDerivation;
};

} // namespace hetero

#endif // HETERO_PASSES_AUTODIFF_H
