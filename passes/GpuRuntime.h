//===- GpuRuntime.h - libhetero_rt_cuda declarations for passes -*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The GPU passes call libhetero_rt_cuda's entry points (hetero-rt/gpu.h)
// through private func.func declarations, one per module.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_PASSES_GPURUNTIME_H
#define HETERO_PASSES_GPURUNTIME_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace hetero {

/// The declaration of `name` with `type` in `module`, created at the top of
/// the module when missing. A symbol of that name with another type is an
/// error, reported as `pass`'s; null then.
inline mlir::func::FuncOp declareGpuRuntime(mlir::ModuleOp module,
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

} // namespace hetero

#endif // HETERO_PASSES_GPURUNTIME_H
