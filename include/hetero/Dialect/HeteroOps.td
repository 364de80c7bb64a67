//===- HeteroOps.td - hetero operations --------------------*- tablegen -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_DIALECT_HETEROOPS_TD
#define HETERO_DIALECT_HETEROOPS_TD

include "hetero/Dialect/HeteroBase.td"
include "hetero/Dialect/HeteroAttrs.td"
include "hetero/Dialect/HeteroInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// A signed 64-bit integer attribute (upstream I64Attr reads back unsigned).
def Hetero_I64Attr : TypedSignlessIntegerAttrBase<I64, "int64_t",
                                                  "64-bit integer attribute"> {
  let convertFromStorage = "$_self.getValue().getSExtValue()";
}
def Hetero_NonNegativeI64 : ConfinedAttr<Hetero_I64Attr, [IntNonNegative]>;
// Counts and sizes of at least 1: stages, micro-batches, group sizes,
// replicas, intervals.
def Hetero_PositiveI64 : ConfinedAttr<Hetero_I64Attr, [IntPositive]>;
def Hetero_GridAxesAttr
    : DenseArrayAttrBase<"DenseI16ArrayAttr", "int16_t", "i16">;

//===----------------------------------------------------------------------===//
// Pipeline parallelism
//===----------------------------------------------------------------------===//

def Hetero_PipelineOp : Hetero_Op<"pipeline", [
    Symbol, NoTerminator, SingleBlock, NoRegionArguments,
    GraphRegionNoTerminator,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "A model split into pipeline stages";
  let description = [{
    Declares a pipeline of `stages` stages that processes `microbatches`
    micro-batches per training step. The body holds exactly one
    `hetero.stage` per stage id `0 .. stages-1`. An optional `shard.grid`
    names the devices the pipeline runs on: axis 0 the pipeline's ranks, an
    optional axis 1 the data-parallel replica, an optional axis 2 the
    tensor-parallel shard.

    By default stage s runs on rank s of axis 0 (axis 0 has `stages`
    ranks). `placement` puts several stages on a rank:

    * `placement = loop`: stage s on rank s mod R, for the R ranks of the
      grid's axis 0 (interleaved schedules);
    * `placement = v`: rank r holds stages r and 2R-1-r (V-shaped
      schedules); the stages are twice the ranks;
    * `placement = [0, 1, 1, 0]`: stage s on the rank at position s.

    Every rank holds at least one stage.

    Stage functions follow one calling convention: the forward function of
    stage `s` takes the activation produced by stage `s-1` (the micro-batch
    input for stage 0) as its first argument and returns the activation for
    stage `s+1` (the loss for the last stage) as its first result, so the
    verifier checks that consecutive stages agree on the activation type.

    A pipeline that names a `data` function and an `optimizer` is
    executable (the stage ABI, docs/execution.md), and the verifier checks
    the whole contract:

    * each stage lists its parameters: `memref.global`s with a static shape
      and an initial value;
    * forward of stage `s`: `(activation, params...) -> activation`; the
      last stage also takes the target and returns the micro-batch loss as
      `tensor<f32>`;
    * backward of stage `s`: the forward's inputs, then the gradient of its
      output (none on the last stage) `-> (input gradient, one gradient per
      parameter)`;
    * `data(%step: i64, %replica: i64, %microbatch: i64) -> (input, target)`.

    `hetero-lower-pipeline` turns an executable pipeline and one of its
    schedules into the per-rank training step. An optional `sync`
    (`#hetero.sync`) says how its replicas synchronise: by default the
    gradients are all-reduced before one optimizer step; `policy = dynamic`
    takes a local step and averages weights in SDPipe's dynamic groups. An
    optional `checkpoint` (`#hetero.checkpoint`) keeps in-memory checkpoints
    of the training state on peer ranks (Gemini).

    Example:

    ```mlir
    shard.grid @grid(shape = 2x2)
    hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data
        optimizer #hetero.sgd<lr = 5.0e-02> {
      hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
      hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1] on "a100"
    }
    hetero.pipeline @sd stages = 2 microbatches = 4 on @grid data @data
        optimizer #hetero.sgd<lr = 5.0e-02>
        sync #hetero.sync<policy = dynamic, period = 4> {
      ...
    }
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    Hetero_PositiveI64:$num_stages,
    Hetero_PositiveI64:$num_microbatches,
    OptionalAttr<FlatSymbolRefAttr>:$grid,
    OptionalAttr<FlatSymbolRefAttr>:$data,
    OptionalAttr<Hetero_OptimizerAttr>:$optimizer,
    OptionalAttr<Hetero_SyncAttr>:$sync,
    OptionalAttr<Hetero_CheckpointAttr>:$checkpoint,
    OptionalAttr<AnyAttrOf<[StrAttr, DenseI64ArrayAttr]>>:$placement
  );
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `stages` `=` $num_stages `microbatches` `=` $num_microbatches
    (`placement` `=` custom<StagePlacement>($placement)^)? (`on` $grid^)? (`data` $data^)? (`optimizer` $optimizer^)?
    (`sync` $sync^)? (`checkpoint` $checkpoint^)? attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The stage with the given id, or null.
    StageOp getStage(int64_t stageId);

    /// The variant of stage `stageId` compiled for micro-batches of
    /// `microbatchSize` samples, or null.
    StageVariantOp getStageVariant(int64_t stageId, int64_t microbatchSize);

    /// The micro-batch sizes the stages have variants for, ascending.
    ::llvm::SmallVector<int64_t> getVariantSizes();

    /// True when the pipeline follows the stage ABI: it names its data
    /// function and its optimizer.
    bool isExecutable() { return getDataAttr() && getOptimizerAttr(); }

    /// The ranks of the pipeline's axis: its grid's axis 0, else those its
    /// placement names (one per stage by default); 0 when the placement
    /// needs a grid it does not have.
    int64_t getNumRanks();

    /// Where each stage runs (verified: every rank holds a stage).
    ::hetero::schedule::Placement getStagePlacement();
  }];
}

def Hetero_StageOp : Hetero_Op<"stage", [HasParent<"PipelineOp">]> {
  let summary = "One pipeline stage: its functions and parameters";
  let description = [{
    Binds stage `id` of the enclosing pipeline to a forward and a backward
    `func.func` and lists the `memref.global`s that hold its parameters, in
    the order the stage functions take them. The optional device string
    names the accelerator kind the stage is placed on (pipelines may mix
    kinds). The backward may be omitted: such a pipeline verifies, and
    `hetero-derive-backward` derives the backward from the forward before
    the pipeline runs.

    Two optional refinements of the backward (docs/autodiff.md):

    * `augmented @fa`: the forward that keeps its residuals, `(the
      forward's inputs) -> (its output, residuals...)`. The step runs it in
      place of the forward and stashes the residuals per micro-batch; the
      backward then takes them after the forward's inputs and does not
      re-compute the forward.
    * `backward_input @bi backward_weight @bw` in place of `backward`: the
      input gradient and the parameter gradients as two tasks.
      `bi(inputs..., residuals..., output gradient) -> (input gradient,
      saved...)` and `bw(inputs..., saved...) -> (parameter gradients...)`,
      where `saved` is what the weight gradient needs of the input
      gradient's pass.

    Example:

    ```mlir
    hetero.stage 1 forward @stage1_fwd backward @stage1_bwd params [@w1, @b1] on "v100"
    hetero.stage 0 forward @s0 augmented @s0_augmented backward_input @s0_backward_input backward_weight @s0_backward_weight params [@w0]
    ```
  }];
  let arguments = (ins
    Hetero_I64Attr:$stage_id,
    FlatSymbolRefAttr:$forward,
    OptionalAttr<FlatSymbolRefAttr>:$augmented,
    OptionalAttr<FlatSymbolRefAttr>:$backward,
    OptionalAttr<FlatSymbolRefAttr>:$backward_input,
    OptionalAttr<FlatSymbolRefAttr>:$backward_weight,
    OptionalAttr<TypedArrayAttrBase<FlatSymbolRefAttr, "parameter globals">>
        :$params,
    OptionalAttr<StrAttr>:$device
  );
  let assemblyFormat = [{
    $stage_id `forward` $forward (`augmented` $augmented^)?
    (`backward` $backward^)? (`backward_input` $backward_input^)?
    (`backward_weight` $backward_weight^)?
    (`params` $params^)? (`on` $device^)? attr-dict
  }];
  let extraClassDeclaration = [{
    /// The parameter globals of the stage, in calling order.
    ::llvm::SmallVector<::mlir::FlatSymbolRefAttr> getParamSymbols();

    /// True when the stage names its backward, whole or split.
    bool hasBackward() { return getBackwardAttr() || getBackwardInputAttr(); }
  }];
}

def Hetero_StageVariantOp : Hetero_Op<"stage_variant", [
    HasParent<"PipelineOp">]> {
  let summary = "A stage's functions compiled for a larger micro-batch";
  let description = [{
    Binds stage `id` of an executable pipeline to a forward and a backward
    function that take micro-batches of `microbatch_size` samples, a
    multiple n of the pipeline's own (the first dimension of the data
    function's input). They follow the stage ABI with the stage's
    parameters, and every tensor that holds samples (the input, the target,
    the activations and their gradients) has a first dimension n times the
    stage's; the last stage returns the mean loss of its larger micro-batch.
    A variant size covers every stage of the pipeline once. Like a stage's,
    its backward may be omitted for `hetero-derive-backward` to derive, and
    it may have an `augmented` forward and a split backward as a stage does.

    A frontend emits variants when a larger micro-batch runs more
    efficiently than several small ones: `hetero-lower-pipeline` runs a
    candidate schedule of micro-batch size b (`hetero-plan-candidates`) on
    the largest variant whose size divides b, with one message per
    micro-batch, instead of b / size tasks of the stage's own size.

    Example:

    ```mlir
    hetero.pipeline @mlp stages = 2 microbatches = 8 data @data
        optimizer #hetero.sgd<lr = 5.0e-02> {
      hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
      hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
      hetero.stage_variant 0 microbatch_size = 4 forward @s0_fwd_b4 backward @s0_bwd_b4
      hetero.stage_variant 1 microbatch_size = 4 forward @s1_fwd_b4 backward @s1_bwd_b4
    }
    ```
  }];
  let arguments = (ins
    Hetero_I64Attr:$stage_id,
    Hetero_PositiveI64:$microbatch_size,
    FlatSymbolRefAttr:$forward,
    OptionalAttr<FlatSymbolRefAttr>:$augmented,
    OptionalAttr<FlatSymbolRefAttr>:$backward,
    OptionalAttr<FlatSymbolRefAttr>:$backward_input,
    OptionalAttr<FlatSymbolRefAttr>:$backward_weight
  );
  let assemblyFormat = [{
    $stage_id `microbatch_size` `=` $microbatch_size `forward` $forward
    (`augmented` $augmented^)? (`backward` $backward^)?
    (`backward_input` $backward_input^)? (`backward_weight` $backward_weight^)?
    attr-dict
  }];
  let extraClassDeclaration = [{
    /// True when the variant names its backward, whole or split.
    bool hasBackward() { return getBackwardAttr() || getBackwardInputAttr(); }
  }];
}

def Hetero_ScheduleOp : Hetero_Op<"schedule", [
    Symbol, NoTerminator, SingleBlock, NoRegionArguments,
    GraphRegionNoTerminator,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "The ordered task program of every stage of a pipeline";
  let description = [{
    A pipeline schedule: one `hetero.stage_program` per rank of the
    pipeline named by `for` (per stage when each rank holds one), each an
    ordered list of forward and backward tasks and the transfers between
    neighbouring stages. `group_size` is the
    k of a kFkB schedule (1 for 1F1B) and `microbatch_size` the number of
    samples in one micro-batch. `microbatches` is the number of micro-batches
    the schedule runs when it splits the step's batch differently from the
    pipeline (a candidate of another micro-batch size); it defaults to the
    pipeline's.

    Example:

    ```mlir
    hetero.schedule @gpt_1f1b for @gpt group_size = 1 {
      hetero.stage_program 0 {
        hetero.fwd 0
        hetero.send_task activation 0 to 1
        hetero.recv_task gradient 0 from 1
        hetero.bwd 0
      }
      hetero.stage_program 1 {
        hetero.recv_task activation 0 from 0
        hetero.fwd 0
        hetero.bwd 0
        hetero.send_task gradient 0 to 0
      }
    }
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    FlatSymbolRefAttr:$pipeline,
    Hetero_PositiveI64:$group_size,
    OptionalAttr<Hetero_PositiveI64>:$microbatch_size,
    OptionalAttr<Hetero_PositiveI64>:$microbatches
  );
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `for` $pipeline `group_size` `=` $group_size
    (`microbatch_size` `=` $microbatch_size^)?
    (`microbatches` `=` $microbatches^)? attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The micro-batches this schedule runs: its own count, else those of
    /// `pipeline`.
    int64_t getMicrobatchCount(PipelineOp pipeline) {
      return getMicrobatches().value_or(pipeline.getNumMicrobatches());
    }
  }];
}

def Hetero_StageProgramOp : Hetero_Op<"stage_program", [
    HasParent<"ScheduleOp">, NoTerminator, SingleBlock, NoRegionArguments]> {
  let summary = "The ordered tasks of one rank in a schedule";
  let description = [{
    Holds the tasks of pipeline rank `id` (the coordinate on the grid's
    axis 0) in execution order: `hetero.fwd`, `hetero.bwd` (a whole
    backward), `hetero.bwd_input` and `hetero.bwd_weight` (the halves of a
    split backward), `hetero.send_task` and `hetero.recv_task`. A task names
    its stage with `stage s` when the rank holds several stages; otherwise
    it is the rank's one stage. Neighbouring stages on one rank hand their
    values over without transfers.

    Example:

    ```mlir
    hetero.stage_program 0 {
      hetero.fwd 0
      hetero.send_task activation 0 to 1
    }
    hetero.stage_program 1 {
      hetero.fwd 0 stage 1
      hetero.fwd 0 stage 2
      hetero.bwd_input 0 stage 2
      hetero.bwd_weight 0 stage 2
    }
    ```
  }];
  let arguments = (ins Hetero_I64Attr:$stage_id);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$stage_id attr-dict-with-keyword $body";
  let hasRegionVerifier = 1;
}

class Hetero_TaskOp<string mnemonic>
    : Hetero_Op<mnemonic, [HasParent<"StageProgramOp">,
                           DeclareOpInterfaceMethods<Hetero_TaskOpInterface>]>;

class Hetero_ComputeTaskOp<string mnemonic, string what>
    : Hetero_TaskOp<mnemonic> {
  let summary = "Runs the " # what # " of one micro-batch";
  let description = [{
    A task of a stage program: the }] # what # [{ of micro-batch
    `microbatch` on the rank's stage, or on stage `stage`.

    Example:

    ```mlir
    hetero.}] # mnemonic # [{ 3
    hetero.}] # mnemonic # [{ 3 stage 2
    ```
  }];
  let arguments = (ins Hetero_NonNegativeI64:$microbatch,
                       OptionalAttr<Hetero_NonNegativeI64>:$stage);
  let assemblyFormat = "$microbatch (`stage` $stage^)? attr-dict";
}

def Hetero_FwdOp : Hetero_ComputeTaskOp<"fwd", "forward pass">;
def Hetero_BwdOp : Hetero_ComputeTaskOp<"bwd", "whole backward pass">;
def Hetero_BwdInputOp : Hetero_ComputeTaskOp<"bwd_input",
    "input gradient (I) of a split backward">;
def Hetero_BwdWeightOp : Hetero_ComputeTaskOp<"bwd_weight",
    "weight gradient (W) of a split backward">;

def Hetero_SendTaskOp : Hetero_TaskOp<"send_task"> {
  let summary = "Sends an activation or a gradient to a neighbouring stage";
  let description = [{
    Sends the activation (forward) or input gradient (backward) of one
    micro-batch from the rank's stage (or stage `stage`) to stage `to`, on
    another rank. Activations flow to the next stage, gradients to the
    previous one.

    Example:

    ```mlir
    hetero.send_task activation 2 to 1
    ```
  }];
  let arguments = (ins Hetero_Payload:$payload,
                       Hetero_NonNegativeI64:$microbatch,
                       Hetero_I64Attr:$peer,
                       OptionalAttr<Hetero_NonNegativeI64>:$stage);
  let assemblyFormat =
      "$payload $microbatch `to` $peer (`stage` $stage^)? attr-dict";
}

def Hetero_RecvTaskOp : Hetero_TaskOp<"recv_task"> {
  let summary = "Receives an activation or a gradient from a neighbouring stage";
  let description = [{
    Receives the activation or gradient of one micro-batch for the rank's
    stage (or stage `stage`) from stage `from`, on another rank. The
    receive is posted where the program has it; the task that needs the
    value waits for it to arrive.

    Example:

    ```mlir
    hetero.recv_task gradient 2 from 1
    ```
  }];
  let arguments = (ins Hetero_Payload:$payload,
                       Hetero_NonNegativeI64:$microbatch,
                       Hetero_I64Attr:$peer,
                       OptionalAttr<Hetero_NonNegativeI64>:$stage);
  let assemblyFormat =
      "$payload $microbatch `from` $peer (`stage` $stage^)? attr-dict";
}

def Hetero_PlanSetOp : Hetero_Op<"plan_set", [
    Symbol, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Candidate schedules the runtime chooses from";
  let description = [{
    Keeps several schedules of one pipeline (for instance the Pareto set of
    kFkB schedules over group size and micro-batch size) so that the runtime
    can switch between them at an iteration boundary. `default` is the plan
    used until the runtime has measured anything. Plans that state their
    micro-batch size must all cover the same number of samples per step.

    Example:

    ```mlir
    hetero.plan_set @gpt_plans for @gpt [@gpt_k1, @gpt_k2] default @gpt_k2
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    FlatSymbolRefAttr:$pipeline,
    TypedArrayAttrBase<FlatSymbolRefAttr, "schedule symbols">:$plans,
    FlatSymbolRefAttr:$default_plan
  );
  let assemblyFormat = [{
    $sym_name `for` $pipeline $plans `default` $default_plan attr-dict
  }];
  let hasVerifier = 1;
}

def Hetero_TaskMarkOp : Hetero_Op<"task_mark", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Marks the end of a compute task of a stage program";
  let description = [{
    Emitted by `hetero-lower-pipeline` after each forward and backward call
    of a training step, with the task's micro-batch when it is known. The
    runtime times the compute of each kind of task between marks (time spent
    waiting in transfers excluded), which the adaptive planner of
    `hetero-run --adaptive` feeds to its simulator, and records each task's
    span for `hetero-run --timeline`.

    Example:

    ```mlir
    hetero.task_mark backward 3
    ```
  }];
  let arguments = (ins Hetero_TaskKind:$kind,
                       OptionalAttr<Hetero_NonNegativeI64>:$microbatch);
  let assemblyFormat = "$kind ($microbatch^)? attr-dict";
}

//===----------------------------------------------------------------------===//
// Tensor parallelism with straggler pruning
//===----------------------------------------------------------------------===//

def Hetero_PrunableMatmulOp : Hetero_Op<"prunable_matmul", [
    Pure, AllElementTypesMatch<["lhs", "rhs", "result"]>]> {
  let summary = "A product of a tensor-parallel linear layer whose shard may "
                "be pruned";
  let description = [{
    `result = lhs x rhs`, one of the three products of a linear layer
    `Y = X W` with `W` of shape `K x N` (contraction `K`), sharded over `tp`
    tensor-parallel ranks the Megatron way: `col` splits the weight by its
    output columns `N` (input replicated, output sharded), `row` by its rows
    `K` (input sharded, partial outputs summed). Shapes are global: the
    sharded dimension must be divisible by `tp`.

    `product` says which product it is; with `G = dL/dY`:

    | product       | lhs      | rhs       | result     | pruned dimension |
    |---------------|----------|-----------|------------|------------------|
    | `forward`     | `X: ..xK`| `W: KxN`  | `Y: ..xN`  | the contraction  |
    | `grad_input`  | `G: ..xN`| `W^T: NxK`| `dX: ..xK` | result's last    |
    | `grad_weight` | `X^T: KxM`| `G: MxN` | `dW: KxN`  | result's first   |

    The three products of one layer share its `layer` key and `mode` (the
    mode of `W`, whichever product): when a rank straggles, ZERO-resizing
    (`hetero-resize`) prunes the same `K` columns of the layer's shard in all
    three within an iteration, and `impute` says what the pruned columns of
    `dX` and `dW` become. A function that several blocks of a model call
    (one per transformer block) names its layers by their place in the
    block and takes the block's index as `block`: each block's layer then
    has plans and statistics of its own.

    Example:

    ```mlir
    %y = hetero.prunable_matmul col %x, %w layer "l0.fc1" tp = 4
        : tensor<16x64xf32>, tensor<64x256xf32> -> tensor<16x256xf32>
    %dx = hetero.prunable_matmul col %g, %wt layer "l0.fc1" tp = 4
        product = grad_input
        : tensor<16x256xf32>, tensor<256x64xf32> -> tensor<16x64xf32>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$lhs,
    AnyRankedTensor:$rhs,
    Optional<Index>:$block,
    Hetero_PruneMode:$mode,
    StrAttr:$layer,
    Hetero_PositiveI64:$tp,
    DefaultValuedAttr<Hetero_MatmulProduct, "::hetero::MatmulProduct::forward">
        :$product,
    DefaultValuedAttr<Hetero_Imputation, "::hetero::Imputation::zero">
        :$imputation
  );
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $mode $lhs `,` $rhs `layer` $layer (`block` $block^)? `tp` `=` $tp
    (`product` `=` $product^)? (`impute` $imputation^)? attr-dict
    `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// The width K of the layer's contraction, the dimension ZERO-resizing
    /// prunes (ShapedType::kDynamic when unknown).
    int64_t getPrunedWidth();
  }];
  let hasVerifier = 1;
}

def Hetero_PrunePlanOp : Hetero_Op<"prune_plan", [
    MemoryEffects<[MemRead]>,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "The columns of a layer kept in this iteration";
  let description = [{
    Asks the runtime's straggler planner which of the `columns` columns of
    layer `layer` (of block `block`, when given) this rank computes in the
    current iteration. The result is a sorted list of kept column indices;
    its length varies per iteration.

    Example:

    ```mlir
    %kept = hetero.prune_plan layer "l0.fc1" columns = 256 : tensor<?xindex>
    %kept3 = hetero.prune_plan layer "block.qkv" block %b columns = 96
        : tensor<?xindex>
    ```
  }];
  let arguments = (ins StrAttr:$layer, Optional<Index>:$block,
                       Hetero_PositiveI64:$columns);
  let results = (outs 1DTensorOf<[Index, AnySignlessInteger]>:$kept);
  let assemblyFormat = [{
    `layer` $layer (`block` $block^)? `columns` `=` $columns attr-dict
    `:` type($kept)
  }];
  let hasVerifier = 1;
}

def Hetero_MigrationPlanOp : Hetero_Op<"migration_plan", [
    MemoryEffects<[MemRead]>,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "The columns of another shard's layer this rank computes";
  let description = [{
    Lightweight workload migration: a straggling tensor-parallel rank hands
    some of the `columns` contraction columns of its shard of layer `layer`
    to the other ranks of its tensor-parallel group. Asks the runtime's
    planner which of them this rank computes for shard `source` in the
    current iteration (`received`: sorted positions in that shard's
    columns, empty when none) and whether `source` migrates any columns of
    the layer at all (`migrates`: the same on every rank of the group, so
    that all of them choose the same collective).

    Example:

    ```mlir
    %cols, %migrates = hetero.migration_plan layer "l0.fc2" columns = 128
        from %shard : tensor<?xindex>
    ```
  }];
  let arguments = (ins StrAttr:$layer, Optional<Index>:$block,
                       Hetero_PositiveI64:$columns, Index:$source);
  let results = (outs 1DTensorOf<[Index]>:$received, I1:$migrates);
  let assemblyFormat = [{
    `layer` $layer (`block` $block^)? `columns` `=` $columns `from` $source
    attr-dict `:` type($received)
  }];
  let hasVerifier = 1;
}

def Hetero_MigratedColumnsOp : Hetero_Op<"migrated_columns", [
    MemoryEffects<[MemRead]>,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "All the columns another shard's layer migrates";
  let description = [{
    The whole set that `hetero.migration_plan` hands out in blocks: every
    column of the `columns` contraction columns of shard `source`'s layer
    `layer` that `source` migrates in the current iteration (`migrated`,
    the same on every rank of the group; empty when none), and where this
    rank's block of them starts in that list (`first`: the rank's
    `received` of `hetero.migration_plan` is `migrated[first, first + n)`;
    0 when it receives none). A migrating shard sends only the rows of
    these columns, and each receiver finds its block at `first`.

    Example:

    ```mlir
    %migrated, %first = hetero.migrated_columns layer "l0.fc2" columns = 128
        from %shard : tensor<?xindex>
    ```
  }];
  let arguments = (ins StrAttr:$layer, Optional<Index>:$block,
                       Hetero_PositiveI64:$columns, Index:$source);
  let results = (outs 1DTensorOf<[Index]>:$migrated, Index:$first);
  let assemblyFormat = [{
    `layer` $layer (`block` $block^)? `columns` `=` $columns `from` $source
    attr-dict `:` type($migrated)
  }];
  let hasVerifier = 1;
}

def Hetero_GemmMarkOp : Hetero_Op<"gemm_mark", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Marks where a resized layer's GEMM starts or ends";
  let description = [{
    `hetero-resize` brackets each product it expands with `begin` and
    `end`. The runtime adds the time between them to the rank's GEMM time
    of the iteration (C_i of ZERO-resizing's Eq. 1, which the online
    planner of `hetero-run --prune target=min|mean` reads), and a rank whose
    GEMMs are emulated as slower (`HETERO_RT_SLOW_GEMM`) sleeps there in
    proportion to the GEMM it ran. `hetero-partition-tp{migration=true}`
    brackets the GEMMs a rank runs for another rank's migrated columns with
    `begin_migrated` and `end_migrated`: they are slowed the same way but
    counted apart, so that the planner sees each rank's own work.

    Example:

    ```mlir
    hetero.gemm_mark begin
    %y = scf.if %whole -> (tensor<4x16xf32>) { ... }
    hetero.gemm_mark end
    ```
  }];
  let arguments = (ins Hetero_GemmEvent:$event);
  let assemblyFormat = "$event attr-dict";
}

def Hetero_ObserveWeightOp : Hetero_Op<"observe_weight", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Shows a resized layer's weight to the priority statistics";
  let description = [{
    ZERO-Pri ranks the contraction columns of a layer by how much the
    weight rows that multiply them changed over an epoch, and prunes those
    that changed least first (`hetero-run --prune order=priority`).
    `hetero-resize{priority=true}` reads each layer's forward weight `W`
    (K x N, one row per contraction column) once per iteration; at the first
    iteration of an epoch the runtime measures each row's mean absolute
    change since the previous epoch's copy and takes a new copy. The rows
    of `weight` are the `columns` of the layer's `hetero.prune_plan`.

    Example:

    ```mlir
    hetero.observe_weight %w layer "l0.fc" : tensor<64x16xf32>
    ```
  }];
  let arguments = (ins 2DTensorOf<[F32]>:$weight, StrAttr:$layer,
                       Optional<Index>:$block);
  let assemblyFormat = [{
    $weight `layer` $layer (`block` $block^)? attr-dict `:` type($weight)
  }];
  let hasVerifier = 1;
}

def Hetero_PreviousProductOp : Hetero_Op<"previous_product", [
    MemoryEffects<[MemRead]>,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "The unpruned product of a layer from the previous iteration";
  let description = [{
    Same imputation (`hetero.impute_cols same`) fills a pruned column of a
    gradient with its value from the previous iteration. The runtime keeps,
    per layer and product, the values `hetero.keep_product` handed it in
    the order of the iteration. A `previous_product` after n keeps of this
    iteration returns the (n+1)-th value kept in the previous one, the
    value that this iteration's next keep replaces (all zero when there is
    none: the first iteration, or a shape that differs). So each occurrence
    of a product (a micro-batch, a block sharing the layer key) reads its
    own previous value, in a schedule that repeats every iteration.

    Example:

    ```mlir
    %last = hetero.previous_product layer "l0.fc" product = grad_weight
        : tensor<64x16xf32>
    ```
  }];
  let arguments = (ins StrAttr:$layer, Hetero_MatmulProduct:$product);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    `layer` $layer `product` `=` $product attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def Hetero_KeepProductOp : Hetero_Op<"keep_product", [
    MemoryEffects<[MemWrite]>]> {
  let summary = "Keeps a layer's unpruned product for the next iteration";
  let description = [{
    Hands the runtime this iteration's unpruned (computed or imputed) value
    of a layer's product, which the next iteration's
    `hetero.previous_product` of the same layer and product returns (the
    n-th kept value to the question asked after n - 1 keeps). `hetero-resize` keeps every
    `grad_input` and `grad_weight` whose layer imputes `same`, whether or
    not the rank pruned in that iteration.

    Example:

    ```mlir
    hetero.keep_product %dw layer "l0.fc" product = grad_weight
        : tensor<64x16xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$value, StrAttr:$layer,
                       Hetero_MatmulProduct:$product);
  let assemblyFormat = [{
    $value `layer` $layer `product` `=` $product attr-dict `:` type($value)
  }];
  let hasVerifier = 1;
}

def Hetero_SelectColsOp : Hetero_Op<"select_cols", [
    Pure, AllElementTypesMatch<["source", "result"]>,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "Gathers the kept slices of a tensor along one axis";
  let description = [{
    `result` holds the slices `source[..., indices[i], ...]` along `axis`,
    in the order of `indices`. Used to shrink a weight shard to the columns a
    straggler still computes.

    Example:

    ```mlir
    %ws = hetero.select_cols %w[%kept] axis = 1
        : tensor<64x256xf32>, tensor<?xindex> -> tensor<64x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$source,
                       1DTensorOf<[Index, AnySignlessInteger]>:$indices,
                       Hetero_I64Attr:$axis);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $source `[` $indices `]` `axis` `=` $axis attr-dict
    `:` type($source) `,` type($indices) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Hetero_ImputeColsOp : Hetero_Op<"impute_cols", [
    Pure, AllElementTypesMatch<["source", "result"]>,
    OptionalTypesMatchWith<"previous has the result's type", "result",
                           "previous",
                   "$_self">,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "Scatters computed slices back and imputes the pruned ones";
  let description = [{
    The inverse of `hetero.select_cols`: slice `i` of `source` along `axis`
    is written to position `indices[i]` of the result; every other position
    is filled according to `impute`: `zero`; `average`, the mean of the
    computed slices at the same position along the other axes (for a
    gradient `dW` pruned by rows: each output column's mean over the kept
    rows; for `dX` pruned by columns: each token's mean over the kept
    columns); or `same`, the value at that position of `previous`, the
    unpruned result of the previous iteration (`hetero.previous_product`).
    `previous` is given exactly for `same`.

    Example:

    ```mlir
    %y = hetero.impute_cols zero %ys[%kept] axis = 1
        : tensor<16x?xf32>, tensor<?xindex> -> tensor<16x256xf32>
    %dw = hetero.impute_cols same %part[%kept] axis = 0 previous %last
        : tensor<?x16xf32>, tensor<?xindex> -> tensor<64x16xf32>
    ```
  }];
  let arguments = (ins Hetero_Imputation:$imputation,
                       AnyRankedTensor:$source,
                       1DTensorOf<[Index, AnySignlessInteger]>:$indices,
                       Hetero_I64Attr:$axis,
                       Optional<AnyRankedTensor>:$previous);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $imputation $source `[` $indices `]` `axis` `=` $axis
    (`previous` $previous^)? attr-dict
    `:` type($source) `,` type($indices) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

class Hetero_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : Hetero_Op<mnemonic, !listconcat(traits, [
        DeclareOpInterfaceMethods<SymbolUserOpInterface>,
        DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>,
        Hetero_CollectiveOpInterface])> {
  // Results print as %all_reduce, %recv, ...
  let extraClassDefinition = [{
    void $cppClass::getAsmResultNames(::mlir::OpAsmSetValueNameFn setNameFn) {
      ::hetero::nameResultsAfterOp(getOperation(), setNameFn);
    }
  }];
  // The process group: the ranks of `grid` along `grid_axes`, or the whole
  // world when no grid is named.
  dag groupArgs = (ins
    OptionalAttr<FlatSymbolRefAttr>:$grid,
    DefaultValuedAttr<Hetero_GridAxesAttr, "{}">:$grid_axes
  );
  string groupFormat = "(`on` $grid^ (`axes` `=` $grid_axes^)?)?";
}

def Hetero_AllReduceOp : Hetero_CollectiveOp<"all_reduce", [
    Pure, SameOperandsAndResultType]> {
  let summary = "All-reduce, optionally compressed or sparse";
  let description = [{
    Reduces `input` over the group and returns the result on every rank.
    A compressor whose outputs cannot be summed (sparsifiers, sign and 1-bit
    compressors, QSGD) needs `scheme = allgather` or `scheme = alltoall`. A
    sparse scheme applies to sum and average reductions of uncompressed
    gradients: Zen's push and pull with a COO or hash-bitmap pull (`coo`,
    `hash_bitmap`), AGsparse (`allgather`: every rank's pairs to every
    rank), or `online`, which the runtime decides at every call from the
    measured non-zeros.

    Example:

    ```mlir
    %g = hetero.all_reduce %dw on @devices axes = [0] reduction = avg
        compress <topk, ratio = 0.01, scheme = allgather>
        : tensor<64x256xf32>
    %e = hetero.all_reduce %demb sparse = hash_bitmap : tensor<1024x64xf32>
    ```
  }];
  let arguments = !con(groupArgs, (ins
    AnyRankedTensor:$input,
    DefaultValuedAttr<Hetero_Reduction, "::hetero::Reduction::sum">
        :$reduction,
    OptionalAttr<Hetero_CompressAttr>:$compress,
    DefaultValuedAttr<Hetero_SparseFormat, "::hetero::SparseFormat::dense">
        :$sparse
  ));
  let results = (outs AnyRankedTensor:$result);
  let builders = [
    // A dense all-reduce of `input` over the ranks of `grid` along
    // `gridAxes` (the world when `grid` is null).
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::FlatSymbolRefAttr":$grid,
                   "::llvm::ArrayRef<int16_t>":$gridAxes,
                   CArg<"::hetero::Reduction", "::hetero::Reduction::sum">
                       :$reduction,
                   CArg<"::hetero::CompressAttr", "{}">:$compress), [{
      build($_builder, $_state, input.getType(), grid, gridAxes, input,
            reduction, compress, ::hetero::SparseFormat::dense);
    }]>
  ];
  let assemblyFormat = "$input " # groupFormat # [{
    (`reduction` `=` $reduction^)? (`compress` $compress^)?
    (`sparse` `=` $sparse^)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Hetero_AllGatherOp : Hetero_CollectiveOp<"all_gather", [
    Pure, AllElementTypesMatch<["input", "result"]>,
    AllRanksMatch<["input", "result"]>]> {
  let summary = "Concatenates the tensors of all ranks along one axis";
  let description = [{
    Every rank receives the concatenation, along `axis`, of the inputs of all
    ranks of the group in rank order.

    Example:

    ```mlir
    %all = hetero.all_gather %x on @devices axes = [1] axis = 0
        : tensor<4x8xf32> -> tensor<16x8xf32>
    ```
  }];
  let arguments = !con(groupArgs, (ins
    AnyRankedTensor:$input,
    Hetero_I64Attr:$axis,
    OptionalAttr<Hetero_CompressAttr>:$compress
  ));
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input " # groupFormat # [{
    `axis` `=` $axis (`compress` $compress^)? attr-dict
    `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Hetero_ReduceScatterOp : Hetero_CollectiveOp<"reduce_scatter", [
    Pure, AllElementTypesMatch<["input", "result"]>,
    AllRanksMatch<["input", "result"]>]> {
  let summary = "Reduces over the group and leaves one slice on each rank";
  let description = [{
    Reduces `input` over the group and splits the result along `axis`; rank
    `r` keeps slice `r`.

    Example:

    ```mlir
    %part = hetero.reduce_scatter %g axis = 0 : tensor<16x8xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = !con(groupArgs, (ins
    AnyRankedTensor:$input,
    Hetero_I64Attr:$axis,
    DefaultValuedAttr<Hetero_Reduction, "::hetero::Reduction::sum">
        :$reduction,
    OptionalAttr<Hetero_CompressAttr>:$compress
  ));
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input " # groupFormat # [{
    `axis` `=` $axis (`reduction` `=` $reduction^)? (`compress` $compress^)?
    attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Hetero_BroadcastOp : Hetero_CollectiveOp<"broadcast", [
    Pure, SameOperandsAndResultType]> {
  let summary = "Copies the tensor of the root rank to every rank";
  let description = [{
    Example:

    ```mlir
    %w0 = hetero.broadcast %w root = 0 : tensor<64x64xf32>
    ```
  }];
  let arguments = !con(groupArgs, (ins
    AnyRankedTensor:$input,
    Hetero_NonNegativeI64:$root
  ));
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input " # groupFormat # [{
    `root` `=` $root attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Hetero_ReduceOp : Hetero_CollectiveOp<"reduce", [
    Pure, SameOperandsAndResultType]> {
  let summary = "Reduces over the group onto the root rank";
  let description = [{
    The root receives the reduction; the result on other ranks is
    unspecified.

    Example:

    ```mlir
    %sum = hetero.reduce %g root = 0 reduction = max : tensor<8xf32>
    ```
  }];
  let arguments = !con(groupArgs, (ins
    AnyRankedTensor:$input,
    Hetero_NonNegativeI64:$root,
    DefaultValuedAttr<Hetero_Reduction, "::hetero::Reduction::sum">
        :$reduction
  ));
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input " # groupFormat # [{
    `root` `=` $root (`reduction` `=` $reduction^)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Hetero_AllToAllOp : Hetero_CollectiveOp<"all_to_all", [
    Pure, AllElementTypesMatch<["input", "result"]>,
    AllRanksMatch<["input", "result"]>]> {
  let summary = "Splits along one axis, exchanges, concatenates along another";
  let description = [{
    Rank `r` sends slice `q` of `input` along `split_axis` to rank `q` and
    concatenates what it receives along `concat_axis`.

    Example:

    ```mlir
    %y = hetero.all_to_all %x split_axis = 0 concat_axis = 1
        : tensor<8x4xf32> -> tensor<2x16xf32>
    ```
  }];
  let arguments = !con(groupArgs, (ins
    AnyRankedTensor:$input,
    Hetero_I64Attr:$split_axis,
    Hetero_I64Attr:$concat_axis,
    OptionalAttr<Hetero_CompressAttr>:$compress
  ));
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input " # groupFormat # [{
    `split_axis` `=` $split_axis `concat_axis` `=` $concat_axis
    (`compress` $compress^)? attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Hetero_SendOp : Hetero_CollectiveOp<"send"> {
  let summary = "Point-to-point send of a tensor";
  let description = [{
    Sends `input` to rank `peer` of the group with message tag `tag`.

    Example:

    ```mlir
    hetero.send %act to 1 tag = 7 : tensor<16x64xf32>
    ```
  }];
  let arguments = !con(groupArgs, (ins
    AnyRankedTensor:$input,
    Hetero_I64Attr:$peer,
    DefaultValuedAttr<Hetero_NonNegativeI64, "0">:$tag
  ));
  let assemblyFormat = "$input `to` $peer " # groupFormat # [{
    (`tag` `=` $tag^)? attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def Hetero_RecvOp : Hetero_CollectiveOp<"recv"> {
  let summary = "Point-to-point receive of a tensor";
  let description = [{
    Receives a tensor of the result type from rank `peer` with tag `tag`.

    Example:

    ```mlir
    %act = hetero.recv from 0 tag = 7 : tensor<16x64xf32>
    ```
  }];
  let arguments = !con(groupArgs, (ins
    Hetero_I64Attr:$peer,
    DefaultValuedAttr<Hetero_NonNegativeI64, "0">:$tag
  ));
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "`from` $peer " # groupFormat # [{
    (`tag` `=` $tag^)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def Hetero_BucketOp : Hetero_CollectiveOp<"bucket", [
    Pure, DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "All-reduce of several gradients fused into one buffer";
  let description = [{
    Fuses its operands into one buffer, compresses it once (if `compress` is
    given), all-reduces it and splits it back (Cupcake tensor fusion). Result
    `i` has the type of operand `i`. All operands share an element type.

    Example:

    ```mlir
    %a, %b = hetero.bucket %ga, %gb reduction = avg
        compress <fp16> : tensor<64xf32>, tensor<8x8xf32>
    ```
  }];
  let arguments = !con(groupArgs, (ins
    Variadic<AnyRankedTensor>:$inputs,
    DefaultValuedAttr<Hetero_Reduction, "::hetero::Reduction::sum">
        :$reduction,
    OptionalAttr<Hetero_CompressAttr>:$compress
  ));
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = "$inputs " # groupFormat # [{
    (`reduction` `=` $reduction^)? (`compress` $compress^)? attr-dict
    `:` type($inputs)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Training data: the runtime's text corpus
//===----------------------------------------------------------------------===//

// Token ids; the verifiers require rank 2 (sequences x tokens).
def Hetero_TokenBatch : StaticShapeTensorOf<[I32]>;

def Hetero_CorpusBatchOp : Hetero_Op<"corpus_batch", [
    MemoryEffects<[MemRead]>, AllTypesMatch<["input", "target"]>]> {
  let summary = "A micro-batch of token sequences from the runtime's corpus";
  let description = [{
    Reads `sequences x tokens` windows of the text corpus the runtime was
    given (`hetero-run --corpus`), as character-level token ids below
    `vocab`, and the same windows shifted by one character (the next-token
    targets). The corpus is split into `replicas` contiguous shards;
    `replica` reads only its own. The window offsets are a deterministic
    function of `step`, `replica`, `microbatch` and the sequence, so every
    run (distributed or the single-process reference) reads the same data.

    Example:

    ```mlir
    %tokens, %next = hetero.corpus_batch %step, %replica, %mb vocab = 80
        replicas = 2 : tensor<4x32xi32>
    ```
  }];
  let arguments = (ins I64:$step, I64:$replica, I64:$microbatch,
                       Hetero_I64Attr:$vocab, Hetero_PositiveI64:$replicas);
  let results = (outs Hetero_TokenBatch:$input, Hetero_TokenBatch:$target);
  let assemblyFormat = [{
    $step `,` $replica `,` $microbatch `vocab` `=` $vocab
    `replicas` `=` $replicas attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def Hetero_SampleContextOp : Hetero_Op<"sample_context", [
    MemoryEffects<[MemRead]>]> {
  let summary = "The context windows of the runtime's text generation";
  let description = [{
    The runtime generates one text stream per sequence of the result
    (started from `hetero-run --prompt`). Returns, per stream, its last
    `tokens` characters as token ids below `vocab`, left-aligned and padded
    with id 0 when the stream is shorter. `hetero.sample_next` reads the
    logits at each stream's last position.

    Example:

    ```mlir
    %context = hetero.sample_context vocab = 80 : tensor<1x32xi32>
    ```
  }];
  let arguments = (ins Hetero_I64Attr:$vocab);
  let results = (outs Hetero_TokenBatch:$context);
  let assemblyFormat = "`vocab` `=` $vocab attr-dict `:` type($context)";
  let hasVerifier = 1;
}

def Hetero_SampleNextOp : Hetero_Op<"sample_next", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Appends one sampled character to each generated stream";
  let description = [{
    `logits` holds the next-token logits of every position of the context
    that `hetero.sample_context` returned (stream-major rows, one column per
    token id). For each stream the runtime takes the row of its last
    position, samples a token (greedily at temperature 0, else from the
    softmax of logits / temperature with the run's seed) and appends it.
    The result is the mean log-probability of the chosen tokens.

    Example:

    ```mlir
    %logp = hetero.sample_next %logits : tensor<32x80xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$logits);
  let results = (outs F32:$logProbability);
  let assemblyFormat = "$logits attr-dict `:` type($logits)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Fault tolerance
//===----------------------------------------------------------------------===//

/// Training state: statically shaped tensors of integers or floats, whose
/// bytes a checkpoint copies.
def Hetero_StateTensor : StaticShapeTensorOf<[AnyInteger, AnyFloat]>;

def Hetero_CheckpointOp : Hetero_Op<"checkpoint"> {
  let summary = "In-memory checkpoint of a rank's training state (Gemini)";
  let description = [{
    Opens the checkpoint of `tensors` (a rank's parameters and optimizer
    state as they are at this point: the state after iteration
    `iteration` - 1) when `iteration` is a multiple of `every`. Its
    `replicas` copies live in the CPU memory of `replicas` machines out of
    the `world` ranks, the local one included: `group` placement splits the
    world into groups of `replicas` ranks that hold each other's
    checkpoints (it needs `world` divisible by `replicas`); `ring` places
    the copies on the next ranks around a ring; `mixed` is Gemini's
    Algorithm 6.1, groups with the remainder in a ring.

    The local copy is a memory copy made here. The `replicas` - 1 remote
    copies travel as `hetero.ckpt_chunk` ops that
    hetero-interleave-checkpoints places into the step's idle network
    spans, and a `hetero.ckpt_commit` before the state is overwritten makes
    the checkpoint complete on every rank.

    Example:

    ```mlir
    hetero.checkpoint %w0, %w1 at %step replicas = 2 of 8 placement = group
        : tensor<64x64xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins
    Variadic<Hetero_StateTensor>:$tensors,
    I64:$iteration,
    Hetero_PositiveI64:$replicas,
    Hetero_PositiveI64:$world,
    Hetero_ReplicaPlacement:$placement,
    DefaultValuedAttr<Hetero_PositiveI64, "1">:$every
  );
  let assemblyFormat = [{
    $tensors `at` $iteration `replicas` `=` $replicas `of` $world
    `placement` `=` $placement (`every` `=` $every^)? attr-dict `:`
    type($tensors)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The bytes of all tensors: the size of one checkpoint shard.
    int64_t getShardBytes();
  }];
}

def Hetero_CkptChunkOp : Hetero_Op<"ckpt_chunk"> {
  let summary = "Sends one chunk of a checkpoint to a peer's CPU memory";
  let description = [{
    Sends bytes `[offset, offset + bytes)` of `tensor`, one of the tensors
    of a `hetero.checkpoint` before it in the block, as part of remote copy
    `copy` (0 .. replicas - 2) of the checkpoint: to the `copy`-th peer of
    the rank's replica set. The send does not wait for its receive. `span`
    records the idle network span of the step that
    hetero-interleave-checkpoints placed the chunk in.

    Example:

    ```mlir
    hetero.ckpt_chunk %w offset 0 bytes 4096 copy 0 span 2 : tensor<64x64xf32>
    ```
  }];
  let arguments = (ins
    Hetero_StateTensor:$tensor,
    Hetero_NonNegativeI64:$offset,
    Hetero_PositiveI64:$bytes,
    Hetero_NonNegativeI64:$copy,
    Hetero_NonNegativeI64:$span
  );
  let assemblyFormat = [{
    $tensor `offset` $offset `bytes` $bytes `copy` $copy `span` $span
    attr-dict `:` type($tensor)
  }];
  let hasVerifier = 1;
}

def Hetero_CkptCommitOp : Hetero_Op<"ckpt_commit"> {
  let summary = "Completes the checkpoint opened before it (Gemini)";
  let description = [{
    Waits until every chunk of the `hetero.checkpoint` before it in the
    block has reached its peer and every chunk this rank hosts for its peers
    has arrived, then agrees with all ranks that the iteration's checkpoint
    is complete everywhere and only then replaces the previous complete
    checkpoint with it. It must come before anything overwrites the
    checkpointed state (the optimizer update); chunks that did not fit into
    the step's idle spans are sent just before it and delay the update.

    Example:

    ```mlir
    hetero.ckpt_commit
    ```
  }];
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Semi-decentralised synchronisation
//===----------------------------------------------------------------------===//

def Hetero_GroupSyncOp : Hetero_Op<"group_sync", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Averages a stage's parameters over its replicas (SDPipe)";
  let description = [{
    Synchronises the data-parallel replicas of one pipeline stage: the rank
    at (stage, replica) of `grid` (axis 0 the stage, axis 1 the replica)
    passes its parameters and gets them back averaged over a group of the
    replicas of its stage. With `policy = allreduce` the group is every
    replica. With `policy = dynamic` the rank reports READY to the
    coordinator and averages with the group it is given: the replicas of
    its stage that were ready within the window, grown when the last
    `period` groups would not connect the stage's replicas (see
    `#hetero.sync`). The members' results are equal; the mean over all
    replicas is preserved.

    hetero-lower-pipeline emits one after each local optimizer step of a
    pipeline with `sync = #hetero.sync<policy = dynamic, ...>`, so the op
    comes after the parameters were updated (SDPipe's Algorithm 1).

    Example:

    ```mlir
    %w0n, %w1n = hetero.group_sync %w0, %w1 on @grid
        <policy = dynamic, period = 8> : tensor<64x64xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins
    Variadic<AnyRankedTensor>:$params,
    FlatSymbolRefAttr:$grid,
    Hetero_SyncAttr:$sync
  );
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $params `on` $grid $sync attr-dict `:` type($params)
  }];
  let hasVerifier = 1;
}

#endif // HETERO_DIALECT_HETEROOPS_TD
