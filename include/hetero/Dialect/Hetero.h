//===- Hetero.h - hetero dialect, attributes and operations -----*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_DIALECT_HETERO_H
#define HETERO_DIALECT_HETERO_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "hetero/Support/WireSize.h"

#include "hetero/Dialect/HeteroDialect.h.inc"
#include "hetero/Dialect/HeteroEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "hetero/Dialect/HeteroAttrs.h.inc"

namespace hetero {
class StageOp;
} // namespace hetero

#define GET_OP_CLASSES
#include "hetero/Dialect/HeteroOps.h.inc"

#endif // HETERO_DIALECT_HETERO_H
