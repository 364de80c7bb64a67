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

/// Bounds on a pipeline's shape. Schedules, their verification and the
/// lowered step grow with stages x micro-batches; values past these bounds
/// are mistakes (a stray digit), not pipelines, and are rejected before any
/// pass spends time on them.
inline constexpr int64_t kMaxPipelineStages = 4096;
inline constexpr int64_t kMaxMicrobatches = 65536;
/// Character-level vocabularies hold at most one token id per byte value.
inline constexpr int64_t kMaxVocabulary = 256;

/// The number of ranks of a grid of `shape` along `axes` (all axes when
/// `axes` is empty), or std::nullopt when a dimension it spans is dynamic.
/// The axes must be valid (the collectives' verifiers check them).
std::optional<int64_t> gridGroupSize(llvm::ArrayRef<int64_t> shape,
                                     llvm::ArrayRef<int16_t> axes);

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

#define GET_OP_CLASSES
#include "hetero/Dialect/HeteroOps.h.inc"

#endif // HETERO_DIALECT_HETERO_H
