//===- Resize.cpp - ZERO-resizing of prunable matmuls ---------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Expands every hetero.prunable_matmul into the code a straggler runs
// (shared/seeds/000-zero-resizing.md sections 1.4, 2.1, 2.6):
//
//   %kept = hetero.prune_plan layer "l" columns = K    (once per function)
//   %whole = dim(%kept) == K
//   scf.if %whole { the unpruned product }             (alpha = 0)
//   else {
//     forward:      X[:, kept] x W[kept, :]                 (full-size Y)
//     grad_input:   impute(G x W^T[:, kept]) along dX's columns
//     grad_weight:  impute(X^T[kept, :] x G) along dW's rows
//   }
//   (the scf.if bracketed by hetero.gemm_mark begin and end)
//
// Same imputation reads the pruned columns from the previous iteration's
// product (hetero.previous_product, in the pruned branch) and keeps every
// iteration's gradient for the next one (hetero.keep_product after the if).
//
// With priority=true, the layer's first forward product in a function is
// preceded by hetero.observe_weight of its weight W, whose per-row change
// over an epoch ranks the columns (ZERO-Pri).
//
// The lineage (layer, pruned columns) is the runtime's plan for the
// iteration: every prune_plan of one layer returns the same columns until
// the next iteration, so the backward products prune what the forward did.
// Everything that leaves the expansion has the unpruned shape.
//
//===----------------------------------------------------------------------===//

#include "Matmul.h"

#include "hetero/Dialect/Hetero.h"
#include "hetero/Passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringMap.h"

namespace hetero {
#define GEN_PASS_DEF_HETERORESIZE
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;
using namespace hetero;

namespace {

class Expansion {
public:
  explicit Expansion(PrunableMatmulOp op) : op(op) {}

  /// Replaces the op by its expansion reading `kept`; `whole` says that
  /// every column is kept.
  LogicalResult run(Value kept, Value whole) {
    // Every product below is a buildMatmul of an lhs with the op's leading
    // dimensions, which it collapses when they are static.
    if (!hasStaticLeadingDimensions(op.getLhs().getType()))
      return op.emitOpError()
             << "cannot be resized: collapsing a batched lhs with dynamic "
                "leading dimensions is not supported";
    OpBuilder builder(op);
    Location loc = op.getLoc();
    auto ifOp = scf::IfOp::create(
        builder, loc, whole,
        [&](OpBuilder &b, Location l) {
          scf::YieldOp::create(
              b, l, *buildMatmul(b, l, op.getLhs(), op.getRhs(), type()));
        },
        [&](OpBuilder &b, Location l) {
          scf::YieldOp::create(b, l, prunedProduct(b, l, kept));
        });
    // The runtime times the GEMM the rank ran (C_i of Eq. 1).
    builder.setInsertionPoint(ifOp);
    GemmMarkOp::create(builder, loc, GemmEvent::begin);
    builder.setInsertionPointAfter(ifOp);
    GemmMarkOp::create(builder, loc, GemmEvent::end);
    // Same imputation reads this value in the next iteration, whether or
    // not this one pruned.
    if (imputesSame())
      KeepProductOp::create(builder, loc, ifOp.getResult(0), op.getLayerAttr(),
                            op.getProductAttr());
    op.getResult().replaceAllUsesWith(ifOp.getResult(0));
    op.erase();
    return success();
  }

private:
  RankedTensorType type() { return op.getResult().getType(); }

  Value prunedProduct(OpBuilder &b, Location l, Value kept) {
    Value previous;
    if (imputesSame())
      previous = PreviousProductOp::create(b, l, type(), op.getLayerAttr(),
                                           op.getProductAttr());
    return buildPrunedProduct(b, l, op.getProduct(), op.getLhs(), op.getRhs(),
                              kept, type(), op.getImputation(), previous);
  }

  /// The gradient products of a layer that imputes its previous values.
  bool imputesSame() {
    return op.getImputation() == Imputation::same &&
           op.getProduct() != MatmulProduct::forward;
  }

  PrunableMatmulOp op;
};

struct HeteroResizePass
    : public hetero::impl::HeteroResizeBase<HeteroResizePass> {
  using Base::Base;

  void runOnOperation() override {
    llvm::DenseMap<Operation *, Operation *> lastPlan;
    SmallVector<PrunableMatmulOp> ops;
    getOperation()->walk([&](PrunableMatmulOp op) { ops.push_back(op); });
    if (failed(checkLayers(ops)))
      return signalPassFailure();
    // One plan per layer, block index and function, read at the function's
    // entry, and whether it keeps every column.
    using LayerInFunction = std::tuple<Operation *, StringAttr, Value>;
    llvm::MapVector<LayerInFunction, std::pair<Value, Value>> plans;
    // The layers whose weight each function already shows the runtime.
    llvm::DenseSet<LayerInFunction> observed;
    for (PrunableMatmulOp op : ops) {
      auto function = op->getParentOfType<FunctionOpInterface>();
      if (!function || function.isExternal()) {
        op.emitOpError() << "must be inside a function to be resized";
        return signalPassFailure();
      }
      LayerInFunction layer{function, op.getLayerAttr(), op.getBlock()};
      auto &[kept, whole] = plans[layer];
      if (!kept) {
        // After the plans read so far, so that they stay in program order.
        Block &entry = function.getFunctionBody().front();
        OpBuilder builder = OpBuilder::atBlockBegin(&entry);
        if (Operation *last = lastPlan[function])
          builder.setInsertionPointAfter(last);
        FailureOr<Value> block = blockAtEntry(op, entry, builder);
        if (failed(block))
          return signalPassFailure();
        Location loc = op.getLoc();
        int64_t width = op.getPrunedWidth();
        kept = PrunePlanOp::create(
            builder, loc,
            RankedTensorType::get({ShapedType::kDynamic},
                                  builder.getIndexType()),
            op.getLayerAttr(), *block, builder.getI64IntegerAttr(width));
        Value count = tensor::DimOp::create(builder, loc, kept, 0);
        whole = arith::CmpIOp::create(
            builder, loc, arith::CmpIPredicate::eq, count,
            arith::ConstantIndexOp::create(builder, loc, width));
        lastPlan[function] = whole.getDefiningOp();
      }
      if (priority && op.getProduct() == MatmulProduct::forward &&
          observed.insert(layer).second && failed(observe(op)))
        return signalPassFailure();
      if (failed(Expansion(op).run(kept, whole)))
        return signalPassFailure();
    }
  }

  /// Shows the forward product's weight (K x N: one row per contraction
  /// column) to the runtime's priority statistics.
  static LogicalResult observe(PrunableMatmulOp op) {
    Type element = op.getRhs().getType().getElementType();
    if (!element.isF32())
      return op.emitOpError()
             << "has a forward weight of element type " << element
             << "; the priority statistics (priority=true) read f32 weights";
    OpBuilder builder(op);
    ObserveWeightOp::create(builder, op.getLoc(), op.getRhs(),
                            op.getLayerAttr(), op.getBlock());
    return success();
  }

  /// The op's block index as a value at its function's entry, where the
  /// plan is read (null without one): an argument of the function, or a
  /// constant cloned at `builder`.
  static FailureOr<Value> blockAtEntry(PrunableMatmulOp op, Block &entry,
                                       OpBuilder &builder) {
    Value block = op.getBlock();
    if (!block)
      return Value();
    if (auto argument = dyn_cast<BlockArgument>(block);
        argument && argument.getOwner() == &entry)
      return block;
    Operation *definition = block.getDefiningOp();
    if (definition && definition->hasTrait<OpTrait::ConstantLike>())
      return builder.clone(*definition)->getResult(0);
    return op.emitOpError()
           << "takes its block index from a value computed in the function; "
              "hetero-resize reads the layer's plan at the function's entry, "
              "so the index must be an argument of the function or a "
              "constant";
  }

  /// Every product of a layer prunes the same static width of an unsharded
  /// (or already partitioned) weight.
  LogicalResult checkLayers(ArrayRef<PrunableMatmulOp> ops) {
    llvm::StringMap<PrunableMatmulOp> first;
    for (PrunableMatmulOp op : ops) {
      if (op.getTp() != 1)
        return op.emitOpError()
               << "is sharded over tp = " << op.getTp()
               << " ranks; hetero-resize prunes a rank's own shard, so the "
                  "tensor parallelism must be partitioned first (tp = 1: run "
                  "hetero-partition-tp before it)";
      int64_t width = op.getPrunedWidth();
      if (ShapedType::isDynamic(width))
        return op.emitOpError() << "has a dynamic contraction width; "
                                   "hetero-resize needs it static to plan "
                                   "the layer's columns";
      if (op.getImputation() == Imputation::same &&
          op.getProduct() != MatmulProduct::forward &&
          !op.getResult().getType().hasStaticShape())
        return op.emitOpError()
               << "imputes the previous iteration's values (same) into a "
                  "result of dynamic shape "
               << op.getResult().getType()
               << "; the runtime keeps products of static shape";
      auto [it, inserted] = first.try_emplace(op.getLayer(), op);
      int64_t expected = it->second.getPrunedWidth();
      if (!inserted && expected != width) {
        InFlightDiagnostic diag =
            op.emitOpError()
            << "prunes " << width << " columns of layer '" << op.getLayer()
            << "', but another product of the layer prunes " << expected
            << "; the three products of a layer share its contraction";
        diag.attachNote(it->second.getLoc()) << "the other product";
        return diag;
      }
    }
    return success();
  }
};

} // namespace
