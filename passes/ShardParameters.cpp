//===- ShardParameters.cpp - parameters held as tensor-parallel shards ----===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "ShardParameters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace hetero;

namespace {

/// The tensor-parallel axis of a pipeline's grid: (stage, replica, shard).
constexpr int16_t kShardAxis = 2;

/// The name of the function that copies each rank's slice of the sharded
/// parameters' initial values once, and of its flag.
constexpr llvm::StringLiteral kInitName = "__hetero_shard_init";
constexpr llvm::StringLiteral kReadyName = "__hetero_shard_ready";

/// A linalg op that maps every element of its shaped operands to the same
/// element of the others: a shard of each is computed from the same shard
/// of the others.
bool isElementwise(linalg::LinalgOp op) {
  if (isa<linalg::TransposeOp>(op.getOperation()) ||
      op.getNumLoops() != op.getNumParallelLoops())
    return false;
  for (OpOperand &operand : op->getOpOperands())
    if (isa<ShapedType>(operand.get().getType()) &&
        !op.getMatchingIndexingMap(&operand).isIdentity())
      return false;
  // A body that reads its position would see the shard's.
  bool positional = false;
  op->walk([&](linalg::IndexOp) { positional = true; });
  return !positional;
}

/// Whether an all-reduce leaves the shard axis alone.
bool reducesOtherAxes(AllReduceOp op) {
  return op.getGrid() && !op.getGridAxes().empty() &&
         !llvm::is_contained(op.getGridAxes(), kShardAxis);
}

/// The flood fill of one component from a product's split operand.
class ComponentWalker {
public:
  ComponentWalker(ModuleOp module, ArrayRef<PrunableMatmulOp> products,
                  int64_t shards)
      : module(module), shards(shards) {
    for (PrunableMatmulOp product : products)
      seeds.insert(product);
    module.walk([&](func::CallOp call) {
      calls[call.getCalleeAttr().getAttr()].push_back(call);
    });
    module.walk([&](memref::GetGlobalOp read) {
      reads[read.getNameAttr().getAttr()].push_back(read);
    });
  }

  /// Walks the component of `value` (split along `dim`) unless an earlier
  /// walk reached it; the component, if it may be sharded, joins `result`.
  void walkFrom(Value value, int64_t dim, ParameterSharding &result) {
    if (visited.contains(value))
      return;
    component = ParameterSharding();
    poisoned = false;
    visit(value, dim);
    while (!worklist.empty()) {
      auto [next, nextDim] = worklist.pop_back_val();
      expand(next, nextDim);
    }
    if (poisoned || component.globals.empty())
      return;
    for (auto &entry : component.values)
      result.values.insert(entry);
    for (auto &entry : component.globals)
      result.globals.insert(entry);
  }

private:
  /// Whether `type` can be split `shards` ways along `dim`.
  bool splittable(Type type, int64_t dim) const {
    auto shaped = dyn_cast<ShapedType>(type);
    return shaped && shaped.hasStaticShape() && dim >= 0 &&
           dim < shaped.getRank() && shaped.getDimSize(dim) % shards == 0;
  }

  void visit(Value value, int64_t dim) {
    auto [it, inserted] =
        component.values.insert({value, {dim, value.getType()}});
    if (!inserted) {
      poisoned |= it->second.first != dim;
      return;
    }
    visited.insert(value);
    poisoned |= !splittable(value.getType(), dim);
    worklist.push_back({value, dim});
  }

  void visitGlobal(FlatSymbolRefAttr name, int64_t dim) {
    auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
        module, name.getAttr());
    if (!global) {
      poisoned = true;
      return;
    }
    auto [it, inserted] = component.globals.insert({global, dim});
    if (!inserted) {
      poisoned |= it->second != dim;
      return;
    }
    poisoned |= !splittable(global.getType(), dim) || global.getConstant();
    // Only reads and the pipeline's list of its parameters may name it.
    if (std::optional<SymbolTable::UseRange> uses =
            SymbolTable::getSymbolUses(global, module)) {
      for (const SymbolTable::SymbolUse &use : *uses)
        if (!isa<memref::GetGlobalOp, PipelineOp, StageOp, StageVariantOp>(
                use.getUser()))
          poisoned = true;
    } else {
      poisoned = true;
    }
    for (memref::GetGlobalOp read : reads.lookup(name.getAttr()))
      visit(read.getResult(), dim);
  }

  /// Whether `product` splits `value` (an operand or its result) along
  /// `dim`, as a sharded weight.
  bool splitsWeight(PrunableMatmulOp product, Value value, int64_t dim) const {
    if (!seeds.contains(product) || dim != shardedWeightDim(product))
      return false;
    if (product.getProduct() == MatmulProduct::grad_weight)
      return value == product.getResult();
    return value == product.getRhs();
  }

  func::FuncOp callee(func::CallOp call) const {
    auto function = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    return function && !function.isDeclaration() ? function : func::FuncOp();
  }

  /// Follows `value` to what produces it and to what uses it.
  void expand(Value value, int64_t dim) {
    producer(value, dim);
    for (OpOperand &use : value.getUses())
      user(use, dim);
  }

  void producer(Value value, int64_t dim) {
    if (auto argument = dyn_cast<BlockArgument>(value)) {
      auto function =
          dyn_cast<func::FuncOp>(argument.getOwner()->getParentOp());
      if (!function || argument.getOwner() != &function.getBody().front()) {
        poisoned = true;
        return;
      }
      for (func::CallOp call : calls.lookup(function.getSymNameAttr()))
        visit(call.getOperand(argument.getArgNumber()), dim);
      return;
    }
    Operation *op = value.getDefiningOp();
    unsigned index = cast<OpResult>(value).getResultNumber();
    if (auto call = dyn_cast<func::CallOp>(op)) {
      func::FuncOp function = callee(call);
      if (!function) {
        poisoned = true;
        return;
      }
      function.walk(
          [&](func::ReturnOp ret) { visit(ret.getOperand(index), dim); });
    } else if (auto transpose = dyn_cast<linalg::TransposeOp>(op)) {
      visit(transpose.getInput(), transpose.getPermutation()[dim]);
      visit(transpose.getInit(), dim);
    } else if (auto toTensor = dyn_cast<bufferization::ToTensorOp>(op)) {
      visit(toTensor.getBuffer(), dim);
    } else if (auto toBuffer = dyn_cast<bufferization::ToBufferOp>(op)) {
      visit(toBuffer.getTensor(), dim);
    } else if (auto read = dyn_cast<memref::GetGlobalOp>(op)) {
      visitGlobal(read.getNameAttr(), dim);
    } else if (isa<tensor::EmptyOp>(op)) {
      // Its shape is all it has.
    } else if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      auto splat = dyn_cast<SplatElementsAttr>(constant.getValue());
      poisoned |= !splat;
    } else {
      throughShared(op, value, dim);
    }
  }

  void user(OpOperand &use, int64_t dim) {
    Operation *op = use.getOwner();
    unsigned index = use.getOperandNumber();
    if (auto call = dyn_cast<func::CallOp>(op)) {
      func::FuncOp function = callee(call);
      if (!function) {
        poisoned = true;
        return;
      }
      visit(function.getArgument(index), dim);
    } else if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      auto function = dyn_cast<func::FuncOp>(ret->getParentOp());
      if (!function) {
        poisoned = true;
        return;
      }
      for (func::CallOp call : calls.lookup(function.getSymNameAttr()))
        visit(call.getResult(index), dim);
    } else if (auto transpose = dyn_cast<linalg::TransposeOp>(op)) {
      ArrayRef<int64_t> permutation = transpose.getPermutation();
      if (use.get() == transpose.getInput()) {
        int64_t at = std::find(permutation.begin(), permutation.end(), dim) -
                     permutation.begin();
        visit(transpose.getInit(), at);
        for (Value result : transpose->getResults())
          visit(result, at);
      } else {
        visit(transpose.getInput(), permutation[dim]);
        for (Value result : transpose->getResults())
          visit(result, dim);
      }
    } else if (isa<bufferization::ToTensorOp, bufferization::ToBufferOp>(op)) {
      visit(op->getResult(0), dim);
    } else if (isa<bufferization::MaterializeInDestinationOp, memref::CopyOp>(
                   op)) {
      sameAsAll(op, dim);
    } else {
      throughShared(op, use.get(), dim);
    }
  }

  /// The ops `value` may come from or go to alike: a product that splits it
  /// as a sharded weight (nothing follows), element-wise linalg and an
  /// all-reduce over other axes (every operand and result split as
  /// `value`). Any other op keeps the component whole.
  void throughShared(Operation *op, Value value, int64_t dim) {
    if (auto product = dyn_cast<PrunableMatmulOp>(op)) {
      poisoned |= !splitsWeight(product, value, dim);
      return;
    }
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    auto reduce = dyn_cast<AllReduceOp>(op);
    if ((linalgOp && isElementwise(linalgOp)) ||
        (reduce && reducesOtherAxes(reduce)))
      sameAsAll(op, dim);
    else
      poisoned = true;
  }

  /// Every shaped operand and result of `op` is split as one of them is.
  void sameAsAll(Operation *op, int64_t dim) {
    for (Value operand : op->getOperands())
      if (isa<ShapedType>(operand.getType()))
        visit(operand, dim);
    for (Value result : op->getResults())
      if (isa<ShapedType>(result.getType()))
        visit(result, dim);
  }

  ModuleOp module;
  int64_t shards;
  llvm::DenseSet<Operation *> seeds;
  llvm::DenseMap<Attribute, SmallVector<func::CallOp>> calls;
  llvm::DenseMap<Attribute, SmallVector<memref::GetGlobalOp>> reads;
  llvm::DenseSet<Value> visited;
  ParameterSharding component;
  bool poisoned = false;
  SmallVector<std::pair<Value, int64_t>> worklist;
};

/// `type` (a ranked tensor or memref) with dimension `dim` split `shards`
/// ways.
Type shardOf(Type type, int64_t dim, int64_t shards) {
  auto shaped = cast<ShapedType>(type);
  SmallVector<int64_t> shape(shaped.getShape());
  shape[dim] /= shards;
  if (auto memref = dyn_cast<MemRefType>(type))
    return MemRefType::get(shape, memref.getElementType(), memref.getLayout(),
                           memref.getMemorySpace());
  return cast<RankedTensorType>(type).clone(shape);
}

/// `@__hetero_shard_init`: once per process, each rank's slice of every
/// sharded global's full initial value into the global.
void emitInitFunction(
    ModuleOp module, FlatSymbolRefAttr grid,
    ArrayRef<std::tuple<memref::GlobalOp, memref::GlobalOp, int64_t>> copies) {
  MLIRContext *context = module.getContext();
  Location loc = module.getLoc();
  OpBuilder builder(context);
  builder.setInsertionPointToEnd(module.getBody());
  auto flagType = MemRefType::get({}, builder.getI64Type());
  auto flag = memref::GlobalOp::create(
      builder, loc, kReadyName, builder.getStringAttr("private"), flagType,
      DenseElementsAttr::get(RankedTensorType::get({}, builder.getI64Type()),
                             builder.getI64IntegerAttr(0)),
      /*constant=*/false, /*alignment=*/IntegerAttr());
  auto function = func::FuncOp::create(builder, loc, kInitName,
                                       builder.getFunctionType({}, {}));
  builder.setInsertionPointToStart(function.addEntryBlock());
  Value ready =
      memref::GetGlobalOp::create(builder, loc, flagType, flag.getSymName());
  Value done = memref::LoadOp::create(builder, loc, ready, ValueRange{});
  Value pending = arith::CmpIOp::create(
      builder, loc, arith::CmpIPredicate::eq, done,
      arith::ConstantIntOp::create(builder, loc, builder.getI64Type(), 0));
  scf::IfOp::create(builder, loc, pending, [&](OpBuilder &b, Location l) {
    Value shard = shard::ProcessMultiIndexOp::create(
                      b, l, TypeRange{b.getIndexType()}, grid,
                      b.getDenseI16ArrayAttr({kShardAxis}))
                      .getResult()[0];
    for (auto [sharded, full, dim] : copies) {
      MemRefType type = sharded.getType();
      Value source =
          memref::GetGlobalOp::create(b, l, full.getType(), full.getSymName());
      SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0)),
          sizes, strides(type.getRank(), b.getIndexAttr(1));
      for (int64_t size : type.getShape())
        sizes.push_back(b.getIndexAttr(size));
      offsets[dim] = arith::MulIOp::create(b, l, shard,
                                           arith::ConstantIndexOp::create(
                                               b, l, type.getDimSize(dim)))
                         .getResult();
      Value slice =
          memref::SubViewOp::create(b, l, source, offsets, sizes, strides);
      Value target =
          memref::GetGlobalOp::create(b, l, type, sharded.getSymName());
      linalg::CopyOp::create(b, l, slice, target);
    }
    memref::StoreOp::create(
        b, l, arith::ConstantIntOp::create(b, l, b.getI64Type(), 1), ready,
        ValueRange{});
    scf::YieldOp::create(b, l);
  });
  func::ReturnOp::create(builder, loc);
  // Every entry copies the slices before it reads a parameter.
  for (auto other : module.getOps<func::FuncOp>()) {
    if (other == function || other.isPrivate() || other.isDeclaration())
      continue;
    OpBuilder entry(&other.getBody().front(), other.getBody().front().begin());
    func::CallOp::create(entry, loc, function, ValueRange{});
  }
}

} // namespace

int64_t hetero::shardedWeightDim(PrunableMatmulOp product) {
  int64_t weightDim = product.getMode() == PruneMode::col ? 1 : 0;
  // W^T holds W's dimension d as 1 - d.
  return product.getProduct() == MatmulProduct::grad_input ? 1 - weightDim
                                                           : weightDim;
}

ParameterSharding hetero::analyzeParameterSharding(
    ModuleOp module, ArrayRef<PrunableMatmulOp> products, int64_t shards) {
  ParameterSharding result;
  ComponentWalker walker(module, products, shards);
  for (PrunableMatmulOp product : products) {
    Value weight = product.getProduct() == MatmulProduct::grad_weight
                       ? product.getResult()
                       : product.getRhs();
    walker.walkFrom(weight, shardedWeightDim(product), result);
  }
  return result;
}

LogicalResult hetero::applyParameterSharding(ModuleOp module,
                                             const ParameterSharding &sharding,
                                             int64_t shards,
                                             FlatSymbolRefAttr grid) {
  if (sharding.globals.empty())
    return success();
  OpBuilder builder(module.getContext());
  for (const auto &[original, entry] : sharding.values) {
    Value value = original;
    auto [dim, global] = entry;
    Type type = shardOf(global, dim, shards);
    if (auto constant = value.getDefiningOp<arith::ConstantOp>()) {
      builder.setInsertionPoint(constant);
      auto splat = cast<SplatElementsAttr>(constant.getValue());
      auto replacement = arith::ConstantOp::create(
          builder, constant.getLoc(),
          SplatElementsAttr::get(cast<ShapedType>(type),
                                 splat.getSplatValue<Attribute>()));
      constant.replaceAllUsesWith(replacement.getResult());
      constant.erase();
      continue;
    }
    value.setType(type);
  }
  SymbolTable symbols(module);
  SmallVector<std::tuple<memref::GlobalOp, memref::GlobalOp, int64_t>> copies;
  for (auto &[op, dim] : sharding.globals) {
    auto global = cast<memref::GlobalOp>(op);
    MemRefType full = global.getType();
    auto type = cast<MemRefType>(shardOf(full, dim, shards));
    getHeteroDialect(module.getContext())
        .getShardDimAttrHelper()
        .setAttr(global, builder.getI64IntegerAttr(dim));
    std::optional<Attribute> initial = global.getInitialValue();
    global.setType(type);
    if (auto splat = dyn_cast_if_present<SplatElementsAttr>(
            initial.value_or(Attribute()))) {
      global.setInitialValueAttr(SplatElementsAttr::get(
          RankedTensorType::get(type.getShape(), type.getElementType()),
          splat.getSplatValue<Attribute>()));
      continue;
    }
    if (!initial || !isa<ElementsAttr>(*initial))
      continue;
    // The full value stays, read-only, for the rank's slice to be copied.
    builder.setInsertionPoint(global);
    auto unsharded = memref::GlobalOp::create(
        builder, global.getLoc(), (global.getSymName() + "_unsharded").str(),
        builder.getStringAttr("private"), full, *initial, /*constant=*/true,
        global.getAlignmentAttr());
    symbols.insert(unsharded);
    global.setInitialValueAttr(builder.getUnitAttr());
    copies.push_back({global, unsharded, dim});
  }
  // Signatures follow their arguments and returned values.
  for (auto function : module.getOps<func::FuncOp>()) {
    if (function.isDeclaration())
      continue;
    SmallVector<Type> inputs(function.getArgumentTypes());
    for (auto [i, argument] : llvm::enumerate(function.getArguments()))
      inputs[i] = argument.getType();
    SmallVector<Type> results(function.getResultTypes());
    function.walk([&](func::ReturnOp ret) {
      results = SmallVector<Type>(ret.getOperandTypes());
    });
    function.setFunctionType(builder.getFunctionType(inputs, results));
  }
  if (!copies.empty())
    emitInitFunction(module, grid, copies);
  return success();
}
