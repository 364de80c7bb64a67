//===- GpuKernels.h - pieces of hand-built GPU kernels ----------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// hetero-gpu-block-reductions and hetero-gpu-row-kernels replace linalg ops
// on buffers with gpu.launch ops whose bodies they build: the op's body at
// one iteration, its reduction combined across a block by gpu.all_reduce.
// These are the pieces both use.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_PASSES_GPUKERNELS_H
#define HETERO_PASSES_GPUKERNELS_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

#include <optional>

namespace hetero {

/// How a linalg op with one output reduces: its body yields
/// `combiner(out, x)`, out read nowhere else, and gpu.all_reduce has the
/// combiner's operation, whose neutral element is `neutral`.
struct ReductionCombiner {
  mlir::Operation *combiner;
  mlir::gpu::AllReduceOperation kind;
  mlir::TypedAttr neutral;
};

/// `op`'s combiner, if it has one gpu.all_reduce can perform across a
/// block (of an element type warp shuffles carry: f32, f64, i32, i64).
std::optional<ReductionCombiner> blockCombiner(mlir::linalg::LinalgOp op);

/// Whether `op` is a linalg op on buffers with static, positive loop
/// ranges that writes each element of each output in one iteration of its
/// parallel loops (every parallel loop indexes each output once, no
/// reduction loop does).
bool isStaticBufferOp(mlir::linalg::LinalgOp op);

/// Whether every parallel loop of `op` indexes each of its outputs once and
/// no reduction loop does: one iteration of the parallel loops writes each
/// output element, and every element is written.
bool writesEachOutputOnce(mlir::linalg::LinalgOp op);

/// Whether `op` may stand between two linalg ops that one kernel replaces
/// (in the place of the later one): it touches no memory, or allocates
/// (device memory too), or waits for allocations only.
bool mayStandBetweenKernels(mlir::Operation &op);

/// The most bytes of parameters a kernel built from several linalg ops may
/// take: ptxas refuses more than 4352 before PTX ISA 8.1.
constexpr int64_t kMaxKernelParameterBytes = 4096;

/// The bytes of parameters the kernel of `ops` takes, once outlined: a
/// memref descriptor per buffer (two pointers, an offset, sizes and
/// strides) and 8 bytes per other value the ops read from outside (the
/// constants outlining sinks into the kernel not counted).
int64_t kernelParameterBytes(llvm::ArrayRef<mlir::linalg::LinalgOp> ops);

/// The threads of a block for work `widest` iterations wide: its next
/// power of two, from one warp (32) to `maxThreads`.
int64_t blockThreads(int64_t widest, int64_t maxThreads);

/// A gpu.launch of `blocks` blocks of `threads` threads along x, its body
/// empty but for its terminator, and `b` set before that.
mlir::gpu::LaunchOp createLaunch(mlir::OpBuilder &b, mlir::Location loc,
                                 mlir::Value blocks, int64_t threads);

/// The buffer that `value` views.
mlir::Value rootBuffer(mlir::Value value);

/// Splits `linear` into the indices of `dims` (the last fastest), whose
/// extents are `ranges` (indexed by dimension), into `ivs`.
void delinearize(mlir::OpBuilder &b, mlir::Location loc, mlir::Value linear,
                 llvm::ArrayRef<unsigned> dims,
                 llvm::ArrayRef<mlir::Value> ranges,
                 llvm::SmallVectorImpl<mlir::Value> &ivs);

/// The product of `ranges` at `dims` (1 for none).
mlir::Value extentOf(mlir::OpBuilder &b, mlir::Location loc,
                     llvm::ArrayRef<unsigned> dims,
                     llvm::ArrayRef<mlir::Value> ranges);

/// The indices of `map`'s results at iteration `ivs`.
llvm::SmallVector<mlir::Value> applyMap(mlir::OpBuilder &b, mlir::Location loc,
                                        mlir::AffineMap map,
                                        llvm::ArrayRef<mlir::Value> ivs);

/// Clones `op`'s body at iteration `ivs` and returns what it yields: its
/// buffer inputs loaded at their indexing maps, its scalar inputs as they
/// are, the block argument of output i as `outs[i]` (null where the body
/// does not read it), linalg.index as the iteration's index.
llvm::SmallVector<mlir::Value>
cloneBodyAt(mlir::OpBuilder &b, mlir::Location loc, mlir::linalg::LinalgOp op,
            llvm::ArrayRef<mlir::Value> ivs, mlir::ValueRange outs);

/// The values of `op`'s outputs at iteration `ivs` that its body reads
/// (null for those it does not), for cloneBodyAt.
llvm::SmallVector<mlir::Value> loadOutputs(mlir::OpBuilder &b,
                                           mlir::Location loc,
                                           mlir::linalg::LinalgOp op,
                                           llvm::ArrayRef<mlir::Value> ivs);

/// Stores `results` (what the body yields) to `op`'s outputs at iteration
/// `ivs`.
void storeOutputs(mlir::OpBuilder &b, mlir::Location loc,
                  mlir::linalg::LinalgOp op, llvm::ArrayRef<mlir::Value> ivs,
                  mlir::ValueRange results);

/// Reduces `op`, whose combiner is `combiner`, at the parallel indices in
/// `ivs` across the `threads` threads of a block, `thread` this one's
/// index: each thread combines the reduced iterations (of `reducedDims`,
/// extents `ranges`) from its index on in steps of `threads`, gpu.all_reduce
/// combines the partials, and thread 0 stores `combiner(start, total)` to
/// the output, `start` the output's value when null.
void reduceAcrossBlock(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::linalg::LinalgOp op,
                       const ReductionCombiner &combiner, mlir::Value thread,
                       int64_t threads, llvm::ArrayRef<unsigned> reducedDims,
                       llvm::ArrayRef<mlir::Value> ranges,
                       llvm::ArrayRef<mlir::Value> ivs, mlir::Value start);

} // namespace hetero

#endif // HETERO_PASSES_GPUKERNELS_H
