//===- HeteroAttrs.td - hetero enums and attributes --------*- tablegen -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_DIALECT_HETEROATTRS_TD
#define HETERO_DIALECT_HETEROATTRS_TD

include "hetero/Dialect/HeteroBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

// An enum used only as a parameter of a hetero attribute.
class Hetero_I32Enum<string name, string summary, list<I32EnumAttrCase> cases>
    : I32EnumAttr<name, summary, cases> {
  let cppNamespace = "::hetero";
  let genSpecializedAttr = 0;
}

// An enum attribute of ops; it prints as a bare keyword: `activation`.
class Hetero_I32EnumAttr<string name, string summary,
                         list<I32EnumAttrCase> cases>
    : I32EnumAttr<name, summary, cases> {
  let cppNamespace = "::hetero";
}

def Hetero_Compressor : Hetero_I32Enum<"Compressor", "gradient compressor", [
  I32EnumAttrCase<"none", 0>,
  I32EnumAttrCase<"fp16", 1>,
  I32EnumAttrCase<"bf16", 2>,
  I32EnumAttrCase<"topk", 3>,
  I32EnumAttrCase<"dgc", 4>,
  I32EnumAttrCase<"randomk", 5>,
  I32EnumAttrCase<"efsignsgd", 6>,
  I32EnumAttrCase<"onebit", 7>,
  I32EnumAttrCase<"qsgd", 8>
]>;

def Hetero_Placement : Hetero_I32Enum<"Placement",
    "device that runs compression", [
  I32EnumAttrCase<"gpu", 0>,
  I32EnumAttrCase<"cpu", 1>
]>;

def Hetero_CollectiveScheme : Hetero_I32Enum<"CollectiveScheme",
    "how a compressed tensor is aggregated", [
  I32EnumAttrCase<"allreduce", 0>,
  I32EnumAttrCase<"allgather", 1>,
  I32EnumAttrCase<"alltoall", 2>
]>;

def Hetero_SparseFormat : Hetero_I32EnumAttr<"SparseFormat",
    "wire format of a gradient", [
  I32EnumAttrCase<"dense", 0>,
  I32EnumAttrCase<"coo", 1>,
  I32EnumAttrCase<"hash_bitmap", 2>,
  I32EnumAttrCase<"allgather", 3>,
  I32EnumAttrCase<"online", 4>
]>;

def Hetero_Reduction : Hetero_I32EnumAttr<"Reduction", "reduction kind", [
  I32EnumAttrCase<"sum", 0>,
  I32EnumAttrCase<"avg", 1>,
  I32EnumAttrCase<"max", 2>,
  I32EnumAttrCase<"min", 3>,
  I32EnumAttrCase<"prod", 4>
]>;

def Hetero_PruneMode : Hetero_I32EnumAttr<"PruneMode",
    "which dimension of a tensor-parallel matmul is sharded", [
  I32EnumAttrCase<"col", 0>,
  I32EnumAttrCase<"row", 1>
]>;

def Hetero_Imputation : Hetero_I32EnumAttr<"Imputation",
    "value written in place of pruned columns", [
  I32EnumAttrCase<"zero", 0>,
  I32EnumAttrCase<"average", 1>,
  I32EnumAttrCase<"same", 2>
]>;

def Hetero_MatmulProduct : Hetero_I32EnumAttr<"MatmulProduct",
    "which of a linear layer's three products a matmul computes", [
  I32EnumAttrCase<"forward", 0>,
  I32EnumAttrCase<"grad_input", 1>,
  I32EnumAttrCase<"grad_weight", 2>
]>;

def Hetero_Payload : Hetero_I32EnumAttr<"Payload",
    "what a pipeline transfer carries", [
  I32EnumAttrCase<"activation", 0>,
  I32EnumAttrCase<"gradient", 1>
]>;

def Hetero_GemmEvent : Hetero_I32EnumAttr<"GemmEvent",
    "the start or the end of a resized layer's GEMM, or of a GEMM this "
    "rank runs for another's migrated columns", [
  I32EnumAttrCase<"begin", 0>,
  I32EnumAttrCase<"end", 1>,
  I32EnumAttrCase<"begin_migrated", 2>,
  I32EnumAttrCase<"end_migrated", 3>
]>;

def Hetero_TaskKind : Hetero_I32EnumAttr<"TaskKind",
    "a compute task of a stage program", [
  I32EnumAttrCase<"forward", 0>,
  I32EnumAttrCase<"backward", 1>
]>;

def Hetero_ReplicaPlacement : Hetero_I32EnumAttr<"ReplicaPlacement",
    "where checkpoint replicas live", [
  I32EnumAttrCase<"group", 0>,
  I32EnumAttrCase<"ring", 1>,
  I32EnumAttrCase<"mixed", 2>
]>;

def Hetero_SyncPolicy : Hetero_I32Enum<"SyncPolicy",
    "data-parallel synchronisation policy", [
  I32EnumAttrCase<"allreduce", 0>,
  I32EnumAttrCase<"dynamic", 1>
]>;

def Hetero_SyncSemantics : Hetero_I32Enum<"SyncSemantics",
    "which groups must connect the replicas of a stage", [
  I32EnumAttrCase<"sliding", 0>,
  I32EnumAttrCase<"periodic", 1>
]>;

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

def Hetero_CompressAttr : Hetero_Attr<"Compress", "compress"> {
  let summary = "How a gradient is compressed before it is communicated";
  let description = [{
    Names a compressor and its parameters. Only the compressor is required;
    every other parameter has a default and is printed only when it differs
    from it.

    * `ratio`: fraction of the elements kept by sparsifiers (`topk`, `dgc`,
      `randomk`), in (0, 1]; default 1.
    * `levels`: quantisation levels of `qsgd`, 1 to 127 (a sign and 7 bits
      a coordinate); default 127.
    * `error_feedback`: keep the compression residual and add it to the next
      gradient; default off.
    * `placement`: `gpu` (default) or `cpu`, where compression runs.
    * `scheme`: `allreduce` (default; only for linear compressors), or
      `allgather` (indivisible) / `alltoall` (divisible) aggregation for
      compressors whose outputs cannot be summed.
    * `node_size`: hierarchical aggregation over nodes of this many
      consecutive ranks: a dense sum inside each node, the compressed
      collective among one rank per node, then a broadcast inside each
      node; default 1 (flat).

    Example:

    ```mlir
    #hetero.compress<topk, ratio = 0.01, error_feedback, scheme = allgather>
    #hetero.compress<qsgd, levels = 16, placement = cpu, scheme = alltoall>
    #hetero.compress<topk, ratio = 0.01, scheme = allgather, node_size = 8>
    #hetero.compress<fp16>
    ```
  }];
  let parameters = (ins
    "::hetero::Compressor":$compressor,
    DefaultValuedParameter<"::llvm::APFloat", "::llvm::APFloat(1.0)">:$ratio,
    DefaultValuedParameter<"int64_t",
                           "::hetero::CompressAttr::kDefaultLevels">:$levels,
    DefaultValuedParameter<"bool", "false">:$errorFeedback,
    DefaultValuedParameter<"::hetero::Placement",
                           "::hetero::Placement::gpu">:$placement,
    DefaultValuedParameter<"::hetero::CollectiveScheme",
                           "::hetero::CollectiveScheme::allreduce">:$scheme,
    DefaultValuedParameter<"int64_t", "1">:$nodeSize
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    // A compressor with the defaults of placement (gpu), scheme
    // (allreduce) and node size (1).
    AttrBuilder<(ins "::hetero::Compressor":$compressor,
                     CArg<"double", "1.0">:$ratio,
                     CArg<"bool", "false">:$errorFeedback,
                     CArg<"int64_t", "kDefaultLevels">:$levels), [{
      return $_get($_ctxt, compressor, ::llvm::APFloat(ratio),
                   levels, errorFeedback, ::hetero::Placement::gpu,
                   ::hetero::CollectiveScheme::allreduce, 1);
    }]>
  ];
  let extraClassDeclaration = [{
    /// `levels` when it is not given: the most the runtime's QSGD payload
    /// holds, a sign and 7 bits a coordinate.
    static constexpr int64_t kDefaultLevels = 127;

    /// The compression in the MLIR-free terms of hetero/Support/WireSize.h.
    ::hetero::wire::Compression getWireCompression() const;

    /// True when compressed tensors of different ranks can be summed
    /// element-wise, so that a plain all-reduce aggregates them.
    bool isLinear() const {
      return ::hetero::wire::isLinear(getWireCompression().compressor);
    }
  }];
}

def Hetero_SgdAttr : Hetero_Attr<"Sgd", "sgd"> {
  let summary = "Stochastic gradient descent, optionally with momentum";
  let description = [{
    The optimizer of a `hetero.pipeline`, with PyTorch's semantics
    (`torch.optim.SGD`, no dampening, no weight decay): without momentum
    `w -= lr * g`; with momentum `mu` a buffer starts at the first step's
    gradient and then follows `buf = mu * buf + g`, and `w -= lr * buf`.

    Example:

    ```mlir
    #hetero.sgd<lr = 5.0e-02>
    #hetero.sgd<lr = 1.0e-01, momentum = 9.0e-01>
    ```
  }];
  let parameters = (ins "::mlir::FloatAttr":$lr,
                        OptionalParameter<"::mlir::FloatAttr">:$momentum);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def Hetero_AdamAttr : Hetero_Attr<"Adam", "adam"> {
  let summary = "Adam with bias correction (torch.optim.Adam)";
  let description = [{
    The optimizer of a `hetero.pipeline`, with PyTorch's semantics:
    `m = beta1 m + (1 - beta1) g`, `v = beta2 v + (1 - beta2) g^2`,
    `w -= lr * m_hat / (sqrt(v_hat) + eps)` with the bias-corrected moments
    `m_hat = m / (1 - beta1^t)` and `v_hat = v / (1 - beta2^t)` at step
    `t = 1, 2, ...`. Omitted parameters take PyTorch's defaults
    (beta1 = 0.9, beta2 = 0.999, eps = 1e-8).

    Example:

    ```mlir
    #hetero.adam<lr = 1.0e-03>
    #hetero.adam<lr = 1.0e-03, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>
    ```
  }];
  let parameters = (ins "::mlir::FloatAttr":$lr,
                        OptionalParameter<"::mlir::FloatAttr">:$beta1,
                        OptionalParameter<"::mlir::FloatAttr">:$beta2,
                        OptionalParameter<"::mlir::FloatAttr">:$eps);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The parameters with PyTorch's defaults for those omitted.
    double getBeta1Value() const;
    double getBeta2Value() const;
    double getEpsValue() const;
  }];
}

def Hetero_OptimizerAttr : AnyAttrOf<[Hetero_SgdAttr, Hetero_AdamAttr]>;

def Hetero_SyncAttr : Hetero_Attr<"Sync", "sync"> {
  let summary = "How the data-parallel replicas of a stage synchronise";
  let description = [{
    The synchronisation of a `hetero.pipeline`'s replicas (grid axis 1) and
    of the `hetero.group_sync` ops that hetero-lower-pipeline emits for it.
    `policy` is required; every other parameter has a default and is printed
    only when it differs from it.

    * `policy = allreduce`: the gradients are averaged over all replicas
      before one optimizer step (synchronous data parallelism).
    * `policy = dynamic` (SDPipe): each replica takes a local optimizer step
      and then averages its weights with the replicas of its stage that are
      ready within a window; a central coordinator forms the groups.
    * `window`: T_max as a fraction of the measured iteration time, >= 0;
      default 1/N for N replicas. 0 makes every group a singleton unless
      connectivity is enforced; a very large value waits for all replicas.
    * `period`: P, the last P groups of a stage (with the candidate) must
      connect all its replicas; default 10.
    * `semantics`: `sliding` (the paper; default) or `periodic` (the
      authors' code: a check every P x N updates).
    * `lock`: the single cross-stage enforcement token; default true. Off,
      two stages can wait for each other forever (SDPipe's Fig. 3).
    * `sync_every_microbatches`: a local step and a sync after every this
      many backward passes (and after the step's last); default once per
      step.
    * `adam_var_rescale`: with `#hetero.adam`, the local step rebuilds the
      second moment as m2^2 + (v - m2^2) / N from an extra first moment m2
      decayed with beta2; default false.

    Example:

    ```mlir
    #hetero.sync<policy = allreduce>
    #hetero.sync<policy = dynamic, period = 4, window = 0.5, lock = false>
    #hetero.sync<policy = dynamic, sync_every_microbatches = 2, adam_var_rescale = true>
    ```
  }];
  let parameters = (ins
    "::hetero::SyncPolicy":$policy,
    OptionalParameter<"::mlir::FloatAttr">:$window,
    DefaultValuedParameter<"int64_t", "10">:$period,
    DefaultValuedParameter<"::hetero::SyncSemantics",
                           "::hetero::SyncSemantics::sliding">:$semantics,
    DefaultValuedParameter<"bool", "true">:$lock,
    DefaultValuedParameter<"int64_t", "0">:$syncEveryMicrobatches,
    DefaultValuedParameter<"bool", "false">:$adamVarRescale
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    bool isDynamic() const {
      return getPolicy() == ::hetero::SyncPolicy::dynamic;
    }
  }];
}

def Hetero_CheckpointAttr : Hetero_Attr<"Checkpoint", "checkpoint"> {
  let summary = "In-memory checkpoints of a pipeline's training state";
  let description = [{
    Gemini's in-memory checkpointing of a `hetero.pipeline`: after every
    `every`-th step, each rank's parameters and optimizer state are copied
    into CPU memory on `replicas` machines, its own included, chosen by
    `placement` over the ranks of the pipeline's grid (`mixed` by default:
    groups of `replicas` ranks, the remainder joining the last group as a
    ring). hetero-lower-pipeline emits one `hetero.checkpoint` per stage
    program; hetero-interleave-checkpoints cuts its remote copies into
    chunks placed in the step's network idle spans.

    Example:

    ```mlir
    #hetero.checkpoint<replicas = 2>
    #hetero.checkpoint<replicas = 3, placement = ring, every = 5>
    ```
  }];
  let parameters = (ins
    "int64_t":$replicas,
    DefaultValuedParameter<"::hetero::ReplicaPlacement",
                           "::hetero::ReplicaPlacement::mixed">:$placement,
    DefaultValuedParameter<"int64_t", "1">:$every
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // HETERO_DIALECT_HETEROATTRS_TD
