//===- ToolDialects.h - what hetero's command-line tools parse --*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_TOOLS_TOOLDIALECTS_H
#define HETERO_TOOLS_TOOLDIALECTS_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace hetero {

/// What hetero-opt, hetero-run and hetero-fuzz parse: every upstream dialect
/// and extension (as mlir-opt, so that the output of any lowering step
/// parses again), the LLVM IR translations that gpu-module-to-binary and the
/// JIT go through, and hetero::registerAllDialects().
void registerToolDialects(mlir::DialectRegistry &registry);

} // namespace hetero

#endif // HETERO_TOOLS_TOOLDIALECTS_H
