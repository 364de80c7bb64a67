//===- Importer.h - the builder of an imported module -----------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The state of one import (OnnxImport.cpp): the graph read and checked
// (OnnxGraph.h), the module being built, and every graph value as a
// Tensor. OnnxImport.cpp builds the module around @model, ImportBuilders.cpp
// holds the IR patterns the operators share (broadcasting maps, reshapes,
// reductions, softmax, products), ImportOperators.cpp one importer per
// ONNX operator.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_LIB_IMPORT_IMPORTER_H
#define HETERO_LIB_IMPORT_IMPORTER_H

#include "Literal.h"
#include "OnnxGraph.h"

#include "hetero/Dialect/LinalgBuilders.h"
#include "hetero/Import/Onnx.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hetero::onnx_import {

namespace tensor = mlir::tensor;
namespace utils = mlir::utils;
using mlir::AffineMap;
using mlir::ArrayRef;
using mlir::FileLineColLoc;
using mlir::function_ref;
using mlir::Location;
using mlir::MLIRContext;
using mlir::ModuleOp;
using mlir::OpBuilder;
using mlir::OwningOpRef;
using mlir::RankedTensorType;
using mlir::SmallVector;
using mlir::Type;
using mlir::Value;
using mlir::ValueRange;

using Body = GenericBody;

/// A value of the graph while it is built: known (a literal), computed (a
/// tensor Value), or both once a literal has been materialized.
struct Tensor {
  Element element = Element::Float;
  std::vector<int64_t> shape;
  std::optional<Literal> literal;
  Value value;
  /// A graph input the data function hands over as i32 (token ids,
  /// labels): widened to the graph's int64 where it is first used, so that
  /// the function reads the target only where the loss does.
  Value narrow;

  int64_t rank() const { return int64_t(shape.size()); }
  bool isSplatLiteral() const { return literal && literal->isSplat(); }
};

/// An operand of an element-wise generic: the value (with the dimensions a
/// broadcast repeats collapsed away) and its map into the result's loops.
struct Operand {
  Value value;
  AffineMap map;
};

class Importer {
public:
  Importer(MLIRContext *context, OnnxGraph &graph, const ImportOptions &options)
      : context(context), graph(graph), options(options), builder(context),
        loc(FileLineColLoc::get(context, graph.path, 0, 0)),
        f32(builder.getF32Type()), i64(builder.getI64Type()),
        i32(builder.getI32Type()), i1(builder.getI1Type()) {}

  OwningOpRef<ModuleOp> run();

private:
  //===--- reporting ------------------------------------------------------===//
  bool fail(const std::string &message) {
    llvm::errs() << graph.path << ": error: " << message << "\n";
    return false;
  }
  bool failAt(const onnx::NodeProto &node, const std::string &message) {
    return fail(describe(node) + ": " + message);
  }

  //===--- the module -----------------------------------------------------===//
  bool checkInterface();
  bool buildParameters();
  bool buildData();
  bool buildModel();
  void buildPipeline();
  std::string parameterName(const std::string &initializer) const;
  /// The type `value` has in the stage ABI: integer data (token ids,
  /// labels) as i32, the corpus's type.
  RankedTensorType abiType(const GraphValue &value) const;

  //===--- nodes ----------------------------------------------------------===//
  bool importNode(const onnx::NodeProto &node);
  Tensor *input(const onnx::NodeProto &node, int index);
  /// Inputs 0, 1, ... of `node` into `tensors`; false, reported, when one
  /// is missing.
  bool inputs(const onnx::NodeProto &node, ArrayRef<Tensor **> tensors);
  bool hasInput(const onnx::NodeProto &node, int index) const {
    return index < node.input_size() && !node.input(index).empty();
  }
  /// The literal input `index`, or a reported failure.
  const Literal *literalInput(const onnx::NodeProto &node, int index,
                              const char *what);
  void define(const onnx::NodeProto &node, int index, Tensor tensor) {
    values[node.output(index)] = std::move(tensor);
  }
  void defineValue(const onnx::NodeProto &node, int index, Value value,
                   Element element);
  bool outputUsed(const onnx::NodeProto &node, int index) const;

  bool importElementwise(const onnx::NodeProto &node);
  bool importMatMul(const onnx::NodeProto &node);
  bool importGemm(const onnx::NodeProto &node);
  bool importReduce(const onnx::NodeProto &node);
  bool importSoftmax(const onnx::NodeProto &node, bool logarithm);
  bool importLayerNorm(const onnx::NodeProto &node);
  bool importSoftmaxCrossEntropy(const onnx::NodeProto &node);
  bool importReshapeLike(const onnx::NodeProto &node);
  bool importTranspose(const onnx::NodeProto &node);
  bool importConcat(const onnx::NodeProto &node);
  bool importSlice(const onnx::NodeProto &node);
  bool importSplit(const onnx::NodeProto &node);
  bool importGather(const onnx::NodeProto &node);
  bool importCast(const onnx::NodeProto &node);
  bool importConstant(const onnx::NodeProto &node);
  bool importExpand(const onnx::NodeProto &node);

  //===--- IR helpers -----------------------------------------------------===//
  Type elementType(Element element) const {
    return element == Element::Float ? f32 : element == Element::Int ? i64 : i1;
  }
  RankedTensorType tensorType(ArrayRef<int64_t> shape, Element element) const {
    return RankedTensorType::get(shape, elementType(element));
  }
  static std::vector<int64_t> shapeOf(Value value) {
    auto type = llvm::cast<RankedTensorType>(value.getType());
    return {type.getShape().begin(), type.getShape().end()};
  }
  Value materialize(Tensor &tensor);
  Value constant(const Literal &literal);
  Value scalar(Element element, double value, OpBuilder &b, Location l);
  Value empty(ArrayRef<int64_t> shape, Type type) {
    return tensor::EmptyOp::create(builder, loc, shape, type);
  }
  Value filled(ArrayRef<int64_t> shape, Type type, double value);
  Value generic(ValueRange inputs, ArrayRef<AffineMap> maps, Value init,
                ArrayRef<utils::IteratorType> iterators, Body body);
  /// `value` (broadcastable to `shape`) as an operand of a generic over
  /// `shape`'s loops.
  Operand broadcastOperand(Value value, ArrayRef<int64_t> shape);
  /// body(scalars...) over `inputs` broadcast to `shape`; splat literals
  /// enter the body as constants.
  Value map(ArrayRef<Tensor *> inputs, ArrayRef<int64_t> shape, Type result,
            function_ref<Value(OpBuilder &, Location, ArrayRef<Value>)> body);
  /// map() over plain values.
  Value
  mapValues(ValueRange inputs, ArrayRef<int64_t> shape, Type result,
            function_ref<Value(OpBuilder &, Location, ArrayRef<Value>)> body);
  Value reshape(Value value, ArrayRef<int64_t> shape);
  /// Reduces the dimensions flagged in `reduced` of `value`: the result
  /// drops them and starts at `init`; combine(element, accumulator).
  Value reduce(Value value, ArrayRef<bool> reduced, double init, Body combine);
  /// body(element, value per row) with `rows` (the reduction of `value`
  /// over `reduced`) broadcast back.
  Value withReduced(Value value, Value rows, ArrayRef<bool> reduced, Body body);
  Value softmax(Value value, int64_t axis, bool logarithm);
  /// The mean (or sum) over the positions of -log softmax(logits)[label]
  /// along `classAxis`; positions whose label is `ignoreIndex` count for
  /// nothing, neither in the sum nor in the mean's count.
  Value crossEntropy(Value logits, Value labels, int64_t classAxis,
                     std::optional<int64_t> ignoreIndex, bool mean);
  Value matmul(Value lhs, Value rhs);
  Value sumAll(Value value);

  MLIRContext *context;
  OnnxGraph &graph;
  const ImportOptions &options;
  OpBuilder builder;
  Location loc;
  Type f32, i64, i32, i1;

  OwningOpRef<ModuleOp> module;
  std::map<std::string, Tensor> values;
  /// The model's input (its samples) and its target.
  GraphValue sample, target;
  bool targetIsGraphInput = false;
  int64_t batch = 0;
  std::vector<std::string> parameters;
};

} // namespace hetero::onnx_import

#endif // HETERO_LIB_IMPORT_IMPORTER_H
