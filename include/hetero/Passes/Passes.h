//===- Passes.h - hetero passes ---------------------------------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_PASSES_PASSES_H
#define HETERO_PASSES_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <string>

namespace hetero {

#define GEN_PASS_DECL
#include "hetero/Passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "hetero/Passes/Passes.h.inc"

/// The CPU pipeline: prunable matmuls computed in full, canonicalization,
/// collectives lowered to libhetero_rt calls, one-shot bufferization with
/// ownership-based deallocation, and the lowering of linalg, memref, math,
/// arith, control flow and func to the LLVM dialect. The upstream passes are
/// named by their registered names: register them first (registerAllPasses).
mlir::LogicalResult buildLowerToCpuPipeline(mlir::OpPassManager &pm);

/// Registers `hetero-lower-to-cpu` as a pass pipeline.
void registerPipelines();

} // namespace hetero

#endif // HETERO_PASSES_PASSES_H
