//===- OnnxImport.cpp - an ONNX model as a forward-only pipeline ----------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Builds the module of include/hetero/Import/Onnx.h from the graph that
// OnnxGraph read and checked. Every ONNX operator becomes tensor IR that
// hetero's passes already handle: element-wise operators with NumPy
// broadcasting are one linalg.generic whose broadcast operands are first
// collapsed to drop their repeated dimensions (so every indexing map is a
// projected permutation, as hetero-derive-backward requires); products are
// linalg.matmul or a batched contraction (one batch loop, so that the CPU
// pipeline calls sgemm); a Gather of ids computed at run time is a one-hot
// contraction (differentiable in the table); a Gather of constant indices
// is slices; reshapes are collapse_shape and expand_shape.
//
//===----------------------------------------------------------------------===//

#include "hetero/Import/Onnx.h"

#include "Literal.h"
#include "OnnxGraph.h"

#include "hetero/Dialect/Hetero.h"
#include "hetero/Dialect/LinalgBuilders.h"
#include "hetero/Dialect/Utils.h"
#include "hetero/Support/Npy.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>
#include <map>
#include <numeric>

using namespace mlir;

namespace hetero::onnx_import {
namespace {

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

/// A failure already reported.
struct Failed {};

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

  //===--- nodes ----------------------------------------------------------===//
  bool importNode(const onnx::NodeProto &node);
  Tensor *input(const onnx::NodeProto &node, int index);
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

//===----------------------------------------------------------------------===//
// Checks of the model against the stage ABI
//===----------------------------------------------------------------------===//

bool Importer::checkInterface() {
  const char *lossName = options.loss == Loss::none  ? "none"
                         : options.loss == Loss::mse ? "mse"
                                                     : "cross-entropy";
  size_t wantedInputs = options.loss == Loss::none ? 2 : 1;
  if (graph.inputs.size() != wantedInputs)
    return fail("the model has " + std::to_string(graph.inputs.size()) +
                (graph.inputs.size() == 1 ? " input" : " inputs") +
                "; with --loss " + lossName + " expected " +
                (wantedInputs == 2 ? "2 (the samples and the targets)"
                                   : "1 (the samples)"));
  if (graph.outputs.size() != 1)
    return fail("the model has " + std::to_string(graph.outputs.size()) +
                " outputs; expected 1 (the loss or the predictions)");
  sample = graph.inputs[0];
  const GraphValue &output = graph.outputs[0];
  if (sample.shape.empty())
    return fail("input '" + sample.name +
                "' is a scalar; expected a batch of samples (dimension 0)");
  if (sample.element == Element::Bool)
    return fail("input '" + sample.name +
                "' is bool; expected float samples or integer ids");
  batch = sample.shape[0];
  if (options.batch && options.batch != batch)
    return fail("--batch " + std::to_string(options.batch) +
                " does not match the model's micro-batch of " +
                std::to_string(batch) + " samples (dimension 0 of input '" +
                sample.name + "'); export the model with " +
                std::to_string(options.batch) + " samples");
  switch (options.loss) {
  case Loss::none:
    target = graph.inputs[1];
    targetIsGraphInput = true;
    if (target.element == Element::Bool)
      return fail("input '" + target.name +
                  "' is bool; expected float or integer targets");
    if (target.shape.empty() || target.shape[0] != batch)
      return fail("input '" + target.name + "' (the targets) must have " +
                  std::to_string(batch) +
                  " samples in dimension 0, as input '" + sample.name + "'");
    if (output.element != Element::Float || elementCount(output.shape) != 1)
      return fail("output '" + output.name +
                  "' is not a float scalar; with --loss none the model's "
                  "output is its loss (or use --loss mse|cross-entropy)");
    break;
  case Loss::mse:
    if (output.element != Element::Float)
      return fail("output '" + output.name +
                  "' is not float; --loss mse "
                  "needs a float output");
    target = {"target", Element::Float, output.shape};
    break;
  case Loss::crossEntropy:
    if (output.element != Element::Float ||
        (output.shape.size() != 2 && output.shape.size() != 3))
      return fail("output '" + output.name +
                  "' is not float logits of rank 2 or 3; --loss "
                  "cross-entropy expects [samples, classes] or [samples, "
                  "positions, classes]");
    target = {
        "target", Element::Int, {output.shape.begin(), output.shape.end() - 1}};
    break;
  }
  if (options.loss != Loss::none && output.shape[0] != batch)
    return fail("output '" + output.name + "' has " +
                std::to_string(output.shape[0]) +
                " samples in dimension 0; expected " + std::to_string(batch) +
                ", as input '" + sample.name + "'");
  if (options.npyDirectory.empty()) {
    if (sample.element != Element::Int || sample.shape.size() != 2 ||
        target.element != Element::Int || target.shape != sample.shape)
      return fail("--data corpus reads token ids: it needs integer input "
                  "and targets of shape [sequences, tokens]; the model "
                  "takes input '" +
                  sample.name + "' of " + elementName(sample.element) +
                  " and targets of " + elementName(target.element) +
                  " (use --data npy:DIR for other data)");
  }
  if (options.microbatches < 1 || options.replicas < 1)
    return fail("--microbatches and --dp must be positive");
  if (options.learningRate <= 0)
    return fail("--lr must be positive");
  if (options.optimizer != "sgd" && options.optimizer != "adam")
    return fail("--optimizer must be sgd or adam; got '" + options.optimizer +
                "'");
  return true;
}

std::string Importer::parameterName(const std::string &initializer) const {
  std::string name = initializer;
  for (char &c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      c = '_';
  return name;
}

//===----------------------------------------------------------------------===//
// Parameters, data and pipeline
//===----------------------------------------------------------------------===//

constexpr llvm::StringLiteral kModel = "model", kData = "data",
                              kPipeline = "train", kGrid = "devices";

bool Importer::buildParameters() {
  std::map<std::string, std::string> owner;
  for (const std::string &initializer : graph.trainable) {
    std::string name = parameterName(initializer);
    if (name == kModel || name == kData || name == kPipeline || name == kGrid)
      return fail("initializer '" + initializer + "' would be @" + name +
                  ", a name the importer uses for the " +
                  (name == kModel  ? "model function"
                   : name == kData ? "data function"
                   : name == kGrid ? "device grid"
                                   : "pipeline"));
    auto [it, inserted] = owner.emplace(name, initializer);
    if (!inserted)
      return fail("initializers '" + it->second + "' and '" + initializer +
                  "' both become parameter @" + name +
                  "; expected names that differ in letters, digits or '_'");
    const Literal &literal = graph.initializers.at(initializer);
    auto type = RankedTensorType::get(literal.shape, f32);
    std::vector<float> data(literal.floats.begin(), literal.floats.end());
    memref::GlobalOp::create(
        builder, loc, name, builder.getStringAttr("private"),
        MemRefType::get(literal.shape, f32),
        DenseElementsAttr::get(type, ArrayRef<float>(data)),
        /*constant=*/false, /*alignment=*/IntegerAttr());
    parameters.push_back(initializer);
  }
  return true;
}

/// The token ids of the corpus: the option, or the rows of the table that
/// a Gather of the input ids reads.
static int64_t inferVocab(const OnnxGraph &graph, const std::string &ids) {
  for (const onnx::NodeProto *node : graph.nodes)
    if (node->op_type() == "Gather" && node->input_size() == 2 &&
        node->input(1) == ids) {
      auto table = graph.initializers.find(node->input(0));
      if (table != graph.initializers.end() && table->second.rank() >= 1 &&
          intAttribute(*node, "axis", 0) == 0)
        return table->second.shape[0];
    }
  return 0;
}

bool Importer::buildData() {
  // Integer data reaches the stage as i32 (the corpus's token ids).
  auto abiType = [&](const GraphValue &value) {
    return RankedTensorType::get(
        value.shape, value.element == Element::Float ? Type(f32) : Type(i32));
  };
  RankedTensorType inputType = abiType(sample), targetType = abiType(target);
  auto function = func::FuncOp::create(
      builder, loc, kData,
      builder.getFunctionType({i64, i64, i64}, {inputType, targetType}));
  Block *entry = function.addEntryBlock();
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(entry);
  Value step = entry->getArgument(0), replica = entry->getArgument(1),
        microbatch = entry->getArgument(2);

  if (options.npyDirectory.empty()) {
    int64_t vocab =
        options.vocab ? options.vocab : inferVocab(graph, sample.name);
    if (vocab < 2 || vocab > 256)
      return fail(vocab
                      ? "--vocab " + std::to_string(vocab) +
                            " is out of range; expected 2 to 256 "
                            "character-level token ids"
                      : "cannot tell the vocabulary of input '" + sample.name +
                            "' (no Gather of an embedding table reads it); "
                            "give --vocab");
    auto batchOp =
        CorpusBatchOp::create(builder, loc, inputType, inputType, step, replica,
                              microbatch, builder.getI64IntegerAttr(vocab),
                              builder.getI64IntegerAttr(options.replicas));
    func::ReturnOp::create(builder, loc, batchOp.getResults());
    return true;
  }

  // Micro-batch i of step t on replica r takes the B samples from
  // ((t R + r) M + i) B on, modulo the number of samples.
  SmallVector<Value> results;
  int64_t samples = 0;
  for (auto [file, value] :
       {std::pair<const char *, const GraphValue *>{"x.npy", &sample},
        std::pair<const char *, const GraphValue *>{"y.npy", &target}}) {
    std::string path = options.npyDirectory + "/" + file;
    npy::Array array;
    if (std::string error = npy::read(path, array); !error.empty())
      return fail("--data npy: " + error);
    std::vector<int64_t> sample(value->shape.begin() + 1, value->shape.end());
    std::vector<int64_t> held(
        array.shape.begin() + (array.shape.empty() ? 0 : 1), array.shape.end());
    bool isFloat = array.dtype == npy::Dtype::Float32;
    if (array.shape.empty() || held != sample ||
        isFloat != (value->element == Element::Float)) {
      std::string wanted =
          value->element == Element::Float ? "float32" : "int64";
      std::string dims;
      for (int64_t d : sample)
        dims += "x" + std::to_string(d);
      return fail("--data npy: " + path + " must hold " + wanted +
                  " samples of shape [N" + dims + "] for '" + value->name +
                  "'");
    }
    if (samples && array.shape[0] != samples)
      return fail("--data npy: x.npy holds " + std::to_string(samples) +
                  " samples and y.npy " + std::to_string(array.shape[0]) +
                  "; expected the same number");
    samples = array.shape[0];
    auto type = RankedTensorType::get(array.shape, isFloat ? f32 : i32);
    DenseElementsAttr data;
    if (isFloat) {
      data = DenseElementsAttr::get(type, ArrayRef<float>(array.floats));
    } else {
      std::vector<int32_t> narrow;
      for (int64_t v : array.ints) {
        if (v < std::numeric_limits<int32_t>::min() ||
            v > std::numeric_limits<int32_t>::max())
          return fail("--data npy: " + path + " holds " + std::to_string(v) +
                      ", beyond the 32-bit ids and labels the stage takes");
        narrow.push_back(int32_t(v));
      }
      data = DenseElementsAttr::get(type, ArrayRef<int32_t>(narrow));
    }
    Value all = arith::ConstantOp::create(builder, loc, type, data);
    auto constantI64 = [&](int64_t v) -> Value {
      return arith::ConstantOp::create(builder, loc,
                                       builder.getI64IntegerAttr(v));
    };
    Value index = arith::AddIOp::create(
        builder, loc,
        arith::MulIOp::create(builder, loc, step,
                              constantI64(options.replicas)),
        replica);
    index = arith::AddIOp::create(
        builder, loc,
        arith::MulIOp::create(builder, loc, index,
                              constantI64(options.microbatches)),
        microbatch);
    index = arith::MulIOp::create(builder, loc, index, constantI64(batch));
    Value first = arith::IndexCastOp::create(
        builder, loc, builder.getIndexType(),
        arith::RemSIOp::create(builder, loc, index, constantI64(samples)));
    auto resultType =
        RankedTensorType::get(value->shape, type.getElementType());
    int64_t rank = resultType.getRank();
    Value rows = generic(
        {}, {builder.getMultiDimIdentityMap(rank)},
        empty(resultType.getShape(), resultType.getElementType()),
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange) -> Value {
          SmallVector<Value> at;
          for (int64_t d = 0; d < rank; ++d)
            at.push_back(linalg::IndexOp::create(b, l, d));
          Value count = arith::ConstantIndexOp::create(b, l, samples);
          at[0] = arith::RemUIOp::create(
              b, l, arith::AddIOp::create(b, l, first, at[0]), count);
          return tensor::ExtractOp::create(b, l, all, at);
        });
    results.push_back(rows);
  }
  func::ReturnOp::create(builder, loc, results);
  return true;
}

void Importer::buildPipeline() {
  Attribute optimizer =
      options.optimizer == "adam"
          ? Attribute(AdamAttr::get(
                context, builder.getF64FloatAttr(options.learningRate),
                FloatAttr(), FloatAttr(), FloatAttr()))
          : Attribute(SgdAttr::get(
                context, builder.getF64FloatAttr(options.learningRate),
                FloatAttr()));
  auto pipeline =
      PipelineOp::create(builder, loc, builder.getStringAttr(kPipeline),
                         builder.getI64IntegerAttr(1),
                         builder.getI64IntegerAttr(options.microbatches),
                         FlatSymbolRefAttr::get(context, kGrid),
                         FlatSymbolRefAttr::get(context, kData), optimizer,
                         SyncAttr(), CheckpointAttr(), Attribute());
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(&pipeline.getBody().emplaceBlock());
  SmallVector<Attribute> params;
  for (const std::string &initializer : parameters)
    params.push_back(
        FlatSymbolRefAttr::get(context, parameterName(initializer)));
  StageOp::create(builder, loc, builder.getI64IntegerAttr(0),
                  FlatSymbolRefAttr::get(context, kModel),
                  /*augmented=*/FlatSymbolRefAttr(),
                  /*backward=*/FlatSymbolRefAttr(),
                  /*backward_input=*/FlatSymbolRefAttr(),
                  /*backward_weight=*/FlatSymbolRefAttr(),
                  builder.getArrayAttr(params), StringAttr());
}

bool Importer::buildModel() {
  auto abiType = [&](const GraphValue &value) {
    return RankedTensorType::get(
        value.shape, value.element == Element::Float ? Type(f32) : Type(i32));
  };
  SmallVector<Type> inputs = {abiType(sample)};
  for (const std::string &initializer : parameters)
    inputs.push_back(
        RankedTensorType::get(graph.initializers.at(initializer).shape, f32));
  inputs.push_back(abiType(target));
  auto lossType = RankedTensorType::get({}, f32);
  auto function = func::FuncOp::create(
      builder, loc, kModel, builder.getFunctionType(inputs, {lossType}));
  Block *entry = function.addEntryBlock();
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(entry);

  auto bindInput = [&](const GraphValue &value, Value argument) {
    Tensor tensor;
    tensor.element = value.element;
    tensor.shape = value.shape;
    if (value.element == Element::Float)
      tensor.value = argument;
    else
      tensor.narrow = argument;
    return tensor;
  };
  values[sample.name] = bindInput(sample, entry->getArgument(0));
  Value targetArgument = entry->getArguments().back();
  if (targetIsGraphInput)
    values[target.name] = bindInput(target, targetArgument);
  for (auto [index, initializer] : llvm::enumerate(parameters)) {
    Tensor tensor;
    tensor.shape = graph.initializers.at(initializer).shape;
    tensor.value = entry->getArgument(1 + index);
    values[initializer] = std::move(tensor);
  }
  for (const auto &[name, literal] : graph.initializers)
    if (!values.count(name)) {
      Tensor tensor;
      tensor.element = literal.element;
      tensor.shape = literal.shape;
      tensor.literal = literal;
      values[name] = std::move(tensor);
    }

  for (const onnx::NodeProto *node : graph.nodes)
    if (graph.live.count(node) && !importNode(*node))
      return false;

  Tensor &output = values.at(graph.outputs[0].name);
  if (output.shape != graph.outputs[0].shape)
    return fail("output '" + graph.outputs[0].name + "' is computed with a " +
                "shape that differs from the one the model declares");
  Value result = materialize(output);
  Value loss;
  switch (options.loss) {
  case Loss::none:
    loss = reshape(result, {});
    break;
  case Loss::mse: {
    Value difference =
        mapValues({result, targetArgument}, output.shape, f32,
                  [](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                    Value d = arith::SubFOp::create(b, l, a[0], a[1]);
                    return arith::MulFOp::create(b, l, d, d);
                  });
    double count = double(elementCount(output.shape));
    loss = mapValues({sumAll(difference)}, {}, f32,
                     [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                       return arith::DivFOp::create(
                           b, l, a[0], scalar(Element::Float, count, b, l));
                     });
    break;
  }
  case Loss::crossEntropy: {
    Value labels =
        mapValues({targetArgument}, target.shape, i64,
                  [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                    return arith::ExtSIOp::create(b, l, i64, a[0]);
                  });
    loss = crossEntropy(result, labels, int64_t(output.shape.size()) - 1,
                        std::nullopt, /*mean=*/true);
    break;
  }
  }
  func::ReturnOp::create(builder, loc, loss);
  return true;
}

OwningOpRef<ModuleOp> Importer::run() {
  context
      ->loadDialect<arith::ArithDialect, bufferization::BufferizationDialect,
                    func::FuncDialect, linalg::LinalgDialect, math::MathDialect,
                    memref::MemRefDialect, shard::ShardDialect,
                    tensor::TensorDialect, HeteroDialect>();
  if (!checkInterface())
    return nullptr;
  module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());
  shard::GridOp::create(builder, loc, kGrid,
                        ArrayRef<int64_t>{1, options.replicas});
  if (!buildParameters() || !buildData() || !buildModel())
    return nullptr;
  buildPipeline();
  if (failed(verify(*module))) {
    fail("the imported module does not verify (above); this is a bug of "
         "the importer");
    return nullptr;
  }
  return std::move(module);
}

//===----------------------------------------------------------------------===//
// IR helpers
//===----------------------------------------------------------------------===//

Value Importer::scalar(Element element, double value, OpBuilder &b,
                       Location l) {
  if (element == Element::Float)
    return arith::ConstantOp::create(b, l, b.getF32FloatAttr(float(value)));
  return arith::ConstantOp::create(
      b, l, b.getIntegerAttr(elementType(element), int64_t(value)));
}

Value Importer::constant(const Literal &literal) {
  RankedTensorType type = tensorType(literal.shape, literal.element);
  DenseElementsAttr attr;
  if (literal.isFloat()) {
    std::vector<float> data(literal.floats.begin(), literal.floats.end());
    attr = DenseElementsAttr::get(type, ArrayRef<float>(data));
  } else if (literal.element == Element::Int) {
    attr = DenseElementsAttr::get(type, ArrayRef<int64_t>(literal.ints));
  } else {
    SmallVector<bool> data;
    for (int64_t v : literal.ints)
      data.push_back(v != 0);
    attr = DenseElementsAttr::get(type, ArrayRef<bool>(data));
  }
  return arith::ConstantOp::create(builder, loc, type, attr);
}

Value Importer::materialize(Tensor &tensor) {
  if (tensor.value)
    return tensor.value;
  if (tensor.narrow) {
    tensor.value =
        mapValues({tensor.narrow}, tensor.shape, i64,
                  [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                    return arith::ExtSIOp::create(b, l, i64, a[0]);
                  });
    return tensor.value;
  }
  // A constant is built where it is used (not cached): every stage that
  // hetero-partition-stages cuts keeps its own copy.
  return constant(*tensor.literal);
}

Value Importer::filled(ArrayRef<int64_t> shape, Type type, double value) {
  Value init = empty(shape, type);
  Value fill =
      isa<FloatType>(type)
          ? Value(arith::ConstantOp::create(builder, loc,
                                            builder.getFloatAttr(type, value)))
          : Value(arith::ConstantOp::create(
                builder, loc, builder.getIntegerAttr(type, int64_t(value))));
  return linalg::FillOp::create(builder, loc, ValueRange{fill},
                                ValueRange{init})
      .getResult(0);
}

Value Importer::generic(ValueRange inputs, ArrayRef<AffineMap> maps, Value init,
                        ArrayRef<utils::IteratorType> iterators, Body body) {
  return buildGeneric(builder, loc, inputs, maps, init, iterators, body);
}

Operand Importer::broadcastOperand(Value value, ArrayRef<int64_t> shape) {
  std::vector<int64_t> own = shapeOf(value);
  size_t offset = shape.size() - own.size();
  std::vector<int64_t> kept;
  SmallVector<AffineExpr> results;
  for (size_t d = 0; d < own.size(); ++d)
    if (!(own[d] == 1 && shape[offset + d] != 1)) {
      kept.push_back(own[d]);
      results.push_back(builder.getAffineDimExpr(unsigned(offset + d)));
    }
  Value collapsed = kept.size() == own.size() ? value : reshape(value, kept);
  return {collapsed,
          AffineMap::get(unsigned(shape.size()), 0, results, context)};
}

Value Importer::mapValues(
    ValueRange inputs, ArrayRef<int64_t> shape, Type result,
    function_ref<Value(OpBuilder &, Location, ArrayRef<Value>)> body) {
  SmallVector<Value> operands;
  SmallVector<AffineMap> maps;
  for (Value value : inputs) {
    Operand operand = broadcastOperand(value, shape);
    operands.push_back(operand.value);
    maps.push_back(operand.map);
  }
  maps.push_back(builder.getMultiDimIdentityMap(unsigned(shape.size())));
  return generic(operands, maps, empty(shape, result),
                 SmallVector<utils::IteratorType>(
                     shape.size(), utils::IteratorType::parallel),
                 [&](OpBuilder &b, Location l, ValueRange args) {
                   SmallVector<Value> scalars(args.drop_back());
                   return body(b, l, scalars);
                 });
}

Value Importer::map(
    ArrayRef<Tensor *> inputs, ArrayRef<int64_t> shape, Type result,
    function_ref<Value(OpBuilder &, Location, ArrayRef<Value>)> body) {
  SmallVector<Value> operands;
  SmallVector<int> position; // operand index, or -1 for a splat literal
  for (Tensor *tensor : inputs) {
    if (tensor->isSplatLiteral() && !tensor->value) {
      position.push_back(-1);
      continue;
    }
    position.push_back(int(operands.size()));
    operands.push_back(materialize(*tensor));
  }
  return mapValues(
      operands, shape, result,
      [&](OpBuilder &b, Location l, ArrayRef<Value> args) -> Value {
        SmallVector<Value> scalars;
        for (auto [tensor, at] : llvm::zip(inputs, position))
          scalars.push_back(
              at >= 0 ? args[at]
                      : scalar(tensor->element, tensor->literal->at(0), b, l));
        return body(b, l, scalars);
      });
}

Value Importer::reshape(Value value, ArrayRef<int64_t> shape) {
  auto type = llvm::cast<RankedTensorType>(value.getType());
  if (type.getShape() == shape)
    return value;
  auto target = RankedTensorType::get(shape, type.getElementType());
  // To or from a scalar: all dimensions are 1, and no dimension groups.
  if (shape.empty())
    return tensor::CollapseShapeOp::create(builder, loc, target, value,
                                           ArrayRef<ReassociationIndices>{});
  if (type.getRank() == 0)
    return tensor::ExpandShapeOp::create(builder, loc, target, value,
                                         ArrayRef<ReassociationIndices>{});
  // Through the coarsest shape both refine: the sizes where the running
  // products of the two shapes meet.
  std::vector<int64_t> source = shapeOf(value);
  std::vector<int64_t> common;
  {
    int64_t a = 1, b = 1, last = 1;
    size_t i = 0, j = 0;
    while (i < source.size() || j < shape.size()) {
      if (a <= b && i < source.size())
        a *= source[i++];
      else if (j < shape.size())
        b *= shape[j++];
      else
        a *= source[i++];
      if (a == b && a != last) {
        common.push_back(a / last);
        last = a;
      }
    }
  }
  auto middle = RankedTensorType::get(common, type.getElementType());
  auto collapse = getReassociationIndicesForCollapse(source, middle.getShape());
  auto expand = getReassociationIndicesForCollapse(shape, middle.getShape());
  if (!collapse || !expand) {
    // Unit dimensions the grouping cannot place: through one dimension.
    middle =
        RankedTensorType::get({type.getNumElements()}, type.getElementType());
    collapse = getReassociationIndicesForCollapse(source, middle.getShape());
    expand = getReassociationIndicesForCollapse(shape, middle.getShape());
  }
  Value collapsed = value;
  if (middle.getShape() != type.getShape())
    collapsed =
        tensor::CollapseShapeOp::create(builder, loc, middle, value, *collapse);
  if (middle.getShape() == shape)
    return collapsed;
  return tensor::ExpandShapeOp::create(builder, loc, target, collapsed,
                                       *expand);
}

Value Importer::reduce(Value value, ArrayRef<bool> reduced, double init,
                       Body combine) {
  std::vector<int64_t> shape = shapeOf(value), kept;
  SmallVector<AffineExpr> results;
  SmallVector<utils::IteratorType> iterators;
  for (size_t d = 0; d < shape.size(); ++d) {
    iterators.push_back(reduced[d] ? utils::IteratorType::reduction
                                   : utils::IteratorType::parallel);
    if (!reduced[d]) {
      kept.push_back(shape[d]);
      results.push_back(builder.getAffineDimExpr(unsigned(d)));
    }
  }
  Type element = llvm::cast<RankedTensorType>(value.getType()).getElementType();
  return generic({value},
                 {builder.getMultiDimIdentityMap(unsigned(shape.size())),
                  AffineMap::get(unsigned(shape.size()), 0, results, context)},
                 filled(kept, element, init), iterators, combine);
}

Value Importer::withReduced(Value value, Value rows, ArrayRef<bool> reduced,
                            Body body) {
  std::vector<int64_t> shape = shapeOf(value);
  SmallVector<AffineExpr> results;
  for (size_t d = 0; d < shape.size(); ++d)
    if (!reduced[d])
      results.push_back(builder.getAffineDimExpr(unsigned(d)));
  AffineMap identity = builder.getMultiDimIdentityMap(unsigned(shape.size()));
  return generic(
      {value, rows},
      {identity, AffineMap::get(unsigned(shape.size()), 0, results, context),
       identity},
      empty(shape, f32),
      SmallVector<utils::IteratorType>(shape.size(),
                                       utils::IteratorType::parallel),
      [&](OpBuilder &b, Location l, ValueRange a) {
        return body(b, l, a.take_front(2));
      });
}

Value Importer::softmax(Value value, int64_t axis, bool logarithm) {
  SmallVector<bool> reduced(shapeOf(value).size(), false);
  reduced[size_t(axis)] = true;
  Value maximum =
      reduce(value, reduced, -std::numeric_limits<double>::infinity(),
             [](OpBuilder &b, Location l, ValueRange a) -> Value {
               return arith::MaximumFOp::create(b, l, a[0], a[1]);
             });
  Value exponentials =
      withReduced(value, maximum, reduced,
                  [](OpBuilder &b, Location l, ValueRange a) -> Value {
                    return math::ExpOp::create(
                        b, l, arith::SubFOp::create(b, l, a[0], a[1]));
                  });
  Value sums = reduce(exponentials, reduced, 0.0,
                      [](OpBuilder &b, Location l, ValueRange a) -> Value {
                        return arith::AddFOp::create(b, l, a[0], a[1]);
                      });
  if (!logarithm)
    return withReduced(exponentials, sums, reduced,
                       [](OpBuilder &b, Location l, ValueRange a) -> Value {
                         return arith::DivFOp::create(b, l, a[0], a[1]);
                       });
  // x - max - log(sum exp(x - max)).
  Value logSums = mapValues({sums}, shapeOf(sums), f32,
                            [](OpBuilder &b, Location l, ArrayRef<Value> a) {
                              return Value(math::LogOp::create(b, l, a[0]));
                            });
  Value shifted =
      withReduced(value, maximum, reduced,
                  [](OpBuilder &b, Location l, ValueRange a) -> Value {
                    return arith::SubFOp::create(b, l, a[0], a[1]);
                  });
  return withReduced(shifted, logSums, reduced,
                     [](OpBuilder &b, Location l, ValueRange a) -> Value {
                       return arith::SubFOp::create(b, l, a[0], a[1]);
                     });
}

Value Importer::sumAll(Value value) {
  SmallVector<bool> all(shapeOf(value).size(), true);
  return reduce(value, all, 0.0,
                [](OpBuilder &b, Location l, ValueRange a) -> Value {
                  return arith::AddFOp::create(b, l, a[0], a[1]);
                });
}

Value Importer::crossEntropy(Value logits, Value labels, int64_t classAxis,
                             std::optional<int64_t> ignoreIndex, bool mean) {
  Value logProbabilities = softmax(logits, classAxis, /*logarithm=*/true);
  std::vector<int64_t> shape = shapeOf(logits);
  unsigned rank = unsigned(shape.size());
  SmallVector<AffineExpr> positions;
  SmallVector<utils::IteratorType> iterators;
  for (unsigned d = 0; d < rank; ++d) {
    iterators.push_back(int64_t(d) == classAxis
                            ? utils::IteratorType::reduction
                            : utils::IteratorType::parallel);
    if (int64_t(d) != classAxis)
      positions.push_back(builder.getAffineDimExpr(d));
  }
  AffineMap perPosition = AffineMap::get(rank, 0, positions, context);
  std::vector<int64_t> labelShape = shapeOf(labels);
  // The log-probability of each position's label (0 where it is ignored).
  Value picked = generic(
      {logProbabilities, labels},
      {builder.getMultiDimIdentityMap(rank), perPosition, perPosition},
      filled(labelShape, f32, 0.0), iterators,
      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value index = arith::IndexCastOp::create(
            b, l, i64, linalg::IndexOp::create(b, l, uint64_t(classAxis)));
        Value hit =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, a[1], index);
        if (ignoreIndex)
          hit = arith::AndIOp::create(
              b, l, hit,
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, a[1],
                                    scalar(Element::Int, *ignoreIndex, b, l)));
        Value term = arith::SelectOp::create(b, l, hit, a[0],
                                             scalar(Element::Float, 0.0, b, l));
        return arith::AddFOp::create(b, l, term, a[2]);
      });
  Value total = sumAll(picked);
  if (!mean)
    return mapValues({total}, {}, f32,
                     [](OpBuilder &b, Location l, ArrayRef<Value> a) {
                       return Value(arith::NegFOp::create(b, l, a[0]));
                     });
  Value count;
  if (ignoreIndex) {
    // The mean counts the positions that are not ignored.
    Value counted =
        mapValues({labels}, labelShape, f32,
                  [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                    Value kept = arith::CmpIOp::create(
                        b, l, arith::CmpIPredicate::ne, a[0],
                        scalar(Element::Int, *ignoreIndex, b, l));
                    return arith::UIToFPOp::create(b, l, f32, kept);
                  });
    count = sumAll(counted);
  }
  double positionCount = double(elementCount(labelShape));
  SmallVector<Value> operands = {total};
  if (count)
    operands.push_back(count);
  return mapValues(operands, {}, f32,
                   [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                     Value divisor = a.size() > 1 ? a[1]
                                                  : scalar(Element::Float,
                                                           positionCount, b, l);
                     return arith::NegFOp::create(
                         b, l, arith::DivFOp::create(b, l, a[0], divisor));
                   });
}

Value Importer::matmul(Value lhs, Value rhs) {
  std::vector<int64_t> a = shapeOf(lhs), b = shapeOf(rhs);
  bool vectorLhs = a.size() == 1, vectorRhs = b.size() == 1;
  if (vectorLhs) {
    lhs = reshape(lhs, {1, a[0]});
    a = {1, a[0]};
  }
  if (vectorRhs) {
    rhs = reshape(rhs, {b[0], 1});
    b = {b[0], 1};
  }
  int64_t m = a[a.size() - 2], k = a.back(), n = b.back();
  std::vector<int64_t> batchA(a.begin(), a.end() - 2),
      batchB(b.begin(), b.end() - 2);
  std::vector<int64_t> batchShape = *broadcastShapes(batchA, batchB);
  std::vector<int64_t> resultShape = batchShape;
  resultShape.push_back(m);
  resultShape.push_back(n);
  Value product;
  if (batchB.empty()) {
    // [..., M, K] x [K, N]: one product of the rows of every batch.
    int64_t rows = elementCount(batchA) * m;
    Value flat = reshape(lhs, {rows, k});
    Value out =
        linalg::MatmulOp::create(
            builder, loc, TypeRange{RankedTensorType::get({rows, n}, f32)},
            ValueRange{flat, rhs}, ValueRange{filled({rows, n}, f32, 0.0)})
            .getResult(0);
    product = reshape(out, resultShape);
  } else if (batchA == batchB) {
    // Equal batches: one batch loop, so that the CPU pipeline calls sgemm.
    int64_t count = elementCount(batchA);
    Value out =
        linalg::BatchMatmulOp::create(
            builder, loc, TypeRange{RankedTensorType::get({count, m, n}, f32)},
            ValueRange{reshape(lhs, {count, m, k}),
                       reshape(rhs, {count, k, n})},
            ValueRange{filled({count, m, n}, f32, 0.0)})
            .getResult(0);
    product = reshape(out, resultShape);
  } else {
    // Broadcast batches: a contraction over (batch..., m, n, k).
    unsigned loops = unsigned(batchShape.size()) + 3;
    std::vector<int64_t> loopShape = batchShape;
    loopShape.insert(loopShape.end(), {m, n, k});
    auto operandMap = [&](Value value, std::vector<int64_t> batch,
                          bool isLhs) -> Operand {
      // The operand's batch dims broadcast into the result's, then its two
      // matrix dims.
      std::vector<int64_t> own = shapeOf(value), kept;
      SmallVector<AffineExpr> results;
      size_t offset = batchShape.size() - batch.size();
      for (size_t d = 0; d < batch.size(); ++d)
        if (!(batch[d] == 1 && batchShape[offset + d] != 1)) {
          kept.push_back(batch[d]);
          results.push_back(builder.getAffineDimExpr(unsigned(offset + d)));
        }
      unsigned mDim = unsigned(batchShape.size()), nDim = mDim + 1,
               kDim = mDim + 2;
      kept.push_back(own[own.size() - 2]);
      kept.push_back(own.back());
      results.push_back(builder.getAffineDimExpr(isLhs ? mDim : kDim));
      results.push_back(builder.getAffineDimExpr(isLhs ? kDim : nDim));
      return {reshape(value, kept), AffineMap::get(loops, 0, results, context)};
    };
    Operand left = operandMap(lhs, batchA, true),
            right = operandMap(rhs, batchB, false);
    SmallVector<AffineExpr> outResults;
    for (unsigned d = 0; d + 1 < loops; ++d)
      outResults.push_back(builder.getAffineDimExpr(d));
    SmallVector<utils::IteratorType> iterators(loops - 1,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    product = generic(
        {left.value, right.value},
        {left.map, right.map, AffineMap::get(loops, 0, outResults, context)},
        filled(resultShape, f32, 0.0), iterators,
        [](OpBuilder &b, Location l, ValueRange x) -> Value {
          return arith::AddFOp::create(
              b, l, arith::MulFOp::create(b, l, x[0], x[1]), x[2]);
        });
  }
  // Drop the dimensions a vector operand was promoted by.
  std::vector<int64_t> finalShape = batchShape;
  if (!vectorLhs)
    finalShape.push_back(m);
  if (!vectorRhs)
    finalShape.push_back(n);
  return reshape(product, finalShape);
}

//===----------------------------------------------------------------------===//
// Nodes
//===----------------------------------------------------------------------===//

Tensor *Importer::input(const onnx::NodeProto &node, int index) {
  if (!hasInput(node, index)) {
    failAt(node, "input " + std::to_string(index) + " is missing");
    return nullptr;
  }
  auto found = values.find(node.input(index));
  if (found == values.end()) {
    failAt(node, "input '" + node.input(index) +
                     "' is not defined before the node; expected a graph in "
                     "topological order");
    return nullptr;
  }
  return &found->second;
}

const Literal *Importer::literalInput(const onnx::NodeProto &node, int index,
                                      const char *what) {
  Tensor *tensor = input(node, index);
  if (!tensor)
    return nullptr;
  if (!tensor->literal) {
    failAt(node, std::string(what) + " (input '" + node.input(index) +
                     "') is computed at run time; expected a constant");
    return nullptr;
  }
  return &*tensor->literal;
}

void Importer::defineValue(const onnx::NodeProto &node, int index, Value value,
                           Element element) {
  Tensor tensor;
  tensor.element = element;
  tensor.shape = shapeOf(value);
  tensor.value = value;
  define(node, index, std::move(tensor));
}

bool Importer::outputUsed(const onnx::NodeProto &node, int index) const {
  if (index >= node.output_size() || node.output(index).empty())
    return false;
  const std::string &name = node.output(index);
  for (const onnx::NodeProto *other : graph.nodes)
    if (graph.live.count(other))
      for (const std::string &in : other->input())
        if (in == name)
          return true;
  for (const GraphValue &output : graph.outputs)
    if (output.name == name)
      return true;
  return false;
}

/// An axis attribute or input normalized to [0, rank); -1 when out of range.
static int64_t normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return -1;
  return axis < 0 ? axis + rank : axis;
}

bool Importer::importNode(const onnx::NodeProto &node) {
  const std::string &op = node.op_type();
  if (op == "Identity" || op == "Dropout") {
    Tensor *in = input(node, 0);
    if (!in)
      return false;
    if (op == "Dropout") {
      if (outputUsed(node, 1))
        return failAt(node, "its mask output is used; expected a Dropout "
                            "exported for inference (the identity)");
      llvm::errs() << graph.path << ": remark: " << describe(node)
                   << ": imported as the identity (inference)\n";
    }
    define(node, 0, *in);
    return true;
  }
  if (op == "MatMul")
    return importMatMul(node);
  if (op == "Gemm")
    return importGemm(node);
  if (op == "ReduceMean" || op == "ReduceSum" || op == "ReduceMax")
    return importReduce(node);
  if (op == "Softmax" || op == "LogSoftmax")
    return importSoftmax(node, op == "LogSoftmax");
  if (op == "LayerNormalization")
    return importLayerNorm(node);
  if (op == "SoftmaxCrossEntropyLoss")
    return importSoftmaxCrossEntropy(node);
  if (op == "Reshape" || op == "Flatten" || op == "Squeeze" ||
      op == "Unsqueeze")
    return importReshapeLike(node);
  if (op == "Transpose")
    return importTranspose(node);
  if (op == "Concat")
    return importConcat(node);
  if (op == "Slice")
    return importSlice(node);
  if (op == "Split")
    return importSplit(node);
  if (op == "Gather")
    return importGather(node);
  if (op == "Cast" || op == "CastLike")
    return importCast(node);
  if (op == "Constant" || op == "ConstantOfShape" || op == "Shape")
    return importConstant(node);
  if (op == "Expand")
    return importExpand(node);
  return importElementwise(node);
}

/// The scalar function of an element-wise operator on `element` operands,
/// for folding literals.
static std::optional<double> foldScalar(const std::string &op,
                                        ArrayRef<double> a, Element element) {
  bool isFloat = element == Element::Float;
  auto f = [](double v) { return double(float(v)); };
  if (op == "Add")
    return a[0] + a[1];
  if (op == "Sub")
    return a[0] - a[1];
  if (op == "Mul")
    return a[0] * a[1];
  if (op == "Div")
    return isFloat
               ? f(float(a[0]) / float(a[1]))
               : (a[1] == 0 ? std::nullopt
                            : std::optional<double>(std::trunc(a[0] / a[1])));
  if (op == "Pow")
    return f(std::pow(float(a[0]), float(a[1])));
  if (op == "Sqrt")
    return f(std::sqrt(float(a[0])));
  if (op == "Reciprocal")
    return f(1.0f / float(a[0]));
  if (op == "Neg")
    return -a[0];
  if (op == "Exp")
    return f(std::exp(float(a[0])));
  if (op == "Log")
    return f(std::log(float(a[0])));
  if (op == "Tanh")
    return f(std::tanh(float(a[0])));
  if (op == "Erf")
    return f(std::erf(float(a[0])));
  if (op == "Relu")
    return a[0] > 0 ? a[0] : 0.0;
  if (op == "Sigmoid")
    return f(1.0f / (1.0f + std::exp(-float(a[0]))));
  if (op == "Equal")
    return a[0] == a[1];
  if (op == "Less")
    return a[0] < a[1];
  if (op == "Greater")
    return a[0] > a[1];
  if (op == "Where")
    return a[0] != 0 ? a[1] : a[2];
  return std::nullopt;
}

bool Importer::importElementwise(const onnx::NodeProto &node) {
  const std::string &op = node.op_type();
  int arity =
      op == "Where" ? 3
      : (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" ||
         op == "Pow" || op == "Equal" || op == "Less" || op == "Greater")
          ? 2
          : 1;
  SmallVector<Tensor *> inputs;
  for (int i = 0; i < arity; ++i) {
    Tensor *tensor = input(node, i);
    if (!tensor)
      return false;
    inputs.push_back(tensor);
  }
  std::optional<std::vector<int64_t>> shape = inputs[0]->shape;
  for (Tensor *tensor : ArrayRef(inputs).drop_front())
    if (shape)
      shape = broadcastShapes(*shape, tensor->shape);
  if (!shape)
    return failAt(node, "its inputs' shapes do not broadcast");
  bool comparison = op == "Equal" || op == "Less" || op == "Greater";
  // The operands' element type (Where's are its second and third).
  Element element = op == "Where" ? inputs[1]->element : inputs[0]->element;
  if (op == "Where" && inputs[0]->element != Element::Bool)
    return failAt(node, "its condition is not bool");
  for (int i = op == "Where" ? 1 : 0; i < arity; ++i)
    if (inputs[i]->element != element)
      return failAt(node, "its inputs have different element types (" +
                              std::string(elementName(element)) + " and " +
                              elementName(inputs[i]->element) + ")");
  bool floatOnly = !(op == "Add" || op == "Sub" || op == "Mul" || op == "Div" ||
                     op == "Neg" || op == "Where" || comparison);
  if (floatOnly && element != Element::Float)
    return failAt(node, "its input is " + std::string(elementName(element)) +
                            "; expected float");
  if (element == Element::Bool && op != "Where")
    return failAt(node, "its inputs are bool; expected numbers");
  Element result = comparison ? Element::Bool : element;

  // Known inputs: the value is known too.
  if (llvm::all_of(inputs, [](Tensor *t) { return t->literal.has_value(); })) {
    std::vector<const Literal *> literals;
    for (Tensor *tensor : inputs)
      literals.push_back(&*tensor->literal);
    bool divisionByZero = false;
    Literal folded = foldElementwise(
        literals, *shape, result, [&](const std::vector<double> &a) {
          std::optional<double> v = foldScalar(op, a, element);
          divisionByZero |= !v;
          return v.value_or(0.0);
        });
    if (divisionByZero)
      return failAt(node, "divides an integer by zero");
    Tensor tensor;
    tensor.element = result;
    tensor.shape = *shape;
    tensor.literal = std::move(folded);
    define(node, 0, std::move(tensor));
    return true;
  }

  if (op == "Pow") {
    // A constant exponent carries no gradient; squares and square roots
    // are exact operations.
    if (!inputs[1]->literal)
      return failAt(node, "its exponent is computed at run time; expected a "
                          "constant exponent");
    if (!inputs[1]->literal->isSplat())
      return failAt(node, "its exponent is not one value; expected a scalar "
                          "exponent");
  }
  Type resultType = elementType(result);
  bool isFloat = element == Element::Float;
  Value value = map(
      inputs, *shape, resultType,
      [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
        auto zero = [&]() { return scalar(element, 0.0, b, l); };
        auto one = [&]() { return scalar(Element::Float, 1.0, b, l); };
        if (op == "Add")
          return isFloat ? Value(arith::AddFOp::create(b, l, a[0], a[1]))
                         : Value(arith::AddIOp::create(b, l, a[0], a[1]));
        if (op == "Sub")
          return isFloat ? Value(arith::SubFOp::create(b, l, a[0], a[1]))
                         : Value(arith::SubIOp::create(b, l, a[0], a[1]));
        if (op == "Mul")
          return isFloat ? Value(arith::MulFOp::create(b, l, a[0], a[1]))
                         : Value(arith::MulIOp::create(b, l, a[0], a[1]));
        if (op == "Div")
          return isFloat ? Value(arith::DivFOp::create(b, l, a[0], a[1]))
                         : Value(arith::DivSIOp::create(b, l, a[0], a[1]));
        if (op == "Neg")
          return isFloat ? Value(arith::NegFOp::create(b, l, a[0]))
                         : Value(arith::SubIOp::create(b, l, zero(), a[0]));
        if (op == "Pow") {
          double exponent = inputs[1]->literal->at(0);
          if (exponent == 1.0)
            return a[0];
          if (exponent == 2.0)
            return arith::MulFOp::create(b, l, a[0], a[0]);
          if (exponent == 0.5)
            return math::SqrtOp::create(b, l, a[0]);
          return math::PowFOp::create(b, l, a[0], a[1]);
        }
        if (op == "Sqrt")
          return math::SqrtOp::create(b, l, a[0]);
        if (op == "Reciprocal")
          return arith::DivFOp::create(b, l, one(), a[0]);
        if (op == "Exp")
          return math::ExpOp::create(b, l, a[0]);
        if (op == "Log")
          return math::LogOp::create(b, l, a[0]);
        if (op == "Tanh")
          return math::TanhOp::create(b, l, a[0]);
        if (op == "Erf")
          return math::ErfOp::create(b, l, a[0]);
        if (op == "Relu") {
          // Gradient 0 at 0, as PyTorch's.
          Value positive = arith::CmpFOp::create(
              b, l, arith::CmpFPredicate::OGT, a[0], zero());
          return arith::SelectOp::create(b, l, positive, a[0], zero());
        }
        if (op == "Sigmoid") {
          Value e =
              math::ExpOp::create(b, l, arith::NegFOp::create(b, l, a[0]));
          return arith::DivFOp::create(b, l, one(),
                                       arith::AddFOp::create(b, l, one(), e));
        }
        if (op == "Where")
          return arith::SelectOp::create(b, l, a[0], a[1], a[2]);
        // Comparisons.
        if (isFloat)
          return arith::CmpFOp::create(b, l,
                                       op == "Equal" ? arith::CmpFPredicate::OEQ
                                       : op == "Less"
                                           ? arith::CmpFPredicate::OLT
                                           : arith::CmpFPredicate::OGT,
                                       a[0], a[1]);
        return arith::CmpIOp::create(b, l,
                                     op == "Equal"  ? arith::CmpIPredicate::eq
                                     : op == "Less" ? arith::CmpIPredicate::slt
                                                    : arith::CmpIPredicate::sgt,
                                     a[0], a[1]);
      });
  defineValue(node, 0, value, result);
  return true;
}

bool Importer::importMatMul(const onnx::NodeProto &node) {
  Tensor *a = input(node, 0), *b = a ? input(node, 1) : nullptr;
  if (!b)
    return false;
  if (a->element != Element::Float || b->element != Element::Float)
    return failAt(node, "its inputs are not float");
  if (a->shape.empty() || b->shape.empty())
    return failAt(node, "an input is a scalar; expected tensors of rank 1 or "
                        "more");
  int64_t k = a->shape.back();
  int64_t kb = b->rank() == 1 ? b->shape[0] : b->shape[size_t(b->rank() - 2)];
  std::vector<int64_t> batchA(a->shape.begin(),
                              a->shape.end() - std::min<int64_t>(2, a->rank()));
  std::vector<int64_t> batchB(b->shape.begin(),
                              b->shape.end() - std::min<int64_t>(2, b->rank()));
  if (k != kb || !broadcastShapes(batchA, batchB))
    return failAt(node, "the shapes of its inputs do not multiply");
  defineValue(node, 0, matmul(materialize(*a), materialize(*b)),
              Element::Float);
  return true;
}

bool Importer::importGemm(const onnx::NodeProto &node) {
  Tensor *a = input(node, 0), *b = a ? input(node, 1) : nullptr;
  if (!b)
    return false;
  if (a->rank() != 2 || b->rank() != 2 || a->element != Element::Float ||
      b->element != Element::Float)
    return failAt(node, "expected two float matrices");
  bool transA = intAttribute(node, "transA", 0),
       transB = intAttribute(node, "transB", 0);
  float alpha = floatAttribute(node, "alpha", 1.0f),
        beta = floatAttribute(node, "beta", 1.0f);
  int64_t m = a->shape[transA ? 1 : 0], k = a->shape[transA ? 0 : 1];
  int64_t kb = b->shape[transB ? 1 : 0], n = b->shape[transB ? 0 : 1];
  if (k != kb)
    return failAt(node, "the shapes of its inputs do not multiply");
  AffineExpr dm = builder.getAffineDimExpr(0), dn = builder.getAffineDimExpr(1),
             dk = builder.getAffineDimExpr(2);
  auto map3 = [&](AffineExpr x, AffineExpr y) {
    return AffineMap::get(3, 0, {x, y}, context);
  };
  Value product =
      generic({materialize(*a), materialize(*b)},
              {transA ? map3(dk, dm) : map3(dm, dk),
               transB ? map3(dn, dk) : map3(dk, dn), map3(dm, dn)},
              filled({m, n}, f32, 0.0),
              {utils::IteratorType::parallel, utils::IteratorType::parallel,
               utils::IteratorType::reduction},
              [](OpBuilder &b, Location l, ValueRange x) -> Value {
                return arith::AddFOp::create(
                    b, l, arith::MulFOp::create(b, l, x[0], x[1]), x[2]);
              });
  Tensor productTensor;
  productTensor.shape = {m, n};
  productTensor.value = product;
  SmallVector<Tensor *> operands = {&productTensor};
  Tensor *c = nullptr;
  if (hasInput(node, 2)) {
    c = input(node, 2);
    if (!c)
      return false;
    if (c->element != Element::Float ||
        broadcastShapes(c->shape, {m, n}) != std::vector<int64_t>{m, n})
      return failAt(node, "its third input does not broadcast to the "
                          "product's shape");
    operands.push_back(c);
  }
  if (alpha == 1.0f && !c) {
    defineValue(node, 0, product, Element::Float);
    return true;
  }
  Value value = map(operands, {m, n}, f32,
                    [&](OpBuilder &b, Location l, ArrayRef<Value> x) -> Value {
                      Value y = x[0];
                      if (alpha != 1.0f)
                        y = arith::MulFOp::create(
                            b, l, y, scalar(Element::Float, alpha, b, l));
                      if (x.size() < 2)
                        return y;
                      Value bias = x[1];
                      if (beta != 1.0f)
                        bias = arith::MulFOp::create(
                            b, l, bias, scalar(Element::Float, beta, b, l));
                      return arith::AddFOp::create(b, l, y, bias);
                    });
  defineValue(node, 0, value, Element::Float);
  return true;
}

bool Importer::importReduce(const onnx::NodeProto &node) {
  const std::string &op = node.op_type();
  Tensor *in = input(node, 0);
  if (!in)
    return false;
  if (in->element != Element::Float)
    return failAt(node, "its input is not float");
  std::vector<int64_t> axes;
  // ReduceSum takes its axes as an input from opset 13 on, the others
  // from opset 18 (beyond what is imported).
  if (op == "ReduceSum") {
    if (hasInput(node, 1)) {
      const Literal *literal = literalInput(node, 1, "its axes");
      if (!literal)
        return false;
      for (int64_t i = 0; i < literal->size(); ++i)
        axes.push_back(literal->intAt(i));
    }
  } else {
    axes = intsAttribute(node, "axes");
  }
  bool keep = intAttribute(node, "keepdims", 1);
  if (axes.empty() && intAttribute(node, "noop_with_empty_axes", 0)) {
    define(node, 0, *in);
    return true;
  }
  SmallVector<bool> reduced(in->shape.size(), axes.empty());
  for (int64_t axis : axes) {
    int64_t a = normalizeAxis(axis, in->rank());
    if (a < 0)
      return failAt(node, "axis " + std::to_string(axis) +
                              " is out of range for rank " +
                              std::to_string(in->rank()));
    reduced[size_t(a)] = true;
  }
  int64_t count = 1;
  std::vector<int64_t> keptShape;
  for (size_t d = 0; d < in->shape.size(); ++d) {
    if (reduced[d])
      count *= in->shape[d];
    keptShape.push_back(reduced[d] ? 1 : in->shape[d]);
  }
  bool isMax = op == "ReduceMax";
  Value value =
      reduce(materialize(*in), reduced,
             isMax ? -std::numeric_limits<double>::infinity() : 0.0,
             [&](OpBuilder &b, Location l, ValueRange a) -> Value {
               return isMax ? Value(arith::MaximumFOp::create(b, l, a[0], a[1]))
                            : Value(arith::AddFOp::create(b, l, a[0], a[1]));
             });
  if (op == "ReduceMean")
    value = mapValues(
        {value}, shapeOf(value), f32,
        [&](OpBuilder &b, Location l, ArrayRef<Value> a) {
          return Value(arith::DivFOp::create(
              b, l, a[0], scalar(Element::Float, double(count), b, l)));
        });
  if (keep)
    value = reshape(value, keptShape);
  defineValue(node, 0, value, Element::Float);
  return true;
}

bool Importer::importSoftmax(const onnx::NodeProto &node, bool logarithm) {
  Tensor *in = input(node, 0);
  if (!in)
    return false;
  if (in->element != Element::Float || in->shape.empty())
    return failAt(node, "expected a float tensor of rank 1 or more");
  int64_t axis = normalizeAxis(intAttribute(node, "axis", -1), in->rank());
  if (axis < 0)
    return failAt(node, "its axis is out of range");
  defineValue(node, 0, softmax(materialize(*in), axis, logarithm),
              Element::Float);
  return true;
}

bool Importer::importLayerNorm(const onnx::NodeProto &node) {
  Tensor *x = input(node, 0), *scale = x ? input(node, 1) : nullptr;
  if (!scale)
    return false;
  Tensor *bias = nullptr;
  if (hasInput(node, 2) && !(bias = input(node, 2)))
    return false;
  if (outputUsed(node, 1) || outputUsed(node, 2))
    return failAt(node, "its mean or inverse deviation output is used; "
                        "expected only the normalized output");
  int64_t axis = normalizeAxis(intAttribute(node, "axis", -1), x->rank());
  if (axis < 0)
    return failAt(node, "its axis is out of range");
  std::vector<int64_t> normalized(x->shape.begin() + axis, x->shape.end());
  for (Tensor *t : {scale, bias})
    if (t && (t->element != Element::Float ||
              broadcastShapes(t->shape, normalized) != normalized))
      return failAt(node, "its scale or bias does not broadcast to the "
                          "normalized dimensions");
  double epsilon = floatAttribute(node, "epsilon", 1e-5f);
  SmallVector<bool> reduced(x->shape.size(), false);
  for (size_t d = size_t(axis); d < reduced.size(); ++d)
    reduced[d] = true;
  double count = double(elementCount(normalized));
  Value value = materialize(*x);
  auto sum = [](OpBuilder &b, Location l, ValueRange a) -> Value {
    return arith::AddFOp::create(b, l, a[0], a[1]);
  };
  Value mean =
      mapValues({reduce(value, reduced, 0.0, sum)},
                std::vector<int64_t>(x->shape.begin(), x->shape.begin() + axis),
                f32, [&](OpBuilder &b, Location l, ArrayRef<Value> a) {
                  return Value(arith::DivFOp::create(
                      b, l, a[0], scalar(Element::Float, count, b, l)));
                });
  Value centred =
      withReduced(value, mean, reduced,
                  [](OpBuilder &b, Location l, ValueRange a) -> Value {
                    return arith::SubFOp::create(b, l, a[0], a[1]);
                  });
  Value squares = reduce(centred, reduced, 0.0,
                         [](OpBuilder &b, Location l, ValueRange a) -> Value {
                           Value sq = arith::MulFOp::create(b, l, a[0], a[0]);
                           return arith::AddFOp::create(b, l, sq, a[1]);
                         });
  Value inverse = mapValues(
      {squares}, shapeOf(squares), f32,
      [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
        Value variance = arith::DivFOp::create(
            b, l, a[0], scalar(Element::Float, count, b, l));
        return math::RsqrtOp::create(
            b, l,
            arith::AddFOp::create(b, l, variance,
                                  scalar(Element::Float, epsilon, b, l)));
      });
  Value normalizedValue =
      withReduced(centred, inverse, reduced,
                  [](OpBuilder &b, Location l, ValueRange a) -> Value {
                    return arith::MulFOp::create(b, l, a[0], a[1]);
                  });
  Tensor normalizedTensor;
  normalizedTensor.shape = x->shape;
  normalizedTensor.value = normalizedValue;
  SmallVector<Tensor *> operands = {&normalizedTensor, scale};
  if (bias)
    operands.push_back(bias);
  Value result = map(operands, x->shape, f32,
                     [](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                       Value y = arith::MulFOp::create(b, l, a[0], a[1]);
                       return a.size() > 2
                                  ? Value(arith::AddFOp::create(b, l, y, a[2]))
                                  : y;
                     });
  defineValue(node, 0, result, Element::Float);
  return true;
}

bool Importer::importSoftmaxCrossEntropy(const onnx::NodeProto &node) {
  Tensor *scores = input(node, 0), *labels = scores ? input(node, 1) : nullptr;
  if (!labels)
    return false;
  if (hasInput(node, 2))
    return failAt(node, "it has class weights; expected none");
  if (outputUsed(node, 1))
    return failAt(node, "its log-probability output is used; expected only "
                        "the loss");
  std::string reduction = stringAttribute(node, "reduction", "mean");
  if (reduction != "mean" && reduction != "sum")
    return failAt(node,
                  "its reduction is '" + reduction + "'; expected mean or sum");
  std::vector<int64_t> expected = scores->shape;
  if (scores->rank() >= 2)
    expected.erase(expected.begin() + 1);
  if (scores->element != Element::Float || scores->rank() < 2 ||
      labels->element != Element::Int || labels->shape != expected)
    return failAt(node, "expected float scores [N, C, ...] and integer "
                        "labels [N, ...]");
  std::optional<int64_t> ignore;
  if (attribute(node, "ignore_index"))
    ignore = intAttribute(node, "ignore_index", 0);
  defineValue(node, 0,
              crossEntropy(materialize(*scores), materialize(*labels), 1,
                           ignore, reduction == "mean"),
              Element::Float);
  return true;
}

bool Importer::importReshapeLike(const onnx::NodeProto &node) {
  const std::string &op = node.op_type();
  Tensor *in = input(node, 0);
  if (!in)
    return false;
  std::vector<int64_t> shape;
  int64_t count = elementCount(in->shape);
  if (op == "Reshape") {
    const Literal *spec = literalInput(node, 1, "its shape");
    if (!spec)
      return false;
    bool allowZero = intAttribute(node, "allowzero", 0);
    int64_t inferred = -1, known = 1;
    for (int64_t i = 0; i < spec->size(); ++i) {
      int64_t extent = spec->intAt(i);
      if (extent == 0 && !allowZero) {
        if (i >= in->rank())
          return failAt(node, "its shape copies dimension " +
                                  std::to_string(i) + " the input lacks");
        extent = in->shape[size_t(i)];
      }
      if (extent == -1) {
        if (inferred >= 0)
          return failAt(node, "its shape infers more than one dimension");
        inferred = i;
      } else if (extent < 0) {
        return failAt(node, "its shape has a negative size");
      } else {
        known *= extent;
      }
      shape.push_back(extent);
    }
    if (inferred >= 0) {
      if (known == 0 || count % known)
        return failAt(node, "its shape does not divide the input's size");
      shape[size_t(inferred)] = count / known;
    }
  } else if (op == "Flatten") {
    int64_t axis = intAttribute(node, "axis", 1);
    axis = axis < 0 ? axis + in->rank() : axis;
    if (axis < 0 || axis > in->rank())
      return failAt(node, "its axis is out of range");
    int64_t outer = elementCount({in->shape.begin(), in->shape.begin() + axis});
    shape = {outer, count / outer};
  } else {
    std::vector<int64_t> axes;
    if (hasInput(node, 1)) {
      const Literal *literal = literalInput(node, 1, "its axes");
      if (!literal)
        return false;
      for (int64_t i = 0; i < literal->size(); ++i)
        axes.push_back(literal->intAt(i));
    }
    if (op == "Squeeze") {
      SmallVector<bool> drop(in->shape.size(), axes.empty());
      for (int64_t axis : axes) {
        int64_t a = normalizeAxis(axis, in->rank());
        if (a < 0 || in->shape[size_t(a)] != 1)
          return failAt(node, "axis " + std::to_string(axis) +
                                  " is not a dimension of size 1");
        drop[size_t(a)] = true;
      }
      for (size_t d = 0; d < in->shape.size(); ++d)
        if (!(drop[d] && in->shape[d] == 1))
          shape.push_back(in->shape[d]);
    } else {
      int64_t rank = in->rank() + int64_t(axes.size());
      SmallVector<bool> inserted(size_t(rank), false);
      for (int64_t axis : axes) {
        int64_t a = normalizeAxis(axis, rank);
        if (a < 0 || inserted[size_t(a)])
          return failAt(node, "axis " + std::to_string(axis) +
                                  " is out of range or repeated");
        inserted[size_t(a)] = true;
      }
      size_t next = 0;
      for (int64_t d = 0; d < rank; ++d)
        shape.push_back(inserted[size_t(d)] ? 1 : in->shape[next++]);
    }
  }
  if (elementCount(shape) != count)
    return failAt(node, "its shape changes the number of elements");
  Tensor result;
  result.element = in->element;
  result.shape = shape;
  if (in->literal)
    result.literal = reshaped(*in->literal, shape);
  else
    result.value = reshape(materialize(*in), shape);
  define(node, 0, std::move(result));
  return true;
}

bool Importer::importTranspose(const onnx::NodeProto &node) {
  Tensor *in = input(node, 0);
  if (!in)
    return false;
  std::vector<int64_t> perm = intsAttribute(node, "perm");
  if (perm.empty())
    for (int64_t d = in->rank(); d-- > 0;)
      perm.push_back(d);
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> identity(size_t(in->rank()));
  std::iota(identity.begin(), identity.end(), 0);
  if (sorted != identity)
    return failAt(node, "its perm is not a permutation of the input's "
                        "dimensions");
  std::vector<int64_t> shape;
  for (int64_t axis : perm)
    shape.push_back(in->shape[size_t(axis)]);
  Tensor result;
  result.element = in->element;
  result.shape = shape;
  if (in->literal) {
    result.literal = transpose(*in->literal, perm);
  } else {
    result.value = transposeTensor(builder, loc, materialize(*in), perm);
  }
  define(node, 0, std::move(result));
  return true;
}

bool Importer::importConcat(const onnx::NodeProto &node) {
  SmallVector<Tensor *> inputs;
  for (int i = 0; i < node.input_size(); ++i) {
    Tensor *tensor = input(node, i);
    if (!tensor)
      return false;
    inputs.push_back(tensor);
  }
  if (inputs.empty())
    return failAt(node, "it has no inputs");
  int64_t rank = inputs[0]->rank();
  int64_t axis = normalizeAxis(intAttribute(node, "axis", 0), rank);
  if (axis < 0)
    return failAt(node, "its axis is out of range");
  for (Tensor *tensor : inputs) {
    bool fits = tensor->rank() == rank && tensor->element == inputs[0]->element;
    for (int64_t d = 0; fits && d < rank; ++d)
      fits =
          d == axis || tensor->shape[size_t(d)] == inputs[0]->shape[size_t(d)];
    if (!fits)
      return failAt(node, "its inputs differ in rank, element type or a "
                          "dimension other than the axis");
  }
  if (llvm::all_of(inputs, [](Tensor *t) { return t->literal.has_value(); })) {
    std::vector<const Literal *> literals;
    for (Tensor *tensor : inputs)
      literals.push_back(&*tensor->literal);
    Tensor result;
    result.element = inputs[0]->element;
    result.literal = concat(literals, axis);
    result.shape = result.literal->shape;
    define(node, 0, std::move(result));
    return true;
  }
  SmallVector<Value> operands;
  for (Tensor *tensor : inputs)
    operands.push_back(materialize(*tensor));
  Value value =
      operands.size() == 1
          ? operands[0]
          : Value(tensor::ConcatOp::create(builder, loc, axis, operands));
  defineValue(node, 0, value, inputs[0]->element);
  return true;
}

/// A slice of `value` along one axis.
static Value sliceAlong(OpBuilder &builder, Location loc, Value value,
                        int64_t axis, int64_t start, int64_t size) {
  auto type = llvm::cast<RankedTensorType>(value.getType());
  SmallVector<OpFoldResult> offsets, sizes, strides;
  SmallVector<int64_t> shape(type.getShape());
  for (int64_t d = 0; d < type.getRank(); ++d) {
    offsets.push_back(builder.getIndexAttr(d == axis ? start : 0));
    sizes.push_back(builder.getIndexAttr(d == axis ? size : shape[d]));
    strides.push_back(builder.getIndexAttr(1));
  }
  shape[size_t(axis)] = size;
  return tensor::ExtractSliceOp::create(
      builder, loc, RankedTensorType::get(shape, type.getElementType()), value,
      offsets, sizes, strides);
}

bool Importer::importSlice(const onnx::NodeProto &node) {
  Tensor *in = input(node, 0);
  if (!in)
    return false;
  const Literal *starts = literalInput(node, 1, "its starts");
  const Literal *ends = starts ? literalInput(node, 2, "its ends") : nullptr;
  if (!ends)
    return false;
  const Literal *axes = nullptr, *steps = nullptr;
  if (hasInput(node, 3) && !(axes = literalInput(node, 3, "its axes")))
    return false;
  if (hasInput(node, 4) && !(steps = literalInput(node, 4, "its steps")))
    return false;
  if (starts->size() != ends->size() ||
      (axes && axes->size() != starts->size()) ||
      (steps && steps->size() != starts->size()))
    return failAt(node, "its starts, ends, axes and steps differ in length");
  int64_t rank = in->rank();
  std::vector<int64_t> offset(size_t(rank), 0), size = in -> shape,
                                                stride(size_t(rank), 1);
  for (int64_t i = 0; i < starts->size(); ++i) {
    int64_t axis = axes ? normalizeAxis(axes->intAt(i), rank) : i;
    if (axis < 0 || axis >= rank)
      return failAt(node, "an axis is out of range");
    int64_t extent = in->shape[size_t(axis)];
    int64_t step = steps ? steps->intAt(i) : 1;
    if (step <= 0)
      return failAt(node, "step " + std::to_string(step) +
                              " is not positive; expected positive steps");
    auto clampIndex = [&](int64_t v) {
      if (v < 0)
        v += extent;
      return std::clamp<int64_t>(v, 0, extent);
    };
    int64_t start = clampIndex(starts->intAt(i)),
            end = clampIndex(ends->intAt(i));
    offset[size_t(axis)] = start;
    size[size_t(axis)] = end > start ? (end - start + step - 1) / step : 0;
    stride[size_t(axis)] = step;
    if (size[size_t(axis)] == 0)
      return failAt(node, "it selects no elements along axis " +
                              std::to_string(axis));
  }
  Tensor result;
  result.element = in->element;
  result.shape = size;
  if (in->literal) {
    result.literal = slice(*in->literal, offset, size, stride);
  } else {
    auto toAttrs = [&](const std::vector<int64_t> &v) {
      SmallVector<OpFoldResult> attrs;
      for (int64_t x : v)
        attrs.push_back(builder.getIndexAttr(x));
      return attrs;
    };
    result.value = tensor::ExtractSliceOp::create(
        builder, loc, tensorType(size, in->element), materialize(*in),
        toAttrs(offset), toAttrs(size), toAttrs(stride));
  }
  define(node, 0, std::move(result));
  return true;
}

bool Importer::importSplit(const onnx::NodeProto &node) {
  Tensor *in = input(node, 0);
  if (!in)
    return false;
  int64_t axis = normalizeAxis(intAttribute(node, "axis", 0), in->rank());
  if (axis < 0)
    return failAt(node, "its axis is out of range");
  int64_t extent = in->shape[size_t(axis)];
  int64_t parts = node.output_size();
  std::vector<int64_t> sizes;
  if (hasInput(node, 1)) {
    const Literal *split = literalInput(node, 1, "its split sizes");
    if (!split)
      return false;
    for (int64_t i = 0; i < split->size(); ++i)
      sizes.push_back(split->intAt(i));
  } else {
    if (extent % parts)
      return failAt(node, "dimension " + std::to_string(axis) + " of " +
                              std::to_string(extent) + " does not split into " +
                              std::to_string(parts) + " equal parts");
    sizes.assign(size_t(parts), extent / parts);
  }
  if (int64_t(sizes.size()) != parts ||
      std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) != extent)
    return failAt(node, "its split sizes do not add up to dimension " +
                            std::to_string(axis) + " over its outputs");
  int64_t start = 0;
  for (int64_t i = 0; i < parts; ++i) {
    Tensor result;
    result.element = in->element;
    result.shape = in->shape;
    result.shape[size_t(axis)] = sizes[size_t(i)];
    if (in->literal) {
      std::vector<int64_t> offsets(size_t(in->rank()), 0),
          strides(size_t(in -> rank()), 1);
      offsets[size_t(axis)] = start;
      result.literal = slice(*in->literal, offsets, result.shape, strides);
    } else {
      result.value = sliceAlong(builder, loc, materialize(*in), axis, start,
                                sizes[size_t(i)]);
    }
    start += sizes[size_t(i)];
    define(node, int(i), std::move(result));
  }
  return true;
}

bool Importer::importGather(const onnx::NodeProto &node) {
  Tensor *data = input(node, 0), *indices = data ? input(node, 1) : nullptr;
  if (!indices)
    return false;
  if (indices->element != Element::Int)
    return failAt(node, "its indices are not integers");
  int64_t axis = normalizeAxis(intAttribute(node, "axis", 0), data->rank());
  if (axis < 0)
    return failAt(node, "its axis is out of range");
  int64_t extent = data->shape[size_t(axis)];
  std::vector<int64_t> shape(data->shape.begin(), data->shape.begin() + axis);
  shape.insert(shape.end(), indices->shape.begin(), indices->shape.end());
  shape.insert(shape.end(), data->shape.begin() + axis + 1, data->shape.end());

  if (data->literal && indices->literal) {
    std::string error;
    Tensor result;
    result.element = data->element;
    result.shape = shape;
    result.literal = gather(*data->literal, *indices->literal, axis, error);
    if (!error.empty())
      return failAt(node, error);
    define(node, 0, std::move(result));
    return true;
  }
  Value table = materialize(*data);
  if (indices->literal) {
    // Known indices: slices of the runs of consecutive ones.
    SmallVector<Value> pieces;
    const Literal &known = *indices->literal;
    for (int64_t i = 0; i < known.size();) {
      int64_t first = known.intAt(i);
      first = first < 0 ? first + extent : first;
      if (first < 0 || first >= extent)
        return failAt(node, "index " + std::to_string(known.intAt(i)) +
                                " is out of range for a dimension of " +
                                std::to_string(extent));
      int64_t run = 1;
      while (i + run < known.size()) {
        int64_t next = known.intAt(i + run);
        next = next < 0 ? next + extent : next;
        if (next != first + run)
          break;
        ++run;
      }
      pieces.push_back(sliceAlong(builder, loc, table, axis, first, run));
      i += run;
    }
    Value joined =
        pieces.size() == 1
            ? pieces[0]
            : Value(tensor::ConcatOp::create(builder, loc, axis, pieces));
    defineValue(node, 0, reshape(joined, shape), data->element);
    return true;
  }
  // Indices known at run time. An embedding (rows of a float matrix) is
  // the product of the ids' one-hot rows and the table, exact, and an sgemm
  // forward and backward on the CPU: out = onehot(ids) [N, V] x data [V, H].
  if (axis == 0 && data->rank() == 2 && data->element == Element::Float) {
    int64_t count = elementCount(indices->shape), width = data->shape[1];
    Value ids = reshape(materialize(*indices), {count});
    Value oneHot =
        generic({ids},
                {AffineMap::get(2, 0, {builder.getAffineDimExpr(0)}, context),
                 builder.getMultiDimIdentityMap(2)},
                empty({count, extent}, f32),
                {utils::IteratorType::parallel, utils::IteratorType::parallel},
                [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                  Value id = a[0];
                  Value negative =
                      arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, id,
                                            scalar(Element::Int, 0, b, l));
                  id = arith::SelectOp::create(
                      b, l, negative,
                      arith::AddIOp::create(b, l, id,
                                            scalar(Element::Int, extent, b, l)),
                      id);
                  Value column = arith::IndexCastOp::create(
                      b, l, i64, linalg::IndexOp::create(b, l, 1));
                  Value hit = arith::CmpIOp::create(
                      b, l, arith::CmpIPredicate::eq, id, column);
                  return arith::UIToFPOp::create(b, l, f32, hit);
                });
    Value rows =
        linalg::MatmulOp::create(
            builder, loc, TypeRange{RankedTensorType::get({count, width}, f32)},
            ValueRange{oneHot, table},
            ValueRange{filled({count, width}, f32, 0.0)})
            .getResult(0);
    defineValue(node, 0, reshape(rows, shape), Element::Float);
    return true;
  }
  // Otherwise a one-hot contraction over the gathered dimension,
  // out[pre, idx, post] = sum_v (ids[idx] == v) data[pre, v, post], so that
  // a gradient reaches the table.
  unsigned pre = unsigned(axis), idx = unsigned(indices->rank()),
           post = unsigned(data->rank() - axis - 1);
  unsigned loops = pre + idx + post + 1, vDim = loops - 1;
  SmallVector<AffineExpr> dataResults, idResults, outResults;
  for (unsigned d = 0; d < pre; ++d)
    dataResults.push_back(builder.getAffineDimExpr(d));
  dataResults.push_back(builder.getAffineDimExpr(vDim));
  for (unsigned d = 0; d < post; ++d)
    dataResults.push_back(builder.getAffineDimExpr(pre + idx + d));
  for (unsigned d = 0; d < idx; ++d)
    idResults.push_back(builder.getAffineDimExpr(pre + d));
  for (unsigned d = 0; d + 1 < loops; ++d)
    outResults.push_back(builder.getAffineDimExpr(d));
  SmallVector<utils::IteratorType> iterators(loops - 1,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Type element = elementType(data->element);
  Value value = generic(
      {table, materialize(*indices)},
      {AffineMap::get(loops, 0, dataResults, context),
       AffineMap::get(loops, 0, idResults, context),
       AffineMap::get(loops, 0, outResults, context)},
      filled(shape, element, 0.0), iterators,
      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        // A negative id counts from the end of the dimension.
        Value id = a[1];
        Value negative = arith::CmpIOp::create(
            b, l, arith::CmpIPredicate::slt, id, scalar(Element::Int, 0, b, l));
        id = arith::SelectOp::create(
            b, l, negative,
            arith::AddIOp::create(b, l, id, scalar(Element::Int, extent, b, l)),
            id);
        Value v = arith::IndexCastOp::create(
            b, l, i64, linalg::IndexOp::create(b, l, vDim));
        Value hit =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, id, v);
        if (data->element == Element::Float)
          return arith::AddFOp::create(
              b, l,
              arith::SelectOp::create(b, l, hit, a[0],
                                      scalar(Element::Float, 0.0, b, l)),
              a[2]);
        return arith::AddIOp::create(
            b, l,
            arith::SelectOp::create(b, l, hit, a[0],
                                    scalar(data->element, 0.0, b, l)),
            a[2]);
      });
  defineValue(node, 0, value, data->element);
  return true;
}

bool Importer::importCast(const onnx::NodeProto &node) {
  Tensor *in = input(node, 0);
  if (!in)
    return false;
  Element to;
  if (node.op_type() == "CastLike") {
    Tensor *like = input(node, 1);
    if (!like)
      return false;
    to = like->element;
  } else {
    int64_t type = intAttribute(node, "to", 0);
    if (type == onnx::TensorProto::FLOAT)
      to = Element::Float;
    else if (type == onnx::TensorProto::INT64 ||
             type == onnx::TensorProto::INT32)
      to = Element::Int;
    else if (type == onnx::TensorProto::BOOL)
      to = Element::Bool;
    else
      return failAt(node, "it casts to data type " + std::to_string(type) +
                              "; expected FLOAT, INT64, INT32 or BOOL");
  }
  Element from = in->element;
  if (from == to) {
    define(node, 0, *in);
    return true;
  }
  Tensor result;
  result.element = to;
  result.shape = in->shape;
  if (in->literal) {
    result.literal = hetero::onnx_import::cast(*in->literal, to);
    define(node, 0, std::move(result));
    return true;
  }
  Type target = elementType(to);
  result.value =
      map({in}, in->shape, target,
          [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
            if (to == Element::Bool)
              return from == Element::Float
                         ? Value(arith::CmpFOp::create(
                               b, l, arith::CmpFPredicate::UNE, a[0],
                               scalar(Element::Float, 0, b, l)))
                         : Value(arith::CmpIOp::create(
                               b, l, arith::CmpIPredicate::ne, a[0],
                               scalar(Element::Int, 0, b, l)));
            if (to == Element::Float)
              return from == Element::Bool
                         ? Value(arith::UIToFPOp::create(b, l, f32, a[0]))
                         : Value(arith::SIToFPOp::create(b, l, f32, a[0]));
            return from == Element::Bool
                       ? Value(arith::ExtUIOp::create(b, l, i64, a[0]))
                       : Value(arith::FPToSIOp::create(b, l, i64, a[0]));
          });
  define(node, 0, std::move(result));
  return true;
}

bool Importer::importConstant(const onnx::NodeProto &node) {
  const std::string &op = node.op_type();
  Tensor result;
  if (op == "Shape") {
    Tensor *in = input(node, 0);
    if (!in)
      return false;
    int64_t rank = in->rank();
    auto clampIndex = [&](int64_t v) {
      return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank);
    };
    int64_t start = clampIndex(intAttribute(node, "start", 0)),
            end = clampIndex(intAttribute(node, "end", rank));
    std::vector<int64_t> dims(in->shape.begin() + start,
                              in->shape.begin() + std::max(start, end));
    result.literal = Literal::ofInts(dims, {int64_t(dims.size())});
  } else if (op == "ConstantOfShape") {
    const Literal *spec = literalInput(node, 0, "its shape");
    if (!spec)
      return false;
    std::vector<int64_t> shape;
    for (int64_t i = 0; i < spec->size(); ++i)
      shape.push_back(spec->intAt(i));
    Literal fill = Literal::scalarFloat(0.0);
    if (const onnx::AttributeProto *value = attribute(node, "value")) {
      std::string error;
      fill = decodeTensor(value->t(), error);
      if (!error.empty())
        return failAt(node, "its value " + error);
      if (fill.size() != 1)
        return failAt(node, "its value is not one element");
    }
    result.literal = Literal::filled(fill.element, shape, fill.at(0));
  } else {
    const onnx::AttributeProto *attr = nullptr;
    for (const char *name :
         {"value", "value_float", "value_floats", "value_int", "value_ints"})
      if ((attr = attribute(node, name)))
        break;
    if (!attr)
      return failAt(node, "it has no value, value_float(s) or value_int(s); "
                          "expected one of them (sparse and string constants "
                          "are not supported)");
    if (attr->name() == "value") {
      std::string error;
      result.literal = decodeTensor(attr->t(), error);
      if (!error.empty())
        return failAt(node, "its value " + error);
    } else if (attr->name() == "value_float") {
      result.literal = Literal::scalarFloat(attr->f());
    } else if (attr->name() == "value_floats") {
      Literal literal;
      literal.shape = {int64_t(attr->floats_size())};
      literal.floats.assign(attr->floats().begin(), attr->floats().end());
      result.literal = literal;
    } else if (attr->name() == "value_int") {
      result.literal = Literal::ofInts({attr->i()}, {});
    } else {
      std::vector<int64_t> ints(attr->ints().begin(), attr->ints().end());
      result.literal = Literal::ofInts(ints, {int64_t(ints.size())});
    }
  }
  result.element = result.literal->element;
  result.shape = result.literal->shape;
  define(node, 0, std::move(result));
  return true;
}

bool Importer::importExpand(const onnx::NodeProto &node) {
  Tensor *in = input(node, 0);
  if (!in)
    return false;
  const Literal *spec = literalInput(node, 1, "its shape");
  if (!spec)
    return false;
  std::vector<int64_t> wanted;
  for (int64_t i = 0; i < spec->size(); ++i)
    wanted.push_back(spec->intAt(i));
  std::optional<std::vector<int64_t>> shape =
      broadcastShapes(in->shape, wanted);
  if (!shape)
    return failAt(node, "its input does not broadcast to the shape");
  Tensor result;
  result.element = in->element;
  result.shape = *shape;
  if (in->literal)
    result.literal =
        foldElementwise({&*in->literal}, *shape, in->element,
                        [](const std::vector<double> &a) { return a[0]; });
  else
    result.value =
        map({in}, *shape, elementType(in->element),
            [](OpBuilder &, Location, ArrayRef<Value> a) { return a[0]; });
  define(node, 0, std::move(result));
  return true;
}

} // namespace

OwningOpRef<ModuleOp> importOnnx(MLIRContext *context, const std::string &path,
                                 const ImportOptions &options) {
  std::vector<std::string> errors;
  OnnxGraph graph = readGraph(path, errors);
  if (!errors.empty()) {
    for (const std::string &error : errors)
      llvm::errs() << path << ": error: " << error << "\n";
    return nullptr;
  }
  return Importer(context, graph, options).run();
}

} // namespace hetero::onnx_import
