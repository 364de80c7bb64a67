//===- HeteroBase.td - hetero dialect definition -----------*- tablegen -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The hetero dialect makes the distributed structure of a training step
// explicit: pipeline stages and schedules, prunable tensor-parallel matmuls,
// (compressed, fused, sparse) gradient collectives, checkpoints and
// data-parallel sync groups.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_DIALECT_HETEROBASE_TD
#define HETERO_DIALECT_HETEROBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Hetero_Dialect : Dialect {
  let name = "hetero";
  let cppNamespace = "::hetero";
  let summary = "Distributed DNN training on heterogeneous, preempted clusters";
  let description = [{
    The `hetero` dialect describes one training step of a distributed DNN:

    * pipeline parallelism: `hetero.pipeline` with its `hetero.stage`s, the
      per-stage task programs of a `hetero.schedule`, and the candidate
      schedules of a `hetero.plan_set`;
    * tensor parallelism that tolerates stragglers: `hetero.prunable_matmul`
      and the ops it expands into (`hetero.prune_plan`, `hetero.select_cols`,
      `hetero.impute_cols`);
    * gradient communication: collectives that may carry a
      `#hetero.compress<...>` compressor or a sparse format, and
      `hetero.bucket` for fused gradients;
    * fault tolerance: `hetero.checkpoint` and `hetero.ckpt_chunk`;
    * semi-decentralised data parallelism: `hetero.group_sync`.

    Device grids come from the upstream `shard` dialect; the math stays in
    `linalg`, `tensor` and `arith`.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  // What hetero-lower-pipeline states on the functions it emits and
  // hetero-lower-to-runtime, the summary and hetero-run read back: the grid
  // a step runs on (its collectives' groups are created on entry), the
  // pipeline a function belongs to and the schedule a step runs, a plan-set
  // step's table of candidates and stage count, the stage a stage program
  // runs, its peak number of stashed micro-batches and their bytes; and the measured
  // non-zero fraction of a gradient that hetero-select-compression reads;
  // and the dimension of a parameter global that hetero-partition-tp stores
  // split over the tensor-parallel ranks (grid axis 2), which hetero-run
  // gathers for --save and slices for --load.
  let discardableAttrs = (ins
    "::mlir::FlatSymbolRefAttr":$grid,
    "::mlir::FlatSymbolRefAttr":$pipeline,
    "::mlir::FlatSymbolRefAttr":$schedule,
    "::mlir::ArrayAttr":$plan_table,
    "::mlir::IntegerAttr":$stage,
    "::mlir::IntegerAttr":$stages,
    "::mlir::IntegerAttr":$peak_stash,
    "::mlir::IntegerAttr":$peak_stash_bytes,
    "::mlir::FloatAttr":$density,
    "::mlir::IntegerAttr":$shard_dim
  );
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::shard::ShardDialect",
                           "::mlir::tensor::TensorDialect"];
}

class Hetero_Op<string mnemonic, list<Trait> traits = []>
    : Op<Hetero_Dialect, mnemonic, traits>;

class Hetero_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Hetero_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

#endif // HETERO_DIALECT_HETEROBASE_TD
