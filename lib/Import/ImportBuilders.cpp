//===- ImportBuilders.cpp - the IR patterns imported operators share -----===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

#include <limits>

using namespace mlir;

namespace hetero::onnx_import {

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

} // namespace hetero::onnx_import
