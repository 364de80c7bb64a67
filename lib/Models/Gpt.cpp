//===- Gpt.cpp - a GPT-like model in the stage ABI ------------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Each stage holds consecutive transformer blocks without normalisation:
// h = x + attn(x) W_o, out = h + relu(h W_1) W_2, with causal multi-head
// self-attention; the last stage adds a linear head and the mean squared
// error against the target. The backward function of a stage recomputes its
// forward pass and applies the chain rule through every op in reverse. The
// four linears of a block are hetero.prunable_matmul in Megatron's split
// (qkv and mlp_up by columns, attn_out and mlp_down by rows).
//
//===----------------------------------------------------------------------===//

#include "hetero/Models/Gpt.h"

#include "hetero/Dialect/Hetero.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

#include <cmath>
#include <array>
#include <limits>

using namespace mlir;

namespace hetero::models {
namespace {

/// The values of one attention head that its backward needs.
struct HeadValues {
  int64_t row = 0;    // first token of the sequence
  int64_t column = 0; // first column of the head in q, k and v
  Value q, k, v, probs;
};

/// The values of one transformer block that its backward needs.
struct LayerValues {
  Value x, context, h, up, relu;
  std::vector<HeadValues> heads;
};

using Body = function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// (i, j) -> (i): the row of a matrix element, for row-wise vectors.
AffineMap rowsMap(OpBuilder &builder) {
  return AffineMap::get(2, 0, {builder.getAffineDimExpr(0)},
                        builder.getContext());
}

/// Builds the forward or backward function of one stage at the end of a
/// module.
class StageBuilder {
public:
  StageBuilder(ModuleOp module, const GptConfig &config, int64_t stage)
      : module(module), builder(module.getContext()), loc(module.getLoc()),
        config(config), stage(stage),
        tokens(config.batch * config.seq), f32(builder.getF32Type()) {
    StagePartition partition = partitionLayers(config.layers, config.stages);
    firstLayer = partition.first[stage];
    numLayers = partition.count[stage];
    for (const Parameter &param : stageParameters(config, stage))
      paramTypes.push_back(matrix(param.rows, param.cols));
  }

  func::FuncOp buildForward();
  func::FuncOp buildBackward();

private:
  bool isLast() const { return stage == config.stages - 1; }
  RankedTensorType matrix(int64_t rows, int64_t cols) const {
    return RankedTensorType::get({rows, cols}, f32);
  }
  RankedTensorType activation() const {
    return matrix(tokens, config.hidden);
  }
  static int64_t rowsOf(Value value) {
    return cast<RankedTensorType>(value.getType()).getDimSize(0);
  }
  static int64_t colsOf(Value value) {
    return cast<RankedTensorType>(value.getType()).getDimSize(1);
  }

  /// Starts function `name` with the stage's inputs (plus the output
  /// gradient for a backward) and binds them.
  func::FuncOp begin(StringRef name, bool backward, TypeRange results);

  Value constant(double value) {
    return arith::ConstantOp::create(builder, loc,
                                     builder.getF32FloatAttr(float(value)));
  }
  Value empty(Type type) {
    auto shaped = cast<RankedTensorType>(type);
    return tensor::EmptyOp::create(builder, loc, shaped.getShape(), f32);
  }
  Value filled(RankedTensorType type, Value value) {
    return linalg::FillOp::create(builder, loc, ValueRange{value},
                                  ValueRange{empty(type)})
        .getResult(0);
  }
  Value matmul(Value lhs, Value rhs);
  Value transpose(Value value);
  Value prunable(PruneMode mode, Value x, Value weight, StringRef key);
  Value add(Value a, Value b);
  Value slice(Value source, int64_t row, int64_t column, int64_t rows,
              int64_t cols);
  Value insert(Value part, Value into, int64_t row, int64_t column);
  /// A 2-D linalg.generic over `inputs` (with `maps`, then the output's
  /// map) into `init`; `body` takes the input elements and the output's.
  Value generic(ValueRange inputs, ArrayRef<AffineMap> maps, Value init,
                ArrayRef<utils::IteratorType> iterators, Body body);
  /// An element-wise 2-D linalg.generic of the first input's shape.
  Value elementwise(ValueRange inputs, Body body);
  /// Reduces every row of the inputs into a vector that starts at `init`.
  Value rowReduce(ValueRange inputs, Value init, Body body);
  /// Row-wise softmax, numerically stable (the row maximum is subtracted).
  Value softmax(Value logits);

  void attention(Value qkv, LayerValues &layer);
  Value layerForward(int64_t index, Value x, LayerValues &values);
  Value layerBackward(int64_t index, const LayerValues &values, Value dout,
                      SmallVectorImpl<Value> &grads);
  Value loss(Value x);
  Value lossBackward(Value x, Value &headGrad);

  ModuleOp module;
  OpBuilder builder;
  Location loc;
  const GptConfig &config;
  int64_t stage, tokens;
  int64_t firstLayer = 0, numLayers = 0;
  Type f32;
  SmallVector<Type> paramTypes;
  // Bound by begin(): the function's arguments and constants.
  Value x, target, outputGradient;
  SmallVector<Value> params;
  Value zero, negativeInfinity, attentionScale, count, gradientScale;
};

func::FuncOp StageBuilder::begin(StringRef name, bool backward,
                                 TypeRange results) {
  SmallVector<Type> inputs = {activation()};
  inputs.append(paramTypes.begin(), paramTypes.end());
  if (isLast())
    inputs.push_back(activation());
  else if (backward)
    inputs.push_back(activation());
  builder.setInsertionPointToEnd(module.getBody());
  auto function = func::FuncOp::create(
      builder, loc, name, builder.getFunctionType(inputs, results));
  Block *entry = function.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  x = entry->getArgument(0);
  params.assign(entry->getArguments().begin() + 1,
                entry->getArguments().begin() + 1 + paramTypes.size());
  target = isLast() ? entry->getArgument(1 + paramTypes.size()) : Value();
  outputGradient =
      (backward && !isLast()) ? entry->getArguments().back() : Value();
  zero = constant(0.0);
  negativeInfinity = constant(-std::numeric_limits<double>::infinity());
  attentionScale =
      constant(1.0 / std::sqrt(double(config.hidden / config.heads)));
  count = constant(double(tokens * config.hidden));
  gradientScale = constant(2.0 / double(tokens * config.hidden));
  return function;
}

Value StageBuilder::matmul(Value lhs, Value rhs) {
  RankedTensorType type = matrix(rowsOf(lhs), colsOf(rhs));
  return linalg::MatmulOp::create(builder, loc, TypeRange{type},
                                  ValueRange{lhs, rhs},
                                  ValueRange{filled(type, zero)})
      .getResult(0);
}

Value StageBuilder::transpose(Value value) {
  RankedTensorType type = matrix(colsOf(value), rowsOf(value));
  return linalg::TransposeOp::create(builder, loc, value, empty(type),
                                     ArrayRef<int64_t>{1, 0})
      .getResult()[0];
}

Value StageBuilder::prunable(PruneMode mode, Value input, Value weight,
                             StringRef key) {
  return PrunableMatmulOp::create(
      builder, loc, matrix(rowsOf(input), colsOf(weight)), input, weight,
      PruneModeAttr::get(builder.getContext(), mode),
      builder.getStringAttr(key), builder.getI64IntegerAttr(config.tp));
}

Value StageBuilder::add(Value a, Value b) {
  return linalg::AddOp::create(builder, loc, TypeRange{a.getType()},
                               ValueRange{a, b}, ValueRange{empty(a.getType())})
      .getResult(0);
}

Value StageBuilder::slice(Value source, int64_t row, int64_t column,
                          int64_t rows, int64_t cols) {
  SmallVector<OpFoldResult> offsets = {builder.getIndexAttr(row),
                                       builder.getIndexAttr(column)};
  SmallVector<OpFoldResult> sizes = {builder.getIndexAttr(rows),
                                     builder.getIndexAttr(cols)};
  SmallVector<OpFoldResult> strides(2, builder.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(builder, loc, matrix(rows, cols),
                                        source, offsets, sizes, strides);
}

Value StageBuilder::insert(Value part, Value into, int64_t row,
                           int64_t column) {
  SmallVector<OpFoldResult> offsets = {builder.getIndexAttr(row),
                                       builder.getIndexAttr(column)};
  SmallVector<OpFoldResult> sizes = {builder.getIndexAttr(rowsOf(part)),
                                     builder.getIndexAttr(colsOf(part))};
  SmallVector<OpFoldResult> strides(2, builder.getIndexAttr(1));
  return tensor::InsertSliceOp::create(builder, loc, part, into, offsets,
                                       sizes, strides);
}

Value StageBuilder::generic(ValueRange inputs, ArrayRef<AffineMap> maps,
                            Value init,
                            ArrayRef<utils::IteratorType> iterators,
                            Body body) {
  return linalg::GenericOp::create(
             builder, loc, TypeRange{init.getType()}, inputs, ValueRange{init},
             maps, iterators,
             [&](OpBuilder &nested, Location nestedLoc, ValueRange arguments) {
               linalg::YieldOp::create(nested, nestedLoc,
                                       body(nested, nestedLoc, arguments));
             })
      .getResult(0);
}

Value StageBuilder::elementwise(ValueRange inputs, Body body) {
  SmallVector<AffineMap> maps(inputs.size() + 1,
                              builder.getMultiDimIdentityMap(2));
  return generic(inputs, maps, empty(inputs.front().getType()),
                 {utils::IteratorType::parallel, utils::IteratorType::parallel},
                 body);
}

Value StageBuilder::rowReduce(ValueRange inputs, Value init, Body body) {
  SmallVector<AffineMap> maps(inputs.size(),
                              builder.getMultiDimIdentityMap(2));
  maps.push_back(rowsMap(builder));
  auto vector = RankedTensorType::get({rowsOf(inputs.front())}, f32);
  return generic(inputs, maps, filled(vector, init),
                 {utils::IteratorType::parallel, utils::IteratorType::reduction},
                 body);
}

/// The maps of a row-broadcast generic: a matrix, a vector of its rows, and
/// the matrix result.
static SmallVector<AffineMap> rowBroadcastMaps(OpBuilder &builder) {
  AffineMap identity = builder.getMultiDimIdentityMap(2);
  return {identity, rowsMap(builder), identity};
}

Value StageBuilder::softmax(Value logits) {
  Value maxima = rowReduce({logits}, negativeInfinity,
                           [](OpBuilder &b, Location l, ValueRange a) -> Value {
                             return arith::MaximumFOp::create(b, l, a[0], a[1]);
                           });
  SmallVector<utils::IteratorType> parallel(2, utils::IteratorType::parallel);
  Value exponentials = generic(
      {logits, maxima}, rowBroadcastMaps(builder), empty(logits.getType()),
      parallel, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        return math::ExpOp::create(b, l, arith::SubFOp::create(b, l, a[0], a[1]));
      });
  Value sums = rowReduce({exponentials}, zero,
                         [](OpBuilder &b, Location l, ValueRange a) -> Value {
                           return arith::AddFOp::create(b, l, a[0], a[1]);
                         });
  return generic({exponentials, sums}, rowBroadcastMaps(builder),
                 empty(logits.getType()), parallel,
                 [](OpBuilder &b, Location l, ValueRange a) -> Value {
                   return arith::DivFOp::create(b, l, a[0], a[1]);
                 });
}

/// Causal multi-head self-attention over one micro-batch of `batch`
/// sequences: per sequence and head, softmax(q k^T / sqrt(d) + mask) v.
void StageBuilder::attention(Value qkv, LayerValues &layer) {
  int64_t hidden = config.hidden, headDim = hidden / config.heads;
  int64_t seq = config.seq;
  Value context = filled(activation(), zero);
  Value scale = attentionScale, masked = negativeInfinity;
  for (int64_t b = 0; b < config.batch; ++b) {
    for (int64_t h = 0; h < config.heads; ++h) {
      HeadValues head;
      head.row = b * seq;
      head.column = h * headDim;
      head.q = slice(qkv, head.row, head.column, seq, headDim);
      head.k = slice(qkv, head.row, hidden + head.column, seq, headDim);
      head.v = slice(qkv, head.row, 2 * hidden + head.column, seq, headDim);
      Value scores = matmul(head.q, transpose(head.k));
      // Scale by 1/sqrt(d) and mask future positions.
      Value logits = elementwise(
          {scores}, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
            Value i = linalg::IndexOp::create(nb, l, 0);
            Value j = linalg::IndexOp::create(nb, l, 1);
            Value future =
                arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ult, i, j);
            Value scaled = arith::MulFOp::create(nb, l, a[0], scale);
            return arith::SelectOp::create(nb, l, future, masked, scaled);
          });
      head.probs = softmax(logits);
      context = insert(matmul(head.probs, head.v), context, head.row,
                       head.column);
      layer.heads.push_back(head);
    }
  }
  layer.context = context;
}

Value StageBuilder::layerForward(int64_t index, Value input,
                                 LayerValues &values) {
  ArrayRef<Value> weights =
      ArrayRef<Value>(params).slice((index - firstLayer) * 4, 4);
  std::string key = "l" + std::to_string(index) + ".";
  values.x = input;
  Value qkv = prunable(PruneMode::col, input, weights[0], key + "qkv");
  attention(qkv, values);
  Value projected =
      prunable(PruneMode::row, values.context, weights[1], key + "attn_out");
  values.h = add(input, projected);
  values.up = prunable(PruneMode::col, values.h, weights[2], key + "mlp_up");
  Value floor = zero;
  values.relu = elementwise(
      {values.up}, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        return arith::MaximumFOp::create(b, l, a[0], floor);
      });
  Value down =
      prunable(PruneMode::row, values.relu, weights[3], key + "mlp_down");
  return add(values.h, down);
}

/// The chain rule through layerForward. Appends the gradients of the
/// layer's four weights to `grads` (in parameter order) and returns the
/// gradient of the layer's input. The activation gradient of a col-mode
/// matmul contracts over the sharded columns, so it is a row-mode matmul
/// with the transposed weight, and the other way round.
Value StageBuilder::layerBackward(int64_t index, const LayerValues &values,
                                  Value dout, SmallVectorImpl<Value> &grads) {
  ArrayRef<Value> weights =
      ArrayRef<Value>(params).slice((index - firstLayer) * 4, 4);
  std::string key = "l" + std::to_string(index) + ".";
  int64_t hidden = config.hidden, headDim = hidden / config.heads;
  Value floor = zero, scale = attentionScale;
  // out = h + relu(up) W_2, up = h W_1.
  Value dW2 = matmul(transpose(values.relu), dout);
  Value drelu =
      prunable(PruneMode::col, dout, transpose(weights[3]), key + "mlp_down");
  Value dup = elementwise(
      {drelu, values.up}, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value on =
            arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, a[1], floor);
        return arith::SelectOp::create(b, l, on, a[0], floor);
      });
  Value dW1 = matmul(transpose(values.h), dup);
  Value dh = add(dout, prunable(PruneMode::row, dup, transpose(weights[2]),
                                key + "mlp_up"));
  // h = x + context W_o.
  Value dWo = matmul(transpose(values.context), dh);
  Value dcontext =
      prunable(PruneMode::col, dh, transpose(weights[1]), key + "attn_out");
  Value dqkv = filled(matrix(tokens, 3 * hidden), zero);
  int64_t seq = config.seq;
  for (const HeadValues &head : values.heads) {
    Value dheadOut = slice(dcontext, head.row, head.column, seq, headDim);
    // headOut = probs v.
    Value dprobs = matmul(dheadOut, transpose(head.v));
    Value dv = matmul(transpose(head.probs), dheadOut);
    // Softmax: dlogits = probs * (dprobs - sum_j dprobs * probs).
    Value rowSums = rowReduce(
        {dprobs, head.probs}, zero,
        [](OpBuilder &b, Location l, ValueRange a) -> Value {
          return arith::AddFOp::create(
              b, l, arith::MulFOp::create(b, l, a[0], a[1]), a[2]);
        });
    // Masked positions have probability 0, so their gradient vanishes; the
    // scale of the scores applies to the rest.
    AffineMap identity = builder.getMultiDimIdentityMap(2);
    Value dscores = generic(
        {dprobs, head.probs, rowSums},
        {identity, identity, rowsMap(builder), identity},
        empty(dprobs.getType()),
        {utils::IteratorType::parallel, utils::IteratorType::parallel},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value difference = arith::SubFOp::create(b, l, a[0], a[2]);
          Value dlogits = arith::MulFOp::create(b, l, a[1], difference);
          return arith::MulFOp::create(b, l, dlogits, scale);
        });
    // scores = q k^T.
    Value dq = matmul(dscores, head.k);
    Value dk = matmul(transpose(dscores), head.q);
    dqkv = insert(dq, dqkv, head.row, head.column);
    dqkv = insert(dk, dqkv, head.row, hidden + head.column);
    dqkv = insert(dv, dqkv, head.row, 2 * hidden + head.column);
  }
  // qkv = x W_qkv; x also feeds the residual.
  Value dWqkv = matmul(transpose(values.x), dqkv);
  Value dx = add(dh, prunable(PruneMode::row, dqkv, transpose(weights[0]),
                              key + "qkv"));
  grads.append({dWqkv, dWo, dW1, dW2});
  return dx;
}

/// Mean squared error of the head's output against the target.
Value StageBuilder::loss(Value input) {
  Value y = matmul(input, params.back());
  Value squared = elementwise(
      {y, target}, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value difference = arith::SubFOp::create(b, l, a[0], a[1]);
        return arith::MulFOp::create(b, l, difference, difference);
      });
  auto scalar = RankedTensorType::get({}, f32);
  Value sum =
      linalg::ReduceOp::create(
          builder, loc, ValueRange{squared}, ValueRange{filled(scalar, zero)},
          ArrayRef<int64_t>{0, 1},
          [](OpBuilder &b, Location l, ValueRange a) {
            linalg::YieldOp::create(b, l,
                                    ValueRange{arith::AddFOp::create(
                                        b, l, a[0], a[1])});
          })
          .getResult(0);
  Value total = tensor::ExtractOp::create(builder, loc, sum, ValueRange{});
  Value mean = arith::DivFOp::create(builder, loc, total, count);
  return tensor::FromElementsOp::create(builder, loc, scalar,
                                        ValueRange{mean});
}

/// The chain rule through loss(): d loss / d y = 2 (y - target) / count.
Value StageBuilder::lossBackward(Value input, Value &headGrad) {
  Value head = params.back();
  Value y = matmul(input, head);
  Value scale = gradientScale;
  Value dy = elementwise(
      {y, target}, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value difference = arith::SubFOp::create(b, l, a[0], a[1]);
        return arith::MulFOp::create(b, l, difference, scale);
      });
  headGrad = matmul(transpose(input), dy);
  return matmul(dy, transpose(head));
}

func::FuncOp StageBuilder::buildForward() {
  Type result = isLast() ? Type(RankedTensorType::get({}, f32))
                         : Type(activation());
  func::FuncOp function =
      begin(("gpt_stage" + std::to_string(stage) + "_forward"),
            /*backward=*/false, {result});
  Value value = x;
  for (int64_t l = firstLayer; l < firstLayer + numLayers; ++l) {
    LayerValues values;
    value = layerForward(l, value, values);
  }
  if (isLast())
    value = loss(value);
  func::ReturnOp::create(builder, loc, value);
  return function;
}

func::FuncOp StageBuilder::buildBackward() {
  SmallVector<Type> results = {activation()};
  results.append(paramTypes.begin(), paramTypes.end());
  func::FuncOp function =
      begin(("gpt_stage" + std::to_string(stage) + "_backward"),
            /*backward=*/true, results);
  // Recompute the forward pass, keeping what the chain rule needs.
  std::vector<LayerValues> layers(numLayers);
  Value value = x;
  for (int64_t l = 0; l < numLayers; ++l)
    value = layerForward(firstLayer + l, value, layers[l]);

  SmallVector<Value> grads(paramTypes.size());
  Value gradient = outputGradient;
  if (isLast())
    gradient = lossBackward(value, grads.back());
  for (int64_t l = numLayers - 1; l >= 0; --l) {
    SmallVector<Value> layerGrads;
    gradient = layerBackward(firstLayer + l, layers[l], gradient, layerGrads);
    std::copy(layerGrads.begin(), layerGrads.end(), grads.begin() + 4 * l);
  }
  SmallVector<Value> returned = {gradient};
  returned.append(grads);
  func::ReturnOp::create(builder, loc, returned);
  return function;
}

/// value(i, j) = scale * sin(a i + b j + seed), the deterministic initial
/// value of parameter number `seed`.
DenseElementsAttr initialValue(RankedTensorType type, int64_t seed) {
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  double scale = 1.0 / std::sqrt(double(rows));
  std::vector<float> values(size_t(rows * cols));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      values[size_t(i * cols + j)] = float(
          scale * std::sin(0.37 * double(i) + 0.91 * double(j) +
                           1.7 * double(seed) + 0.3));
  return DenseElementsAttr::get(type, ArrayRef<float>(values));
}

/// @gpt_data(step, replica, micro-batch) -> (input, target): deterministic
/// activations 0.5 sin(0.37 t + 0.91 h + offset) and targets
/// 0.5 cos(0.53 t + 0.29 h + offset'), where the offsets move with the
/// micro-batch, the replica and the step.
func::FuncOp buildData(ModuleOp module, const GptConfig &config) {
  OpBuilder builder(module.getContext());
  builder.setInsertionPointToEnd(module.getBody());
  Location loc = module.getLoc();
  Type i64 = builder.getI64Type(), f32 = builder.getF32Type();
  auto type = RankedTensorType::get({config.batch * config.seq, config.hidden},
                                    f32);
  auto function = func::FuncOp::create(
      builder, loc, "gpt_data",
      builder.getFunctionType({i64, i64, i64}, {type, type}));
  Block *entry = function.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  auto constant = [&](double value) -> Value {
    return arith::ConstantOp::create(builder, loc,
                                     builder.getF32FloatAttr(float(value)));
  };
  // offset = Σ weight * argument over (step, replica, micro-batch).
  auto offset = [&](std::array<double, 3> weights) {
    Value sum = constant(0.0);
    for (auto [argument, weight] : llvm::zip(entry->getArguments(), weights)) {
      Value real = arith::SIToFPOp::create(builder, loc, f32, argument);
      sum = arith::AddFOp::create(
          builder, loc, sum,
          arith::MulFOp::create(builder, loc, real, constant(weight)));
    }
    return sum;
  };
  auto pattern = [&](Value shift, double rowWeight, double colWeight,
                     bool cosine) {
    Value half = constant(0.5), rowScale = constant(rowWeight),
          colScale = constant(colWeight);
    Value init = tensor::EmptyOp::create(builder, loc, type.getShape(), f32);
    return linalg::GenericOp::create(
               builder, loc, TypeRange{type}, ValueRange{}, ValueRange{init},
               SmallVector<AffineMap>{builder.getMultiDimIdentityMap(2)},
               SmallVector<utils::IteratorType>(2,
                                                utils::IteratorType::parallel),
               [&](OpBuilder &b, Location l, ValueRange) {
                 auto coordinate = [&](int64_t dim) -> Value {
                   Value index = linalg::IndexOp::create(b, l, dim);
                   Value integer = arith::IndexCastOp::create(
                       b, l, b.getI64Type(), index);
                   return arith::SIToFPOp::create(b, l, f32, integer);
                 };
                 // One statement per op: the order of function arguments'
                 // evaluation is unspecified, and with it the order of ops.
                 Value row =
                     arith::MulFOp::create(b, l, coordinate(0), rowScale);
                 Value col =
                     arith::MulFOp::create(b, l, coordinate(1), colScale);
                 Value sum = arith::AddFOp::create(b, l, row, col);
                 Value argument = arith::AddFOp::create(b, l, sum, shift);
                 Value wave =
                     cosine ? Value(math::CosOp::create(b, l, argument))
                            : Value(math::SinOp::create(b, l, argument));
                 linalg::YieldOp::create(
                     b, l, ValueRange{arith::MulFOp::create(b, l, wave, half)});
               })
        .getResult(0);
  };
  Value input = pattern(offset({0.17, 2.1, 1.3}), 0.37, 0.91, false);
  Value target = pattern(offset({0.11, 1.7, 0.7}), 0.53, 0.29, true);
  func::ReturnOp::create(builder, loc, ValueRange{input, target});
  return function;
}

} // namespace

std::vector<std::string> validate(const GptConfig &config) {
  std::vector<std::string> problems;
  auto require = [&](bool ok, const std::string &message) {
    if (!ok)
      problems.push_back(message);
  };
  require(config.layers >= 1, "--layers must be at least 1");
  require(config.hidden >= 1, "--hidden must be at least 1");
  require(config.heads >= 1, "--heads must be at least 1");
  require(config.seq >= 1, "--seq must be at least 1");
  require(config.batch >= 1, "--batch must be at least 1");
  require(config.microbatches >= 1, "--microbatches must be at least 1");
  require(config.dataParallel >= 1, "--dp must be at least 1");
  require(config.tp >= 1, "--tp must be at least 1");
  require(config.stages >= 1, "--stages must be at least 1");
  require(config.optimizer == "sgd" || config.optimizer == "adam",
          "--optimizer must be sgd or adam; got '" + config.optimizer + "'");
  require(config.learningRate > 0.0, "--lr must be positive");
  if (!problems.empty())
    return problems;
  require(config.stages <= config.layers,
          "--stages (" + std::to_string(config.stages) +
              ") must not exceed --layers (" + std::to_string(config.layers) +
              "): every stage needs a layer");
  require(config.hidden % config.heads == 0,
          "--hidden (" + std::to_string(config.hidden) +
              ") must be divisible by --heads (" +
              std::to_string(config.heads) + ")");
  require(config.hidden % config.tp == 0,
          "--hidden (" + std::to_string(config.hidden) +
              ") must be divisible by --tp (" + std::to_string(config.tp) +
              ")");
  return problems;
}

std::vector<Parameter> stageParameters(const GptConfig &config,
                                       int64_t stage) {
  StagePartition partition = partitionLayers(config.layers, config.stages);
  int64_t hidden = config.hidden;
  std::vector<Parameter> params;
  int64_t first = partition.first[stage];
  for (int64_t l = first; l < first + partition.count[stage]; ++l) {
    std::string prefix = "l" + std::to_string(l) + "_";
    params.push_back({prefix + "wqkv", hidden, 3 * hidden});
    params.push_back({prefix + "wo", hidden, hidden});
    params.push_back({prefix + "w1", hidden, 4 * hidden});
    params.push_back({prefix + "w2", 4 * hidden, hidden});
  }
  if (stage == config.stages - 1)
    params.push_back({"head", hidden, hidden});
  return params;
}

StagePartition partitionLayers(int64_t layers, int64_t stages) {
  StagePartition partition;
  int64_t base = layers / stages, extra = layers % stages, next = 0;
  for (int64_t s = 0; s < stages; ++s) {
    int64_t count = base + (s < extra ? 1 : 0);
    partition.first.push_back(next);
    partition.count.push_back(count);
    next += count;
  }
  return partition;
}

OwningOpRef<ModuleOp> buildGpt(MLIRContext *context, const GptConfig &config) {
  context->loadDialect<arith::ArithDialect, func::FuncDialect,
                       linalg::LinalgDialect, math::MathDialect,
                       memref::MemRefDialect, shard::ShardDialect,
                       tensor::TensorDialect, HeteroDialect>();
  OpBuilder builder(context);
  Location loc = UnknownLoc::get(context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());
  // Axes: pipeline stage, data-parallel replica.
  shard::GridOp::create(builder, loc, "gpt_devices",
                        ArrayRef<int64_t>{config.stages, config.dataParallel});

  std::vector<SmallVector<Attribute>> stageParams(config.stages);
  int64_t seed = 0;
  for (int64_t s = 0; s < config.stages; ++s)
    for (const Parameter &param : stageParameters(config, s)) {
      auto type = RankedTensorType::get({param.rows, param.cols},
                                        builder.getF32Type());
      memref::GlobalOp::create(
          builder, loc, param.name, builder.getStringAttr("private"),
          MemRefType::get(type.getShape(), type.getElementType()),
          initialValue(type, seed++), /*constant=*/false,
          /*alignment=*/IntegerAttr());
      stageParams[s].push_back(FlatSymbolRefAttr::get(context, param.name));
    }

  buildData(*module, config);
  for (int64_t s = 0; s < config.stages; ++s) {
    StageBuilder stage(*module, config, s);
    stage.buildForward();
    stage.buildBackward();
  }

  builder.setInsertionPointToEnd(module->getBody());
  Attribute optimizer =
      config.optimizer == "adam"
          ? Attribute(AdamAttr::get(
                context, builder.getF64FloatAttr(config.learningRate),
                FloatAttr(), FloatAttr(), FloatAttr()))
          : Attribute(SgdAttr::get(
                context, builder.getF64FloatAttr(config.learningRate),
                FloatAttr()));
  auto pipeline = PipelineOp::create(
      builder, loc, builder.getStringAttr("gpt"),
      builder.getI64IntegerAttr(config.stages),
      builder.getI64IntegerAttr(config.microbatches),
      FlatSymbolRefAttr::get(context, "gpt_devices"),
      FlatSymbolRefAttr::get(context, "gpt_data"), optimizer);
  builder.setInsertionPointToStart(&pipeline.getBody().emplaceBlock());
  for (int64_t s = 0; s < config.stages; ++s) {
    std::string prefix = "gpt_stage" + std::to_string(s);
    StageOp::create(builder, loc, builder.getI64IntegerAttr(s),
                    FlatSymbolRefAttr::get(context, prefix + "_forward"),
                    FlatSymbolRefAttr::get(context, prefix + "_backward"),
                    builder.getArrayAttr(stageParams[s]), StringAttr());
  }
  return module;
}

} // namespace hetero::models
