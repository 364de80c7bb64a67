//===- InitAll.h - register everything hetero provides ----------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// One call each for embedders: a tool or compiler that wants the hetero
// dialect, the upstream dialects hetero programs use, and every hetero pass
// and pipeline calls registerAllDialects() on its registry and
// registerAllPasses() once at start-up. Upstream passes stay the
// embedder's choice: hetero's pipelines are built from pass constructors
// and need none of them registered.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_INITALL_H
#define HETERO_INITALL_H

namespace mlir {
class DialectRegistry;
class MLIRContext;
} // namespace mlir

namespace hetero {

/// Adds the hetero dialect and the upstream dialects that hetero programs
/// are written in (func, arith, math, tensor, linalg, shard, and memref,
/// bufferization and scf for training steps) to `registry`.
void registerAllDialects(mlir::DialectRegistry &registry);

/// Registers the dialects of registerAllDialects() with `context` and loads
/// them.
void registerAndLoadAllDialects(mlir::MLIRContext &context);

/// Registers every hetero pass and pass pipeline with the global registry,
/// so that they can be named on a command line or in a pipeline string.
/// Registers no upstream pass.
void registerAllPasses();

} // namespace hetero

#endif // HETERO_INITALL_H
