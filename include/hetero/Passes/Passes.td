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

#endif // HETERO_PASSES_PASSES_TD
