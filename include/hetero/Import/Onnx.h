//===- Onnx.h - an ONNX model as a forward-only pipeline --------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// hetero-import-onnx's core: an ONNX model with static shapes (as
// torch.onnx.export writes it, opsets 13 to 17) becomes a single-stage
// pipeline in the stage ABI (docs/execution.md), forward only:
//
//   * the trainable initializers (float initializers that a gradient
//     reaches from the loss) become `memref.global` parameters named after
//     them, every character other than a letter, a digit or `_` replaced by
//     `_`; the other initializers stay constants;
//   * the graph becomes `@model(input, parameters..., target) -> loss`,
//     built with builders on linalg, tensor, arith and math, with the loss
//     the model's own output (`none`) or appended (`mse`, `cross-entropy`);
//   * `@data` reads the runtime's corpus or samples of x.npy and y.npy
//     (embedded as constants), and `hetero.pipeline @train` binds it all.
//
// The result is a module like any other: hetero-partition-stages cuts it,
// hetero-derive-backward derives its backward, hetero-run trains it.
// docs/import.md describes the contract; test/Import checks it.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_IMPORT_ONNX_H
#define HETERO_IMPORT_ONNX_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>

namespace hetero::onnx_import {

/// The loss the stage computes from the model's output.
enum class Loss {
  /// The model's output is the loss (a scalar): the model takes the target
  /// as its second input.
  none,
  /// mean((output - target)^2) over all elements (F.mse_loss).
  mse,
  /// mean over samples (and positions, for outputs of rank 3) of
  /// -log softmax(output)[target] over the last dimension
  /// (F.cross_entropy), with integer targets.
  crossEntropy,
};

struct ImportOptions {
  Loss loss = Loss::none;
  /// Empty: the runtime's text corpus (hetero.corpus_batch); otherwise a
  /// directory holding x.npy and y.npy.
  std::string npyDirectory;
  /// Samples per micro-batch; 0: the model's (dimension 0 of its input).
  int64_t batch = 0;
  int64_t microbatches = 4;
  /// Data-parallel replicas: grid axis 1.
  int64_t replicas = 1;
  /// Token ids of the corpus; 0: the rows of the embedding table the
  /// input ids index.
  int64_t vocab = 0;
  /// "sgd" or "adam" (PyTorch's semantics and defaults).
  std::string optimizer = "adam";
  double learningRate = 1e-3;
};

/// Reads `path` and builds the module. Problems (a missing or unreadable
/// file, an opset out of range, a dynamic dimension, an unsupported
/// operator, options that do not fit the model) are reported on
/// `llvm::errs()` as `<path>: error: ...`, naming the node, its operator and
/// what was expected; then the result is null and nothing is built.
/// Remarks (a Dropout imported as the identity) go to the same stream.
mlir::OwningOpRef<mlir::ModuleOp> importOnnx(mlir::MLIRContext *context,
                                             const std::string &path,
                                             const ImportOptions &options);

} // namespace hetero::onnx_import

#endif // HETERO_IMPORT_ONNX_H
