//===- PrunableToLinalg.cpp - prunable matmuls as full linalg.matmul ------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Dialect/Hetero.h"
#include "hetero/Passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace hetero {
#define GEN_PASS_DEF_HETEROPRUNABLETOLINALG
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;
using namespace hetero;

namespace {

/// prunable_matmul(lhs: [..., M, K], rhs: [K, N]) -> linalg.matmul on the
/// lhs collapsed to [prod(...) * M, K], expanded back afterwards.
struct LowerPrunableMatmul : OpRewritePattern<PrunableMatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(PrunableMatmulOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value lhs = op.getLhs();
    RankedTensorType lhsType = op.getLhs().getType();
    RankedTensorType resultType = op.getResult().getType();
    int64_t rank = lhsType.getRank();
    if (rank > 2 && !lhsType.hasStaticShape())
      return rewriter.notifyMatchFailure(
          op, "collapsing a dynamically shaped batched lhs is not supported");
    SmallVector<ReassociationIndices> reassociation;
    if (rank > 2) {
      ReassociationIndices rows;
      for (int64_t dim = 0; dim + 1 < rank; ++dim)
        rows.push_back(dim);
      reassociation = {rows, {rank - 1}};
      lhs = tensor::CollapseShapeOp::create(rewriter, loc, lhs, reassociation);
    }
    Type elementType = resultType.getElementType();
    SmallVector<OpFoldResult> sizes = {
        tensor::getMixedSize(rewriter, loc, lhs, 0),
        tensor::getMixedSize(rewriter, loc, op.getRhs(), 1)};
    Value init = tensor::EmptyOp::create(rewriter, loc, sizes, elementType);
    Value zero = arith::ConstantOp::create(rewriter, loc,
                                           rewriter.getZeroAttr(elementType));
    Value filled =
        linalg::FillOp::create(rewriter, loc, zero, init).getResult(0);
    Value product =
        linalg::MatmulOp::create(rewriter, loc, ValueRange{lhs, op.getRhs()},
                                 ValueRange{filled})
            .getResult(0);
    if (rank > 2)
      product = tensor::ExpandShapeOp::create(rewriter, loc, resultType,
                                              product, reassociation);
    else if (product.getType() != resultType)
      product = tensor::CastOp::create(rewriter, loc, resultType, product);
    rewriter.replaceOp(op, product);
    return success();
  }
};

struct HeteroPrunableToLinalgPass
    : public hetero::impl::HeteroPrunableToLinalgBase<
          HeteroPrunableToLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<LowerPrunableMatmul>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
