//===- GpuSerialKernels.cpp - loop nests without parallel loops on device -===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The GPU pipeline turns each linalg op's parallel loops into a kernel
// (convert-linalg-to-parallel-loops, then hetero-gpu-map-loops). An op
// with no parallel loop has nothing to map: a fill of a 0-d buffer, or a
// reduction of everything to one value (a loss, a norm, the combine of
// hetero-gpu-split-reductions' partials), would become host loops over
// buffers that placement (hetero-gpu-device-buffers) put in device memory,
// and the host would dereference device pointers. This pass gives every
// such op a leading parallel loop of one iteration: its outputs are viewed
// with a leading unit dimension (memref.expand_shape), and the op becomes a
// linalg.generic whose loop nest runs on the device as a one-thread kernel.
//
//===----------------------------------------------------------------------===//

#include "hetero/Passes/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace hetero {
#define GEN_PASS_DEF_HETEROGPUSERIALKERNELS
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;

namespace {

/// The reassociation that views a buffer of `rank` dimensions with a
/// leading dimension of size 1.
SmallVector<ReassociationIndices> unitDimension(int64_t rank) {
  SmallVector<ReassociationIndices> reassociation;
  for (int64_t dim = 0; dim < rank; ++dim)
    reassociation.push_back(dim == 0 ? ReassociationIndices{0, 1}
                                     : ReassociationIndices{dim + 1});
  return reassociation;
}

/// The type of `type` with a leading dimension of size 1.
FailureOr<MemRefType> withUnitDimension(MemRefType type) {
  SmallVector<int64_t> shape = {1};
  llvm::append_range(shape, type.getShape());
  return memref::ExpandShapeOp::computeExpandedType(
      type, shape, unitDimension(type.getRank()));
}

/// Whether `op` writes buffers without a parallel loop: it would run as host
/// code.
bool lacksParallelLoop(linalg::LinalgOp op) {
  return op.hasPureBufferSemantics() && op.getNumParallelLoops() == 0 &&
         op.getNumDpsInits() != 0;
}

struct UnitParallelLoop : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (!lacksParallelLoop(op))
      return failure();
    SmallVector<MemRefType> viewTypes;
    for (Value init : op.getDpsInits()) {
      FailureOr<MemRefType> type =
          withUnitDimension(cast<MemRefType>(init.getType()));
      if (failed(type))
        return rewriter.notifyMatchFailure(op, "output cannot be expanded");
      viewTypes.push_back(*type);
    }
    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (!generic) {
      FailureOr<linalg::GenericOp> generalized =
          linalg::generalizeNamedOp(rewriter, op);
      if (failed(generalized))
        return rewriter.notifyMatchFailure(op, "cannot generalize");
      generic = *generalized;
    }
    Location loc = generic.getLoc();
    SmallVector<Value> outputs;
    for (auto [init, type] :
         llvm::zip_equal(generic.getDpsInits(), viewTypes)) {
      SmallVector<OpFoldResult> shape = {rewriter.getIndexAttr(1)};
      for (int64_t dim = 0; dim < type.getRank() - 1; ++dim)
        shape.push_back(memref::getMixedSize(rewriter, loc, init, dim));
      outputs.push_back(memref::ExpandShapeOp::create(
          rewriter, loc, type, init, unitDimension(type.getRank() - 1), shape));
    }
    MLIRContext *context = rewriter.getContext();
    SmallVector<AffineMap> maps;
    for (OpOperand &operand : generic->getOpOperands()) {
      AffineMap map = generic.getMatchingIndexingMap(&operand).shiftDims(1);
      if (generic.isDpsInit(&operand))
        map = map.insertResult(getAffineDimExpr(0, context), 0);
      maps.push_back(map);
    }
    SmallVector<utils::IteratorType> iterators = {
        utils::IteratorType::parallel};
    llvm::append_range(iterators, generic.getIteratorTypesArray());
    auto serial = linalg::GenericOp::create(rewriter, loc, TypeRange(),
                                            generic.getDpsInputs(), outputs,
                                            maps, iterators);
    rewriter.inlineRegionBefore(generic.getRegion(), serial.getRegion(),
                                serial.getRegion().begin());
    // The body's loop indices move up by one (not those of a linalg op
    // nested in the body).
    serial.getRegion().walk([&](linalg::IndexOp index) {
      if (index->getParentOfType<linalg::LinalgOp>() == serial)
        rewriter.modifyOpInPlace(index,
                                 [&] { index.setDim(index.getDim() + 1); });
    });
    rewriter.eraseOp(generic);
    return success();
  }
};

struct GpuSerialKernelsPass
    : hetero::impl::HeteroGpuSerialKernelsBase<GpuSerialKernelsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<UnitParallelLoop>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // An op left without a parallel loop would run as host code on device
    // memory.
    WalkResult left = getOperation().walk([](linalg::LinalgOp op) {
      if (!lacksParallelLoop(op))
        return WalkResult::advance();
      op.emitOpError("has no parallel loop and an output whose layout is "
                     "not strided, so it cannot get a one-iteration parallel "
                     "loop for the GPU (hetero-gpu-serial-kernels); expected "
                     "outputs with identity or strided layouts");
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
