//===- HeteroInterfaces.td - hetero op interfaces ----------*- tablegen -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// What passes, the lowering and the summary ask of an op without naming it:
// the process group, reduction and compression of a collective; the
// micro-batch and schedule action of a stage program's task.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_DIALECT_HETEROINTERFACES_TD
#define HETERO_DIALECT_HETEROINTERFACES_TD

include "mlir/IR/OpBase.td"

def Hetero_CollectiveOpInterface : OpInterface<"CollectiveOpInterface"> {
  let cppNamespace = "::hetero";
  let description = [{
    An op that communicates over a process group: the ranks of a
    `shard.grid` along some of its axes, or the whole world when it names
    no grid. Its operands are the tensors this rank contributes. The
    reduction and the compression are those of the op when it has them.
  }];
  let methods = [
    InterfaceMethod<
      "The grid the group is taken from; null for the world.",
      "::mlir::FlatSymbolRefAttr", "getGridAttr", (ins),
      [{ return $_op.getGridAttr(); }]>,
    InterfaceMethod<
      "The grid axes spanned by the group; empty spans every axis.",
      "::llvm::ArrayRef<int16_t>", "getGridAxes", (ins),
      [{ return $_op.getGridAxes(); }]>,
    InterfaceMethod<
      "How contributions are combined; none for collectives that only move "
      "data.",
      "std::optional<::hetero::Reduction>", "getReductionKind", (ins),
      [{ return ::hetero::detail::reductionOf($_op); }]>,
    InterfaceMethod<
      "The compressor applied on the wire; null when uncompressed or when "
      "the op cannot be compressed.",
      "::hetero::CompressAttr", "getCompression", (ins),
      [{ return ::hetero::detail::compressionOf($_op); }]>,
    InterfaceMethod<
      "Sets the compressor (null removes it); ops that cannot be compressed "
      "must not be asked.",
      "void", "setCompression", (ins "::hetero::CompressAttr":$compress),
      [{ ::hetero::detail::setCompressionOf($_op, compress); }]>,
  ];
  let extraClassDeclaration = [{
    /// The grid op named by the group, or null for the world (or a name
    /// that resolves to nothing, which the verifier rejects).
    ::mlir::shard::GridOp getGrid();

    /// The number of ranks of the group when the grid's extents along its
    /// axes are static; std::nullopt for the world or a dynamic grid.
    std::optional<int64_t> getStaticGroupSize();

    /// Whether the op carries a compressor other than `none`.
    bool isCompressed() {
      ::hetero::CompressAttr compress = getCompression();
      return compress && compress.getCompressor() != ::hetero::Compressor::none;
    }
  }];
}

def Hetero_TaskOpInterface : OpInterface<"TaskOpInterface"> {
  let cppNamespace = "::hetero";
  let description = [{
    A task of a `hetero.stage_program`: one step of a stage's schedule,
    working on one micro-batch. Its action is the schedule library's view of
    it (hetero/Schedule/Kfkb.h), which the verifier, the simulator and the
    lowering of a pipeline share.
  }];
  let methods = [
    InterfaceMethod<"The micro-batch the task works on.", "int64_t",
      "getMicrobatch", (ins), [{ return $_op.getMicrobatch(); }]>,
    InterfaceMethod<"The task as a step of a stage program.",
      "::hetero::schedule::Action", "getAction">,
  ];
}

#endif // HETERO_DIALECT_HETEROINTERFACES_TD
