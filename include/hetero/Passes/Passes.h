//===- Passes.h - hetero passes ---------------------------------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_PASSES_PASSES_H
#define HETERO_PASSES_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
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

} // namespace hetero

#endif // HETERO_PASSES_PASSES_H
