//===- GpuBlockReductions.cpp - a thread block per reduced output ---------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The GPU pipeline maps a linalg op's parallel loops onto threads and leaves
// its reduction loops sequential inside each thread. That suits a product
// with many outputs, not a reduction with few: a layer norm's statistics
// over 128 rows keep 128 threads busy, each walking its row alone, and a
// loss summed to one value runs on one thread. This pass, on buffers and
// before convert-linalg-to-parallel-loops, gives each output of such an op
// a thread block of its own:
//
//   gpu.launch blocks(%b) in (P) threads(%t) in (T)
//     %partial = scf.for %r = %t to K step T iter_args(%a = neutral)
//       (the op's body at the iteration of output %b, reduced index %r)
//     %total = gpu.all_reduce <combiner> %partial uniform
//     scf.if %t == 0: out[%b] = combiner(out[%b], %total)
//
// Neighbouring threads read neighbouring reduced elements, and upstream's
// all-reduce lowering combines the partials with warp shuffles. A fill of
// the output just before the op (a reduction's zero) is folded into the
// last combine, so it launches nothing.
//
// Dynamic extents are read from the operands. Where the caps on outputs
// and reduced elements cannot be decided statically, the kernel runs under
// an scf.if on them and the op itself, left for the thread-per-output
// lowering, in its else; a fill is then not folded.
//
//===----------------------------------------------------------------------===//

#include "GpuKernels.h"
#include "hetero/Passes/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/MathExtras.h"

#include <optional>

namespace hetero {
#define GEN_PASS_DEF_HETEROGPUBLOCKREDUCTIONS
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;
using hetero::delinearize;
using hetero::extentOf;
using hetero::rootBuffer;

namespace {

/// The fewest threads of a reduction's block: one warp.
constexpr int64_t kWarp = 32;

/// A reduction this pass gives blocks: its combiner and the sizes of its
/// parallel and reduced iteration spaces.
struct BlockReduction {
  linalg::LinalgOp op;
  hetero::ReductionCombiner combiner;
  /// The products of the static parallel and reduced extents.
  int64_t outputs = 1;
  int64_t reduced = 1;
  /// Whether some parallel or reduced extent is dynamic.
  bool dynamicOutputs = false;
  bool dynamicReduced = false;
};

/// `op` as a block reduction, if it is one: buffers, one output of a type
/// warp shuffles carry, a combiner an all-reduce performs, and few enough
/// outputs (`maxOutputs`) with enough elements each (`minReduced`) for a
/// block per output to pay, as far as the static extents tell (the rest is
/// checked where it runs). An op with no parallel loop qualifies whatever
/// its size: its only alternative is a kernel of one thread.
std::optional<BlockReduction>
asBlockReduction(linalg::LinalgOp op, int64_t maxOutputs, int64_t minReduced) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() == 0)
    return std::nullopt;
  for (OpOperand *input : op.getDpsInputOperands())
    if (isa<TensorType>(input->get().getType()))
      return std::nullopt;
  // One block writes each output element, and every element is written.
  if (!hetero::writesEachOutputOnce(op))
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();

  std::optional<hetero::ReductionCombiner> combiner = hetero::blockCombiner(op);
  if (!combiner)
    return std::nullopt;

  BlockReduction reduction{op, *combiner};
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  for (auto [range, iterator] : llvm::zip_equal(ranges, iterators)) {
    bool parallel = iterator == utils::IteratorType::parallel;
    if (ShapedType::isDynamic(range)) {
      (parallel ? reduction.dynamicOutputs : reduction.dynamicReduced) = true;
      continue;
    }
    if (range <= 0)
      return std::nullopt;
    (parallel ? reduction.outputs : reduction.reduced) *= range;
  }
  // A matrix product (a contraction with both an M and an N dimension)
  // keeps a thread per output, or cuBLAS: a block per output would read its
  // second operand across the block. Dot products of rows stay candidates.
  bool serial = op.getNumParallelLoops() == 0;
  if (FailureOr<linalg::ContractionDimensions> dims =
          linalg::inferContractionDims(op);
      !serial && succeeded(dims) && !dims->m.empty() && !dims->n.empty())
    return std::nullopt;
  // A dynamic extent only adds to the static product: these caps fail
  // whatever it is.
  if (reduction.outputs > maxOutputs ||
      (!serial && !reduction.dynamicReduced && reduction.reduced < minReduced))
    return std::nullopt;
  return reduction;
}

/// The fill of `op`'s output that only allocations separate from `op`, when
/// no input of `op` reads what it fills: then the reduction may start from
/// the fill's value instead of reading it back.
linalg::FillOp foldableFill(linalg::LinalgOp op) {
  Value out = op.getDpsInitOperand(0)->get();
  Operation *previous = op->getPrevNode();
  while (previous && !isa<linalg::FillOp>(previous) &&
         (isMemoryEffectFree(previous) ||
          hasSingleEffect<MemoryEffects::Allocate>(previous)))
    previous = previous->getPrevNode();
  auto fill = dyn_cast_or_null<linalg::FillOp>(previous);
  if (!fill || !fill.hasPureBufferSemantics() ||
      fill.getDpsInitOperand(0)->get() != out)
    return nullptr;
  Value root = rootBuffer(out);
  for (OpOperand *input : op.getDpsInputOperands())
    if (isa<MemRefType>(input->get().getType()) &&
        rootBuffer(input->get()) == root)
      return nullptr;
  return fill;
}

/// Replaces `reduction.op` with a kernel of a block per output; with
/// dynamic extents the caps not decided statically guard it, the op in the
/// guard's else.
void rewrite(const BlockReduction &reduction, int64_t maxThreads,
             int64_t maxOutputs, int64_t minReduced) {
  linalg::LinalgOp op = reduction.op;
  Location loc = op.getLoc();
  OpBuilder b(op);
  SmallVector<unsigned> parallelDims, reducedDims;
  for (auto [dim, iterator] : llvm::enumerate(op.getIteratorTypesArray()))
    (iterator == utils::IteratorType::parallel ? parallelDims : reducedDims)
        .push_back(dim);
  SmallVector<Value> ranges;
  for (Range range : op.createLoopRanges(b, loc))
    ranges.push_back(getValueOrCreateConstantIndexOp(b, loc, range.size));
  Value outputs = extentOf(b, loc, parallelDims, ranges);
  Value reduced = extentOf(b, loc, reducedDims, ranges);

  // The caps the static extents left open.
  Value guard;
  auto require = [&](arith::CmpIPredicate predicate, Value lhs, int64_t rhs) {
    Value holds = arith::CmpIOp::create(
        b, loc, predicate, lhs, arith::ConstantIndexOp::create(b, loc, rhs));
    guard = guard ? arith::AndIOp::create(b, loc, guard, holds) : holds;
  };
  if (reduction.dynamicOutputs) {
    // No grid of no blocks.
    require(arith::CmpIPredicate::sge, outputs, 1);
    require(arith::CmpIPredicate::sle, outputs, maxOutputs);
  }
  if (reduction.dynamicReduced && !parallelDims.empty())
    require(arith::CmpIPredicate::sge, reduced, minReduced);
  linalg::FillOp fill = guard ? linalg::FillOp() : foldableFill(op);
  if (guard) {
    auto ifOp = scf::IfOp::create(b, loc, guard, /*withElseRegion=*/true);
    OpBuilder otherwise = ifOp.getElseBodyBuilder();
    otherwise.clone(*op);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  }

  int64_t threads = reduction.dynamicReduced
                        ? maxThreads
                        : hetero::blockThreads(reduction.reduced, maxThreads);
  gpu::LaunchOp launch = hetero::createLaunch(b, loc, outputs, threads);

  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  SmallVector<Value> ivs(ranges.size(), zero);
  Value thread = launch.getThreadIds().x;
  delinearize(b, loc, launch.getBlockIds().x, parallelDims, ranges, ivs);

  hetero::reduceAcrossBlock(b, loc, op, reduction.combiner, thread, threads,
                            reducedDims, ranges, ivs,
                            fill ? fill.getInputs().front() : Value());

  op->erase();
  if (fill)
    fill->erase();
}

struct GpuBlockReductionsPass
    : hetero::impl::HeteroGpuBlockReductionsBase<GpuBlockReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    int64_t threads = threadsPerBlock, outputs = maxOutputs,
            reduced = minReduced;
    if (threads < kWarp || threads > 1024 || !llvm::isPowerOf2_64(threads) ||
        outputs < 1 || reduced < 1) {
      getOperation().emitError()
          << "hetero-gpu-block-reductions: threads-per-block must be a "
             "power of two from 32 to 1024 and max-outputs and min-reduced "
             "positive; got threads-per-block = "
          << threads << ", max-outputs = " << outputs
          << ", min-reduced = " << reduced;
      return signalPassFailure();
    }
    SmallVector<BlockReduction> reductions;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (std::optional<BlockReduction> reduction =
              asBlockReduction(op, outputs, reduced))
        reductions.push_back(*reduction);
    });
    for (const BlockReduction &reduction : reductions)
      rewrite(reduction, threads, outputs, reduced);
  }
};

} // namespace
