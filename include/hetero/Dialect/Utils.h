//===- Utils.h - helpers over hetero ops and types --------------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// What several passes, verifiers and the summary compute from the dialect's
// ops and types: group sizes, bytes of tensors on the wire and the names of
// an enum's cases.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_DIALECT_UTILS_H
#define HETERO_DIALECT_UTILS_H

#include "hetero/Dialect/Hetero.h"

#include <optional>
#include <string>

namespace hetero {

/// The number of ranks of a grid of `shape` along `axes` (all axes when
/// `axes` is empty), or std::nullopt when a dimension it spans is dynamic;
/// INT64_MAX when the product does not fit. The axes must be valid (the
/// collectives' verifiers check them).
std::optional<int64_t> gridGroupSize(llvm::ArrayRef<int64_t> shape,
                                     llvm::ArrayRef<int16_t> axes);

/// Bytes of a statically shaped ranked tensor of `type` (sub-byte elements
/// round up to whole bytes); 0 for other types.
int64_t tensorBytes(mlir::Type type);

/// Whether the step can keep a value of `type` from one task for another
/// (a residual, a value a split backward's input part saves): a tensor of
/// static shape with integer or floating-point elements, whose bytes are
/// known.
bool isStashable(mlir::Type type);

/// Bytes a tensor of `type` occupies on the wire under `compress` (null or
/// `none`: its bytes).
int64_t wireBytes(mlir::Type type, CompressAttr compress);

/// The share of its bytes a large tensor of `elementType` elements keeps on the
/// wire under `compress`, taken on 2^20 elements so that fixed headers (a norm,
/// a scale) do not count; 1 without a compressor. What the cost models of
/// fusion and compression scale transfer times by.
double wireFraction(CompressAttr compress, mlir::Type elementType);

/// `tensor` (a ranked tensor) with its dimensions permuted: dimension i of
/// the result is dimension `permutation[i]` of `tensor`. A linalg.transpose
/// into a fresh tensor, or `tensor` itself for the identity.
mlir::Value transposeTensor(mlir::OpBuilder &builder, mlir::Location loc,
                            mlir::Value tensor,
                            llvm::ArrayRef<int64_t> permutation);

/// Whether a stage's backward function returns the gradient of its input of
/// `type` (a tensor): floating-point activations have one, integer inputs
/// such as token ids do not.
bool hasInputGradient(mlir::Type type);

/// The names of the cases of an ODS enum whose values run from 0 to `max`,
/// without those in `skip`, joined by ", " and by `lastSeparator` before the
/// last: the "expected one of ..." of a diagnostic, from the enum itself.
template <typename Enum>
std::string enumCaseNames(llvm::StringRef (*stringify)(Enum), unsigned max,
                          llvm::ArrayRef<Enum> skip = {},
                          llvm::StringRef lastSeparator = ", ") {
  llvm::SmallVector<llvm::StringRef> names;
  for (unsigned value = 0; value <= max; ++value)
    if (!llvm::is_contained(skip, Enum(value)))
      names.push_back(stringify(Enum(value)));
  std::string joined;
  for (auto [index, name] : llvm::enumerate(names)) {
    if (index > 0)
      joined += index + 1 == names.size() ? lastSeparator.str() : ", ";
    joined += name.str();
  }
  return joined;
}

} // namespace hetero

#endif // HETERO_DIALECT_UTILS_H
