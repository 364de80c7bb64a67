//===- Passes.td - hetero pass definitions -----------------*- tablegen -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_PASSES_PASSES_TD
#define HETERO_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

def HeteroSummary : Pass<"hetero-summary", "::mlir::ModuleOp"> {
  let summary = "Print what the training step distributes and communicates";
  let description = [{
    Walks the module and prints, per pipeline, the stages with their
    functions, the parameter and activation sizes each stage holds, the
    prunable tensor-parallel matmuls, the collectives grouped by kind with
    the bytes they move before and after compression, and the checkpoints
    with their replica placement. The IR is left unchanged.

    ```
    hetero-opt --hetero-summary model.mlir -o /dev/null
    ```
  }];
  let options = [
    Option<"outputFile", "output", "std::string", /*default=*/"\"-\"",
           "Where to write the summary ('-' for stdout)">
  ];
}

def HeteroPartitionTensorParallel
    : Pass<"hetero-partition-tp", "::mlir::ModuleOp"> {
  let summary = "Each tensor-parallel rank computes its shard of every "
                "prunable matmul";
  let description = [{
    Rewrites every `hetero.prunable_matmul` with `tp = T > 1` (written in
    the global view) into the product of this rank's shard (`tp = 1`) and
    the collective over the tensor-parallel axis (axis 2 of the module's
    `shard.grid` with T ranks on it) that restores the global value. The
    rank's shard index `t` comes from `shard.process_multi_index`; a
    `W: K x N` split the Megatron way (`col`: by N, `row`: by K) gives:

    | product       | col (N split)               | row (K split)              |
    |---------------|-----------------------------|----------------------------|
    | `forward`     | `X W[:, t]`, all-gathered   | `X[:, t] W[t, :]`, summed  |
    | `grad_input`  | `G[:, t] W^T[t, :]`, summed | `G W^T[:, t]`, all-gathered|
    | `grad_weight` | `X^T G[:, t]`, all-gathered | `X^T[t, :] G`, all-gathered|

    Each rank runs 1/T of every GEMM, and the values leave at their global
    shape (except those kept sharded, below), so the rest of the program
    (and `hetero-resize`, which then prunes the columns of the rank's own
    shard) is unchanged.

    Parameters are sharded as Megatron shards them: a parameter global
    that only these products read (through calls, transposes, the
    gradient sums and the optimizer's elementwise updates) holds the
    rank's slice, and so do its gradient sums and optimizer state. Its
    products read the slice without slicing, and its `grad_weight` stays
    the rank's slice, with no all-gather. The global carries
    `hetero.shard_dim`; a non-splat initial value stays in a constant
    `@<name>_unsharded`, whose slice `@__hetero_shard_init` (called on
    entry of every public function, once) copies in. Any other reader keeps
    a parameter replicated. `shard-parameters=false` keeps all replicated,
    and so does `migration=true`: a receiver of migrated columns reads the
    straggler's slice of the weight.

    With `migration=true` a straggling rank can hand contraction columns of
    its shard to the other ranks of its group (SEMI-migration's
    lightweight migration; docs/resizing.md). Every product then also asks
    the runtime, for each shard `s`, which of `s`'s columns this rank
    computes (`hetero.migration_plan`), computes them from the replicated
    operands with `s`'s weight slice (bracketed by `hetero.gemm_mark
    begin_migrated|end_migrated`), and returns them with the product's
    collective:

    - a summed product adds them into the rank's own partial before the
      all-reduce: no collective is added;
    - a gathered product, when some rank of the group migrates columns of
      the layer, sums zero-padded global values instead of gathering
      slices: an all-reduce in place of the all-gather.

    Megatron keeps the output of a column-parallel layer sharded up to the
    row-parallel layer that reads it, and so does this pass
    (`sharded-activations=true`, the default): a gathered value whose every
    use takes the rank's window of it (the split operand of a product,
    pointwise ops and transposes whose results are kept so too, and the
    segments of a tape that a private function returns for its readers)
    stays the window, and its all-gather goes. In the GPT's MLP,
    `gelu(X W_1) W_2`, the col forward's output, its gelu and the block's
    tape hold the windows, and so do the row `grad_input`'s output and
    gelu's derivative in the backward: two all-gathers a block and
    micro-batch go. A value another op reads whole (attention's heads)
    stays gathered. With `migration=true` a receiver reads other shards'
    windows, so the gathered products keep their values whole.

    The straggler leaves its migrated columns out of its own product through
    `hetero.prune_plan`, so `hetero-resize` must run after this pass, and
    the layer's imputation must be `zero`: a migrated column of a gradient
    is the sum of what the receivers computed.

    ```
    hetero-opt --hetero-lower-pipeline --hetero-partition-tp \
               --hetero-resize model.mlir
    ```
  }];
  let options = [
    Option<"migration", "migration", "bool", /*default=*/"false",
           "Let straggling ranks migrate contraction columns to the other "
           "ranks of their tensor-parallel group">,
    Option<"shardParameters", "shard-parameters", "bool", /*default=*/"true",
           "Store the parameters only tensor-parallel products read (and "
           "their gradients and optimizer state) as the rank's shard">,
    Option<"shardedActivations", "sharded-activations", "bool",
           /*default=*/"true",
           "Keep a gathered value sharded where every use takes the rank's "
           "window of it (Megatron's col-row fusion): no all-gather between "
           "a col product and the row product that reads its output">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::shard::ShardDialect",
                           "::mlir::tensor::TensorDialect"];
}

def HeteroResize : Pass<"hetero-resize", "::mlir::ModuleOp"> {
  let summary = "ZERO-resizing: prunable matmuls compute only a rank's kept "
                "columns";
  let description = [{
    Expands every `hetero.prunable_matmul` (of a rank's own shard: tp = 1)
    into the code a straggling rank runs. The function reads the layer's
    kept columns for this iteration once at its entry (`hetero.prune_plan`);
    when every column is kept it computes the product exactly as
    `hetero-prunable-to-linalg` would (alpha = 0 costs one comparison);
    otherwise it gathers the kept columns of the contraction
    (`hetero.select_cols`) and computes:

    * `forward`: `Y = X[:, P] W[P, :]`, of full size;
    * `grad_input`: `dX[:, P] = G W^T[:, P]`, the other columns imputed;
    * `grad_weight`: `dW[P, :] = X^T[P, :] G`, the other rows imputed
      (`hetero.impute_cols`, the op's `impute` policy).

    The runtime's plan fixes the columns of a layer for an iteration, so the
    backward products prune what the forward pruned (the lineage). Values
    leave the expansion at their unpruned shape: `hetero.select_cols`
    verifies that nothing pruned reaches anything but a matmul that
    contracts it away or the `hetero.impute_cols` that restores it. All
    products of a layer must agree on its contraction width.

    With `priority=true`, each function also shows each layer's forward
    weight to the runtime once per iteration (`hetero.observe_weight`,
    before the layer's first forward product), whose per-row change over an
    epoch ranks the columns for ZERO-Pri and ZERO-PriDiff
    (`hetero-run --prune order=priority`).

    ```
    hetero-opt --hetero-resize --hetero-prunable-to-linalg model.mlir
    ```
  }];
  let options = [
    Option<"priority", "priority", "bool", /*default=*/"false",
           "Show each layer's forward weight to the runtime's priority "
           "statistics (ZERO-Pri)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def HeteroColumnsToLinalg : Pass<"hetero-columns-to-linalg"> {
  let summary = "Compute hetero.select_cols and hetero.impute_cols as linalg";
  let description = [{
    The gathers and scatters of a resized layer (`hetero-resize`) as
    `linalg.generic`s on tensors: `hetero.select_cols` reads, for each of
    its positions along the axis, the source slice its index names;
    `hetero.impute_cols` writes every position of the unpruned result from
    an inverse map of the indices (built by an `scf.for`): the computed
    slice where there is one, and 0 or the mean of the computed slices at
    the same position along the other axes elsewhere.

    ```
    hetero-opt --hetero-resize --hetero-prunable-to-linalg \
               --hetero-columns-to-linalg model.mlir
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def HeteroPrunableToLinalg : Pass<"hetero-prunable-to-linalg"> {
  let summary = "Compute prunable matmuls in full as linalg.matmul";
  let description = [{
    Rewrites every `hetero.prunable_matmul` into a `linalg.matmul` of the
    whole (unsharded, unpruned) operands: the lowering for a single process
    and for reference runs, where no column is pruned. Leading dimensions of
    the lhs are collapsed into the rows of the matmul and expanded again.

    ```
    hetero-opt --hetero-prunable-to-linalg model.mlir
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def HeteroKfkbSchedule : Pass<"hetero-kfkb-schedule", "::mlir::ModuleOp"> {
  let summary = "Build the schedule of every pipeline in one of the families";
  let description = [{
    Adds, for every `hetero.pipeline @p`, a `hetero.schedule` of `family`
    (hetero/Schedule/Families.h) over groups of `group-size` micro-batches:
    the family orders the groups as it orders single micro-batches, and a
    group's task runs its micro-batches in ascending order.

    * `1f1b` (`@p_<k>f<k>b`): one stage per rank; a warm-up of
      min(S-1-s, G) forward groups, then one forward and one backward group
      alternately, then the remaining backward groups (k = 1 is 1F1B, k >= M
      is GPipe): Ada-Grouper's kFkB.
    * `interleaved` (`@p_interleaved`): the loop placement; the groups go
      round a rank's stages R at a time (interleaved 1F1B).
    * `looped-bfs`: every forward of a rank's stages, then every backward.
    * `zb1p`: interleaved with split backwards (I and W tasks), rank r's
      weight gradients r slots late, filling the bubbles.
    * `zbv`: the V placement with split backwards (ZB-V).
    * `dualpipev`: the V placement; forwards of one stage paired with
      backwards of the other, split backwards in the cool-down (DualPipeV).

    The zero-bubble and V families need split backward stages: run
    `hetero-derive-backward{split=true}` first. Other families than `1f1b`
    are named `@p_<family>` (`@p_<family>_k<k>` for k > 1). A value needed
    from a stage on another rank is received right before the task that
    needs it and sent right after the task that produces it; neighbouring
    stages on one rank hand their values over without a transfer.

    ```
    hetero-opt --hetero-kfkb-schedule=group-size=2 --hetero-print-schedule
    hetero-opt --hetero-kfkb-schedule=group-sizes=1,2,4   # a plan set for hetero-run --adaptive
    hetero-opt --hetero-derive-backward=split=true --hetero-kfkb-schedule="family=zbv group-size=2"
    ```
  }];
  let options = [
    Option<"family", "family", "std::string", /*default=*/"\"1f1b\"",
           "The schedule family: 1f1b, interleaved, looped-bfs, zb1p, zbv "
           "or dualpipev">,
    Option<"groupSize", "group-size", "int64_t", /*default=*/"1",
           "Micro-batches per group (k)">,
    ListOption<"groupSizes", "group-sizes", "int64_t",
               "Candidate group sizes: one schedule each, kept in a "
               "hetero.plan_set @<p>_plans whose default is the first "
               "(replaces group-size)">
  ];
  // Creates hetero ops or attributes: the dialect must be loaded even when
  // the input does not use it.
  let dependentDialects = ["::hetero::HeteroDialect"];
}

def HeteroPlanCandidates : Pass<"hetero-plan-candidates", "::mlir::ModuleOp"> {
  let summary = "Keep Ada-Grouper's candidate schedules under a memory cap";
  let description = [{
    For every `hetero.pipeline @p`, generates the Pareto candidates over the
    group size k and the micro-batch size b: for each k from 1, the largest b
    dividing the step's batch for which every stage s fits `memory-cap`
    bytes, min(k (S - s), M) x b x its stashed bytes per sample + its fixed
    bytes; it stops at the first k with none (or once k reaches M: GPipe).
    Given `activation-bytes`, every stage stashes that much per sample and
    holds nothing else; without it (0) the IR says: a stage stashes its
    forward function's input (and the last stage the target, and a stage
    with an `augmented` forward its residuals) per micro-batch and holds its parameters, their gradient sums and the
    optimizer's state. Without `batch` (0) the step's batch is M micro-batches
    of the data function's leading dimension, and b a multiple of it (the
    stage functions' size). Each candidate
    becomes a kFkB `hetero.schedule @p_k<k>_b<b>` that states its
    `microbatch_size` and `microbatches`, and all of them a
    `hetero.plan_set @p_plans` whose default is the first (1F1B).

    ```
    hetero-opt --hetero-plan-candidates="batch=32 activation-bytes=4096 memory-cap=65536"
    ```
  }];
  let options = [
    Option<"memoryCap", "memory-cap", "int64_t", /*default=*/"0",
           "Bytes a stage may hold (required)">,
    Option<"batch", "batch", "int64_t", /*default=*/"0",
           "Samples per step (0: from the IR)">,
    Option<"activationBytes", "activation-bytes", "int64_t", /*default=*/"0",
           "Activation bytes one sample keeps in flight (0: from the IR, "
           "with parameters and optimizer state)">
  ];
  // Creates hetero ops or attributes: the dialect must be loaded even when
  // the input does not use it.
  let dependentDialects = ["::hetero::HeteroDialect"];
}

def HeteroFuseGradients : Pass<"hetero-fuse-gradients", "::mlir::ModuleOp"> {
  let summary = "Regroup gradient all-reduces into Cupcake's optimal buckets";
  let description = [{
    In every block, the dense `hetero.all_reduce` and `hetero.bucket` ops
    that share a process group, reduction, compression and element type are
    one fusion set: their gradients, in the order the block produces them
    (gradient-ready order), are cut into the consecutive groups that end the
    last transfer soonest under Cupcake's timeline model
    (hetero/Fusion/Fusion.h), solved exactly. Each group becomes one
    `hetero.bucket` (a group of one, a `hetero.all_reduce`) placed before the
    first use of any of its results.

    Costs come from `profile=` (the JSON of `hetero-sim fusion`, whose
    tensors must be the set's gradients in order; then the module must have
    one fusion set) or from the built-in model: backprop
    `backward-ms-per-mb` per MB of gradient, compression
    max(min, alpha + beta x) when the set is compressed, and transfers
    alpha-beta on the compressed size.

    A set of one gradient (a step's loss, say) stays as it is; a profile
    describes the other sets.

    `strategy=` picks the grouping instead: `optimal` (the default, above),
    `per-tensor` (one all-reduce per gradient), `one` (one bucket of all),
    `size` (PyTorch DDP's and Horovod's buckets: gradients join the open
    bucket, in ready order, until it holds `bucket-mb` MB, 25 by default),
    or `joint`: the grouping and each group's compress-or-not decided
    together (Fusion.h `jointPlan`), a group sent uncompressed losing its
    `compress`. `joint` needs the cost of an uncompressed transfer: the
    profile's `"dense_comm"`, or in the built-in model the transfer of all
    the bytes; a set without compression gets the optimal grouping. The
    baselines that Cupcake's buckets are measured against run through the
    same rewrite.

    ```
    hetero-opt --hetero-fuse-gradients=profile=resnet.json
    hetero-opt --hetero-fuse-gradients="strategy=size bucket-mb=25"
    ```
  }];
  let options = [
    Option<"profile", "profile", "std::string", /*default=*/"",
           "Fusion profile (JSON); empty: the built-in cost model">,
    Option<"strategy", "strategy", "std::string", /*default=*/"\"optimal\"",
           "The grouping: optimal (Cupcake's), per-tensor, one, size "
           "(buckets of bucket-mb), or joint (grouping and compress-or-not "
           "together)">,
    Option<"bucketMb", "bucket-mb", "double", /*default=*/"25.0",
           "strategy=size: the bytes (in MB, 2^20 bytes) that close a "
           "bucket">,
    Option<"backwardMsPerMb", "backward-ms-per-mb", "double",
           /*default=*/"1.0", "Built-in model: backprop time per MB">,
    Option<"compressAlphaMs", "compress-alpha-ms", "double",
           /*default=*/"0.05", "Built-in model: compression latency">,
    Option<"compressBetaMsPerMb", "compress-beta-ms-per-mb", "double",
           /*default=*/"0.2", "Built-in model: compression time per MB">,
    Option<"compressMinMs", "compress-min-ms", "double", /*default=*/"0.0",
           "Built-in model: the least a compression takes, whatever its "
           "size (compression costs max(min, alpha + beta x))">,
    Option<"commAlphaMs", "comm-alpha-ms", "double", /*default=*/"0.5",
           "Built-in model: transfer latency">,
    Option<"commBetaMsPerMb", "comm-beta-ms-per-mb", "double",
           /*default=*/"1.0", "Built-in model: transfer time per MB on the wire">
  ];
  // Creates hetero ops or attributes: the dialect must be loaded even when
  // the input does not use it.
  let dependentDialects = ["::hetero::HeteroDialect"];
}

def HeteroSelectCompression
    : Pass<"hetero-select-compression", "::mlir::ModuleOp"> {
  let summary = "Decide per gradient how to compress it (Espresso) or "
                "whether to send it sparsely (Zen)";
  let description = [{
    The f32 `hetero.all_reduce` and `hetero.bucket` ops of each block, in
    block order (gradient-ready order), are the tensors of an Espresso
    problem (hetero/Compression/Espresso.h). Each gets the decision of
    Alg 4.1 and 4.2: dense (its compression is removed), or `compressor`
    with `placement = gpu | cpu` and `scheme = allgather | alltoall`.

    An all-reduce with a non-zero fraction (its `hetero.density` attribute,
    a per-tensor measurement written into the IR, else `density`) is sent the
    cheapest way of Zen's cost model (hetero/Sparse/SparseCost.h: latency
    and bytes of the dense ring, AGsparse, Zen with a COO or hash-bitmap
    pull): `sparse = allgather | coo | hash_bitmap`, uncompressed, or left
    to Espresso when dense is cheapest. With `online-sparse`, those become
    `sparse = online`: the runtime measures the non-zeros at every call and
    chooses among the same schemes.

    Costs come from `profile=` (hetero/Profile/EspressoProfile.h; its
    tensors are the block's collectives in order, and the module must hold
    one block of them) or from the built-in model (the options below). The
    group size is that of the collective's device-grid group, else `ranks`.

    `strategy=` sets the baselines Espresso is measured against through the
    same rewrite: `dense` leaves every candidate uncompressed, `compressed`
    gives every one the single option the runtime executes that ends the
    timeline soonest when all tensors take it; `espresso` (the default)
    decides per tensor.

    ```
    hetero-opt --hetero-select-compression="compressor=topk ratio=0.01"
    hetero-opt --hetero-select-compression="strategy=compressed"
    ```
  }];
  let options = [
    Option<"profile", "profile", "std::string", /*default=*/"",
           "Espresso profile (JSON); empty: the built-in cost model">,
    Option<"strategy", "strategy", "std::string", /*default=*/"\"espresso\"",
           "espresso (per-tensor decisions), dense, or compressed (one "
           "option for all)">,
    Option<"compressor", "compressor", "std::string", /*default=*/"\"topk\"",
           "Compressor to apply where compression pays">,
    Option<"ratio", "ratio", "double", /*default=*/"0.01",
           "Kept fraction of the sparsifiers">,
    Option<"ranks", "ranks", "int64_t", /*default=*/"2",
           "Ranks of a collective on the whole world">,
    Option<"density", "density", "double", /*default=*/"0.0",
           "Non-zero fraction of the gradients without a hetero.density "
           "attribute (0: never sparse)">,
    Option<"onlineSparse", "online-sparse", "bool", /*default=*/"false",
           "Sparse all-reduces choose their scheme at run time from the "
           "measured non-zeros (sparse = online)">,
    Option<"backwardMsPerMb", "backward-ms-per-mb", "double",
           /*default=*/"1.0", "Built-in model: backprop time per MB">,
    Option<"linkAlphaMs", "link-alpha-ms", "double", /*default=*/"0.5",
           "Built-in model: latency of one collective step">,
    Option<"linkBetaMsPerMb", "link-beta-ms-per-mb", "double",
           /*default=*/"1.0", "Built-in model: link time per MB">,
    Option<"nodeSize", "node-size", "int64_t", /*default=*/"1",
           "Built-in model: ranks per node (1: no hierarchical options)">,
    Option<"intraBetaMsPerMb", "intra-beta-ms-per-mb", "double",
           /*default=*/"0.1", "Built-in model: intra-node link time per MB">
  ];
  // Creates hetero ops or attributes: the dialect must be loaded even when
  // the input does not use it.
  let dependentDialects = ["::hetero::HeteroDialect"];
}

def HeteroPrintSchedule : Pass<"hetero-print-schedule", "::mlir::ModuleOp"> {
  let summary = "Print the compute order of every schedule";
  let description = [{
    Prints one line per stage of every `hetero.schedule`, in stage order:
    `stage <s>: <task> <task> ...` with tasks `F<i>` and `B<i>`. Transfers
    are not printed. The IR is unchanged.
  }];
  let options = [
    Option<"outputFile", "output", "std::string", /*default=*/"\"-\"",
           "Where to print ('-' for stdout)">
  ];
}

def HeteroVerifySchedule : Pass<"hetero-verify-schedule",
                                "::mlir::ModuleOp"> {
  let summary = "Prove every schedule complete, ordered and deadlock-free";
  let description = [{
    Checks each `hetero.schedule` against its pipeline: every forward and
    backward of every micro-batch exactly once per stage, forward before
    backward, activations and gradients received before they are used and
    sent after they are produced, every directed link receiving in the
    order it sends, no deadlock (by simulating the programs with blocking
    receives), and, with `memory-cap=N`, at most N activations in flight per
    stage. Each problem is an error on the task it concerns.
  }];
  let options = [
    Option<"memoryCap", "memory-cap", "int64_t", /*default=*/"0",
           "Most activations a stage may hold in flight (0: no cap)">
  ];
}

def HeteroExportSchedule : Pass<"hetero-export-schedule",
                                "::mlir::ModuleOp"> {
  let summary = "Write a schedule in torch.distributed.pipelining's CSV";
  let description = [{
    Writes the `hetero.schedule` named by `schedule` (or the only one) as the
    pipeline-order CSV of torch.distributed.pipelining: one row per rank
    (stage s on rank s), one cell per action such as `0F0`, `1B3`,
    `0SEND_F2` or `1RECV_B0`. The IR is unchanged.
  }];
  let options = [
    Option<"scheduleName", "schedule", "std::string", /*default=*/"\"\"",
           "The schedule to write (default: the only one)">,
    Option<"outputFile", "output", "std::string", /*default=*/"\"-\"",
           "Where to write ('-' for stdout)">
  ];
}

def HeteroImportSchedule : Pass<"hetero-import-schedule",
                                "::mlir::ModuleOp"> {
  let summary = "Read a torch.distributed.pipelining CSV schedule";
  let description = [{
    Reads a pipeline-order CSV (one row per rank, stage s on rank s; rows of
    compute actions only get their transfers added) and adds it as
    `hetero.schedule @<name>` for `pipeline`, after proving it sound with
    the same checks as hetero-verify-schedule.
  }];
  let options = [
    Option<"inputFile", "input", "std::string", /*default=*/"\"\"",
           "The CSV file">,
    Option<"pipelineName", "pipeline", "std::string", /*default=*/"\"\"",
           "The pipeline it schedules (default: the only one)">,
    Option<"scheduleName", "name", "std::string", /*default=*/"\"imported\"",
           "The name of the new schedule">,
    Option<"groupSize", "group-size", "int64_t", /*default=*/"1",
           "The group size to record on the schedule">
  ];
  // Creates hetero ops or attributes: the dialect must be loaded even when
  // the input does not use it.
  let dependentDialects = ["::hetero::HeteroDialect"];
}

def HeteroPartitionStages : Pass<"hetero-partition-stages",
                                  "::mlir::ModuleOp"> {
  let summary = "Cut a one-stage model into pipeline stages for its ranks";
  let description = [{
    For every `hetero.pipeline` of one stage whose forward is the whole
    model (no backward: `hetero-derive-backward` derives the stages'
    backwards afterwards), cuts the forward's body into `stages` stage
    functions `@<forward>_stage<s>` at boundaries between its ops (a call
    of a block is one op; constants, `tensor.empty` and fills of them are
    copied into every stage that uses them). A cut falls only where one
    floating-point tensor of static shape is live across it, the model's
    input is not used after it nor the target before it, and no parameter
    is used on both sides. The pipeline gets `stages` stages with the
    parameters their functions use, and the grid's axis 0 `stages` ranks
    (its replica and shard axes are kept).

    The cut minimises the slowest stage's predicted time, the larger of
    its compute (the sum of its ops' forward and backward seconds over the
    rank's relative speed) and the transfers over the cut before it
    (2 (alpha + beta bytes): the activation and its gradient, beside the
    compute), subject to each rank's memory cap (its parameters, their
    gradient sums, the optimizer's state, and min(k (S - s), M) stashed
    inputs); among the cuts that reach it, the one whose largest compute
    is least. An op costs 3 (flops / flops-per-second + bytes /
    bytes-per-second) by default; `profile=FILE` gives measured
    milliseconds per op or per callee and the link's alpha and beta
    (docs/partitioning.md). On a chain this is exact: dynamic programming
    over (stage, cut), equal to brute force over all cuts.

    `split-after=i,j,...` cuts by hand after the ops numbered i, j, ...
    (from 0, in the body's order, constants not counted). A cut that leaves
    a stage empty, falls where it cannot, or puts a stage over its cap is
    an error naming the stage. A remark on the pipeline gives each stage's
    ops, predicted time and memory.

    ```
    hetero-opt --hetero-partition-stages="stages=4 speeds=1,1,1,0.5" --hetero-derive-backward
    hetero-opt --hetero-partition-stages="stages=3 split-after=2,5 memory=1000000"
    ```
  }];
  let options = [
    Option<"stages", "stages", "int64_t", /*default=*/"0",
           "Pipeline stages to cut the model into (required)">,
    ListOption<"speeds", "speeds", "double",
               "Relative compute speed of each pipeline rank (default: all "
               "1)">,
    ListOption<"memory", "memory", "int64_t",
               "Bytes each rank may hold: one value for every rank or one "
               "per rank (default: no cap)">,
    ListOption<"splitAfter", "split-after", "int64_t",
               "Cut by hand after these ops (stages - 1 of them)">,
    Option<"profile", "profile", "std::string", /*default=*/"\"\"",
           "JSON with measured op and call times and the link model">,
    Option<"groupSize", "group-size", "int64_t", /*default=*/"1",
           "k of the kFkB schedule the memory caps hold for">,
    Option<"flopsPerSecond", "flops-per-second", "double",
           /*default=*/"2.0e10", "Built-in model: arithmetic rate">,
    Option<"bytesPerSecond", "bytes-per-second", "double",
           /*default=*/"1.0e10", "Built-in model: memory bandwidth">,
    Option<"linkAlphaMs", "link-alpha-ms", "double", /*default=*/"0.05",
           "Link start-up time per message, ms">,
    Option<"linkBetaMsPerMb", "link-beta-ms-per-mb", "double",
           /*default=*/"1.0", "Link time per MB (2^20 bytes), ms">
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::hetero::HeteroDialect"];
}

def HeteroRebatch : Pass<"hetero-rebatch", "::mlir::ModuleOp"> {
  let summary = "Give every stage variants for larger micro-batches";
  let description = [{
    For every executable `hetero.pipeline` and every size n in `sizes` (in
    samples, a multiple m > 1 of the pipeline's micro-batch, the first
    dimension of the data function's input), adds per stage
    `hetero.stage_variant s microbatch_size = n forward @<forward>_b<n>`:
    the stage's forward with the sample dimension of every tensor that
    holds samples m times larger. The dimension is followed from the
    input and the target through structured ops (by their indexing maps),
    prunable products, reshapes that keep the samples outermost, slices
    that keep them whole, element-wise ops and calls (a callee is re-typed
    once per size, `@<callee>_b<n>`); the empty tensors and fills the ops
    write into are re-created at the new size. A sum over the samples (the
    loss's) may only be scaled and added; the last stage divides its loss
    by m, so that it is the mean over the larger micro-batch. The variants
    have no backward: `hetero-derive-backward` derives them.

    A function it cannot re-type is an error naming the op and why: a
    constant or parameter shaped by the batch, a reshape or slice that
    mixes the sample dimension, a reduction over the samples other than a
    sum, a read of single samples or of the sample index.

    ```
    hetero-opt --hetero-rebatch=sizes=8,16 --hetero-derive-backward --hetero-plan-candidates=memory-cap=65536
    ```
  }];
  let options = [
    ListOption<"sizes", "sizes", "int64_t",
               "Micro-batch sizes in samples, multiples of the pipeline's "
               "(required)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::tensor::TensorDialect",
                           "::hetero::HeteroDialect"];
}

def HeteroDeriveBackward : Pass<"hetero-derive-backward", "::mlir::ModuleOp"> {
  let summary = "Derive the backward functions of stages that have none";
  let description = [{
    For every `hetero.stage` and `hetero.stage_variant` without a backward
    function, creates `@<forward>_backward` in the stage ABI
    (docs/execution.md): the forward's inputs, then the gradient of its
    output (none on the last stage, whose loss has gradient 1) -> the
    gradient of the input when it is floating-point, then one gradient per
    parameter in `params` order; and sets it as the stage's backward. A
    stage with a hand-written backward is left alone.

    The derivative is reverse-mode differentiation of the forward's tensor
    IR (docs/autodiff.md): the backward re-computes the forward from its
    inputs (activation checkpointing at stage granularity), then applies
    the chain rule op by op in reverse. It is ordinary linalg and tensor IR
    built with builders: products become products (hetero.prunable_matmul
    its grad_input and grad_weight products, linalg contractions
    contractions), so tensor parallelism, resizing and the CPU and GPU
    lowerings apply to it unchanged. A private function the forward calls
    is differentiated once into `@<callee>_backward` and called. An op that
    cannot be differentiated is an error naming the op, the function and
    why.

    `residuals=save` also creates `@<forward>_augmented(inputs...) ->
    (output, residuals...)`, the forward that keeps what the backward reads,
    and sets it as the stage's `augmented` forward; the backward then takes
    the residuals after the forward's inputs and does not re-compute the
    forward, and the step stashes them per micro-batch.

    `split=true` creates, instead of `@<forward>_backward`, the pair
    `@<forward>_backward_input(inputs..., [residuals...,] output gradient)
    -> (input gradient, saved...)` and `@<forward>_backward_weight(inputs...,
    saved...) -> (parameter gradients...)` (no output gradient on the last
    stage, no input gradient for an integer input), and sets them as the
    stage's `backward_input` and `backward_weight`. A call whose results
    feed both is split the same way into `@<callee>_backward_input` and
    `@<callee>_backward_weight`.

    ```
    hetero-opt --hetero-derive-backward --hetero-lower-pipeline model.mlir
    hetero-opt --hetero-derive-backward="split=true residuals=save" model.mlir
    ```
  }];
  let options = [
    Option<"split", "split", "bool", /*default=*/"false",
           "Derive a backward_input and a backward_weight function per "
           "stage instead of one backward">,
    Option<"residuals", "residuals", "std::string",
           /*default=*/"\"recompute\"",
           "recompute: the backward re-runs the forward from its inputs; "
           "save: the forward keeps what its backward needs">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect",
                           "::hetero::HeteroDialect"];
}

def HeteroLowerPipeline : Pass<"hetero-lower-pipeline", "::mlir::ModuleOp"> {
  let summary = "Lower a pipeline and its schedule into the per-rank training step";
  let description = [{
    For every executable `hetero.pipeline @p` (one that names its data
    function and optimizer, docs/execution.md) emits
    `func.func @p_step(%step: i64) -> f32`, which every rank of the
    pipeline's grid calls once per training step. The rank's grid
    coordinates give its stage (axis 0) and data-parallel replica (axis 1);
    it runs that stage's program of the chosen `hetero.schedule` in order
    (one `func.func @p_step_stage<s>` per stage):

    * `hetero.recv_task` / `hetero.send_task` become `hetero.recv` /
      `hetero.send` along grid axis 0, tagged with the micro-batch
      (activations) or the micro-batch plus M (gradients);
    * `hetero.fwd i` calls the data function (stage 0: the input; the last
      stage: the target) and `@p_stage<s>_forward_task`, which reads the
      parameters from their globals and calls the stage's forward
      function; its inputs stay live (stashed) until `hetero.bwd i` calls
      `@p_stage<s>_backward_task`, which calls the backward function and
      adds each parameter gradient in place into `@<param>_grad_sum`: a
      task is one call carrying only its activations;
    * after the last backward each gradient sum is reduced over the
      replicas by one `hetero.all_reduce` along grid axis 1, which
      `hetero-fuse-gradients` and `hetero-select-compression` may then
      transform;
    * `@p_stage<s>_update` applies the optimizer (`#hetero.sgd`,
      `#hetero.adam`) with the mean gradient in place on the parameter
      globals; its state lives in globals this pass creates
      (`@<param>_momentum`, `@<param>_adam_m`, `@<param>_adam_v`,
      `@p_optimizer_steps`);
    * the step returns the mean loss over replicas and micro-batches on
      every rank.

    A schedule of micro-batches j times the pipeline's (a candidate of
    `hetero-plan-candidates`) runs each on the stage variant
    (`hetero.stage_variant`) of the largest size dividing it, one task and
    one message per micro-batch with the data function's micro-batches
    joined along the samples, or as several tasks of the stage functions;
    a pipeline with a `hetero.plan_set` gets one step per plan and a
    `hetero.plan_table` on `@p_step` saying how many tasks each plan's
    micro-batch takes.

    Without `schedule`, the pipeline's only schedule is used, or 1F1B when
    it has none. With `reference`, it also emits `@p_step_reference`, the
    same step computed on one process over every replica's micro-batches:
    the ground truth for tests. The pipeline and its schedules stay in the
    module; `hetero-lower-to-runtime` removes them.

    ```
    hetero-opt --hetero-kfkb-schedule=group-size=2 --hetero-lower-pipeline model.mlir
    ```
  }];
  let options = [
    Option<"scheduleName", "schedule", "std::string", /*default=*/"\"\"",
           "The hetero.schedule to run (default: the pipeline's only one, "
           "else 1F1B)">,
    Option<"reference", "reference", "bool", /*default=*/"false",
           "Also emit @<pipeline>_step_reference, the step on one process">,
    Option<"lateGradientSync", "late-gradient-sync", "bool",
           /*default=*/"false",
           "Reduce the gradients after the stage's whole program (its last "
           "send included) instead of right after its last backward">,
    Option<"eagerGradientSync", "eager-gradient-sync", "bool",
           /*default=*/"false",
           "Emit each stage's last backward inline and reduce each "
           "parameter's gradient right where it is computed, so that its "
           "communication overlaps with the rest of the backward">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::shard::ShardDialect",
                           "::mlir::tensor::TensorDialect",
                           "::hetero::HeteroDialect"];
}

def HeteroInterleaveCheckpoints
    : Pass<"hetero-interleave-checkpoints", "::mlir::ModuleOp"> {
  let summary = "Place Gemini's checkpoint chunks into the step's idle "
                "network spans";
  let description = [{
    For every stage program of a lowered step (hetero-lower-pipeline with a
    `checkpoint <...>` clause) that opens a `hetero.checkpoint`, finds the
    stage's network idle spans in one iteration, runs Gemini's checkpoint
    partition (Algorithm 6.2, hetero/Checkpoint/Partition.h) over them, and
    inserts one `hetero.ckpt_chunk` per piece of each chunk (a chunk that
    crosses two tensors becomes two pieces), in send order:

    * a span's chunks are issued just before the compute task that runs
      when the span starts (after the sends of the task before it), so they
      travel while the stage computes;
    * everything is sent, and a `hetero.ckpt_commit` completes the
      checkpoint, before the first op that overwrites the checkpointed
      state (the optimizer update): the write-after-read order. The last
      span before it is unbounded; chunks that land there beyond its length
      delay the update.

    The timeline comes from the simulator (hetero/Sim/PipelineSim.h) on the
    step's schedule with the costs of `costs=` (a pipeline profile, as
    `hetero-sim <module> --profile` reads), or from a measured iteration,
    `profile=` (the timeline.json that `hetero-run --timeline DIR` writes).
    `interleaving=blocking` sends every chunk at the start of the step and
    `interleaving=naive` one chunk per span (no buffer cap): the baselines
    of the thesis's ablation.

    ```
    hetero-opt --hetero-lower-pipeline \
        --hetero-interleave-checkpoints="costs=mlp.json bandwidth-bytes-per-ms=1.25e6"
    ```
  }];
  let options = [
    Option<"costs", "costs", "std::string", /*default=*/"",
           "Pipeline profile (JSON) for the simulated timeline">,
    Option<"profile", "profile", "std::string", /*default=*/"",
           "Measured timeline (hetero-run --timeline's timeline.json)">,
    Option<"bandwidthBytesPerMs", "bandwidth-bytes-per-ms", "double",
           /*default=*/"1.25e6", "B: checkpoint bandwidth, bytes per ms">,
    Option<"alphaMs", "alpha-ms", "double", /*default=*/"0.05",
           "alpha: start-up time of one chunk, ms">,
    Option<"mu", "mu", "double", /*default=*/"0.9",
           "mu: the share of each idle span that is used">,
    Option<"bufferBytes", "buffer-bytes", "int64_t",
           /*default=*/"134217728", "R: the receiver's staging buffer">,
    Option<"parts", "parts", "int64_t", /*default=*/"4",
           "p: parts of the staging buffer (the largest chunk is R/p)">,
    Option<"interleaving", "interleaving", "std::string",
           /*default=*/"\"gemini\"",
           "gemini (Algorithm 6.2), naive (one chunk per span) or blocking "
           "(everything at the start of the step)">
  ];
  let dependentDialects = ["::hetero::HeteroDialect"];
}

def HeteroConvertToLLVM : Pass<"hetero-convert-to-llvm", "::mlir::ModuleOp"> {
  let summary = "Lower func, arith, math, index, cf, memref and ub to LLVM in "
                "one conversion";
  let description = [{
    The last step of `hetero-lower-to-cpu`: the patterns of the upstream
    func, arith, math, index, control-flow, memref and ub lowerings applied
    by one dialect conversion with one LLVM type converter, instead of one
    pass (one walk of the module) each. It needs no dialect extension in the
    context's registry, unlike `convert-to-llvm`. Functions marked
    `llvm.emit_c_interface` get their C-interface wrappers. Unrealized casts
    between the type systems are left for `reconcile-unrealized-casts`.

    Buffers are allocated with `aligned_alloc`, whose pointer is the
    buffer's (malloc's aligned pointer is computed through an integer, and
    alias analysis then loses track of which buffer a store writes). With
    `runtime-allocator` (the default), through MLIR's generic allocation
    functions, which libhetero_rt defines (include/hetero-rt/memory.h): a
    step's buffers come back from per-size free lists.

    Example: `func.func @f(%a: i64) -> i64 { %0 = arith.addi %a, %a : i64 ... }`
    becomes `llvm.func @f(%arg0: i64) -> i64 { %0 = llvm.add %arg0, %arg0 : i64 ... }`.
  }];
  let options = [
    Option<"runtimeAllocator", "runtime-allocator", "bool", /*default=*/"true",
           "Allocate buffers through libhetero_rt (_mlir_memref_to_llvm_*) "
           "instead of the C library">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def HeteroLowerToRuntime : Pass<"hetero-lower-to-runtime",
                                "::mlir::ModuleOp"> {
  let summary = "Lower collectives and transfers to libhetero_rt calls";
  let description = [{
    Rewrites the communication of a module into calls to the `hrt_mlir_*`
    entry points of libhetero_rt, on buffers, by a dialect conversion with one
    pattern per op (`populateHeteroToRuntimeConversionPatterns` and
    `configureHeteroToRuntimeTarget` in hetero/Passes/HeteroToRuntime.h, for
    embedders):

    * `hetero.bucket` first becomes one all-reduce of its operands
      flattened and concatenated, split back afterwards (tensor fusion);
    * `hetero.all_reduce`, `all_gather`, `reduce_scatter`, `broadcast`,
      `reduce`, `all_to_all`, `send` and `recv` pass the runtime aligned
      pointers to buffers, the element count, the data type and the
      reduction: what the runtime overwrites (an all-reduce's data, a
      result) is a fresh buffer, what it only reads (a send, the input of an
      all-gather, reduce-scatter or all-to-all) the tensor's own; the
      process group of a `shard.grid` and its axes is the runtime's cached
      split communicator (`hrt_mlir_group`), the world otherwise;
    * `shard.process_linear_index` is the world rank.

    The runtime functions are declared once per module. Afterwards the
    structural ops (`shard.grid`, `hetero.pipeline`, `hetero.schedule`,
    `hetero.plan_set`) are removed: the module holds only functions, ready for
    bufferization and the LLVM lowering.

    A dense all-reduce is posted where it stands (`hrt_mlir_all_reduce_start`)
    and waited for (`hrt_mlir_wait`) right before the first use of its
    result, so it overlaps with the work in between; `blocking-collectives`
    waits at once instead (the baseline of overlap measurements).
    `shard.process_multi_index` becomes the rank's grid coordinates.

    Every other hetero op except the structural ones is illegal: checkpoints,
    sync groups and tensor-parallel pruning fail to legalize at their
    location. An op the runtime cannot take says why: all-gather and
    reduce-scatter lower along axis 0 and all-to-all with split and concat
    axis 0, only all-reduces and buckets are compressed (f32, QSGD with at
    most 127 levels), and the grid must be static with at most 4 dimensions.

    Example (`--hetero-lower-to-runtime`, abridged):

    ```mlir
    %r = hetero.all_reduce %g reduction = avg : tensor<8xf32>
    %y = arith.addf %r, %r : tensor<8xf32>
    ```

    becomes

    ```mlir
    %world = call @hrt_mlir_world() : () -> !llvm.ptr
    %buf = memref.alloc() : memref<8xf32>
    bufferization.materialize_in_destination %g in writable %buf
    %request = call @hrt_mlir_all_reduce_start(%world, %ptr, %c8, %f32, %avg)
    call @hrt_mlir_wait(%request) : (!llvm.ptr) -> ()
    %r = bufferization.to_tensor %buf restrict writable
    %y = arith.addf %r, %r : tensor<8xf32>
    ```
  }];
  let options = [
    Option<"blockingCollectives", "blocking-collectives", "bool",
           /*default=*/"false",
           "Wait for every all-reduce where it stands">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::tensor::TensorDialect",
                           "::hetero::HeteroDialect"];
}

def HeteroGpuBlockReductions
    : Pass<"hetero-gpu-block-reductions", "::mlir::func::FuncOp"> {
  let summary = "Give each output of a reduction with few outputs a thread "
                "block that reduces it with gpu.all_reduce";
  let description = [{
    On buffers, before `convert-linalg-to-parallel-loops`. The generic GPU
    lowering runs an op's reduction loops sequentially in the thread of each
    output, which leaves a reduction with few outputs (a layer norm's row
    statistics, a bias gradient, a loss) on few threads, and one with no
    parallel loop on one. A linalg op on buffers with one output of f32,
    f64, i32 or i64 that each parallel loop indexes once (so that one block
    writes each output element), static loop ranges and a body that yields
    `combiner(out, x)` (arith add, mul, min, max, and, or, xor: an
    operation `gpu.all_reduce` has) becomes a `gpu.launch` of one block per
    output element, when it has at most `max-outputs` of them and reduces
    at least `min-reduced` elements into each (any number when it has no
    parallel loop):

    ```mlir
    gpu.launch blocks(%b, ...) in (P, 1, 1) threads(%t, ...) in (T, 1, 1) {
      %partial = scf.for %r = %t to %K step %T iter_args(%a = %neutral)
      %total = gpu.all_reduce add %partial uniform {}
      scf.if %t == 0 { out[%b] = out[%b] + %total }
    }
    ```

    The block has the reduced size's next power of two threads, from 32 to
    `threads-per-block`. Neighbouring threads read neighbouring reduced
    elements; upstream's all-reduce lowering combines them with warp
    shuffles. A `linalg.fill` of the output that only allocations separate
    from the op, and that no input of the op reads, is folded: the last
    combine starts from its value, and no kernel fills.
  }];
  let options = [
    Option<"threadsPerBlock", "threads-per-block", "int64_t",
           /*default=*/"256",
           "Most threads of a reduction's block: a power of two from 32 to "
           "1024">,
    Option<"maxOutputs", "max-outputs", "int64_t", /*default=*/"16384",
           "Most outputs (blocks) of an op this pass rewrites">,
    Option<"minReduced", "min-reduced", "int64_t", /*default=*/"32",
           "Fewest elements reduced into each output of an op with parallel "
           "loops that this pass rewrites">
  ];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def HeteroGpuRowKernels
    : Pass<"hetero-gpu-row-kernels", "::mlir::func::FuncOp"> {
  let summary = "Run a chain of linalg ops over the same rows as one kernel "
                "of a thread block per row";
  let description = [{
    On buffers, before `hetero-gpu-block-reductions`. A layer norm, a
    softmax, the loss and their adjoints are chains of linalg ops over the
    same rows, reductions along each row among them, which the generic GPU
    lowering launches one kernel each. Consecutive linalg ops of a block
    (only ops without memory effects, allocations and `gpu.wait`s for
    allocations between them) that
    share their leading parallel loops (the rows, of the same static
    extents) become one `gpu.launch` of a block per row, the ops one after
    the other in it, a `gpu.barrier` between each two:

    ```mlir
    gpu.launch blocks(%row, ...) in (R, 1, 1) threads(%t, ...) in (T, 1, 1) {
      scf.for %c = %t to %C step %T { ... }          // element-wise
      gpu.barrier
      %partial = scf.for %c = %t to %K step %T iter_args(%a = %neutral)
      %total = gpu.all_reduce add %partial uniform {}
      scf.if %t == 0 { out[%row] = out[%row] + %total }
      ...
    }
    ```

    Each op of the chain is either a loop over its remaining parallel
    iterations (a thread per output element, its reduction loops walked in
    the thread) or a reduction of the whole row with a combiner
    `gpu.all_reduce` has (f32, f64, i32, i64), which the block reduces.
    Every buffer the chain writes is accessed by the chain's ops through one
    value and indexed by the row loops first and by them nowhere else, so a
    block reads only the rows it writes. The rows are the most leading
    loops for which this holds and some op has work within a row; an op
    runs at most 65536 iterations within a row. A `linalg.fill` of a
    reduction's output right before it in the chain is folded into its
    combine. The block has the widest op's next power of two threads, from
    32 to `threads-per-block`. Chains of one op, and chains without a
    reduction (independent element-wise ops, which
    `hetero-gpu-horizontal-fusion` takes), are left to the other passes. A
    chain ends before the kernel's parameters (a memref descriptor per
    buffer) would pass 4096 bytes, which ptxas refuses before PTX 8.1.
  }];
  let options = [
    Option<"threadsPerBlock", "threads-per-block", "int64_t",
           /*default=*/"256",
           "Most threads of a row's block: a power of two from 32 to 1024">
  ];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def HeteroGpuHorizontalFusion
    : Pass<"hetero-gpu-horizontal-fusion", "::mlir::func::FuncOp"> {
  let summary = "Run independent element-wise linalg ops as one kernel";
  let description = [{
    On buffers, after `hetero-gpu-row-kernels` and
    `hetero-gpu-block-reductions`. A pipeline's tasks add each parameter's
    gradient into its sum, apply Adam to each parameter and zero each sum:
    one small element-wise op per parameter, a launch each. A run of
    consecutive linalg ops of a block (only ops without memory effects,
    allocations and `gpu.wait`s for allocations between them) with static
    loop ranges and no reduction loop, each writing each output element
    once, of which no op touches a buffer another writes, becomes one
    `gpu.launch`: each op gets ceil(iterations / T) blocks of the grid, one
    after the other (T the widest op's next power of two iterations, from
    32 to `threads-per-block`), and a thread of them runs one
    iteration of the op (the last loop fastest), the blocks of the other
    ops skipping it:

    ```mlir
    gpu.launch blocks(%b, ...) in (B0 + B1, 1, 1) threads(%t, ...) in (T, 1, 1) {
      scf.if %b >= 0 and %b < B0 { %i = %b * T + %t; scf.if %i < N0 {...} }
      scf.if %b >= B0 and %b < B0 + B1 { ... }
    }
    ```

    The kernel takes the place of the run's last op. Runs of one op are
    left alone. A run ends before the kernel's parameters (a memref
    descriptor per buffer) would pass 4096 bytes, which ptxas refuses
    before PTX 8.1.
  }];
  let options = [
    Option<"threadsPerBlock", "threads-per-block", "int64_t",
           /*default=*/"256",
           "Threads of a block: a power of two from 32 to 1024">
  ];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def HeteroGpuLaunchesToLoops
    : Pass<"hetero-gpu-launches-to-loops", "::mlir::func::FuncOp"> {
  let summary = "Run gpu.launch bodies as loops on the host, to check "
                "kernels without a device";
  let description = [{
    Replaces each `gpu.launch` (before outlining) by loops on the host that
    compute what its threads do: a loop over its blocks and, within a block,
    the body cut at every `gpu.barrier` and after every `gpu.all_reduce`
    into segments, each a loop over the block's threads from the last to
    the first (thread 0 commonly writes what the others then read, which a
    barrier must order). A value a segment
    computes and a later one reads is kept per thread in a buffer; an
    all-reduce combines its operand over the threads in thread order. Every
    thread thus ends a segment before any starts the next, as at a barrier,
    and a kernel that lacks a barrier it needs reads what no thread has
    written yet. With the CPU lowering this runs the kernels of
    `hetero-gpu-block-reductions` and `hetero-gpu-row-kernels` against the
    linalg ops they replace (test/Integration/gpu-kernels-on-host.test).

    A launch this cannot run is an error: an asynchronous one, one with
    shared memory, clusters or attributions, a body of several blocks, a
    barrier or all-reduce inside control flow, an all-reduce with a region,
    or another op of the gpu dialect in the body.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def HeteroGpuMapLoops
    : Pass<"hetero-gpu-map-loops", "::mlir::func::FuncOp"> {
  let summary = "Tile parallel loops into thread blocks and map them to the GPU";
  let description = [{
    Tiles every outermost `scf.parallel` without reductions so that a tile
    is one thread block of at most `threads-per-block` threads, then maps the
    tile loop onto blocks and the loop within a tile onto threads (the
    mapping attributes `convert-parallel-loops-to-gpu` reads). The innermost
    dimension, the contiguous one of row-major buffers, goes to x, so that
    neighbouring threads touch neighbouring elements: up to 32 threads
    along it (all of them for a one-dimensional loop), the rest of the block
    along the next dimensions, never more threads than a dimension has
    iterations when that is known. Dimensions beyond the third, and every
    parallel loop nested inside a mapped one, run sequentially within their
    thread. Loops with reductions are left unmapped.

    ```
    hetero-opt --convert-linalg-to-parallel-loops \
      --pass-pipeline='builtin.module(func.func(hetero-gpu-map-loops))' f.mlir
    ```
  }];
  let options = [
    Option<"threadsPerBlock", "threads-per-block", "int64_t",
           /*default=*/"256",
           "Threads per block: a power of two from 32 to 1024">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect"];
}

def HeteroGpuDeviceBuffers
    : Pass<"hetero-gpu-device-buffers", "::mlir::ModuleOp"> {
  let summary = "Place a step's data in device memory";
  let description = [{
    Decides, across functions, which buffers live in device memory: buffers
    that alias (views, casts, call arguments and parameters, returned and
    call results, the get_globals of one global) form a class, and a class
    a structured op, a copy or a parallel loop touches is device memory.
    Then an allocation of a device class becomes a `gpu.alloc` (the async
    form, waited for at once; libhetero_rt_cuda serves it from a
    stream-ordered pool that keeps freed memory) and its deallocations
    `gpu.dealloc`:

    ```mlir
    %0 = gpu.wait async
    %m, %1 = gpu.alloc async [%0] (%n) : memref<?x64xf32>
    gpu.wait [%1]
    ```

    A global of a device class (a parameter, optimizer state, a constant)
    is used through its device copy, which `hrt_cuda_mirror` makes on first
    use and keeps. A host `memref.load` or `memref.store` of device data
    becomes a one-element `hrt_cuda_copy` through a host slot. A runtime
    call (an external function) given the address of device data gets a
    pinned host copy instead (`hrt_cuda_stage_in`), and the data gets the
    copy back after the call or after the `hrt_mlir_wait` of the request it
    returned (`hrt_cuda_stage_out`); with `device-collectives` the
    collectives and sends and receives take device addresses (the NCCL
    backend). Every `memref.copy` becomes a `linalg.copy`, a kernel later.
    Buffers only the host touches stay host memory.
  }];
  let options = [
    Option<"deviceCollectives", "device-collectives", "bool",
           /*default=*/"false",
           "Hand the collectives and point-to-point calls device addresses "
           "(the NCCL backend) instead of staged host copies">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect"];
}

def HeteroGpuAsyncLaunches : Pass<"hetero-gpu-async-launches", "::mlir::ModuleOp"> {
  let summary = "Queue kernel launches; wait only where the host needs it";
  let description = [{
    After kernel outlining: every `gpu.launch_func` becomes asynchronous on
    the stream of a fresh `gpu.wait async`, which libhetero_rt_cuda makes
    the calling thread's one stream, so launches, copies, allocations and
    cuBLAS calls stay in program order without the host waiting between
    them:

    ```mlir
    %0 = gpu.wait async
    %1 = gpu.launch_func async [%0] @k::@k blocks in (...) threads in (...)
    ```

    The host waits after stream-ordered `gpu.alloc` and `gpu.dealloc` go;
    a call of `hrt_cuda_synchronize` goes before every call of a runtime
    function outside libhetero_rt_cuda (collectives that may use other
    streams, task marks that time the work). With `device-collectives`
    (the NCCL backend), the collectives and point-to-point calls get none:
    the backend orders them after the thread's stream on the device, by an
    event, so the host goes on queuing kernels. Copies the host reads wait
    as before.
  }];
  let options = [
    Option<"deviceCollectives", "device-collectives", "bool",
           /*default=*/"false",
           "The collectives run on the device (NCCL) and order themselves "
           "after the thread's stream">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::gpu::GPUDialect"];
}

def HeteroReassociateReductions
    : Pass<"hetero-reassociate-reductions", "::mlir::func::FuncOp"> {
  let summary = "Let reductions be reordered, so that they vectorise";
  let description = [{
    Adds `reassoc` to the fast-math flags of the ops that carry a linalg
    reduction's accumulator from its output to its yield (the `addf` of a
    row sum, the `maximumf` of a row maximum):

    ```mlir
    ^bb0(%x: f32, %acc: f32):
      %s = arith.addf %x, %acc fastmath<reassoc> : f32
      linalg.yield %s : f32
    ```

    LLVM's loop vectoriser keeps the order of a floating-point reduction
    that may not be reassociated, so the row sums of softmax, layer norm and
    the loss, and the column sums of bias gradients, ran one element at a
    time. Reassociated, they keep one partial sum per vector lane, as BLAS
    and PyTorch's kernels do. The element-wise ops of a body keep their
    order; the results change by rounding only.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def HeteroFuseElementwise
    : Pass<"hetero-fuse-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Fuse chains of element-wise linalg ops into one loop nest";
  let description = [{
    On tensors, fuses each element-wise `linalg.generic` into the
    `linalg.generic` that consumes it (upstream's element-wise fusion), so
    that a chain becomes one loop nest (one kernel on a GPU) and one pass
    over memory:

    ```mlir
    %b = linalg.generic ... ins(%x, %bias) ... { addf }
    %g = linalg.generic ... ins(%b) ... { gelu }
    // becomes one linalg.generic computing gelu(x + bias)
    ```

    Products are left alone: a producer is never fused into a contraction
    (a `linalg.matmul`, or a generic that is one), which would otherwise
    stop being one GEMM and lose its BLAS or cuBLAS call. Aggregated ops
    (`linalg.softmax`) are decomposed into their generics first.

    A map whose body calls a transcendental function (exp, log, tanh, erf,
    powf) and that several ops read is fused into each of them, and so
    computed once per reader: on a GPU that saves a kernel launch each. With
    `duplicate-transcendentals=false` (the CPU pipeline) it is fused only
    into a sole reader: softmax's exponentials are computed once for the
    row sum and the normalisation, where an exp costs more than a pass over
    memory.

    With `fold-transposes`, a `linalg.transpose` whose result a contraction
    reads is folded into that operand's indexing map (the product becomes a
    `linalg.generic` reading the transpose's source): hetero-matmul-to-blas
    then passes the source as a transposed operand, and the copy goes.
  }];
  let options = [
    Option<"foldTransposes", "fold-transposes", "bool", /*default=*/"false",
           "Fold transposes read by products into their indexing maps">,
    Option<"duplicateTranscendentals", "duplicate-transcendentals", "bool",
           /*default=*/"true",
           "Fuse a map that calls exp, log or tanh into each of its "
           "consumers (one kernel fewer, the function computed once per "
           "consumer); false computes such a map once where more than one "
           "op reads it">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def HeteroGpuSerialKernels
    : Pass<"hetero-gpu-serial-kernels", "::mlir::func::FuncOp"> {
  let summary = "Give linalg ops without a parallel loop a one-iteration "
                "parallel loop, so that they run on the GPU";
  let description = [{
    On buffers, before `convert-linalg-to-parallel-loops`: a linalg op with
    no parallel loop (a fill of a 0-d buffer, a reduction of everything to
    one value) has no loop for `hetero-gpu-map-loops` to map and would run
    as host code on device memory. Each such op becomes a `linalg.generic`
    with a leading parallel dimension of size 1; its outputs are viewed
    with a leading unit dimension (`memref.expand_shape`):

    ```mlir
    linalg.generic {iterator_types = ["reduction"]}
        ins(%x : memref<1024xf32>) outs(%sum : memref<f32>)
    // becomes
    %v = memref.expand_shape %sum [] output_shape [1]
        : memref<f32> into memref<1xf32>
    linalg.generic {iterator_types = ["parallel", "reduction"]}
        ins(%x : memref<1024xf32>) outs(%v : memref<1xf32>)
    ```

    The loop nest then runs on the device as a kernel of one thread. Long
    reductions reach it as the combine of
    `hetero-gpu-split-reductions`' partials, so the serial walk is short.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect"];
}

def HeteroGpuSplitReductions
    : Pass<"hetero-gpu-split-reductions", "::mlir::func::FuncOp"> {
  let summary = "Split long reductions into parallel partials for the GPU";
  let description = [{
    A reduction becomes one thread per output element that walks the
    reduced dimension alone, which leaves most of a GPU idle when there are
    few outputs. On tensors, before bufferization, this pass splits every
    linalg op whose one reduction is its innermost loop, with static sizes,
    at least `min-reduced` reduced elements and fewer than `threads`
    outputs: upstream's `linalg::splitReduction` computes r partials per
    output in parallel (element k = j * r + p goes to partial p, so
    neighbouring threads read neighbouring elements) and then combines
    them. r is the largest power of two that divides the reduced size,
    leaves each thread at least 32 elements and gives at most `threads`
    partials in all. A combiner without a known neutral element leaves the
    op whole.

    First, every `linalg.generic` on tensors with a reduction loop outside a
    parallel one (a column sum written over rows, as a folded transpose
    leaves it) has its loops interchanged, parallel ones first: the GPU
    lowering would otherwise run the outer reduction as a loop of kernel
    launches on the host.
  }];
  let options = [
    Option<"threads", "threads", "int64_t", /*default=*/"131072",
           "Partials to aim for over all outputs">,
    Option<"minimumReduced", "min-reduced", "int64_t", /*default=*/"1024",
           "Reduced elements below which an op stays whole">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def HeteroMatmulToBlas : Pass<"hetero-matmul-to-blas", "::mlir::ModuleOp"> {
  let summary = "Compute f32 products on buffers with the host's BLAS";
  let description = [{
    Rewrites every f32 product on buffers that is one GEMM, possibly
    batched and with transposed operands, into a call of the runtime's
    `hrt_cpu_sgemm` (include/hetero-rt/blas.h): OpenBLAS's `cblas_sgemm`
    when libhetero_rt was built with it. A product qualifies when it is a
    contraction (`linalg.matmul`, `linalg.batch_matmul`, a `linalg.matmul`
    with transposing `indexing_maps`, or a `linalg.generic` whose body
    multiplies and accumulates) with one M, one N and one K loop and at most
    one batch loop, each of whose f32 buffers has unit stride along one of
    its two matrix dimensions; the other strides become leading dimensions
    and batch strides, so views need no copy. A fill of 0.0 of the output
    right before the product becomes `beta = 0`.

    ```mlir
    linalg.fill ins(%zero : f32) outs(%c : memref<16x8xf32>)
    linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                                   affine_map<(m, n, k) -> (k, n)>,
                                   affine_map<(m, n, k) -> (m, n)>]
                  ins(%a, %b : memref<32x16xf32>, memref<32x8xf32>)
                  outs(%c : memref<16x8xf32>)
    ```

    becomes one call with batch 1, `transpose_a` 1, m = 16, n = 8, k = 32,
    `lda` 16, `ldb` 8, beta 0 and `ldc` 8. Other products (other element
    types, several M, N or K loops, operands strided along both matrix
    dimensions) are left to the loops.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect"];
}

def HeteroMatmulToCublas
    : Pass<"hetero-matmul-to-cublas", "::mlir::ModuleOp"> {
  let summary = "Compute f32 matmuls on buffers with cuBLAS";
  let description = [{
    Rewrites every `linalg.matmul` on f32 buffers whose rows are contiguous
    (unit stride along the second dimension) into a call of the runtime's
    `hrt_cuda_sgemm(m, n, k, A, lda, B, ldb, C, ldc)`, which accumulates
    into C as the matmul does, on the thread's stream. The buffers must be
    device memory when the call runs. Other matmuls (other element types,
    indexing maps or layouts) are left to the generated kernels.

    ```mlir
    linalg.matmul ins(%a, %b : memref<16x32xf32>, memref<32x8xf32>)
                  outs(%c : memref<16x8xf32>)
    ```

    becomes a call with the aligned pointers (plus each buffer's offset) as
    `!llvm.ptr` and the sizes and row strides as i64.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect"];
}

#endif // HETERO_PASSES_PASSES_TD
