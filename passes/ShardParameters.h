//===- ShardParameters.h - parameters held as tensor-parallel shards -*- C++
//-*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Megatron's sharded parameters, for hetero-partition-tp: a parameter that
// only the rank's shard of tensor-parallel products reads is stored as that
// shard, and so are its gradient sums and optimizer state.
//
// A parameter (memref.global) and every value it flows to form a
// component: through memref.get_global, bufferization.to_tensor /
// to_buffer / materialize_in_destination, memref.copy, func.call and
// func.return, linalg.transpose, elementwise linalg ops (the optimizer's
// updates, the gradient sums), splat constants and tensor.empty inits,
// and all-reduces over other grid axes. The component is sharded when it
// ends only in the products' split operands: the weight of a `forward` or
// `grad_input` product and the result of a `grad_weight` one, all split
// along the same dimension of the weight. Anything else that reads or
// writes it (another op, a product that needs the whole weight, a
// conflicting split) keeps it replicated, as before.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_PASSES_SHARDPARAMETERS_H
#define HETERO_PASSES_SHARDPARAMETERS_H

#include "hetero/Dialect/Hetero.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"

namespace hetero {

/// The parameters a partition stores sharded, and every value of their
/// components with the dimension of it that the shards split.
struct ParameterSharding {
  /// Per value: the split dimension and the value's global (unsharded) type.
  llvm::MapVector<mlir::Value, std::pair<int64_t, mlir::Type>> values;
  /// Per global: the split dimension.
  llvm::MapVector<mlir::Operation *, int64_t> globals;

  /// The dimension of `value` the shards split, or -1.
  int64_t dimOf(mlir::Value value) const {
    auto found = values.find(value);
    return found == values.end() ? -1 : found->second.first;
  }
};

/// The dimension of the weight (col: its columns, 1; row: its rows, 0) that
/// `product` splits, in the layout of the operand that holds it: the rhs of
/// `forward` (W) and `grad_input` (W^T) and the result of `grad_weight`.
int64_t shardedWeightDim(PrunableMatmulOp product);

/// The components of `module` that `products` (all with `tp = shards`)
/// allow to shard.
ParameterSharding
analyzeParameterSharding(mlir::ModuleOp module,
                         llvm::ArrayRef<PrunableMatmulOp> products,
                         int64_t shards);

/// Gives every value of the sharded components its shard's type, and every
/// sharded global its shard's type and the `hetero.shard_dim` attribute. A
/// global whose initial value is not a splat keeps it in a constant
/// `@<name>_unsharded`, from which `@__hetero_shard_init` copies the rank's
/// slice (the shard index is grid axis 2 of `grid`) once; every public
/// function calls it on entry.
mlir::LogicalResult applyParameterSharding(mlir::ModuleOp module,
                                           const ParameterSharding &sharding,
                                           int64_t shards,
                                           mlir::FlatSymbolRefAttr grid);

} // namespace hetero

#endif // HETERO_PASSES_SHARDPARAMETERS_H
