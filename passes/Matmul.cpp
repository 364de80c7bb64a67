//===- Matmul.cpp - a matmul of any-rank lhs as linalg --------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "Matmul.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

bool hetero::hasStaticLeadingDimensions(RankedTensorType lhs) {
  return lhs.getRank() <= 2 ||
         llvm::none_of(lhs.getShape().drop_back(), ShapedType::isDynamic);
}

FailureOr<Value> hetero::buildMatmul(OpBuilder &builder, Location loc,
                                     Value lhs, Value rhs,
                                     RankedTensorType resultType) {
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  int64_t rank = lhsType.getRank();
  SmallVector<ReassociationIndices> reassociation;
  if (!hasStaticLeadingDimensions(lhsType))
    return failure();
  if (rank > 2) {
    ReassociationIndices rows;
    for (int64_t dim = 0; dim + 1 < rank; ++dim)
      rows.push_back(dim);
    reassociation = {rows, {rank - 1}};
    lhs = tensor::CollapseShapeOp::create(builder, loc, lhs, reassociation);
  }
  Type elementType = resultType.getElementType();
  SmallVector<OpFoldResult> sizes = {
      tensor::getMixedSize(builder, loc, lhs, 0),
      tensor::getMixedSize(builder, loc, rhs, 1)};
  Value init = tensor::EmptyOp::create(builder, loc, sizes, elementType);
  Value zero =
      arith::ConstantOp::create(builder, loc, builder.getZeroAttr(elementType));
  Value filled = linalg::FillOp::create(builder, loc, zero, init).getResult(0);
  Value product = linalg::MatmulOp::create(builder, loc, ValueRange{lhs, rhs},
                                           ValueRange{filled})
                      .getResult(0);
  if (rank > 2)
    return tensor::ExpandShapeOp::create(builder, loc, resultType, product,
                                         reassociation)
        .getResult();
  if (product.getType() != resultType)
    product = tensor::CastOp::create(builder, loc, resultType, product);
  return product;
}

RankedTensorType hetero::withDynamicAxis(RankedTensorType type, int64_t axis) {
  SmallVector<int64_t> shape(type.getShape());
  shape[axis] = ShapedType::kDynamic;
  return type.clone(shape);
}

Value hetero::buildPrunedProduct(OpBuilder &b, Location l,
                                 MatmulProduct product, Value lhs, Value rhs,
                                 Value kept, RankedTensorType type,
                                 Imputation imputation, Value previous,
                                 bool rhsSelected) {
  auto select = [&](Value source, int64_t axis) -> Value {
    auto sourceType = cast<RankedTensorType>(source.getType());
    return SelectColsOp::create(b, l, withDynamicAxis(sourceType, axis), source,
                                kept, b.getI64IntegerAttr(axis));
  };
  auto impute = [&](Value part, int64_t axis) -> Value {
    return ImputeColsOp::create(
        b, l, type, ImputationAttr::get(b.getContext(), imputation), part, kept,
        b.getI64IntegerAttr(axis), previous);
  };
  int64_t last = type.getRank() - 1;
  switch (product) {
  case MatmulProduct::forward: {
    // Y = X[:, P] W[P, :]: the contraction shrinks, Y keeps its shape.
    Value input = select(lhs, last);
    Value weight = rhsSelected ? rhs : select(rhs, prunedRhsAxis(product));
    return *buildMatmul(b, l, input, weight, type);
  }
  case MatmulProduct::grad_input: {
    // dX[:, P] = G W^T[:, P]; the other columns are imputed.
    Value weight = rhsSelected ? rhs : select(rhs, prunedRhsAxis(product));
    return impute(*buildMatmul(b, l, lhs, weight, withDynamicAxis(type, last)),
                  last);
  }
  case MatmulProduct::grad_weight:
    // dW[P, :] = X^T[P, :] G; the other rows are imputed.
    return impute(
        *buildMatmul(b, l, select(lhs, 0), rhs, withDynamicAxis(type, 0)), 0);
  }
  llvm_unreachable("unknown product");
}

int64_t hetero::prunedRhsAxis(MatmulProduct product) {
  switch (product) {
  case MatmulProduct::forward:
    return 0;
  case MatmulProduct::grad_input:
    return 1;
  case MatmulProduct::grad_weight:
    return -1;
  }
  llvm_unreachable("unknown product");
}
