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
// With migration, rank r also computes, for every shard s, the columns of
// s's contraction that the runtime's planner hands it (none unless s
// straggles), from the replicated operands and s's slices of them. Those
// partial products return with the product's own collective: added into
// r's partial before the all-reduce, or, when the product is gathered and
// some rank of the group migrates, summed into a zero-padded global value
// that an all-reduce replaces the all-gather with.
//
// A sharded weight (Megatron's storage, ShardParameters.h) is on no other
// rank: while shard s migrates columns of the layer, s broadcasts the
// slices of its weight for the migrated columns only (hetero.migrated_
// columns, the same list on every rank), and each receiver computes from
// its block of them. A sharded weight's gradient stays the slice: when
// some shard migrates, the zero-padded sums are reduce-scattered, each
// rank receiving its own window.
//
//===----------------------------------------------------------------------===//

#include "Matmul.h"
#include "ShardParameters.h"
#include "ShardedActivations.h"

#include "hetero/Dialect/Hetero.h"
#include "hetero/Dialect/Utils.h"
#include "hetero/Passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
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
  Partitioner(FlatSymbolRefAttr grid, int64_t shards, bool migration,
              ParameterSharding *sharding)
      : grid(grid), shards(shards), migration(migration), sharding(sharding) {}

  LogicalResult run(PrunableMatmulOp op) {
    OpBuilder builder(op);
    Location loc = op.getLoc();
    for (Value value : {op.getLhs(), op.getRhs(), op.getResult()})
      if (!cast<RankedTensorType>(value.getType()).hasStaticShape())
        return op.emitOpError()
               << "cannot be partitioned over tp = " << shards << ": "
               << value.getType() << " must have a static shape";
    if (migration && op.getImputation() != Imputation::zero)
      return op.emitOpError()
             << "imputes " << stringifyImputation(op.getImputation())
             << ", but with migration a straggler's migrated gradient columns "
                "are the sum of what the other ranks computed; expected "
                "impute zero";
    ShardPlan plan = planFor(op.getMode(), op.getProduct());
    Value shard = shardIndex(op);
    Value lhs = slice(builder, loc, op.getLhs(), plan.lhsDim, shard);
    // A sharded weight is the rank's slice already; it takes its shard type
    // only when the partition ends, so until then the product (its pruned
    // width) and what migration builds read it through a cast (`settle`).
    bool shardedRhs = sharding->dimOf(op.getRhs()) >= 0;
    Value rhs = shardedRhs
                    ? asShard(builder, loc, op.getRhs(), plan.rhsDim)
                    : slice(builder, loc, op.getRhs(), plan.rhsDim, shard);
    Value rhsSlice = migration && shardedRhs ? rhs : Value();
    RankedTensorType global = op.getResult().getType();
    SmallVector<int64_t> local(global.getShape());
    int64_t gatherDim = plan.gatherDim == ShardPlan::kLast
                            ? global.getRank() - 1
                            : plan.gatherDim;
    if (!plan.reduce)
      local[gatherDim] /= shards;
    auto product = PrunableMatmulOp::create(
        builder, loc, global.clone(local), lhs, rhs, op.getBlock(),
        op.getModeAttr(), op.getLayerAttr(), builder.getI64IntegerAttr(1),
        op.getProductAttr(), op.getImputationAttr());
    Value result;
    if (plan.reduce) {
      Value partial = product;
      if (migration)
        partial =
            addMigrated(builder, loc, op, plan, product,
                        product.getPrunedWidth(), /*window=*/{}, rhsSlice);
      result = AllReduceOp::create(builder, loc, partial, grid, {kShardAxis});
    } else if (auto found = sharding->values.find(op.getResult());
               found != sharding->values.end()) {
      // A sharded weight's gradient stays the rank's slice.
      result = migration ? sumMigratedSlice(builder, loc, op, plan, product,
                                            product.getPrunedWidth(), gatherDim,
                                            shard)
                         : product;
      sharding->values.insert({result, found->second});
      sharding->values.erase(found);
    } else if (migration) {
      result = gatherOrSumMigrated(builder, loc, op, plan, product,
                                   product.getPrunedWidth(), gatherDim, shard,
                                   rhsSlice);
    } else {
      result = gather(builder, loc, product, gatherDim, global);
      gatheredValues.push_back({result, product, gatherDim});
    }
    op.replaceAllUsesWith(result);
    op.erase();
    return success();
  }

  FlatSymbolRefAttr gridSymbol() const { return grid; }

  /// The products' all-gathers outside migration: each global value with
  /// this rank's window of it.
  ArrayRef<GatheredValue> gathered() const { return gatheredValues; }

  /// Once the sharded values have their shard types: drops the casts that
  /// gave the products and migration a sharded weight's type early, all of
  /// them now the identity.
  LogicalResult settle() {
    for (UnrealizedConversionCastOp cast : shardCasts) {
      Value input = cast.getInputs().front();
      if (input.getType() != cast.getResult(0).getType())
        return cast.emitOpError()
               << "stands for a sharded weight of type "
               << cast.getResult(0).getType() << ", but the weight is "
               << input.getType() << "; expected the weight sharded";
      cast.getResult(0).replaceAllUsesWith(input);
      cast.erase();
    }
    shardCasts.clear();
    return success();
  }

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

private:
  /// The shard's slice of `value` (static shape) along `dim` (kLast: its
  /// last; -1: all of it).
  Value slice(OpBuilder &builder, Location loc, Value value, int64_t dim,
              Value shard) {
    if (dim == -1)
      return value;
    if (dim == ShardPlan::kLast)
      dim = cast<RankedTensorType>(value.getType()).getRank() - 1;
    return shardWindow(builder, loc, value, dim, shard, shards);
  }

  /// `weight` (global type) as the rank's shard of it along `dim` (kLast:
  /// its last), a cast that `settle` removes.
  Value asShard(OpBuilder &b, Location l, Value weight, int64_t dim) {
    auto type = cast<RankedTensorType>(weight.getType());
    if (dim == ShardPlan::kLast)
      dim = type.getRank() - 1;
    SmallVector<int64_t> shape(type.getShape());
    shape[dim] /= shards;
    auto cast =
        UnrealizedConversionCastOp::create(b, l, type.clone(shape), weight);
    shardCasts.push_back(cast);
    return cast.getResult(0);
  }

  /// What this rank computes of shard `source`'s migrated columns `received`
  /// (sorted positions in its `width` columns), shaped as `source`'s own
  /// product `type`; from `sourceRows`, the slices of `source`'s weight
  /// that `source` broadcast for exactly these columns, when the weight is
  /// sharded.
  Value migratedPart(OpBuilder &b, Location l, PrunableMatmulOp op,
                     const ShardPlan &plan, Value source, Value received,
                     RankedTensorType type, Value sourceRows) {
    assert((sourceRows || sharding->dimOf(op.getRhs()) < 0) &&
           "a sharded weight is on no other rank: it must be broadcast");
    Value lhs = slice(b, l, op.getLhs(), plan.lhsDim, source);
    Value rhs =
        sourceRows ? sourceRows : slice(b, l, op.getRhs(), plan.rhsDim, source);
    GemmMarkOp::create(b, l, GemmEvent::begin_migrated);
    Value part = buildPrunedProduct(b, l, op.getProduct(), lhs, rhs, received,
                                    type, Imputation::zero, /*previous=*/{},
                                    /*rhsSelected=*/bool(sourceRows));
    GemmMarkOp::create(b, l, GemmEvent::end_migrated);
    return part;
  }

  /// `accumulator` plus what this rank computes of every shard's migrated
  /// columns. `window(b, l, source)`, when given, is the offset along the
  /// gathered dimension where shard `source`'s part lands in `accumulator`
  /// (a global value); without it the parts add to all of it (a partial).
  /// `rhsSlice`, when given, is this rank's slice of a sharded weight: the
  /// shards are then visited one by one, and each that migrates broadcasts
  /// the slices of its weight for the columns it migrates (the paper's
  /// W_s[:, M]), from which each receiver takes its block.
  Value
  addMigrated(OpBuilder &builder, Location loc, PrunableMatmulOp op,
              const ShardPlan &plan, Value accumulator, int64_t width,
              llvm::function_ref<Value(OpBuilder &, Location, Value)> window,
              Value rhsSlice = {}, RankedTensorType partType = {},
              int64_t dim = 0) {
    if (!partType)
      partType = cast<RankedTensorType>(accumulator.getType());
    // carried + this rank's part of `source`'s received columns, if any.
    auto addReceived =
        [&](OpBuilder &b, Location l, Value source, Value carried,
            Value received,
            llvm::function_ref<Value(OpBuilder &, Location)> sourceRows)
        -> Value {
      Value columns = tensor::DimOp::create(b, l, received, 0);
      Value any =
          arith::CmpIOp::create(b, l, arith::CmpIPredicate::ugt, columns,
                                arith::ConstantIndexOp::create(b, l, 0));
      auto ifOp = scf::IfOp::create(
          b, l, any,
          [&](OpBuilder &t, Location tl) {
            Value part = migratedPart(t, tl, op, plan, source, received,
                                      partType, sourceRows(t, tl));
            Value sum;
            if (!window) {
              sum = add(t, tl, carried, part);
            } else {
              auto [offsets, sizes, strides] =
                  windowOf(t, partType, dim, window(t, tl, source));
              Value current = tensor::ExtractSliceOp::create(
                  t, tl, partType, carried, offsets, sizes, strides);
              sum = tensor::InsertSliceOp::create(
                  t, tl, add(t, tl, current, part), carried, offsets, sizes,
                  strides);
            }
            scf::YieldOp::create(t, tl, sum);
          },
          [&](OpBuilder &e, Location el) {
            scf::YieldOp::create(e, el, carried);
          });
      return ifOp.getResult(0);
    };
    return overShards(
        builder, loc, accumulator, op, width, /*unrolled=*/bool(rhsSlice),
        [&](OpBuilder &b, Location l, Value source, Value carried,
            MigrationPlanOp planned) -> Value {
          Value received = planned.getReceived();
          if (!rhsSlice)
            return addReceived(b, l, source, carried, received,
                               [](OpBuilder &, Location) { return Value(); });
          // Every rank of the group learns alike whether `source` migrates
          // and which columns, so all of them take the broadcast or none,
          // of the same size.
          int64_t root = *getConstantIntValue(source);
          int64_t axis = prunedRhsAxis(op.getProduct());
          auto ifOp = scf::IfOp::create(
              b, l, planned.getMigrates(),
              [&](OpBuilder &t, Location tl) {
                auto migrated = MigratedColumnsOp::create(
                    t, tl, received.getType(), t.getIndexType(),
                    op.getLayerAttr(), op.getBlock(),
                    t.getI64IntegerAttr(width), source);
                auto sliceType = cast<RankedTensorType>(rhsSlice.getType());
                Value rows = SelectColsOp::create(
                    t, tl, withDynamicAxis(sliceType, axis), rhsSlice,
                    migrated.getMigrated(), t.getI64IntegerAttr(axis));
                rows = BroadcastOp::create(t, tl, rows.getType(), grid,
                                           t.getDenseI16ArrayAttr({kShardAxis}),
                                           rows, t.getI64IntegerAttr(root));
                scf::YieldOp::create(
                    t, tl,
                    addReceived(t, tl, source, carried, received,
                                [&](OpBuilder &r, Location rl) -> Value {
                                  // This rank's block: [first, first + n) of
                                  // them.
                                  auto rowsType =
                                      cast<RankedTensorType>(rows.getType());
                                  auto [offsets, sizes, strides] = windowOf(
                                      r, rowsType, axis, migrated.getFirst());
                                  sizes[axis] =
                                      tensor::DimOp::create(r, rl, received, 0)
                                          .getResult();
                                  return tensor::ExtractSliceOp::create(
                                      r, rl, rowsType, rows, offsets, sizes,
                                      strides);
                                }));
              },
              [&](OpBuilder &e, Location el) {
                scf::YieldOp::create(e, el, carried);
              });
          return ifOp.getResult(0);
        });
  }

  /// A loop over the group's shards `source` that carries `initial` through
  /// `body`, which also gets the layer's migration plan for `source`;
  /// `unrolled`: one body per shard, `source` a constant.
  Value overShards(OpBuilder &builder, Location loc, Value initial,
                   PrunableMatmulOp op, int64_t width, bool unrolled,
                   llvm::function_ref<Value(OpBuilder &, Location, Value, Value,
                                            MigrationPlanOp)>
                       body) {
    auto received =
        RankedTensorType::get({ShapedType::kDynamic}, builder.getIndexType());
    auto step = [&](OpBuilder &b, Location l, Value source, Value carried) {
      auto planned = MigrationPlanOp::create(
          b, l, received, b.getI1Type(), op.getLayerAttr(), op.getBlock(),
          b.getI64IntegerAttr(width), source);
      return body(b, l, source, carried, planned);
    };
    if (unrolled) {
      for (int64_t source = 0; source < shards; ++source)
        initial =
            step(builder, loc,
                 arith::ConstantIndexOp::create(builder, loc, source), initial);
      return initial;
    }
    auto loop = scf::ForOp::create(
        builder, loc, arith::ConstantIndexOp::create(builder, loc, 0),
        arith::ConstantIndexOp::create(builder, loc, shards),
        arith::ConstantIndexOp::create(builder, loc, 1), ValueRange{initial},
        [&](OpBuilder &b, Location l, Value source, ValueRange carried) {
          scf::YieldOp::create(b, l, step(b, l, source, carried[0]));
        });
    return loop.getResult(0);
  }

  /// A gathered product with migration: while no rank of the group
  /// migrates columns of the layer, the all-gather of the slices; else the
  /// all-reduce of zero-padded global values holding this rank's slice and
  /// its parts of the migrating shards' slices.
  Value gatherOrSumMigrated(OpBuilder &builder, Location loc,
                            PrunableMatmulOp op, const ShardPlan &plan,
                            Value local, int64_t width, int64_t dim,
                            Value shard, Value rhsSlice) {
    RankedTensorType global = op.getResult().getType();
    return ifMigrating(
        builder, loc, op, plan, local, width, dim, shard, rhsSlice,
        [&](OpBuilder &t, Location tl, Value padded) -> Value {
          return AllReduceOp::create(t, tl, padded, grid, {kShardAxis});
        },
        [&](OpBuilder &e, Location el) {
          return gather(e, el, local, dim, global);
        });
  }

  /// A sharded weight's gradient with migration: the rank's own slice,
  /// with what the other ranks computed of its migrated columns added
  /// while some shard of the group migrates. Each rank needs only its own
  /// window of the zero-padded sums: a reduce-scatter, which moves half
  /// the bytes of an all-reduce.
  Value sumMigratedSlice(OpBuilder &builder, Location loc, PrunableMatmulOp op,
                         const ShardPlan &plan, Value local, int64_t width,
                         int64_t dim, Value shard) {
    auto localType = cast<RankedTensorType>(local.getType());
    // The weight's gradient is the product's result: its operands are
    // activations, whole on every rank.
    return ifMigrating(
        builder, loc, op, plan, local, width, dim, shard, /*rhsSlice=*/{},
        [&](OpBuilder &t, Location tl, Value padded) -> Value {
          return scatter(t, tl, padded, dim, localType);
        },
        [&](OpBuilder &, Location) { return local; });
  }

  /// Where shard `source`'s slice (of `localType`) starts along `dim`.
  static Value offsetOf(OpBuilder &b, Location l, Value source,
                        RankedTensorType localType, int64_t dim) {
    return arith::MulIOp::create(
        b, l, source,
        arith::ConstantIndexOp::create(b, l, localType.getDimSize(dim)));
  }

  /// While some rank of the group migrates columns of the layer, `reduce`
  /// of the zero-padded global value holding this rank's slice `local` and
  /// its parts of the migrating shards' slices (a collective that sums it
  /// over the group); else `otherwise`. `rhsSlice` as for addMigrated.
  Value
  ifMigrating(OpBuilder &builder, Location loc, PrunableMatmulOp op,
              const ShardPlan &plan, Value local, int64_t width, int64_t dim,
              Value shard, Value rhsSlice,
              llvm::function_ref<Value(OpBuilder &, Location, Value)> reduce,
              llvm::function_ref<Value(OpBuilder &, Location)> otherwise) {
    auto localType = cast<RankedTensorType>(local.getType());
    RankedTensorType global = op.getResult().getType();
    // The planner answers every rank of the group alike.
    Value anyMigrates = overShards(
        builder, loc, arith::ConstantIntOp::create(builder, loc, 0, 1), op,
        width, /*unrolled=*/false,
        [](OpBuilder &b, Location l, Value, Value carried,
           MigrationPlanOp planned) -> Value {
          return arith::OrIOp::create(b, l, carried, planned.getMigrates());
        });
    auto window = [&](OpBuilder &b, Location l, Value source) -> Value {
      return offsetOf(b, l, source, localType, dim);
    };
    auto ifOp = scf::IfOp::create(
        builder, loc, anyMigrates,
        [&](OpBuilder &t, Location tl) {
          Value padded = zeros(t, tl, global);
          auto [offsets, sizes, strides] =
              windowOf(t, localType, dim, window(t, tl, shard));
          padded = tensor::InsertSliceOp::create(t, tl, local, padded, offsets,
                                                 sizes, strides);
          padded = addMigrated(t, tl, op, plan, padded, width, window, rhsSlice,
                               localType, dim);
          scf::YieldOp::create(t, tl, reduce(t, tl, padded));
        },
        [&](OpBuilder &e, Location el) {
          scf::YieldOp::create(e, el, otherwise(e, el));
        });
    return ifOp.getResult(0);
  }

  /// Offsets, sizes and strides of a `part`-shaped window of a larger
  /// value, at `offset` along `dim`.
  std::tuple<SmallVector<OpFoldResult>, SmallVector<OpFoldResult>,
             SmallVector<OpFoldResult>>
  windowOf(OpBuilder &b, RankedTensorType part, int64_t dim, Value offset) {
    SmallVector<OpFoldResult> offsets(part.getRank(), b.getIndexAttr(0)), sizes,
        strides(part.getRank(), b.getIndexAttr(1));
    for (int64_t size : part.getShape())
      sizes.push_back(b.getIndexAttr(size));
    offsets[dim] = offset;
    return {offsets, sizes, strides};
  }

  static Value zeros(OpBuilder &b, Location l, RankedTensorType type) {
    Value init =
        tensor::EmptyOp::create(b, l, type.getShape(), type.getElementType());
    Value zero =
        arith::ConstantOp::create(b, l, b.getZeroAttr(type.getElementType()));
    return linalg::FillOp::create(b, l, zero, init).getResult(0);
  }

  /// `accumulator` + `part`, written into `accumulator`: a loop that
  /// carries it then bufferizes in place.
  static Value add(OpBuilder &b, Location l, Value accumulator, Value part) {
    auto type = cast<RankedTensorType>(accumulator.getType());
    AffineMap identity = b.getMultiDimIdentityMap(type.getRank());
    SmallVector<utils::IteratorType> parallel(type.getRank(),
                                              utils::IteratorType::parallel);
    return linalg::GenericOp::create(
               b, l, TypeRange{type}, ValueRange{part}, ValueRange{accumulator},
               ArrayRef<AffineMap>{identity, identity}, parallel,
               [](OpBuilder &g, Location gl, ValueRange args) {
                 Value sum =
                     isa<FloatType>(args[0].getType())
                         ? arith::AddFOp::create(g, gl, args[1], args[0])
                               .getResult()
                         : arith::AddIOp::create(g, gl, args[1], args[0])
                               .getResult();
                 linalg::YieldOp::create(g, gl, sum);
               })
        .getResult(0);
  }

  /// Sums `global` over the group and leaves each rank its own slice (of
  /// `localType`) along `dim`. The runtime scatters along the leading axis,
  /// so [.., T d, ..] travels as [T, .., d, ..] and arrives as [1, .., d,
  /// ..].
  Value scatter(OpBuilder &builder, Location loc, Value global, int64_t dim,
                RankedTensorType localType) {
    auto reduction = ReductionAttr::get(builder.getContext(), Reduction::sum);
    auto axes = builder.getDenseI16ArrayAttr({kShardAxis});
    if (dim == 0)
      return ReduceScatterOp::create(builder, loc, localType, grid, axes,
                                     global, builder.getI64IntegerAttr(0),
                                     reduction, /*compress=*/nullptr);
    auto type = cast<RankedTensorType>(global.getType());
    int64_t rank = type.getRank();
    // [s0, .., T d, ..] -> [s0, .., T, d, ..] -> [T, s0, .., d, ..].
    SmallVector<int64_t> split(localType.getShape());
    split.insert(split.begin() + dim, shards);
    Value expanded = tensor::ExpandShapeOp::create(
        builder, loc, type.clone(split), global, pairedAt(rank, dim));
    SmallVector<int64_t> permutation = {dim};
    for (int64_t i = 0; i <= rank; ++i)
      if (i != dim)
        permutation.push_back(i);
    Value leading = transposeTensor(builder, loc, expanded, permutation);
    SmallVector<int64_t> mineShape(
        cast<RankedTensorType>(leading.getType()).getShape());
    mineShape[0] = 1;
    Value mine = ReduceScatterOp::create(
        builder, loc, type.clone(mineShape), grid, axes, leading,
        builder.getI64IntegerAttr(0), reduction, /*compress=*/nullptr);
    SmallVector<ReassociationIndices> dropGroups = {{0, 1}};
    for (int64_t i = 2; i <= rank; ++i)
      dropGroups.push_back({i});
    return tensor::CollapseShapeOp::create(builder, loc, localType, mine,
                                           dropGroups);
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
    SmallVector<int64_t> permutation;
    for (int64_t i = 0; i <= rank; ++i)
      permutation.push_back(i < dim ? i + 1 : (i == dim ? 0 : i));
    return tensor::CollapseShapeOp::create(
        builder, loc, global,
        transposeTensor(builder, loc, gathered, permutation),
        pairedAt(rank, dim));
  }

  /// The reassociation of `rank` dimensions with dimensions `dim` and
  /// `dim + 1` of the other side as one: [.., T d, ..] <-> [.., T, d, ..].
  static SmallVector<ReassociationIndices> pairedAt(int64_t rank, int64_t dim) {
    SmallVector<ReassociationIndices> groups;
    for (int64_t i = 0; i < rank; ++i)
      groups.push_back(i < dim    ? ReassociationIndices{i}
                       : i == dim ? ReassociationIndices{i, i + 1}
                                  : ReassociationIndices{i + 1});
    return groups;
  }

  FlatSymbolRefAttr grid;
  int64_t shards;
  bool migration;
  ParameterSharding *sharding;
  llvm::DenseMap<Operation *, Value> indices;
  SmallVector<UnrealizedConversionCastOp> shardCasts;
  SmallVector<GatheredValue> gatheredValues;
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
    // Per degree: its products, and the parameters they let shard.
    llvm::MapVector<int64_t, SmallVector<PrunableMatmulOp>> byDegree;
    for (PrunableMatmulOp op : sharded)
      byDegree[op.getTp()].push_back(op);
    llvm::DenseMap<int64_t, ParameterSharding> shardings;
    // One degree: one grid's shard index initialises them.
    for (auto &[tp, products] : byDegree)
      shardings[tp] = shardParameters && byDegree.size() == 1
                          ? analyzeParameterSharding(module, products, tp)
                          : ParameterSharding();
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
                    tp, migration, &shardings[tp])
                .first;
      }
      if (failed(found->second.run(op)))
        return signalPassFailure();
    }
    for (auto &[tp, partitioner] : partitioners) {
      if (failed(applyParameterSharding(module, shardings[tp], tp,
                                        partitioner.gridSymbol())) ||
          failed(partitioner.settle()))
        return signalPassFailure();
      if (shardedActivations)
        keepActivationsSharded(
            module, partitioner.gathered(), tp, partitioner.gridSymbol(),
            [&](Operation *op) { return partitioner.shardIndex(op); });
    }
  }
};

} // namespace
