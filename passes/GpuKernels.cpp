//===- GpuKernels.cpp - pieces of hand-built GPU kernels ------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "GpuKernels.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;

/// The all-reduce that combines like `combiner`, if there is one.
static std::optional<gpu::AllReduceOperation>
allReduceKind(Operation *combiner) {
  using Kind = gpu::AllReduceOperation;
  return llvm::TypeSwitch<Operation *, std::optional<Kind>>(combiner)
      .Case<arith::AddFOp, arith::AddIOp>([](auto) { return Kind::ADD; })
      .Case<arith::MulFOp, arith::MulIOp>([](auto) { return Kind::MUL; })
      .Case([](arith::MaximumFOp) { return Kind::MAXIMUMF; })
      .Case([](arith::MinimumFOp) { return Kind::MINIMUMF; })
      .Case([](arith::MaxNumFOp) { return Kind::MAXNUMF; })
      .Case([](arith::MinNumFOp) { return Kind::MINNUMF; })
      .Case([](arith::MaxSIOp) { return Kind::MAXSI; })
      .Case([](arith::MinSIOp) { return Kind::MINSI; })
      .Case([](arith::MaxUIOp) { return Kind::MAXUI; })
      .Case([](arith::MinUIOp) { return Kind::MINUI; })
      .Case([](arith::AndIOp) { return Kind::AND; })
      .Case([](arith::OrIOp) { return Kind::OR; })
      .Case([](arith::XOrIOp) { return Kind::XOR; })
      .Default([](Operation *) { return std::nullopt; });
}

std::optional<hetero::ReductionCombiner>
hetero::blockCombiner(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1)
    return std::nullopt;
  Type element = getElementTypeOrSelf(op.getDpsInitOperand(0)->get());
  if (!element.isF32() && !element.isF64() && !element.isInteger(32) &&
      !element.isInteger(64))
    return std::nullopt;
  Block *body = op.getBlock();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  BlockArgument out = op.getMatchingBlockArgument(op.getDpsInitOperand(0));
  Operation *combiner = yield.getOperand(0).getDefiningOp();
  if (!combiner || combiner->getBlock() != body ||
      combiner->getNumOperands() != 2 || !out.hasOneUse() ||
      out.getUses().begin()->getOwner() != combiner ||
      !combiner->getResult(0).hasOneUse())
    return std::nullopt;
  std::optional<gpu::AllReduceOperation> kind = allReduceKind(combiner);
  std::optional<TypedAttr> neutral = arith::getNeutralElement(combiner);
  if (!kind || !neutral)
    return std::nullopt;
  return ReductionCombiner{combiner, *kind, *neutral};
}

bool hetero::isStaticBufferOp(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op->getNumRegions() != 1)
    return false;
  for (OpOperand &operand : op->getOpOperands())
    if (isa<TensorType>(operand.get().getType()))
      return false;
  for (int64_t range : op.getStaticLoopRanges())
    if (ShapedType::isDynamic(range) || range <= 0)
      return false;
  return writesEachOutputOnce(op);
}

bool hetero::writesEachOutputOnce(linalg::LinalgOp op) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (OpOperand &init : op.getDpsInitsMutable()) {
    llvm::SmallBitVector indexed(iterators.size());
    for (AffineExpr expr : op.getMatchingIndexingMap(&init).getResults()) {
      auto dim = dyn_cast<AffineDimExpr>(expr);
      if (!dim ||
          iterators[dim.getPosition()] != utils::IteratorType::parallel ||
          indexed.test(dim.getPosition()))
        return false;
      indexed.set(dim.getPosition());
    }
    if (indexed.count() != op.getNumParallelLoops())
      return false;
  }
  return true;
}

bool hetero::mayStandBetweenKernels(Operation &op) {
  if (isMemoryEffectFree(&op) || isa<gpu::AllocOp>(op) ||
      hasSingleEffect<MemoryEffects::Allocate>(&op))
    return true;
  auto wait = dyn_cast<gpu::WaitOp>(op);
  return wait && llvm::all_of(wait.getAsyncDependencies(), [](Value token) {
           return isa_and_nonnull<gpu::AllocOp, gpu::WaitOp>(
               token.getDefiningOp());
         });
}

int64_t hetero::kernelParameterBytes(ArrayRef<linalg::LinalgOp> ops) {
  llvm::SmallDenseSet<Value> seen;
  int64_t bytes = 0;
  auto count = [&](Value value) {
    if (value.getDefiningOp<arith::ConstantOp>() || !seen.insert(value).second)
      return;
    auto memref = dyn_cast<MemRefType>(value.getType());
    bytes += memref ? 8 * (3 + 2 * memref.getRank()) : 8;
  };
  // The walk visits each op itself too: its operands come from outside.
  for (linalg::LinalgOp op : ops) {
    op->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands())
        if (!op->isAncestor(operand.getParentRegion()->getParentOp()))
          count(operand);
    });
  }
  return bytes;
}

int64_t hetero::blockThreads(int64_t widest, int64_t maxThreads) {
  return std::clamp<int64_t>(
      static_cast<int64_t>(llvm::PowerOf2Ceil(std::max<int64_t>(widest, 1))),
      32, maxThreads);
}

gpu::LaunchOp hetero::createLaunch(OpBuilder &b, Location loc, Value blocks,
                                   int64_t threads) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto launch = gpu::LaunchOp::create(
      b, loc, blocks, one, one, arith::ConstantIndexOp::create(b, loc, threads),
      one, one);
  b.setInsertionPointToStart(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&launch.getBody().front());
  return launch;
}

Value hetero::rootBuffer(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

void hetero::delinearize(OpBuilder &b, Location loc, Value linear,
                         ArrayRef<unsigned> dims, ArrayRef<Value> ranges,
                         SmallVectorImpl<Value> &ivs) {
  Value rest = linear;
  for (auto [position, dim] : llvm::enumerate(llvm::reverse(dims))) {
    if (position + 1 == dims.size()) {
      ivs[dim] = rest;
      break;
    }
    ivs[dim] = arith::RemUIOp::create(b, loc, rest, ranges[dim]);
    rest = arith::DivUIOp::create(b, loc, rest, ranges[dim]);
  }
}

Value hetero::extentOf(OpBuilder &b, Location loc, ArrayRef<unsigned> dims,
                       ArrayRef<Value> ranges) {
  Value product = arith::ConstantIndexOp::create(b, loc, 1);
  for (unsigned dim : dims)
    product = b.createOrFold<arith::MulIOp>(loc, product, ranges[dim]);
  return product;
}

SmallVector<Value> hetero::applyMap(OpBuilder &b, Location loc, AffineMap map,
                                    ArrayRef<Value> ivs) {
  SmallVector<OpFoldResult> operands(ivs.begin(), ivs.end());
  return getValueOrCreateConstantIndexOp(
      b, loc,
      affine::makeComposedFoldedMultiResultAffineApply(b, loc, map, operands));
}

SmallVector<Value> hetero::cloneBodyAt(OpBuilder &b, Location loc,
                                       linalg::LinalgOp op, ArrayRef<Value> ivs,
                                       ValueRange outs) {
  IRMapping mapping;
  for (OpOperand *input : op.getDpsInputOperands()) {
    Value value = input->get();
    if (isa<MemRefType>(value.getType()))
      value = memref::LoadOp::create(
          b, loc, value,
          applyMap(b, loc, op.getMatchingIndexingMap(input), ivs));
    mapping.map(op.getMatchingBlockArgument(input), value);
  }
  for (auto [init, out] : llvm::zip_equal(op.getDpsInitsMutable(), outs))
    if (out)
      mapping.map(op.getMatchingBlockArgument(&init), out);
  Block *body = op.getBlock();
  for (Operation &inner : body->without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(inner))
      mapping.map(index.getResult(), ivs[index.getDim()]);
    else
      b.clone(inner, mapping);
  }
  return llvm::map_to_vector(
      body->getTerminator()->getOperands(),
      [&](Value v) { return mapping.lookupOrDefault(v); });
}

SmallVector<Value> hetero::loadOutputs(OpBuilder &b, Location loc,
                                       linalg::LinalgOp op,
                                       ArrayRef<Value> ivs) {
  SmallVector<Value> outs;
  for (OpOperand &init : op.getDpsInitsMutable())
    outs.push_back(
        op.getMatchingBlockArgument(&init).use_empty()
            ? Value()
            : memref::LoadOp::create(
                  b, loc, init.get(),
                  applyMap(b, loc, op.getMatchingIndexingMap(&init), ivs))
                  .getResult());
  return outs;
}

void hetero::storeOutputs(OpBuilder &b, Location loc, linalg::LinalgOp op,
                          ArrayRef<Value> ivs, ValueRange results) {
  for (auto [init, result] : llvm::zip_equal(op.getDpsInitsMutable(), results))
    memref::StoreOp::create(
        b, loc, result, init.get(),
        applyMap(b, loc, op.getMatchingIndexingMap(&init), ivs));
}

void hetero::reduceAcrossBlock(OpBuilder &b, Location loc, linalg::LinalgOp op,
                               const ReductionCombiner &combiner, Value thread,
                               int64_t threads, ArrayRef<unsigned> reducedDims,
                               ArrayRef<Value> ranges, ArrayRef<Value> ivs,
                               Value start) {
  Value neutral = arith::ConstantOp::create(b, loc, combiner.neutral);
  Value reduced = extentOf(b, loc, reducedDims, ranges);
  auto loop = scf::ForOp::create(
      b, loc, thread, reduced, arith::ConstantIndexOp::create(b, loc, threads),
      ValueRange{neutral},
      [&](OpBuilder &nb, Location nloc, Value linear, ValueRange carried) {
        SmallVector<Value> at(ivs);
        delinearize(nb, nloc, linear, reducedDims, ranges, at);
        scf::YieldOp::create(nb, nloc,
                             cloneBodyAt(nb, nloc, op, at, carried).front());
      });
  Value total = gpu::AllReduceOp::create(
      b, loc, loop.getResult(0),
      gpu::AllReduceOperationAttr::get(b.getContext(), combiner.kind),
      b.getUnitAttr());

  OpBuilder::InsertionGuard guard(b);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value first =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, thread, zero);
  auto onFirst = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
  b.setInsertionPointToStart(&onFirst.getThenRegion().front());
  OpOperand *init = op.getDpsInitOperand(0);
  Value buffer = init->get();
  SmallVector<Value> indices =
      applyMap(b, loc, op.getMatchingIndexingMap(init), ivs);
  if (!start)
    start = memref::LoadOp::create(b, loc, buffer, indices);
  // combiner(start, total), its operands in the body's order.
  BlockArgument out = op.getMatchingBlockArgument(init);
  IRMapping mapping;
  for (Value operand : combiner.combiner->getOperands())
    mapping.map(operand, operand == out ? start : total);
  Operation *last = b.clone(*combiner.combiner, mapping);
  memref::StoreOp::create(b, loc, last->getResult(0), buffer, indices);
}
