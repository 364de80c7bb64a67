//===- GpuMapLoops.cpp - parallel loops as thread blocks ------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Upstream's gpu-map-parallel-loops maps an untiled loop nest onto the grid
// alone, one thread per block, with its first dimension on x. This pass
// tiles each outermost parallel loop into blocks of threads first and maps
// the innermost (contiguous) dimension to x, so that a warp reads and
// writes consecutive elements. A parallel loop under a sequential one
// inside a kernel (the columns of a contraction whose reduction loop is
// not innermost, C[i, j] += A[i, k] B[k, j] as loops i, k, j) becomes
// nested sequential loops: each thread runs them, and the conversion to
// kernels takes only parallel loops nested directly in parallel loops.
//
//===----------------------------------------------------------------------===//

#include "hetero/Passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/MathExtras.h"

#include <optional>

namespace hetero {
#define GEN_PASS_DEF_HETEROGPUMAPLOOPS
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;

namespace {

/// Threads along the innermost dimension of a multi-dimensional loop: one
/// warp, so that a warp covers consecutive elements of a row.
constexpr int64_t kWarp = 32;

/// The iterations of `loop` along `dim`, when they are constants.
std::optional<int64_t> tripCount(scf::ParallelOp loop, unsigned dim) {
  std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound()[dim]);
  std::optional<int64_t> upper = getConstantIntValue(loop.getUpperBound()[dim]);
  std::optional<int64_t> step = getConstantIntValue(loop.getStep()[dim]);
  if (!lower || !upper || !step || *step <= 0)
    return std::nullopt;
  return *upper <= *lower ? 0 : llvm::divideCeil(*upper - *lower, *step);
}

/// The tile (the threads of a block along each dimension) of `loop`: from
/// the innermost dimension outwards over at most three, each taking what is
/// left of `threads`, capped by its iterations when they are known.
SmallVector<int64_t> tileSizes(scf::ParallelOp loop, int64_t threads) {
  unsigned rank = loop.getNumLoops();
  SmallVector<int64_t> tile(rank, 1);
  int64_t left = threads;
  for (unsigned mapped = 0; mapped < std::min(rank, 3u) && left > 1; ++mapped) {
    unsigned dim = rank - 1 - mapped;
    int64_t want = (mapped == 0 && rank > 1) ? std::min(kWarp, left) : left;
    if (std::optional<int64_t> count = tripCount(loop, dim))
      want = std::min<int64_t>(
          want, llvm::PowerOf2Ceil(std::max<int64_t>(*count, 1)));
    tile[dim] = want;
    left /= want;
  }
  return tile;
}

/// Maps the innermost three dimensions of `loop` to x, y and z of `first`
/// (block or thread ids) and the others to sequential iterations; with no
/// `first`, every dimension is sequential.
void mapLoop(scf::ParallelOp loop, std::optional<gpu::Processor> first) {
  MLIRContext *context = loop.getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(1, context);
  unsigned rank = loop.getNumLoops();
  SmallVector<gpu::ParallelLoopDimMappingAttr> mapping;
  for (unsigned dim = 0; dim < rank; ++dim) {
    unsigned fromInnermost = rank - 1 - dim;
    gpu::Processor processor =
        first && fromInnermost < 3
            ? static_cast<gpu::Processor>(static_cast<unsigned>(*first) +
                                          fromInnermost)
            : gpu::Processor::Sequential;
    mapping.push_back(gpu::ParallelLoopDimMappingAttr::get(context, processor,
                                                           identity, identity));
  }
  (void)gpu::setMappingAttr(loop, mapping);
}

struct GpuMapLoopsPass : hetero::impl::HeteroGpuMapLoopsBase<GpuMapLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    int64_t threads = threadsPerBlock;
    if (threads < 32 || threads > 1024 || !llvm::isPowerOf2_64(threads)) {
      getOperation().emitError()
          << "hetero-gpu-map-loops: threads-per-block is " << threads
          << ", expected a power of two from 32 to 1024";
      return signalPassFailure();
    }
    SmallVector<scf::ParallelOp> underSequential;
    getOperation().walk([&](scf::ParallelOp loop) {
      if (loop->getParentOfType<scf::ParallelOp>() &&
          !isa<scf::ParallelOp>(loop->getParentOp()) &&
          loop.getNumReductions() == 0)
        underSequential.push_back(loop);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp loop : underSequential) {
      rewriter.setInsertionPoint(loop);
      if (failed(scf::parallelForToNestedFors(rewriter, loop))) {
        loop.emitError("hetero-gpu-map-loops: cannot run this parallel loop "
                       "sequentially within its kernel's threads");
        return signalPassFailure();
      }
    }
    SmallVector<scf::ParallelOp> outermost;
    getOperation().walk([&](scf::ParallelOp loop) {
      if (!loop->getParentOfType<scf::ParallelOp>() &&
          loop.getNumReductions() == 0 &&
          !loop->hasAttr(gpu::getMappingAttrName()))
        outermost.push_back(loop);
    });
    for (scf::ParallelOp loop : outermost) {
      SmallVector<int64_t> tile = tileSizes(loop, threads);
      auto [tiles, withinTile] =
          scf::tileParallelLoop(loop, tile, /*noMinMaxBounds=*/true);
      mapLoop(tiles, gpu::Processor::BlockX);
      mapLoop(withinTile, gpu::Processor::ThreadX);
      withinTile.getBody()->walk([](scf::ParallelOp nested) {
        if (!nested->hasAttr(gpu::getMappingAttrName()))
          mapLoop(nested, std::nullopt);
      });
    }
  }
};

} // namespace
