//===- FuseElementwise.cpp - element-wise chains as one loop nest ---------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Every linalg op becomes a loop nest (a kernel on the GPU) that reads its
// inputs from and writes its result to memory. A chain of element-wise ops
// (a bias, then an activation, then a scale) is memory bound: fused into one
// op it is one loop nest (one launch) and one pass over memory. Upstream's
// element-wise fusion does that; this pass runs it on tensors with one
// restriction. A producer is fused into a linalg.generic that is not a
// contraction only: fused into a product (a one-hot embedding matrix into
// the product that reads it), the product would stop being a GEMM and lose
// its BLAS call (hetero-matmul-to-blas, hetero-matmul-to-cublas) for loops
// tens of times slower.
//
// With fold-transposes, a linalg.transpose that a product reads becomes
// the product's indexing map instead: the product reads the transpose's
// source in place, which a GEMM takes as a transposed operand, and the copy
// goes.
//
//===----------------------------------------------------------------------===//

#include "Transcendental.h"

#include "hetero/Passes/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace hetero {
#define GEN_PASS_DEF_HETEROFUSEELEMENTWISE
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;

namespace {

/// Whether the producer of `operand` may be fused into its consumer. A
/// producer whose body reads its output's initial value (`out + x`) is
/// not: fused into a consumer with more loops and kept as a result, it
/// would accumulate once per iteration of those loops.
/// With `duplicateTranscendentals` false, neither is a producer that calls
/// exp, log or tanh and has other readers: it would be computed once per
/// reader.
bool fusable(OpOperand *operand, bool duplicateTranscendentals) {
  auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
  if (!consumer || linalg::isaContractionOpInterface(consumer))
    return false;
  auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
  if (!producer)
    return true;
  if (!duplicateTranscendentals && !producer->hasOneUse() &&
      hetero::callsTranscendental(producer))
    return false;
  return llvm::none_of(producer.getDpsInitsMutable(), [&](OpOperand &init) {
    return producer.payloadUsesValueFromOperand(&init);
  });
}

/// `map` reading the source of `transpose` where it read its result.
/// Dimension i of the result is dimension permutation[i] of the source, so
/// the source's dimension permutation[i] is the map's result i.
AffineMap throughTranspose(AffineMap map, linalg::TransposeOp transpose) {
  ArrayRef<int64_t> permutation = transpose.getPermutation();
  SmallVector<AffineExpr> results(map.getNumResults());
  for (auto [position, source] : llvm::enumerate(permutation))
    results[source] = map.getResult(position);
  return AffineMap::get(map.getNumDims(), map.getNumSymbols(), results,
                        map.getContext());
}

/// A product that reads a linalg.transpose's result reads its source
/// through a permuted indexing map instead (as a linalg.generic).
struct FoldTransposeIntoProduct : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || !linalg::isaContractionOpInterface(op))
      return failure();
    auto transposed = [](OpOperand *input) {
      return input->get().getDefiningOp<linalg::TransposeOp>() != nullptr;
    };
    if (llvm::none_of(op.getDpsInputOperands(), transposed))
      return failure();
    linalg::GenericOp generic = dyn_cast<linalg::GenericOp>(*op);
    if (!generic) {
      FailureOr<linalg::GenericOp> generalized =
          linalg::generalizeNamedOp(rewriter, op);
      if (failed(generalized))
        return failure();
      generic = *generalized;
    }
    SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
    SmallVector<std::pair<unsigned, Value>> sources;
    for (OpOperand *input : generic.getDpsInputOperands()) {
      auto transpose = input->get().getDefiningOp<linalg::TransposeOp>();
      if (!transpose)
        continue;
      unsigned index = input->getOperandNumber();
      maps[index] = throughTranspose(maps[index], transpose);
      sources.emplace_back(index, transpose.getInput());
    }
    rewriter.modifyOpInPlace(generic, [&] {
      generic.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
      for (auto [index, source] : sources)
        generic->setOperand(index, source);
    });
    return success();
  }
};

struct FuseElementwisePass
    : hetero::impl::HeteroFuseElementwiseBase<FuseElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    // Aggregated ops (linalg.softmax) become their parts, which the loop
    // lowerings take and which fuse like any other.
    SmallVector<linalg::AggregatedOpInterface> aggregated;
    getOperation().walk(
        [&](linalg::AggregatedOpInterface op) { aggregated.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::AggregatedOpInterface op : aggregated) {
      rewriter.setInsertionPoint(op);
      FailureOr<SmallVector<Value>> parts = op.decomposeOperation(rewriter);
      if (failed(parts)) {
        op->emitError() << "hetero-fuse-elementwise: cannot decompose "
                        << op->getName();
        return signalPassFailure();
      }
      rewriter.replaceOp(op, *parts);
    }
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(
        patterns,
        [duplicate = bool(duplicateTranscendentals)](OpOperand *operand) {
          return fusable(operand, duplicate);
        });
    if (foldTransposes)
      patterns.add<FoldTransposeIntoProduct>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
