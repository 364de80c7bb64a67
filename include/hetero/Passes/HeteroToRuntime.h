//===- HeteroToRuntime.h - hetero communication to libhetero_rt -*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The conversion behind hetero-lower-to-runtime, for compilers that embed
// hetero and run it inside their own conversion: the patterns that rewrite
// hetero's communicating ops into calls to libhetero_rt's hrt_mlir_* entry
// points (hetero-rt/hrt.h), and the target that says which ops must be gone.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_PASSES_HETEROTORUNTIME_H
#define HETERO_PASSES_HETEROTORUNTIME_H

namespace mlir {
class ConversionTarget;
class RewritePatternSet;
} // namespace mlir

namespace hetero {

struct RuntimeLoweringOptions {
  /// Wait for every dense all-reduce where it stands instead of right
  /// before the first use of its result.
  bool blockingCollectives = false;
};

/// Adds one pattern per op: hetero.bucket becomes one all-reduce of its
/// operands flattened and concatenated; all-reduces (dense, overlapped or
/// blocking; compressed; sparse), all-gathers, reduce-scatters, broadcasts,
/// reduces, all-to-alls, sends and receives become runtime calls on buffers
/// over the group's communicator; hetero.task_mark, the corpus and sampling
/// ops and shard's process indices become runtime queries. Runtime functions
/// are declared once per module, on first use. The patterns number the
/// compressed all-reduces in the order they rewrite them (the runtime keys
/// each one's error-feedback state by that number), so one set serves one
/// module. Loads the dialects of the ops they create.
void populateHeteroToRuntimeConversionPatterns(
    mlir::RewritePatternSet &patterns,
    const RuntimeLoweringOptions &options = {});

/// Makes every hetero op illegal except the structural ones (pipelines,
/// stages, schedules and their tasks, plan sets), and shard's process index
/// ops too: an op without a pattern (a checkpoint, say) fails to legalize at
/// its location. The dialects the patterns create (arith, bufferization,
/// func, llvm, memref, tensor) are legal.
void configureHeteroToRuntimeTarget(mlir::ConversionTarget &target);

} // namespace hetero

#endif // HETERO_PASSES_HETEROTORUNTIME_H
