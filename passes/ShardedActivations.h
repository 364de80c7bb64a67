//===- ShardedActivations.h - activations kept as tensor-parallel shards --===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Megatron's fusion of a column-parallel product with the row-parallel one
// that reads its output, for hetero-partition-tp. The partition restores
// every product's global value; where a gathered value reaches only ops
// that work on the rank's window of it, the window is what they get, and
// the all-gather goes.
//
// A value is kept sharded along dimension d when each of its uses is one
// of:
//   - a `tensor.extract_slice` of the rank's window along d (the shard
//     index times the window's width): the split operand of a product;
//   - an input of a pointwise linalg op (parallel loops, no index, the
//     result's map the identity, the inputs' projected permutations: the
//     same element, a broadcast or a transpose; `linalg.transpose` is
//     one) whose result is kept sharded along the dimension that d is read
//     along;
//   - a segment of a tape: a flat tensor that a private function builds
//     from `tensor.empty` and static `tensor.insert_slice`s and returns,
//     and that its callers pass only to private functions that read it
//     through `tensor.extract_slice`s of those segments (the GPT's block
//     functions pass a block's residuals this way). The segment then holds
//     the window, and the tape shrinks: every value the readers unpack
//     from it must be kept sharded too.
// The pointwise ops' other inputs, when not kept sharded, are sliced to
// the window, or taken whole where they are broadcast along it. The analysis is
// a greatest fixed point: a value leaves the set when one of its uses needs the
// global value, and takes with it the values whose uses needed it sharded.
//
// In the GPT's MLP, gelu(X W_1) W_2: the col forward's output and its gelu
// stay sharded up to the row forward, and in the backward the row
// grad_input's output, gelu's derivative and the tape's residuals stay
// sharded up to the col products. Two all-gathers of [tokens, 4 hidden]
// per block and micro-batch go, and gelu runs on 1/T of the values.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_PASSES_SHARDEDACTIVATIONS_H
#define HETERO_PASSES_SHARDEDACTIVATIONS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace hetero {

/// A value the partition restored by an all-gather over the tensor-parallel
/// axis: this rank's window of `global` along `dim` is `local`.
struct GatheredValue {
  mlir::Value global, local;
  int64_t dim;
};

/// The rank's window of `value` (static shape) along `dim`, of 1/`shards`
/// of its size there, at `shard` times that width.
mlir::Value shardWindow(mlir::OpBuilder &builder, mlir::Location loc,
                        mlir::Value value, int64_t dim, mlir::Value shard,
                        int64_t shards);

/// Keeps the `gathered` values sharded wherever their uses allow (above),
/// and erases the all-gathers no one reads any more. `shardIndex(op)` is
/// the rank's index on the tensor-parallel axis of `grid`, read in the
/// function of `op`. Returns how many all-gathers went.
int64_t keepActivationsSharded(
    mlir::ModuleOp module, llvm::ArrayRef<GatheredValue> gathered,
    int64_t shards, mlir::FlatSymbolRefAttr grid,
    llvm::function_ref<mlir::Value(mlir::Operation *)> shardIndex);

} // namespace hetero

#endif // HETERO_PASSES_SHARDEDACTIVATIONS_H
