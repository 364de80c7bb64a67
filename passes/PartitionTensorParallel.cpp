//===- PartitionTensorParallel.cpp - each TP rank computes its shard ------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// A prunable matmul with tp = T is written in the global view. On the T
// ranks of the grid's tensor-parallel axis (axis 2), rank t computes the
// product of its shard of the weight W: K x N (col: columns N, row: rows K)
// and one collective over axis 2 restores the global value:
//
//   the shard's GEMM contracts a split dimension  -> all-reduce (sum)
//   the shard's GEMM yields a slice of the result  -> all-gather
//
// The products' operands, as the op holds them:
//
//   forward      X [.., K]   x W   [K, N]
//   grad_input   G [.., N]   x W^T [N, K]
//   grad_weight  X^T [K, M]  x G   [M, N]
//
//===----------------------------------------------------------------------===//

#include "hetero/Dialect/Hetero.h"
#include "hetero/Passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseMap.h"

namespace hetero {
#define GEN_PASS_DEF_HETEROPARTITIONTENSORPARALLEL
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;
using namespace hetero;

namespace {

/// The tensor-parallel axis of a pipeline's grid: (stage, replica, shard).
constexpr int16_t kShardAxis = 2;

/// Which operand dimension the shard splits (-1: none; `last`: the lhs's
/// last) and what restores the global result.
struct ShardPlan {
  static constexpr int64_t kLast = -2;
  int64_t lhsDim = -1, rhsDim = -1;
  /// All-gather along this result dimension (kLast: the last); or, when
  /// `reduce`, sum the partial products.
  int64_t gatherDim = -1;
  bool reduce = false;
};

ShardPlan planFor(PruneMode mode, MatmulProduct product) {
  bool byColumns = mode == PruneMode::col;
  switch (product) {
  case MatmulProduct::forward:
    // col: X W[:, t] is a column slice of Y; row: X[:, t] W[t, :] a partial.
    if (byColumns)
      return {/*lhsDim=*/-1, /*rhsDim=*/1, ShardPlan::kLast, false};
    return {ShardPlan::kLast, 0, -1, true};
  case MatmulProduct::grad_input:
    // col: G[:, t] W^T[t, :] contracts the split N; row: dX's K columns.
    if (byColumns)
      return {ShardPlan::kLast, 0, -1, true};
    return {-1, 1, ShardPlan::kLast, false};
  case MatmulProduct::grad_weight:
    // dW is sharded as W is: its columns (col) or its rows (row).
    if (byColumns)
      return {-1, 1, 1, false};
    return {0, -1, 0, false};
  }
  llvm_unreachable("unknown product");
}

class Partitioner {
public:
  Partitioner(FlatSymbolRefAttr grid, int64_t shards)
      : grid(grid), shards(shards) {}

  LogicalResult run(PrunableMatmulOp op) {
    OpBuilder builder(op);
    Location loc = op.getLoc();
    for (Value value : {op.getLhs(), op.getRhs(), op.getResult()})
      if (!cast<RankedTensorType>(value.getType()).hasStaticShape())
        return op.emitOpError()
               << "cannot be partitioned over tp = " << shards << ": "
               << value.getType() << " must have a static shape";
    ShardPlan plan = planFor(op.getMode(), op.getProduct());
    Value shard = shardIndex(op);
    Value lhs = slice(builder, loc, op.getLhs(), plan.lhsDim, shard);
    Value rhs = slice(builder, loc, op.getRhs(), plan.rhsDim, shard);
    RankedTensorType global = op.getResult().getType();
    SmallVector<int64_t> local(global.getShape());
    int64_t gatherDim = plan.gatherDim == ShardPlan::kLast
                            ? global.getRank() - 1
                            : plan.gatherDim;
    if (!plan.reduce)
      local[gatherDim] /= shards;
    auto product = PrunableMatmulOp::create(
        builder, loc, global.clone(local), lhs, rhs, op.getModeAttr(),
        op.getLayerAttr(), builder.getI64IntegerAttr(1), op.getProductAttr(),
        op.getImputationAttr());
    Value result = plan.reduce
                       ? Value(AllReduceOp::create(builder, loc, product, grid,
                                                   {kShardAxis}))
                       : gather(builder, loc, product, gatherDim, global);
    op.replaceAllUsesWith(result);
    op.erase();
    return success();
  }

private:
  /// This rank's index on the tensor-parallel axis, read once per function.
  Value shardIndex(Operation *op) {
    auto function = op->getParentOfType<FunctionOpInterface>();
    Value &index = indices[function];
    if (!index) {
      OpBuilder builder(&function.getFunctionBody().front(),
                        function.getFunctionBody().front().begin());
      index = shard::ProcessMultiIndexOp::create(
                  builder, function.getLoc(), TypeRange{builder.getIndexType()},
                  grid, builder.getDenseI16ArrayAttr({kShardAxis}))
                  .getResult()[0];
    }
    return index;
  }

  /// The shard's slice of `value` (static shape) along `dim` (kLast: its
  /// last; -1: all of it).
  Value slice(OpBuilder &builder, Location loc, Value value, int64_t dim,
              Value shard) {
    if (dim == -1)
      return value;
    auto type = cast<RankedTensorType>(value.getType());
    if (dim == ShardPlan::kLast)
      dim = type.getRank() - 1;
    int64_t width = type.getDimSize(dim) / shards;
    SmallVector<OpFoldResult> offsets(type.getRank(), builder.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes,
        strides(type.getRank(), builder.getIndexAttr(1));
    for (int64_t size : type.getShape())
      sizes.push_back(builder.getIndexAttr(size));
    sizes[dim] = builder.getIndexAttr(width);
    offsets[dim] = arith::MulIOp::create(
                       builder, loc, shard,
                       arith::ConstantIndexOp::create(builder, loc, width))
                       .getResult();
    return tensor::ExtractSliceOp::create(builder, loc, value, offsets, sizes,
                                          strides);
  }

  /// Concatenates the ranks' slices along `dim` in shard order. The runtime
  /// gathers along the leading axis, so a slice [.., d, ..] travels as
  /// [1, .., d, ..] and the [T, .., d, ..] gathered moves T next to d.
  Value gather(OpBuilder &builder, Location loc, Value local, int64_t dim,
               RankedTensorType global) {
    auto type = cast<RankedTensorType>(local.getType());
    int64_t rank = type.getRank();
    if (dim == 0) {
      return AllGatherOp::create(builder, loc, global, grid,
                                 builder.getDenseI16ArrayAttr({kShardAxis}),
                                 local, builder.getI64IntegerAttr(0),
                                 /*compress=*/nullptr);
    }
    SmallVector<int64_t> lifted = {1};
    llvm::append_range(lifted, type.getShape());
    SmallVector<ReassociationIndices> liftGroups = {{0, 1}};
    for (int64_t i = 2; i <= rank; ++i)
      liftGroups.push_back({i});
    Value expanded = tensor::ExpandShapeOp::create(
        builder, loc, type.clone(lifted), local, liftGroups);
    lifted[0] = shards;
    Value gathered = AllGatherOp::create(
        builder, loc, type.clone(lifted), grid,
        builder.getDenseI16ArrayAttr({kShardAxis}), expanded,
        builder.getI64IntegerAttr(0), /*compress=*/nullptr);
    // [T, s0, .., s_dim, ..] -> [s0, .., T, s_dim, ..].
    SmallVector<int64_t> permutation, moved;
    for (int64_t i = 0; i <= rank; ++i) {
      int64_t source = i < dim ? i + 1 : (i == dim ? 0 : i);
      permutation.push_back(source);
      moved.push_back(lifted[source]);
    }
    Value init =
        tensor::EmptyOp::create(builder, loc, moved, type.getElementType());
    Value transposed =
        linalg::TransposeOp::create(builder, loc, gathered, init, permutation)
            .getResult()[0];
    SmallVector<ReassociationIndices> mergeGroups;
    for (int64_t i = 0; i < rank; ++i)
      mergeGroups.push_back(i < dim    ? ReassociationIndices{i}
                            : i == dim ? ReassociationIndices{i, i + 1}
                                       : ReassociationIndices{i + 1});
    return tensor::CollapseShapeOp::create(builder, loc, global, transposed,
                                           mergeGroups);
  }

  FlatSymbolRefAttr grid;
  int64_t shards;
  llvm::DenseMap<Operation *, Value> indices;
};

struct HeteroPartitionTensorParallelPass
    : public hetero::impl::HeteroPartitionTensorParallelBase<
          HeteroPartitionTensorParallelPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<PrunableMatmulOp> sharded;
    WalkResult walked = module.walk([&](PrunableMatmulOp op) {
      if (op.getTp() == 1)
        return WalkResult::advance();
      // The shard index is read at the entry of the enclosing function.
      if (!op->getParentOfType<FunctionOpInterface>()) {
        op.emitOpError() << "is sharded over tp = " << op.getTp()
                         << " outside a function; expected it in one";
        return WalkResult::interrupt();
      }
      sharded.push_back(op);
      return WalkResult::advance();
    });
    if (walked.wasInterrupted())
      return signalPassFailure();
    if (sharded.empty())
      return;
    // Each degree needs the one grid whose axis 2 has that many ranks.
    llvm::DenseMap<int64_t, SmallVector<shard::GridOp>> gridsBySize;
    for (auto grid : module.getOps<shard::GridOp>())
      if (grid.getShape().size() > size_t(kShardAxis))
        gridsBySize[grid.getShape()[kShardAxis]].push_back(grid);
    llvm::DenseMap<int64_t, Partitioner> partitioners;
    for (PrunableMatmulOp op : sharded) {
      int64_t tp = op.getTp();
      auto found = partitioners.find(tp);
      if (found == partitioners.end()) {
        SmallVector<shard::GridOp> grids = gridsBySize.lookup(tp);
        if (grids.size() != 1) {
          InFlightDiagnostic diagnostic = op.emitOpError()
                                          << "is sharded over tp = " << tp;
          if (grids.empty())
            diagnostic << ", but no shard.grid has " << tp
                       << " ranks on axis 2 (stage, replica, shard); "
                          "expected one (hetero-gen --tp "
                       << tp << " gives the pipeline's grid one)";
          else
            diagnostic << ", and shard.grids @" << grids[0].getSymName()
                       << " and @" << grids[1].getSymName() << " both have "
                       << tp << " ranks on axis 2; expected one";
          return signalPassFailure();
        }
        found =
            partitioners
                .try_emplace(
                    tp, FlatSymbolRefAttr::get(grids.front().getSymNameAttr()),
                    tp)
                .first;
      }
      if (failed(found->second.run(op)))
        return signalPassFailure();
    }
  }
};

} // namespace
