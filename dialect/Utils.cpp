//===- Utils.cpp - helpers over hetero ops and types ----------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Dialect/Utils.h"
#include "hetero/Dialect/LinalgBuilders.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"

#include <limits>

using namespace mlir;
using namespace hetero;

std::optional<int64_t> hetero::gridGroupSize(ArrayRef<int64_t> shape,
                                             ArrayRef<int16_t> axes) {
  SmallVector<int16_t> spanned(axes);
  if (spanned.empty())
    for (size_t axis = 0; axis < shape.size(); ++axis)
      spanned.push_back(static_cast<int16_t>(axis));
  int64_t size = 1;
  for (int16_t axis : spanned) {
    if (ShapedType::isDynamic(shape[axis]))
      return std::nullopt;
    // A product that does not fit saturates rather than wraps.
    if (__builtin_mul_overflow(size, shape[axis], &size))
      return std::numeric_limits<int64_t>::max();
  }
  return size;
}

/// Bytes of one element of `type`, sub-byte types rounded up.
static int64_t elementBytes(Type type) {
  return (type.getIntOrFloatBitWidth() + 7) / 8;
}

int64_t hetero::tensorBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return 0;
  int64_t bytes = 0;
  // A size that does not fit saturates rather than wraps.
  if (__builtin_mul_overflow(tensor.getNumElements(),
                             elementBytes(tensor.getElementType()), &bytes))
    return std::numeric_limits<int64_t>::max();
  return bytes;
}

bool hetero::isStashable(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() &&
         tensor.getElementType().isIntOrFloat();
}

int64_t hetero::wireBytes(Type type, CompressAttr compress) {
  int64_t bytes = tensorBytes(type);
  if (!compress || bytes == 0)
    return bytes;
  auto tensor = cast<RankedTensorType>(type);
  return wire::compressedBytes(tensor.getNumElements(),
                               elementBytes(tensor.getElementType()),
                               compress.getWireCompression());
}

double hetero::wireFraction(CompressAttr compress, Type elementType) {
  if (!compress)
    return 1.0;
  constexpr int64_t kElements = 1 << 20;
  int64_t bytes = elementBytes(elementType);
  return double(wire::compressedBytes(kElements, bytes,
                                      compress.getWireCompression())) /
         double(kElements * bytes);
}

Value hetero::transposeTensor(OpBuilder &builder, Location loc, Value tensor,
                              ArrayRef<int64_t> permutation) {
  if (isIdentityPermutation(permutation))
    return tensor;
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<int64_t> shape;
  for (int64_t dim : permutation)
    shape.push_back(type.getDimSize(dim));
  Value init =
      tensor::EmptyOp::create(builder, loc, shape, type.getElementType());
  return linalg::TransposeOp::create(builder, loc, tensor, init, permutation)
      .getResult()[0];
}

bool hetero::hasInputGradient(Type type) {
  return isa<FloatType>(cast<ShapedType>(type).getElementType());
}

Value hetero::buildGeneric(OpBuilder &builder, Location loc, ValueRange inputs,
                           ArrayRef<AffineMap> maps, Value init,
                           ArrayRef<utils::IteratorType> iterators,
                           GenericBody body) {
  return linalg::GenericOp::create(
             builder, loc, TypeRange{init.getType()}, inputs, ValueRange{init},
             maps, iterators,
             [&](OpBuilder &nested, Location nestedLoc, ValueRange arguments) {
               linalg::YieldOp::create(nested, nestedLoc,
                                       body(nested, nestedLoc, arguments));
             })
      .getResult(0);
}
