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

#endif // HETERO_PASSES_PASSES_TD
