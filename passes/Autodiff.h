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
#include "llvm/ADT/SetVector.h"

#include <map>
#include <optional>
#include <vector>

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
  /// With `rematerialize`, augmented derivatives keep fewer residuals: the
  /// reverse part re-computes element-wise maps from them (for residuals
  /// that wait in the step's stash). Without, only what computes nothing
  /// (for residuals that live within one backward).
  explicit Differentiator(mlir::ModuleOp module, bool rematerialize = false);

  /// Creates `name`, the derivative of `forward` for `request`: it takes
  /// the forward's arguments, then (unless request.loss) the gradients of
  /// the forward's floating-point results, and returns the gradients of the
  /// `wrt` arguments. Null after a diagnostic.
  mlir::func::FuncOp derive(mlir::func::FuncOp forward, llvm::StringRef name,
                            const GradientRequest &request);

  /// A derivative in two parts, so that the chain rule does not re-compute
  /// the forward: `augmented(arguments) -> (results..., residuals...)`
  /// computes the results and keeps what the reverse part reads;
  /// `reverse(arguments..., residuals..., result gradients...) ->
  /// gradients` applies the chain rule from them. The reverse part
  /// re-computes what is cheap instead of keeping it: views, fills, copies,
  /// transposes and broadcasts of the arguments, and, when the
  /// Differentiator rematerializes, element-wise maps (from residuals), so
  /// that the residuals are the outputs of products, reductions and calls.
  struct AugmentedDerivative {
    mlir::func::FuncOp augmented, reverse;
  };

  /// Creates the two parts of `forward`'s derivative for `request`, named
  /// `name` (the reverse part) and `augmentedName`; the reverse part takes
  /// no result gradients when request.loss. std::nullopt after a
  /// diagnostic.
  std::optional<AugmentedDerivative>
  deriveAugmented(mlir::func::FuncOp forward, llvm::StringRef name,
                  llvm::StringRef augmentedName, const GradientRequest &request,
                  bool isPrivate = false);

  /// Whether the module defines `name`.
  bool defines(llvm::StringRef name) { return symbols.lookup(name); }

  /// The module's symbol table, which knows the derived functions.
  mlir::SymbolTable &symbolTable() { return symbols; }

private:
  /// The derivative of private callee `callee` (every floating-point
  /// tensor argument's gradient), derived on first use; null after a
  /// diagnostic.
  const AugmentedDerivative *calleeDerivative(mlir::func::FuncOp callee);

  mlir::ModuleOp module;
  mlir::SymbolTable symbols;
  bool rematerialize;
  llvm::DenseMap<mlir::Operation *, AugmentedDerivative> callees;
  friend class FunctionDerivation;
};

/// Drops the values of a derived function that nothing reads, and the
/// operands of its linalg ops' bodies that they do not use.
void simplifyDerivative(mlir::func::FuncOp function);

/// The value of `expr`, which has no symbols, at the loop indices `point`.
int64_t evaluateAffine(mlir::AffineExpr expr, llvm::ArrayRef<int64_t> point);

/// Splits derived backward functions into the part that computes the
/// input gradient and the part that computes the weight gradients, for
/// schedules that run them as separate tasks (zero-bubble).
class BackwardSplitter {
public:
  /// `symbols` is the module's table, shared with the Differentiator that
  /// created the functions to split.
  BackwardSplitter(mlir::ModuleOp module, mlir::SymbolTable &symbols)
      : module(module), symbols(symbols) {}

  struct Parts {
    mlir::func::FuncOp first, second;
    /// The arguments of the split function that `second` takes, in order,
    /// before the saved values.
    llvm::SmallVector<unsigned> secondArguments;
  };

  /// Splits `function` (a body of one block) into `first(arguments...) ->
  /// (the results where `firstResults` holds..., saved...)`, which computes
  /// only what those results need, and `second(arguments..., saved...) ->
  /// (the other results...)`, which computes the rest from what `first`
  /// saved. With `fixedArguments` = n, `second` takes the first n
  /// arguments, and what it reads of the others is saved; otherwise it
  /// takes the arguments it reads. A call of a private function whose
  /// results feed both parts is split the same way (each callee once per
  /// set of results). Failure after a diagnostic.
  mlir::FailureOr<Parts>
  split(mlir::func::FuncOp function, llvm::ArrayRef<bool> firstResults,
        llvm::StringRef firstName, llvm::StringRef secondName,
        std::optional<unsigned> fixedArguments = std::nullopt);

  /// Erases `function` when nothing refers to it.
  void eraseIfUnused(mlir::func::FuncOp function);
  /// Erases the callees that were split and that nothing calls any more.
  void eraseUnusedParts();

private:
  /// `split` of a callee, once per set of results.
  mlir::FailureOr<Parts> splitCallee(mlir::func::FuncOp callee,
                                     const std::vector<bool> &firstResults);

  mlir::ModuleOp module;
  mlir::SymbolTable &symbols;
  std::map<std::pair<mlir::Operation *, std::vector<bool>>, Parts> callees;
  /// The callees split, each once however many ways.
  llvm::SetVector<mlir::Operation *> splitCallees;
};

} // namespace hetero

#endif // HETERO_PASSES_AUTODIFF_H
