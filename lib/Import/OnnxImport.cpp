//===- OnnxImport.cpp - an ONNX model as a forward-only pipeline ----------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The module of include/hetero/Import/Onnx.h from the graph that OnnxGraph
// read and checked: the grid, the parameters, @data, @model (its nodes by
// ImportOperators.cpp, with ImportBuilders.cpp's IR patterns) and the
// pipeline. Every ONNX operator becomes tensor IR that hetero's passes
// already handle: element-wise operators with NumPy broadcasting are one
// linalg.generic whose broadcast operands are first collapsed to drop
// their repeated dimensions (so every indexing map is a projected
// permutation, as hetero-derive-backward requires); products are
// linalg.matmul or a batched contraction (one batch loop, so that the CPU
// pipeline calls sgemm); an embedding is the product of one-hot rows and
// the table; a Gather of constant indices is slices; reshapes are
// collapse_shape and expand_shape.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "hetero/Dialect/Hetero.h"
#include "hetero/Support/Npy.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>

using namespace mlir;

namespace hetero::onnx_import {

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

RankedTensorType Importer::abiType(const GraphValue &value) const {
  return RankedTensorType::get(
      value.shape, value.element == Element::Float ? Type(f32) : Type(i32));
}

bool Importer::buildData() {
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

  // Both files' samples, checked against the model's input and target.
  SmallVector<Value> all;
  int64_t samples = 0;
  for (auto [file, value] :
       {std::pair<const char *, const GraphValue *>{"x.npy", &sample},
        std::pair<const char *, const GraphValue *>{"y.npy", &target}}) {
    std::string path = options.npyDirectory + "/" + file;
    npy::Array array;
    if (std::string error = npy::read(path, array); !error.empty())
      return fail("--data npy: " + error);
    std::vector<int64_t> sampleShape(value->shape.begin() + 1,
                                     value->shape.end());
    std::vector<int64_t> held(
        array.shape.begin() + (array.shape.empty() ? 0 : 1), array.shape.end());
    bool isFloat = array.dtype == npy::Dtype::Float32;
    if (array.shape.empty() || held != sampleShape ||
        isFloat != (value->element == Element::Float)) {
      std::string wanted =
          value->element == Element::Float ? "float32" : "int64";
      std::string dims;
      for (int64_t d : sampleShape)
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
    all.push_back(arith::ConstantOp::create(builder, loc, type, data));
  }

  // Micro-batch i of step t on replica r takes the B samples from
  // ((t R + r) M + i) B on, modulo the number of samples: the same rows of
  // both.
  auto constantI64 = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(builder, loc,
                                     builder.getI64IntegerAttr(v));
  };
  Value index = arith::AddIOp::create(
      builder, loc,
      arith::MulIOp::create(builder, loc, step, constantI64(options.replicas)),
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
  SmallVector<Value> results;
  SmallVector<RankedTensorType> types = {inputType, targetType};
  for (auto [held, resultType] : llvm::zip_equal(all, types)) {
    int64_t rank = resultType.getRank();
    results.push_back(generic(
        {}, {builder.getMultiDimIdentityMap(rank)},
        empty(resultType.getShape(), resultType.getElementType()),
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&, held = held](OpBuilder &b, Location l, ValueRange) -> Value {
          SmallVector<Value> at;
          for (int64_t d = 0; d < rank; ++d)
            at.push_back(linalg::IndexOp::create(b, l, d));
          Value count = arith::ConstantIndexOp::create(b, l, samples);
          at[0] = arith::RemUIOp::create(
              b, l, arith::AddIOp::create(b, l, first, at[0]), count);
          return tensor::ExtractOp::create(b, l, held, at);
        }));
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
