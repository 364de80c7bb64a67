//===- PrunableToLinalg.cpp - prunable matmuls as full linalg.matmul ------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "Matmul.h"

#include "hetero/Dialect/Hetero.h"
#include "hetero/Passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringSet.h"

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
    FailureOr<Value> product =
        buildMatmul(rewriter, op.getLoc(), op.getLhs(), op.getRhs(),
                    op.getResult().getType());
    if (failed(product))
      return rewriter.notifyMatchFailure(
          op, "collapsing a batched lhs with dynamic leading dimensions is "
              "not supported");
    rewriter.replaceOp(op, *product);
    return success();
  }
};

struct HeteroPrunableToLinalgPass
    : public hetero::impl::HeteroPrunableToLinalgBase<
          HeteroPrunableToLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    // A straggler leaves its migrated columns out of its own product only
    // where hetero-resize expanded it; in full it would count them twice.
    llvm::StringSet<> migrating;
    getOperation()->walk(
        [&](MigrationPlanOp plan) { migrating.insert(plan.getLayer()); });
    WalkResult walked = getOperation()->walk([&](PrunableMatmulOp op) {
      if (!migrating.contains(op.getLayer()))
        return WalkResult::advance();
      op.emitOpError() << "of layer '" << op.getLayer()
                       << "' would compute every column, but the layer "
                          "migrates columns (hetero.migration_plan); "
                          "expected hetero-resize to expand it first";
      return WalkResult::interrupt();
    });
    if (walked.wasInterrupted())
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    patterns.add<LowerPrunableMatmul>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
