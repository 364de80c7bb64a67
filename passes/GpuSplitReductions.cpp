//===- GpuSplitReductions.cpp - reductions spread over more threads -------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// A reduction lowers to one thread per output element, which walks the
// reduced dimension alone: a row sum over 8192 rows keeps 8192 threads (32
// blocks) busy and each of them reads a row on its own. Before
// bufferization this pass splits such a reduction with upstream's
// linalg::splitReduction: the reduced dimension R becomes R / r steps of r
// neighbouring elements, a first op computes r partial results per output
// in parallel (neighbouring threads reading neighbouring elements), and a
// second op combines the r partials. The partial op's loops are then
// interchanged so that its reduction is innermost, as are those of every
// op whose reduction loop comes before a parallel one: the GPU lowering
// would make such an outer reduction a loop of kernels on the host.
//
//===----------------------------------------------------------------------===//

#include "hetero/Passes/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/MathExtras.h"

#include <optional>

namespace hetero {
#define GEN_PASS_DEF_HETEROGPUSPLITREDUCTIONS
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;

namespace {

/// Each thread of a partial reduction still adds at least this many
/// elements.
constexpr int64_t kMinimumPerThread = 32;

/// The split of `op`'s innermost reduction: ratio 0 leaves it whole.
linalg::SplitReductionOptions splitFor(linalg::LinalgOp op, int64_t threads,
                                       int64_t minimumReduced) {
  linalg::SplitReductionOptions none;
  if (!op.hasPureTensorSemantics() || op.getNumReductionLoops() != 1 ||
      op.getNumDpsInits() != 1)
    return none;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (iterators.back() != utils::IteratorType::reduction)
    return none;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return none;
  int64_t reduced = ranges.back();
  int64_t outputs = 1;
  for (int64_t range : ArrayRef<int64_t>(ranges).drop_back())
    outputs *= range;
  if (reduced < minimumReduced || outputs >= threads)
    return none;
  // The largest power of two that divides the reduced size, leaves each
  // thread kMinimumPerThread elements and does not give more threads than
  // asked for.
  int64_t ratio = 1;
  while (reduced % (ratio * 2) == 0 &&
         reduced / (ratio * 2) >= kMinimumPerThread &&
         outputs * ratio * 2 <= threads)
    ratio *= 2;
  if (ratio < 2)
    return none;
  linalg::SplitReductionOptions split;
  split.ratio = ratio;
  // The partials' own dimension is the output's innermost, so that
  // neighbouring threads also write neighbouring partials.
  split.index = unsigned(
      cast<ShapedType>(op.getDpsInitOperand(0)->get().getType()).getRank());
  split.innerParallel = true;
  return split;
}

/// The interchange of `op`'s loops that puts its parallel loops first (in
/// their order) and its reductions innermost, or none when they are so.
std::optional<SmallVector<unsigned>> parallelFirst(linalg::GenericOp op) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> order, reductions;
  for (unsigned loop = 0; loop < iterators.size(); ++loop)
    (iterators[loop] == utils::IteratorType::reduction ? reductions : order)
        .push_back(loop);
  if (reductions.empty() || reductions.front() == order.size())
    return std::nullopt;
  order.append(reductions);
  return order;
}

struct GpuSplitReductionsPass
    : hetero::impl::HeteroGpuSplitReductionsBase<GpuSplitReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    int64_t wanted = threads, smallest = minimumReduced;
    if (wanted < 1 || smallest < 2 * kMinimumPerThread) {
      getOperation().emitError()
          << "hetero-gpu-split-reductions: threads must be positive and "
             "min-reduced at least "
          << 2 * kMinimumPerThread << "; got threads = " << wanted
          << ", min-reduced = " << smallest;
      return signalPassFailure();
    }
    // A reduction loop outside a parallel one (a column sum written over
    // rows, as a folded transpose leaves it) would become a loop of
    // kernels on the host: its parallel loops go first.
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::GenericOp> reordered;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op.hasPureTensorSemantics() && parallelFirst(op))
        reordered.push_back(op);
    });
    for (linalg::GenericOp op : reordered) {
      rewriter.setInsertionPoint(op);
      (void)linalg::interchangeGenericOp(rewriter, op, *parallelFirst(op));
    }

    SmallVector<std::pair<linalg::LinalgOp, linalg::SplitReductionOptions>>
        candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      linalg::SplitReductionOptions options = splitFor(op, wanted, smallest);
      if (options.ratio > 1)
        candidates.push_back({op, options});
    });
    for (auto [op, options] : candidates) {
      rewriter.setInsertionPoint(op);
      // A combiner splitReduction cannot name a neutral element for (or an
      // indexing it cannot expand) leaves the op whole.
      FailureOr<linalg::SplitReductionResult> split = linalg::splitReduction(
          rewriter, op, [&](linalg::LinalgOp) { return options; });
      if (failed(split))
        continue;
      // The partials' loop nest has the reduction between the output's
      // dimensions and the partial's; moved innermost, the parallel loops
      // form one nest (one kernel, the partial on x) and each thread walks
      // its j = 0, 1, ... with neighbouring threads on neighbouring
      // elements.
      auto partial =
          dyn_cast<linalg::GenericOp>(split->splitLinalgOp.getOperation());
      if (!partial)
        continue;
      if (std::optional<SmallVector<unsigned>> order = parallelFirst(partial)) {
        rewriter.setInsertionPoint(partial);
        (void)linalg::interchangeGenericOp(rewriter, partial, *order);
      }
    }
  }
};

} // namespace
