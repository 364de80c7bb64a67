//===- RuntimeCalls.h - runtime functions called by passes ------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Passes that call the runtime's C entry points (hetero-rt/*.h) declare them
// as private func.func ops, one per module, and pass buffers to them as
// addresses with their layouts.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_PASSES_RUNTIMECALLS_H
#define HETERO_PASSES_RUNTIMECALLS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

namespace hetero {

/// The declaration of `name` with `type` in `module`, created at the top of
/// the module when missing. A symbol of that name with another type is an
/// error, reported as `pass`'s; null then.
inline mlir::func::FuncOp declareRuntimeFunction(mlir::ModuleOp module,
                                                 llvm::StringRef name,
                                                 mlir::FunctionType type,
                                                 llvm::StringRef pass) {
  if (auto existing = module.lookupSymbol<mlir::func::FuncOp>(name)) {
    if (existing.getFunctionType() == type)
      return existing;
    existing.emitError() << pass << ": @" << name << " is declared as "
                         << existing.getFunctionType() << ", expected " << type;
    return {};
  }
  if (mlir::Operation *other = module.lookupSymbol(name)) {
    other->emitError() << pass << ": @" << name
                       << " names something else; expected the runtime "
                          "function "
                       << type;
    return {};
  }
  auto builder = mlir::OpBuilder::atBlockBegin(module.getBody());
  auto function =
      mlir::func::FuncOp::create(builder, module.getLoc(), name, type);
  function.setPrivate();
  return function;
}

/// A memref's offset, sizes and strides: constants where the type knows
/// them, index values read from the memref otherwise.
struct StridedLayout {
  mlir::OpFoldResult offset;
  llvm::SmallVector<mlir::OpFoldResult> sizes, strides;
};

/// The layout of `memref`; the dynamic entries come from one
/// memref.extract_strided_metadata, made only when one is dynamic.
inline StridedLayout stridedLayoutOf(mlir::OpBuilder &b, mlir::Location loc,
                                     mlir::Value memref) {
  auto type = llvm::cast<mlir::MemRefType>(memref.getType());
  llvm::SmallVector<int64_t> strides;
  int64_t offset;
  (void)type.getStridesAndOffset(strides, offset);
  mlir::memref::ExtractStridedMetadataOp metadata;
  auto entry = [&](int64_t known, auto dynamic) -> mlir::OpFoldResult {
    if (!mlir::ShapedType::isDynamic(known))
      return b.getIndexAttr(known);
    if (!metadata)
      metadata = mlir::memref::ExtractStridedMetadataOp::create(b, loc, memref);
    return mlir::Value(dynamic());
  };
  StridedLayout layout;
  layout.offset = entry(offset, [&] { return metadata.getOffset(); });
  for (int64_t dim = 0; dim < type.getRank(); ++dim) {
    layout.sizes.push_back(
        entry(type.getDimSize(dim), [&] { return metadata.getSizes()[dim]; }));
    layout.strides.push_back(
        entry(strides[dim], [&] { return metadata.getStrides()[dim]; }));
  }
  return layout;
}

} // namespace hetero

#endif // HETERO_PASSES_RUNTIMECALLS_H
