//===- Gpt.cpp - a GPT language model in the stage ABI --------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// A decoder-only transformer over character-level tokens. Stage 0 embeds
// the tokens (token plus position embedding); every stage holds consecutive
// pre-layer-norm blocks
//   h = x + attn(ln1(x)) W_o,   out = h + gelu(ln2(h) W_1) W_2
// with causal multi-head self-attention; the last stage adds a final layer
// norm, the output projection to the vocabulary and the mean softmax
// cross-entropy against the next tokens. The four linears of a block are
// hetero.prunable_matmul in Megatron's split (qkv and mlp_up by columns,
// attn_out and mlp_down by rows).
//
// The model is the forward pass only, as a frontend emits it: the stages
// have no backward functions, and hetero-derive-backward differentiates
// them. All blocks have the same shapes, so their code exists once, in
// @gpt_block_forward, which the stage functions call once per layer: the
// module's size, and with it the time to compile it and to differentiate
// it, does not grow with the number of layers beyond one call per layer.
//
//===----------------------------------------------------------------------===//

#include "hetero/Models/Gpt.h"

#include "hetero/Dialect/Hetero.h"
#include "hetero/Dialect/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

#include <cmath>
#include <limits>
#include <random>

using namespace mlir;

namespace hetero::models {
namespace {

/// Parameters per transformer block, in stageParameters' order.
enum BlockParam : int64_t {
  Ln1Gain,
  Ln1Bias,
  Wqkv,
  Wo,
  Ln2Gain,
  Ln2Bias,
  W1,
  W2,
  kBlockParams
};

/// Layer-norm epsilon, as in GPT-2.
constexpr double kLayerNormEpsilon = 1e-5;

/// The function every transformer block of the model calls: all blocks
/// have the same shapes, so one copy of its code serves every layer.
constexpr llvm::StringLiteral kBlockForward = "gpt_block_forward";

using Body = GenericBody;

/// Builds the functions of one stage at the end of a module.
class StageBuilder {
public:
  /// Functions for micro-batches of `config.batch` sequences, named with
  /// `suffix` (empty for the pipeline's own size).
  StageBuilder(ModuleOp module, const GptConfig &config, int64_t stage,
               std::string suffix = "")
      : module(module), builder(module.getContext()), loc(module.getLoc()),
        config(config), suffix(std::move(suffix)), stage(stage),
        tokens(config.batch * config.seq), f32(builder.getF32Type()),
        i32(builder.getI32Type()) {
    StagePartition partition = partitionLayers(config.layers, config.stages);
    firstLayer = partition.first[stage];
    numLayers = partition.count[stage];
    for (const Parameter &param : stageParameters(config, stage))
      paramTypes.push_back(RankedTensorType::get(param.shape, f32));
  }

  func::FuncOp buildForward();
  /// The last stage's forward up to the next-token logits [T, V].
  func::FuncOp buildLogits();
  /// @gpt_block_forward(block, x, 8 block parameters) -> out: one
  /// transformer block (its index in the model first: the block of its
  /// prunable linears).
  func::FuncOp buildBlockForward();

private:
  bool isFirst() const { return stage == 0; }
  bool isLast() const { return stage == config.stages - 1; }
  RankedTensorType matrix(int64_t rows, int64_t cols) const {
    return RankedTensorType::get({rows, cols}, f32);
  }
  RankedTensorType vector(int64_t size) const {
    return RankedTensorType::get({size}, f32);
  }
  RankedTensorType activation() const { return matrix(tokens, config.hidden); }
  RankedTensorType tokenBatch() const {
    return RankedTensorType::get({config.batch, config.seq}, i32);
  }
  /// What the stage receives: token ids on stage 0, activations elsewhere.
  RankedTensorType input() const {
    return isFirst() ? tokenBatch() : activation();
  }
  static int64_t rowsOf(Value value) {
    return cast<RankedTensorType>(value.getType()).getDimSize(0);
  }
  static int64_t colsOf(Value value) {
    return cast<RankedTensorType>(value.getType()).getDimSize(1);
  }
  /// The index in a stage function's `params` of the first parameter of
  /// layer `layer` (which the stage holds).
  int64_t firstBlockParam(int64_t layer) const {
    return (isFirst() ? 2 : 0) + (layer - firstLayer) * kBlockParams;
  }
  /// Parameter `which` of the block inside a block function.
  Value param(BlockParam which) const { return params[which]; }

  /// Starts function `name` with the stage's inputs (with the target on the
  /// last stage unless `withTarget` is false) and binds them.
  func::FuncOp begin(StringRef name, TypeRange results, bool withTarget = true);
  /// Starts private function `name` of `inputs` (results set once the body
  /// is built) and binds the constants.
  func::FuncOp beginFunction(StringRef name, TypeRange inputs);
  void bindConstants();

  Value constant(double value) {
    return arith::ConstantOp::create(builder, loc,
                                     builder.getF32FloatAttr(float(value)));
  }
  Value empty(Type type) {
    auto shaped = cast<RankedTensorType>(type);
    return tensor::EmptyOp::create(builder, loc, shaped.getShape(),
                                   shaped.getElementType());
  }
  Value filled(RankedTensorType type, Value value) {
    return linalg::FillOp::create(builder, loc, ValueRange{value},
                                  ValueRange{empty(type)})
        .getResult(0);
  }
  AffineMap map(unsigned dims, ArrayRef<AffineExpr> results) {
    return AffineMap::get(dims, 0, results, builder.getContext());
  }
  AffineExpr dim(unsigned position) {
    return builder.getAffineDimExpr(position);
  }
  Value matmul(Value lhs, Value rhs);
  /// One of the three products of a tensor-parallel linear `key` whose
  /// weight is sharded by `mode`.
  Value prunable(PruneMode mode, Value x, Value weight, StringRef key,
                 MatmulProduct product = MatmulProduct::forward);
  Value add(Value a, Value b);
  Value slice(Value source, int64_t row, int64_t column, int64_t rows,
              int64_t cols);
  /// A linalg.generic over `inputs` (with `maps`, then the output's map)
  /// into `init`; `body` takes the input elements and the output's.
  Value generic(ValueRange inputs, ArrayRef<AffineMap> maps, Value init,
                ArrayRef<utils::IteratorType> iterators, Body body);
  /// An element-wise generic of the first input's shape (1-D or 2-D).
  Value elementwise(ValueRange inputs, Body body);
  /// Reduces the last dimension of the inputs (of one shape) into a tensor
  /// of one rank less that starts at `init`.
  Value rowReduce(ValueRange inputs, Value init, Body body);
  /// Reduces every row of a matrix, with a value per row, into a vector
  /// that starts at 0: body(element, row value, accumulator).
  Value rowReduceWith(Value matrix, Value rows, Body body);
  /// tensor (op) a value per row (the tensor without its last dimension),
  /// element-wise: body(element, row value).
  Value withRows(Value matrix, Value rows, Body body);
  /// A contraction over the dims of `iterators` marked reduction, in the
  /// style of a batched matmul: result(out) += lhs(lhsMap) * rhs(rhsMap).
  Value contract(Value lhs, Value rhs, AffineMap lhsMap, AffineMap rhsMap,
                 AffineMap outMap, RankedTensorType type,
                 ArrayRef<utils::IteratorType> iterators);
  /// The heads of columns [offset, offset + H) of a [T, *] matrix as
  /// [B * A, S, d]: (b A + h, s, e) reads (b S + s, offset + h d + e).
  Value splitHeads(Value matrix, int64_t offset);
  /// The inverse of splitHeads into a [T, H] matrix.
  Value mergeHeads(Value heads);
  /// One-hot rows of `ids` (a vector of i32 token ids) over `width` ids.
  Value oneHot(Value ids, int64_t width);
  /// Row-wise softmax, numerically stable (the row maximum is subtracted).
  Value softmax(Value logits);

  Value embed(Value ids);
  Value layerNorm(Value x, Value gain, Value bias);
  Value gelu(Value x);
  /// Causal multi-head self-attention of the [T, 3H] queries, keys and
  /// values: the [T, H] context.
  Value attention(Value qkv);
  /// One block inside @gpt_block_forward.
  Value layerForward(Value x);
  /// The final layer norm and the output projection.
  Value logits(Value x);
  Value loss(Value logits);
  /// The stage's blocks from its input, one call of @gpt_block_forward per
  /// layer.
  Value blocks(Value x);
  /// The block function of this micro-batch size.
  std::string blockForwardName() const { return kBlockForward.str() + suffix; }
  /// The parameters of layer `layer` among the stage function's.
  ValueRange layerParams(int64_t layer) const {
    return ValueRange(params).slice(firstBlockParam(layer), kBlockParams);
  }

  ModuleOp module;
  OpBuilder builder;
  Location loc;
  const GptConfig &config;
  std::string suffix;
  int64_t stage, tokens;
  int64_t firstLayer = 0, numLayers = 0;
  Type f32, i32;
  SmallVector<Type> paramTypes;
  // Bound by begin(): the function's arguments and constants.
  Value x, target;
  SmallVector<Value> params;
  /// Inside a block function: its block index, the `block` of its
  /// prunable linears.
  Value blockIndex;
  Value zero, one, negativeInfinity, attentionScale;
};

func::FuncOp StageBuilder::begin(StringRef name, TypeRange results,
                                 bool withTarget) {
  SmallVector<Type> inputs = {input()};
  inputs.append(paramTypes.begin(), paramTypes.end());
  bool hasTarget = isLast() && withTarget;
  if (hasTarget)
    inputs.push_back(tokenBatch());
  builder.setInsertionPointToEnd(module.getBody());
  auto function = func::FuncOp::create(
      builder, loc, name, builder.getFunctionType(inputs, results));
  Block *entry = function.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  x = entry->getArgument(0);
  params.assign(entry->getArguments().begin() + 1,
                entry->getArguments().begin() + 1 + paramTypes.size());
  target = hasTarget ? entry->getArgument(1 + paramTypes.size()) : Value();
  bindConstants();
  return function;
}

func::FuncOp StageBuilder::beginFunction(StringRef name, TypeRange inputs) {
  builder.setInsertionPointToEnd(module.getBody());
  auto function = func::FuncOp::create(builder, loc, name,
                                       builder.getFunctionType(inputs, {}));
  function.setPrivate();
  builder.setInsertionPointToStart(function.addEntryBlock());
  bindConstants();
  return function;
}

void StageBuilder::bindConstants() {
  zero = constant(0.0);
  one = constant(1.0);
  negativeInfinity = constant(-std::numeric_limits<double>::infinity());
  attentionScale =
      constant(1.0 / std::sqrt(double(config.hidden / config.heads)));
}

Value StageBuilder::matmul(Value lhs, Value rhs) {
  RankedTensorType type = matrix(rowsOf(lhs), colsOf(rhs));
  return linalg::MatmulOp::create(builder, loc, TypeRange{type},
                                  ValueRange{lhs, rhs},
                                  ValueRange{filled(type, zero)})
      .getResult(0);
}

Value StageBuilder::prunable(PruneMode mode, Value input, Value weight,
                             StringRef key, MatmulProduct product) {
  return PrunableMatmulOp::create(
      builder, loc, matrix(rowsOf(input), colsOf(weight)), input, weight,
      blockIndex, PruneModeAttr::get(builder.getContext(), mode),
      builder.getStringAttr(key), builder.getI64IntegerAttr(config.tp),
      MatmulProductAttr::get(builder.getContext(), product),
      ImputationAttr::get(builder.getContext(),
                          *symbolizeImputation(config.imputation)));
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

Value StageBuilder::generic(ValueRange inputs, ArrayRef<AffineMap> maps,
                            Value init, ArrayRef<utils::IteratorType> iterators,
                            Body body) {
  return buildGeneric(builder, loc, inputs, maps, init, iterators, body);
}

Value StageBuilder::elementwise(ValueRange inputs, Body body) {
  auto type = cast<RankedTensorType>(inputs.front().getType());
  SmallVector<AffineMap> maps(inputs.size() + 1,
                              builder.getMultiDimIdentityMap(type.getRank()));
  SmallVector<utils::IteratorType> parallel(type.getRank(),
                                            utils::IteratorType::parallel);
  return generic(inputs, maps, empty(type), parallel, body);
}

/// The map of a tensor of `rank` dims to its rows (all dims but the last).
static AffineMap rowsMap(OpBuilder &builder, unsigned rank) {
  return AffineMap::getMultiDimIdentityMap(rank, builder.getContext())
      .getMajorSubMap(rank - 1);
}

static RankedTensorType rowsType(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  return RankedTensorType::get(type.getShape().drop_back(),
                               type.getElementType());
}

Value StageBuilder::rowReduce(ValueRange inputs, Value init, Body body) {
  unsigned rank = cast<RankedTensorType>(inputs.front().getType()).getRank();
  SmallVector<AffineMap> maps(inputs.size(),
                              builder.getMultiDimIdentityMap(rank));
  maps.push_back(rowsMap(builder, rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.back() = utils::IteratorType::reduction;
  return generic(inputs, maps, filled(rowsType(inputs.front()), init),
                 iterators, body);
}

Value StageBuilder::rowReduceWith(Value matrixValue, Value rows, Body body) {
  AffineMap perRow = map(2, {dim(0)});
  return generic(
      {matrixValue, rows}, {builder.getMultiDimIdentityMap(2), perRow, perRow},
      filled(vector(rowsOf(matrixValue)), zero),
      {utils::IteratorType::parallel, utils::IteratorType::reduction}, body);
}

Value StageBuilder::withRows(Value matrixValue, Value rows, Body body) {
  unsigned rank = cast<RankedTensorType>(matrixValue.getType()).getRank();
  AffineMap identity = builder.getMultiDimIdentityMap(rank);
  SmallVector<utils::IteratorType> parallel(rank,
                                            utils::IteratorType::parallel);
  return generic({matrixValue, rows},
                 {identity, rowsMap(builder, rank), identity},
                 empty(matrixValue.getType()), parallel, body);
}

Value StageBuilder::contract(Value lhs, Value rhs, AffineMap lhsMap,
                             AffineMap rhsMap, AffineMap outMap,
                             RankedTensorType type,
                             ArrayRef<utils::IteratorType> iterators) {
  return generic({lhs, rhs}, {lhsMap, rhsMap, outMap}, filled(type, zero),
                 iterators,
                 [](OpBuilder &b, Location l, ValueRange a) -> Value {
                   Value product = arith::MulFOp::create(b, l, a[0], a[1]);
                   return arith::AddFOp::create(b, l, product, a[2]);
                 });
}

Value StageBuilder::splitHeads(Value matrixValue, int64_t offset) {
  int64_t heads = config.heads, headDim = config.hidden / heads;
  auto type =
      RankedTensorType::get({config.batch * heads, config.seq, headDim}, f32);
  // From the H columns alone: a map whose results are plain dims (as with
  // one head) then names the right extents.
  Value columns = slice(matrixValue, 0, offset, tokens, config.hidden);
  AffineExpr pair = dim(0), position = dim(1), column = dim(2);
  AffineMap source = map(3, {pair.floorDiv(heads) * config.seq + position,
                             (pair % heads) * headDim + column});
  return generic(
      {columns}, {source, builder.getMultiDimIdentityMap(3)}, empty(type),
      SmallVector<utils::IteratorType>(3, utils::IteratorType::parallel),
      [](OpBuilder &, Location, ValueRange a) { return a[0]; });
}

Value StageBuilder::mergeHeads(Value headsValue) {
  int64_t heads = config.heads, headDim = config.hidden / heads;
  AffineExpr token = dim(0), column = dim(1);
  AffineMap source =
      map(2, {token.floorDiv(config.seq) * heads + column.floorDiv(headDim),
              token % config.seq, column % headDim});
  return generic(
      {headsValue}, {source, builder.getMultiDimIdentityMap(2)},
      empty(activation()),
      SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
      [](OpBuilder &, Location, ValueRange a) { return a[0]; });
}

Value StageBuilder::oneHot(Value ids, int64_t width) {
  RankedTensorType type = matrix(rowsOf(ids), width);
  Value on = one, off = zero;
  return generic(
      {ids}, {map(2, {dim(0)}), builder.getMultiDimIdentityMap(2)}, empty(type),
      {utils::IteratorType::parallel, utils::IteratorType::parallel},
      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value column = arith::IndexCastOp::create(
            b, l, b.getI32Type(), linalg::IndexOp::create(b, l, 1));
        Value hit =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, a[0], column);
        return arith::SelectOp::create(b, l, hit, on, off);
      });
}

Value StageBuilder::softmax(Value logitsValue) {
  Value maxima = rowReduce({logitsValue}, negativeInfinity,
                           [](OpBuilder &b, Location l, ValueRange a) -> Value {
                             return arith::MaximumFOp::create(b, l, a[0], a[1]);
                           });
  Value exponentials = withRows(
      logitsValue, maxima, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        return math::ExpOp::create(b, l,
                                   arith::SubFOp::create(b, l, a[0], a[1]));
      });
  Value sums = rowReduce({exponentials}, zero,
                         [](OpBuilder &b, Location l, ValueRange a) -> Value {
                           return arith::AddFOp::create(b, l, a[0], a[1]);
                         });
  return withRows(exponentials, sums,
                  [](OpBuilder &b, Location l, ValueRange a) -> Value {
                    return arith::DivFOp::create(b, l, a[0], a[1]);
                  });
}

/// The token ids of a [B, S] batch as one vector of B * S rows.
static Value flattenIds(OpBuilder &builder, Location loc, Value ids) {
  auto type = cast<RankedTensorType>(ids.getType());
  auto flat =
      RankedTensorType::get({type.getNumElements()}, type.getElementType());
  return tensor::CollapseShapeOp::create(
      builder, loc, flat, ids, ArrayRef<ReassociationIndices>{{0, 1}});
}

/// x[t] = wte[id t] + wpe[t mod S]: the token embedding as a one-hot
/// product (exact: one term per row is not zero) plus the position's row.
Value StageBuilder::embed(Value ids) {
  Value tokenRows =
      matmul(oneHot(flattenIds(builder, loc, ids), config.vocab), params[0]);
  AffineMap identity = builder.getMultiDimIdentityMap(2);
  AffineMap position = map(2, {dim(0) % config.seq, dim(1)});
  return generic({tokenRows, params[1]}, {identity, position, identity},
                 empty(tokenRows.getType()),
                 {utils::IteratorType::parallel, utils::IteratorType::parallel},
                 [](OpBuilder &b, Location l, ValueRange a) -> Value {
                   return arith::AddFOp::create(b, l, a[0], a[1]);
                 });
}

/// y = (x - mean) * rstd * gain + bias per row, rstd = 1 / sqrt(var + eps).
Value StageBuilder::layerNorm(Value input, Value gain, Value bias) {
  Value width = constant(double(config.hidden));
  Value epsilon = constant(kLayerNormEpsilon);
  auto sum = [](OpBuilder &b, Location l, ValueRange a) -> Value {
    return arith::AddFOp::create(b, l, a[0], a[1]);
  };
  Value sums = rowReduce({input}, zero, sum);
  Value centered = withRows(
      input, sums, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value mean = arith::DivFOp::create(b, l, a[1], width);
        return arith::SubFOp::create(b, l, a[0], mean);
      });
  Value squares =
      rowReduce({centered}, zero, [](OpBuilder &b, Location l, ValueRange a) {
        Value square = arith::MulFOp::create(b, l, a[0], a[0]);
        return Value(arith::AddFOp::create(b, l, square, a[1]));
      });
  Value rstd = elementwise(
      {squares}, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value variance = arith::DivFOp::create(b, l, a[0], width);
        Value shifted = arith::AddFOp::create(b, l, variance, epsilon);
        return math::RsqrtOp::create(b, l, shifted);
      });
  Value normalized =
      withRows(centered, rstd, [](OpBuilder &b, Location l, ValueRange a) {
        return Value(arith::MulFOp::create(b, l, a[0], a[1]));
      });
  AffineMap identity = builder.getMultiDimIdentityMap(2);
  AffineMap columns = map(2, {dim(1)});
  return generic({normalized, gain, bias},
                 {identity, columns, columns, identity}, empty(input.getType()),
                 {utils::IteratorType::parallel, utils::IteratorType::parallel},
                 [](OpBuilder &b, Location l, ValueRange a) -> Value {
                   Value scaled = arith::MulFOp::create(b, l, a[0], a[1]);
                   return arith::AddFOp::create(b, l, scaled, a[2]);
                 });
}

/// GELU, tanh form: 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3),
/// with tanh(u) = 1 - 2 / (exp(2u) + 1) (exact at both infinities). u is
/// capped at 10, where tanh rounds to 1 in f32 already: the values do not
/// change, and exp(2u) stays finite, so that the derivative (0 past the
/// cap) does not become inf / inf in a large activation.
static Value tanhOf(OpBuilder &b, Location l, Value u) {
  Type type = u.getType();
  Value one = arith::ConstantOp::create(b, l, b.getFloatAttr(type, 1.0));
  Value two = arith::ConstantOp::create(b, l, b.getFloatAttr(type, 2.0));
  Value cap = arith::ConstantOp::create(b, l, b.getFloatAttr(type, 10.0));
  Value capped = arith::MinimumFOp::create(b, l, u, cap);
  Value e = math::ExpOp::create(b, l, arith::MulFOp::create(b, l, capped, two));
  Value ratio =
      arith::DivFOp::create(b, l, two, arith::AddFOp::create(b, l, e, one));
  return arith::SubFOp::create(b, l, one, ratio);
}

static Value geluArgument(OpBuilder &b, Location l, Value x) {
  Type type = x.getType();
  auto c = [&](double value) -> Value {
    return arith::ConstantOp::create(b, l, b.getFloatAttr(type, value));
  };
  Value cube =
      arith::MulFOp::create(b, l, arith::MulFOp::create(b, l, x, x), x);
  Value inner = arith::AddFOp::create(
      b, l, x, arith::MulFOp::create(b, l, cube, c(0.044715)));
  return arith::MulFOp::create(b, l, inner, c(std::sqrt(2.0 / M_PI)));
}

Value StageBuilder::gelu(Value input) {
  return elementwise(
      {input}, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        Type type = a[0].getType();
        Value half = arith::ConstantOp::create(b, l, b.getFloatAttr(type, 0.5));
        Value one = arith::ConstantOp::create(b, l, b.getFloatAttr(type, 1.0));
        Value t = tanhOf(b, l, geluArgument(b, l, a[0]));
        Value scale = arith::MulFOp::create(
            b, l, half, arith::AddFOp::create(b, l, one, t));
        return arith::MulFOp::create(b, l, a[0], scale);
      });
}

/// Multi-head causal self-attention over the B sequences of the
/// micro-batch, all (sequence, head) pairs at once: softmax(q k^T / sqrt(d)
/// + mask) v.
Value StageBuilder::attention(Value qkv) {
  int64_t hidden = config.hidden, pairs = config.batch * config.heads;
  int64_t seq = config.seq, headDim = hidden / config.heads;
  Value q = splitHeads(qkv, 0);
  Value k = splitHeads(qkv, hidden);
  Value v = splitHeads(qkv, 2 * hidden);
  using utils::IteratorType;
  IteratorType par = IteratorType::parallel, red = IteratorType::reduction;
  // Dims (p, i, j, e): scores(p, i, j) = sum_e q(p, i, e) k(p, j, e).
  Value scores = contract(
      q, k, map(4, {dim(0), dim(1), dim(3)}), map(4, {dim(0), dim(2), dim(3)}),
      map(4, {dim(0), dim(1), dim(2)}),
      RankedTensorType::get({pairs, seq, seq}, f32), {par, par, par, red});
  // Scale by 1/sqrt(d) and mask future positions.
  Value scale = attentionScale, masked = negativeInfinity;
  Value maskedScores = elementwise(
      {scores}, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value i = linalg::IndexOp::create(nb, l, 1);
        Value j = linalg::IndexOp::create(nb, l, 2);
        Value future =
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ult, i, j);
        Value scaled = arith::MulFOp::create(nb, l, a[0], scale);
        return arith::SelectOp::create(nb, l, future, masked, scaled);
      });
  Value probs = softmax(maskedScores);
  // Dims (p, i, e, j): out(p, i, e) = sum_j probs(p, i, j) v(p, j, e).
  Value heads = contract(
      probs, v, map(4, {dim(0), dim(1), dim(3)}),
      map(4, {dim(0), dim(3), dim(2)}), map(4, {dim(0), dim(1), dim(2)}),
      RankedTensorType::get({pairs, seq, headDim}, f32), {par, par, par, red});
  return mergeHeads(heads);
}

Value StageBuilder::layerForward(Value input) {
  Value a = layerNorm(input, param(Ln1Gain), param(Ln1Bias));
  Value qkv = prunable(PruneMode::col, a, param(Wqkv), "block.qkv");
  Value projected =
      prunable(PruneMode::row, attention(qkv), param(Wo), "block.attn_out");
  Value h = add(input, projected);
  Value c = layerNorm(h, param(Ln2Gain), param(Ln2Bias));
  Value up = prunable(PruneMode::col, c, param(W1), "block.mlp_up");
  Value down = prunable(PruneMode::row, gelu(up), param(W2), "block.mlp_down");
  return add(h, down);
}

func::FuncOp StageBuilder::buildBlockForward() {
  SmallVector<Type> inputs = {builder.getIndexType(), activation()};
  for (const Parameter &param : blockParameters(config, /*layer=*/0))
    inputs.push_back(RankedTensorType::get(param.shape, f32));
  func::FuncOp function = beginFunction(blockForwardName(), inputs);
  Block &entry = function.getBody().front();
  blockIndex = entry.getArgument(0);
  params.assign(entry.getArguments().begin() + 2, entry.getArguments().end());
  Value output = layerForward(entry.getArgument(1));
  blockIndex = Value();
  func::ReturnOp::create(builder, loc, output);
  function.setType(builder.getFunctionType(inputs, {output.getType()}));
  return function;
}

Value StageBuilder::logits(Value input) {
  size_t count = params.size();
  return matmul(layerNorm(input, params[count - 3], params[count - 2]),
                params[count - 1]);
}

/// The mean over the tokens of log sum exp(logits) - logits[target].
Value StageBuilder::loss(Value logitsValue) {
  Value targets = flattenIds(builder, loc, target);
  Value maxima = rowReduce({logitsValue}, negativeInfinity,
                           [](OpBuilder &b, Location l, ValueRange a) -> Value {
                             return arith::MaximumFOp::create(b, l, a[0], a[1]);
                           });
  Value sums = rowReduceWith(
      logitsValue, maxima, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value shifted = arith::SubFOp::create(b, l, a[0], a[1]);
        return arith::AddFOp::create(b, l, math::ExpOp::create(b, l, shifted),
                                     a[2]);
      });
  // The target's logit of every row.
  Value picked = rowReduceWith(
      logitsValue, targets,
      [](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value column = arith::IndexCastOp::create(
            b, l, b.getI32Type(), linalg::IndexOp::create(b, l, 1));
        Value hit =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, a[1], column);
        Value sum = arith::AddFOp::create(b, l, a[2], a[0]);
        return arith::SelectOp::create(b, l, hit, sum, a[2]);
      });
  Value rowLosses = elementwise(
      {maxima, sums, picked}, [](OpBuilder &b, Location l, ValueRange a) {
        Value logSum =
            arith::AddFOp::create(b, l, a[0], math::LogOp::create(b, l, a[1]));
        return Value(arith::SubFOp::create(b, l, logSum, a[2]));
      });
  auto scalar = RankedTensorType::get({}, f32);
  Value total =
      linalg::ReduceOp::create(
          builder, loc, ValueRange{rowLosses}, ValueRange{filled(scalar, zero)},
          ArrayRef<int64_t>{0},
          [](OpBuilder &b, Location l, ValueRange a) {
            linalg::YieldOp::create(
                b, l, ValueRange{arith::AddFOp::create(b, l, a[0], a[1])});
          })
          .getResult(0);
  Value sum = tensor::ExtractOp::create(builder, loc, total, ValueRange{});
  Value mean =
      arith::DivFOp::create(builder, loc, sum, constant(double(tokens)));
  return tensor::FromElementsOp::create(builder, loc, scalar, ValueRange{mean});
}

Value StageBuilder::blocks(Value input) {
  Value value = isFirst() ? embed(input) : input;
  auto block = module.lookupSymbol<func::FuncOp>(blockForwardName());
  for (int64_t l = 0; l < numLayers; ++l) {
    SmallVector<Value> arguments = {
        arith::ConstantIndexOp::create(builder, loc, firstLayer + l), value};
    llvm::append_range(arguments, layerParams(firstLayer + l));
    value = func::CallOp::create(builder, loc, block, arguments).getResult(0);
  }
  return value;
}

func::FuncOp StageBuilder::buildForward() {
  Type result =
      isLast() ? Type(RankedTensorType::get({}, f32)) : Type(activation());
  func::FuncOp function = begin(
      ("gpt_stage" + std::to_string(stage) + "_forward" + suffix), {result});
  Value value = blocks(x);
  if (isLast())
    value = loss(logits(value));
  func::ReturnOp::create(builder, loc, value);
  return function;
}

func::FuncOp StageBuilder::buildLogits() {
  func::FuncOp function =
      begin(("gpt_stage" + std::to_string(stage) + "_logits"),
            {matrix(tokens, config.vocab)}, /*withTarget=*/false);
  func::ReturnOp::create(builder, loc, logits(blocks(x)));
  return function;
}

/// Deterministic initial values, GPT-2's scheme: normal with standard
/// deviation 0.02 (0.02 / sqrt(2 layers) for the projections into the
/// residual stream, wo and w2), layer-norm gains 1 and biases 0. The normal
/// draws come from a Mersenne twister seeded with the parameter's number
/// through the Box-Muller transform, so they are the same everywhere.
DenseElementsAttr initialValue(RankedTensorType type, const std::string &name,
                               int64_t layers, int64_t seed) {
  auto endsWith = [&](StringRef suffix) {
    return StringRef(name).ends_with(suffix);
  };
  std::vector<float> values(size_t(type.getNumElements()));
  if (endsWith("_g") || endsWith("_b")) {
    std::fill(values.begin(), values.end(), endsWith("_g") ? 1.0f : 0.0f);
    return DenseElementsAttr::get(type, ArrayRef<float>(values));
  }
  double deviation = 0.02;
  if (endsWith("_wo") || endsWith("_w2"))
    deviation /= std::sqrt(2.0 * double(layers));
  std::mt19937_64 random(uint64_t(seed) * 0x9E3779B97F4A7C15ULL + 1);
  auto uniform = [&] { return (double(random() >> 11) + 0.5) * 0x1.0p-53; };
  for (size_t i = 0; i < values.size(); i += 2) {
    double radius = std::sqrt(-2.0 * std::log(uniform()));
    double angle = 2.0 * M_PI * uniform();
    values[i] = float(deviation * radius * std::cos(angle));
    if (i + 1 < values.size())
      values[i + 1] = float(deviation * radius * std::sin(angle));
  }
  return DenseElementsAttr::get(type, ArrayRef<float>(values));
}

/// @gpt_data(step, replica, micro-batch) -> (tokens, next tokens): windows
/// of the runtime's corpus, each replica reading its own shard.
func::FuncOp buildData(ModuleOp module, const GptConfig &config) {
  OpBuilder builder(module.getContext());
  builder.setInsertionPointToEnd(module.getBody());
  Location loc = module.getLoc();
  Type i64 = builder.getI64Type();
  auto type =
      RankedTensorType::get({config.batch, config.seq}, builder.getI32Type());
  auto function = func::FuncOp::create(
      builder, loc, "gpt_data",
      builder.getFunctionType({i64, i64, i64}, {type, type}));
  Block *entry = function.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  auto batch = CorpusBatchOp::create(
      builder, loc, type, type, entry->getArgument(0), entry->getArgument(1),
      entry->getArgument(2), builder.getI64IntegerAttr(config.vocab),
      builder.getI64IntegerAttr(config.dataParallel));
  func::ReturnOp::create(builder, loc, batch.getResults());
  return function;
}

/// @gpt_generate() -> f32: extends every text stream of the runtime by one
/// character: the stages' forward functions on the streams' context, the
/// next-token logits, hetero.sample_next. Returns the chosen characters'
/// mean log-probability.
func::FuncOp buildGenerate(ModuleOp module, const GptConfig &config,
                           ArrayRef<SmallVector<Attribute>> stageParams) {
  OpBuilder builder(module.getContext());
  builder.setInsertionPointToEnd(module.getBody());
  Location loc = module.getLoc();
  auto function =
      func::FuncOp::create(builder, loc, "gpt_generate",
                           builder.getFunctionType({}, {builder.getF32Type()}));
  builder.setInsertionPointToStart(function.addEntryBlock());
  auto tokens =
      RankedTensorType::get({config.batch, config.seq}, builder.getI32Type());
  Value value = SampleContextOp::create(
      builder, loc, tokens, builder.getI64IntegerAttr(config.vocab));
  for (int64_t s = 0; s < config.stages; ++s) {
    SmallVector<Value> arguments = {value};
    for (Attribute name : stageParams[s]) {
      auto global = module.lookupSymbol<memref::GlobalOp>(
          cast<FlatSymbolRefAttr>(name).getValue());
      MemRefType type = global.getType();
      Value memref =
          memref::GetGlobalOp::create(builder, loc, type, global.getSymName());
      arguments.push_back(bufferization::ToTensorOp::create(
          builder, loc,
          RankedTensorType::get(type.getShape(), type.getElementType()), memref,
          /*restrict=*/builder.getUnitAttr(),
          /*writable=*/UnitAttr()));
    }
    std::string name = "gpt_stage" + std::to_string(s) +
                       (s + 1 == config.stages ? "_logits" : "_forward");
    auto callee = module.lookupSymbol<func::FuncOp>(name);
    value = func::CallOp::create(builder, loc, callee, arguments).getResult(0);
  }
  Value logProbability = SampleNextOp::create(builder, loc, value);
  func::ReturnOp::create(builder, loc, logProbability);
  return function;
}

} // namespace

std::vector<std::string> validate(const GptConfig &config) {
  std::vector<std::string> problems;
  auto require = [&](bool ok, const std::string &message) {
    if (!ok)
      problems.push_back(message);
  };
  require(config.vocab >= 2 && config.vocab <= kMaxVocabulary,
          "--vocab must be between 2 and " + std::to_string(kMaxVocabulary) +
              " (character-level token ids)");
  require(config.layers >= 1, "--layers must be at least 1");
  require(config.hidden >= 1, "--hidden must be at least 1");
  require(config.heads >= 1, "--heads must be at least 1");
  require(config.seq >= 1, "--seq must be at least 1");
  require(config.batch >= 1, "--batch must be at least 1");
  require(config.microbatches >= 1, "--microbatches must be at least 1");
  require(config.dataParallel >= 1, "--dp must be at least 1");
  require(config.tp >= 1, "--tp must be at least 1");
  require(config.stages >= 1, "--stages must be at least 1");
  require(config.pipelineRanks >= 0 && config.pipelineRanks <= config.stages,
          "--pipeline-ranks must be 1..--stages (" +
              std::to_string(config.stages) + ")");
  require(config.placement == "loop" || config.placement == "v",
          "--placement must be loop or v; got '" + config.placement + "'");
  require(
      config.placement != "v" ||
          2 * (config.pipelineRanks ? config.pipelineRanks : config.stages) ==
              config.stages,
      "--placement v needs --stages twice --pipeline-ranks");
  require(symbolizeImputation(config.imputation).has_value(),
          "--impute must be zero, average or same; got '" + config.imputation +
              "'");
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
  require(config.hidden % config.tp == 0, "--hidden (" +
                                              std::to_string(config.hidden) +
                                              ") must be divisible by --tp (" +
                                              std::to_string(config.tp) + ")");
  std::vector<int64_t> seen;
  for (int64_t size : config.microbatchSizes) {
    require(size > config.batch && size % config.batch == 0,
            "--microbatch-sizes: " + std::to_string(size) +
                " must be a multiple of --batch (" +
                std::to_string(config.batch) + ") larger than it");
    require(llvm::find(seen, size) == seen.end(),
            "--microbatch-sizes: " + std::to_string(size) + " is listed twice");
    seen.push_back(size);
  }
  return problems;
}

std::vector<Parameter> blockParameters(const GptConfig &config, int64_t layer) {
  int64_t hidden = config.hidden;
  std::string prefix = "l" + std::to_string(layer) + "_";
  return {{prefix + "ln1_g", {hidden}},
          {prefix + "ln1_b", {hidden}},
          {prefix + "wqkv", {hidden, 3 * hidden}},
          {prefix + "wo", {hidden, hidden}},
          {prefix + "ln2_g", {hidden}},
          {prefix + "ln2_b", {hidden}},
          {prefix + "w1", {hidden, 4 * hidden}},
          {prefix + "w2", {4 * hidden, hidden}}};
}

std::vector<Parameter> stageParameters(const GptConfig &config, int64_t stage) {
  StagePartition partition = partitionLayers(config.layers, config.stages);
  int64_t hidden = config.hidden;
  std::vector<Parameter> params;
  if (stage == 0) {
    params.push_back({"wte", {config.vocab, hidden}});
    params.push_back({"wpe", {config.seq, hidden}});
  }
  int64_t first = partition.first[stage];
  for (int64_t l = first; l < first + partition.count[stage]; ++l)
    llvm::append_range(params, blockParameters(config, l));
  if (stage == config.stages - 1) {
    params.push_back({"lnf_g", {hidden}});
    params.push_back({"lnf_b", {hidden}});
    params.push_back({"head", {hidden, config.vocab}});
  }
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
  context
      ->loadDialect<arith::ArithDialect, bufferization::BufferizationDialect,
                    func::FuncDialect, linalg::LinalgDialect, math::MathDialect,
                    memref::MemRefDialect, shard::ShardDialect,
                    tensor::TensorDialect, HeteroDialect>();
  OpBuilder builder(context);
  Location loc = UnknownLoc::get(context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());
  // Axes: pipeline stage, data-parallel replica and, with --tp, the
  // tensor-parallel shard.
  int64_t ranks = config.pipelineRanks ? config.pipelineRanks : config.stages;
  SmallVector<int64_t> gridShape = {ranks, config.dataParallel};
  if (config.tp > 1)
    gridShape.push_back(config.tp);
  shard::GridOp::create(builder, loc, "gpt_devices", gridShape);

  std::vector<SmallVector<Attribute>> stageParams(config.stages);
  int64_t seed = 0;
  for (int64_t s = 0; s < config.stages; ++s)
    for (const Parameter &param : stageParameters(config, s)) {
      auto type = RankedTensorType::get(param.shape, builder.getF32Type());
      memref::GlobalOp::create(
          builder, loc, param.name, builder.getStringAttr("private"),
          MemRefType::get(type.getShape(), type.getElementType()),
          initialValue(type, param.name, config.layers, seed++),
          /*constant=*/false, /*alignment=*/IntegerAttr());
      stageParams[s].push_back(FlatSymbolRefAttr::get(context, param.name));
    }

  buildData(*module, config);
  {
    StageBuilder blocks(*module, config, 0);
    blocks.buildBlockForward();
  }
  for (int64_t s = 0; s < config.stages; ++s) {
    StageBuilder stage(*module, config, s);
    stage.buildForward();
    if (s + 1 == config.stages)
      stage.buildLogits();
  }
  // The same model for larger micro-batches, as a frontend exports it once
  // per batch size.
  for (int64_t size : config.microbatchSizes) {
    GptConfig sized = config;
    sized.batch = size;
    std::string suffix = "_b" + std::to_string(size);
    StageBuilder blocks(*module, sized, 0, suffix);
    blocks.buildBlockForward();
    for (int64_t s = 0; s < config.stages; ++s)
      StageBuilder(*module, sized, s, suffix).buildForward();
  }
  buildGenerate(*module, config, stageParams);

  builder.setInsertionPointToEnd(module->getBody());
  Attribute optimizer =
      config.optimizer == "adam"
          ? Attribute(AdamAttr::get(
                context, builder.getF64FloatAttr(config.learningRate),
                FloatAttr(), FloatAttr(), FloatAttr()))
          : Attribute(SgdAttr::get(context,
                                   builder.getF64FloatAttr(config.learningRate),
                                   FloatAttr()));
  auto pipeline = PipelineOp::create(
      builder, loc, builder.getStringAttr("gpt"),
      builder.getI64IntegerAttr(config.stages),
      builder.getI64IntegerAttr(config.microbatches),
      FlatSymbolRefAttr::get(context, "gpt_devices"),
      FlatSymbolRefAttr::get(context, "gpt_data"), optimizer, SyncAttr(),
      CheckpointAttr(),
      ranks == config.stages ? Attribute()
                             : builder.getStringAttr(config.placement));
  builder.setInsertionPointToStart(&pipeline.getBody().emplaceBlock());
  for (int64_t s = 0; s < config.stages; ++s) {
    std::string prefix = "gpt_stage" + std::to_string(s);
    StageOp::create(builder, loc, builder.getI64IntegerAttr(s),
                    FlatSymbolRefAttr::get(context, prefix + "_forward"),
                    /*augmented=*/FlatSymbolRefAttr(),
                    /*backward=*/FlatSymbolRefAttr(),
                    /*backward_input=*/FlatSymbolRefAttr(),
                    /*backward_weight=*/FlatSymbolRefAttr(),
                    builder.getArrayAttr(stageParams[s]), StringAttr());
  }
  for (int64_t size : config.microbatchSizes)
    for (int64_t s = 0; s < config.stages; ++s) {
      std::string prefix = "gpt_stage" + std::to_string(s);
      std::string suffix = "_b" + std::to_string(size);
      StageVariantOp::create(
          builder, loc, builder.getI64IntegerAttr(s),
          builder.getI64IntegerAttr(size),
          FlatSymbolRefAttr::get(context, prefix + "_forward" + suffix),
          /*augmented=*/FlatSymbolRefAttr(),
          /*backward=*/FlatSymbolRefAttr(),
          /*backward_input=*/FlatSymbolRefAttr(),
          /*backward_weight=*/FlatSymbolRefAttr());
    }
  return module;
}

} // namespace hetero::models
