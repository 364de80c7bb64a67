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

#include "hetero/Schedule/Kfkb.h"
#include "hetero/Support/WireSize.h"

#include "llvm/ADT/STLExtras.h"

#include "hetero/Dialect/HeteroDialect.h.inc"
#include "hetero/Dialect/HeteroEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "hetero/Dialect/HeteroAttrs.h.inc"

namespace hetero {
class StageOp;

/// The hetero dialect of `context`, loaded if it is not yet: the accessors
/// of its discardable attributes (`hetero.grid`, ...) hang off it.
inline HeteroDialect &getHeteroDialect(mlir::MLIRContext *context) {
  return *context->getOrLoadDialect<HeteroDialect>();
}

/// Bounds on a pipeline's shape. Schedules, their verification and the
/// lowered step grow with stages x micro-batches; values past these bounds
/// are mistakes (a stray digit), not pipelines, and are rejected before any
/// pass spends time on them.
inline constexpr int64_t kMaxPipelineStages = 4096;
inline constexpr int64_t kMaxMicrobatches = 65536;
/// Character-level vocabularies hold at most one token id per byte value.
inline constexpr int64_t kMaxVocabulary = 256;

/// Names the results of `op` after the op ("%all_reduce", "%bucket:2"): the
/// readable SSA names of the printed IR.
void nameResultsAfterOp(mlir::Operation *op,
                        mlir::OpAsmSetValueNameFn setNameFn);

namespace detail {
template <typename OpTy>
using ReductionAccessor = decltype(std::declval<OpTy &>().getReduction());
template <typename OpTy>
using CompressAccessor = decltype(std::declval<OpTy &>().getCompressAttr());

/// The reduction of a collective that has one (the collective interface's
/// default).
template <typename OpTy> std::optional<Reduction> reductionOf(OpTy op) {
  if constexpr (llvm::is_detected<ReductionAccessor, OpTy>::value)
    return op.getReduction();
  else
    return std::nullopt;
}

/// The compressor of a collective that can carry one.
template <typename OpTy> CompressAttr compressionOf(OpTy op) {
  if constexpr (llvm::is_detected<CompressAccessor, OpTy>::value)
    return op.getCompressAttr();
  else
    return {};
}

/// Sets or (null) removes the compressor of a collective that can carry one.
template <typename OpTy> void setCompressionOf(OpTy op, CompressAttr compress) {
  if constexpr (llvm::is_detected<CompressAccessor, OpTy>::value) {
    if (compress)
      op.setCompressAttr(compress);
    else
      op.removeCompressAttr();
  } else {
    assert(!compress && "the op cannot carry a compressor");
  }
}
} // namespace detail
} // namespace hetero

#include "hetero/Dialect/HeteroInterfaces.h.inc"

#define GET_OP_CLASSES
#include "hetero/Dialect/HeteroOps.h.inc"

#endif // HETERO_DIALECT_HETERO_H
