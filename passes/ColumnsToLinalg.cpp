//===- ColumnsToLinalg.cpp - gathers and imputations as linalg ------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// hetero.select_cols becomes a linalg.generic that reads, for each position
// along its axis, the source slice the index names. hetero.impute_cols
// becomes one that writes every position of the unpruned result: the
// computed slice where an inverse map of the indices has one, the
// imputation elsewhere (0, the mean of the computed slices at the same
// position along the other axes, or the previous iteration's value there).
//
//===----------------------------------------------------------------------===//

#include "hetero/Dialect/Hetero.h"
#include "hetero/Passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace hetero {
#define GEN_PASS_DEF_HETEROCOLUMNSTOLINALG
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;
using namespace hetero;

namespace {

/// An empty tensor of `type`, its dynamic sizes those of `like` except
/// along `axis`, where it is `size`.
Value emptyLike(OpBuilder &b, Location loc, RankedTensorType type, Value like,
                int64_t axis, OpFoldResult size) {
  SmallVector<OpFoldResult> sizes;
  for (int64_t dim = 0; dim < type.getRank(); ++dim)
    sizes.push_back(dim == axis ? size
                                : tensor::getMixedSize(b, loc, like, dim));
  return tensor::EmptyOp::create(b, loc, sizes, type.getElementType());
}

/// `value` (an index or integer element) as an index.
Value asIndex(OpBuilder &b, Location loc, Value value) {
  if (value.getType().isIndex())
    return value;
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), value);
}

/// The identity map of `rank` dimensions, and the map to dimension `axis`
/// alone.
AffineMap identity(MLIRContext *context, int64_t rank) {
  return AffineMap::getMultiDimIdentityMap(rank, context);
}
AffineMap onlyAxis(MLIRContext *context, int64_t rank, int64_t axis) {
  return AffineMap::get(rank, 0, getAffineDimExpr(axis, context));
}
AffineMap withoutAxis(MLIRContext *context, int64_t rank, int64_t axis) {
  SmallVector<AffineExpr> exprs;
  for (int64_t dim = 0; dim < rank; ++dim)
    if (dim != axis)
      exprs.push_back(getAffineDimExpr(dim, context));
  return AffineMap::get(rank, 0, exprs, context);
}

/// The coordinates of a linalg.generic body, with `axis` replaced.
SmallVector<Value> coordinates(OpBuilder &b, Location loc, int64_t rank,
                               int64_t axis, Value replacement) {
  SmallVector<Value> coords;
  for (int64_t dim = 0; dim < rank; ++dim)
    coords.push_back(dim == axis ? replacement
                                 : linalg::IndexOp::create(b, loc, dim));
  return coords;
}

struct LowerSelectCols : OpRewritePattern<SelectColsOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SelectColsOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getResult().getType();
    int64_t rank = type.getRank(), axis = op.getAxis();
    MLIRContext *context = rewriter.getContext();
    Value init =
        emptyLike(rewriter, loc, type, op.getSource(), axis,
                  tensor::getMixedSize(rewriter, loc, op.getIndices(), 0));
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{op.getIndices()},
        ValueRange{init},
        ArrayRef<AffineMap>{onlyAxis(context, rank, axis),
                            identity(context, rank)},
        iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          Value slice = asIndex(b, l, args[0]);
          Value value = tensor::ExtractOp::create(
              b, l, op.getSource(), coordinates(b, l, rank, axis, slice));
          linalg::YieldOp::create(b, l, value);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

struct LowerImputeCols : OpRewritePattern<ImputeColsOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ImputeColsOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    RankedTensorType type = op.getResult().getType();
    Value source = op.getSource();
    int64_t rank = type.getRank(), axis = op.getAxis();
    Type element = type.getElementType();
    auto i64 = rewriter.getI64Type();
    SmallVector<utils::IteratorType> parallel(rank,
                                              utils::IteratorType::parallel);

    // slot[j]: which computed slice lands at position j, or -1.
    if (ShapedType::isDynamic(type.getDimSize(axis)))
      return rewriter.notifyMatchFailure(op, "the unpruned width is dynamic");
    auto slotType = RankedTensorType::get({type.getDimSize(axis)}, i64);
    Value none = arith::ConstantIntOp::create(rewriter, loc, i64, -1);
    Value slotInit =
        tensor::EmptyOp::create(rewriter, loc, slotType.getShape(), i64);
    Value slots =
        linalg::FillOp::create(rewriter, loc, none, slotInit).getResult(0);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value count = tensor::DimOp::create(rewriter, loc, op.getIndices(), 0);
    auto fillSlots = scf::ForOp::create(
        rewriter, loc, zero, count, one, ValueRange{slots},
        [&](OpBuilder &b, Location l, Value i, ValueRange carried) {
          Value position = asIndex(
              b, l, tensor::ExtractOp::create(b, l, op.getIndices(), i));
          Value slot = arith::IndexCastOp::create(b, l, i64, i);
          Value updated = tensor::InsertOp::create(b, l, slot, carried[0],
                                                   ValueRange{position});
          scf::YieldOp::create(b, l, updated);
        });
    slots = fillSlots.getResult(0);

    SmallVector<Value> inputs = {slots};
    SmallVector<AffineMap> maps = {onlyAxis(context, rank, axis)};
    Value zeroElement =
        arith::ConstantOp::create(rewriter, loc, rewriter.getZeroAttr(element));
    // The count of computed slices as a float, for average imputation.
    Value divisor;
    bool average = op.getImputation() == Imputation::average;
    if (average) {
      // The sums over the computed slices, then their mean (0 for none).
      SmallVector<int64_t> meanShape;
      SmallVector<OpFoldResult> meanSizes;
      for (int64_t dim = 0; dim < rank; ++dim)
        if (dim != axis) {
          meanShape.push_back(type.getDimSize(dim));
          meanSizes.push_back(tensor::getMixedSize(rewriter, loc, source, dim));
        }
      auto meanType = RankedTensorType::get(meanShape, element);
      Value sumInit =
          tensor::EmptyOp::create(rewriter, loc, meanSizes, element);
      Value sums = linalg::FillOp::create(rewriter, loc, zeroElement, sumInit)
                       .getResult(0);
      SmallVector<utils::IteratorType> reducing = parallel;
      reducing[axis] = utils::IteratorType::reduction;
      sums = linalg::GenericOp::create(
                 rewriter, loc, TypeRange{meanType}, ValueRange{source},
                 ValueRange{sums},
                 ArrayRef<AffineMap>{identity(context, rank),
                                     withoutAxis(context, rank, axis)},
                 reducing,
                 [&](OpBuilder &b, Location l, ValueRange args) {
                   Value sum = arith::AddFOp::create(b, l, args[0], args[1]);
                   linalg::YieldOp::create(b, l, sum);
                 })
                 .getResult(0);
      divisor = arith::UIToFPOp::create(
          rewriter, loc, element,
          arith::IndexCastOp::create(
              rewriter, loc, i64,
              arith::MaxUIOp::create(rewriter, loc, count, one)));
      inputs.push_back(sums);
      maps.push_back(withoutAxis(context, rank, axis));
    }
    if (Value previous = op.getPrevious()) {
      inputs.push_back(previous);
      maps.push_back(identity(context, rank));
    }
    maps.push_back(identity(context, rank));

    Value init = emptyLike(rewriter, loc, type, source, axis,
                           rewriter.getIndexAttr(type.getDimSize(axis)));
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, inputs, ValueRange{init}, maps,
        parallel, [&](OpBuilder &b, Location l, ValueRange args) {
          Value slot = args[0];
          // linalg.index must stand in the generic's body itself.
          SmallVector<Value> coords =
              coordinates(b, l, rank, axis, /*replacement=*/Value());
          Value computed =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, slot,
                                    arith::ConstantIntOp::create(b, l, i64, 0));
          auto choice = scf::IfOp::create(
              b, l, computed,
              [&](OpBuilder &t, Location tl) {
                coords[axis] =
                    arith::IndexCastOp::create(t, tl, t.getIndexType(), slot);
                Value value = tensor::ExtractOp::create(t, tl, source, coords);
                scf::YieldOp::create(t, tl, value);
              },
              [&](OpBuilder &e, Location el) {
                Value value = zeroElement;
                if (average)
                  value = arith::DivFOp::create(e, el, args[1], divisor);
                else if (op.getPrevious())
                  value = args[1];
                scf::YieldOp::create(e, el, value);
              });
          linalg::YieldOp::create(b, l, choice.getResult(0));
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

struct HeteroColumnsToLinalgPass
    : public hetero::impl::HeteroColumnsToLinalgBase<
          HeteroColumnsToLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<LowerSelectCols, LowerImputeCols>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
