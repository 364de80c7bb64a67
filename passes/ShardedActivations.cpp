//===- ShardedActivations.cpp - activations kept as tensor-parallel shards ===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "ShardedActivations.h"

#include "hetero/Dialect/Hetero.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#include <numeric>
#include <vector>

using namespace mlir;

namespace hetero {

Value shardWindow(OpBuilder &builder, Location loc, Value value, int64_t dim,
                  Value shard, int64_t shards) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t width = type.getDimSize(dim) / shards;
  SmallVector<OpFoldResult> offsets(type.getRank(), builder.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes,
      strides(type.getRank(), builder.getIndexAttr(1));
  for (int64_t size : type.getShape())
    sizes.push_back(builder.getIndexAttr(size));
  sizes[dim] = builder.getIndexAttr(width);
  offsets[dim] =
      arith::MulIOp::create(builder, loc, shard,
                            arith::ConstantIndexOp::create(builder, loc, width))
          .getResult();
  return tensor::ExtractSliceOp::create(builder, loc, value, offsets, sizes,
                                        strides);
}

namespace {

/// The tensor-parallel axis of a pipeline's grid: (stage, replica, shard).
constexpr int16_t kShardAxis = 2;

/// Not kept sharded: left the set, or offered along two dimensions.
constexpr int64_t kGlobal = -1;

/// Whether `op` computes each element of its one result from one element
/// of each operand: parallel loops, no `linalg.index`, the identity map for
/// the result and a projected permutation for every input (the same
/// element, a broadcast or a transpose). A window of its result along a
/// dimension is then the op on the windows of the inputs that index that
/// dimension, and on the others whole.
bool isPointwise(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
      linalgOp.hasIndexSemantics() || op->getNumResults() != 1 ||
      llvm::any_of(op->getOperandTypes(),
                   [](Type type) {
                     auto shaped = dyn_cast<ShapedType>(type);
                     return shaped && !shaped.hasStaticShape();
                   }) ||
      linalgOp.getNumDpsInits() != 1 ||
      linalgOp.getNumLoops() != linalgOp.getNumParallelLoops() ||
      !linalgOp.getMatchingIndexingMap(linalgOp.getDpsInitOperand(0))
           .isIdentity())
    return false;
  return llvm::all_of(linalgOp.getDpsInputOperands(), [&](OpOperand *input) {
    return linalgOp.getMatchingIndexingMap(input).isProjectedPermutation();
  });
}

/// Whether `use` is an input of a pointwise op.
bool isPointwiseInput(OpOperand &use) {
  return isPointwise(use.getOwner()) &&
         cast<linalg::LinalgOp>(use.getOwner()).isDpsInput(&use);
}

/// The dimension of a pointwise op's result that dimension `dim` of its
/// input `use` is read along.
int64_t resultDimOf(OpOperand &use, int64_t dim) {
  AffineMap map =
      cast<linalg::LinalgOp>(use.getOwner()).getMatchingIndexingMap(&use);
  return cast<AffineDimExpr>(map.getResult(dim)).getPosition();
}

/// The dimension of a pointwise op's input `use` that its result's `dim`
/// reads, or -1 when the input is broadcast along it.
int64_t inputDimOf(OpOperand &use, int64_t dim) {
  AffineMap map =
      cast<linalg::LinalgOp>(use.getOwner()).getMatchingIndexingMap(&use);
  for (auto [position, expr] : llvm::enumerate(map.getResults()))
    if (cast<AffineDimExpr>(expr).getPosition() == dim)
      return int64_t(position);
  return -1;
}

/// A 1-D static slice's offset and size, if it has unit stride.
std::optional<std::pair<int64_t, int64_t>>
flatSegment(ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes,
            ArrayRef<int64_t> strides) {
  if (offsets.size() != 1 || ShapedType::isDynamic(offsets[0]) ||
      ShapedType::isDynamic(sizes[0]) || strides[0] != 1)
    return std::nullopt;
  return std::make_pair(offsets[0], sizes[0]);
}

/// One value a tape holds: written as `value` (flattened) by `write`, read
/// by `reads` and unpacked to `value`'s type as `unpacked`.
struct Segment {
  tensor::InsertSliceOp write;
  Value value;
  int64_t offset = 0, size = 0;
  SmallVector<tensor::ExtractSliceOp> reads;
  SmallVector<Value> unpacked;
  /// Whether every read unpacks to `value`'s type, so that the segment can
  /// hold a window instead.
  bool unpackable = true;
  bool sharded = false;
};

/// A flat tensor a private function builds and returns (result `result`)
/// for the private functions its callers pass it to (`readers`); or, when
/// `direct`, one value it returns as it is (a residual of a derived
/// forward), which the readers take as their argument: one segment, whose
/// unpacked values are the readers' arguments.
struct Tape {
  func::FuncOp producer;
  unsigned result = 0;
  bool direct = false;
  tensor::EmptyOp empty;
  SmallVector<Segment> segments;
  llvm::SetVector<std::pair<func::FuncOp, unsigned>> readers;
  /// The producer's calls: its only uses.
  SmallVector<func::CallOp> calls;
  /// The layout that holds the kept segments' windows, once decided (a
  /// null type: the tape keeps its layout).
  RankedTensorType newType;
  SmallVector<int64_t> newOffsets, newSizes;
};

class Sharder {
public:
  Sharder(ModuleOp module, int64_t shards, FlatSymbolRefAttr grid,
          function_ref<Value(Operation *)> shardIndex)
      : module(module), shards(shards), grid(grid), shardIndex(shardIndex) {}

  int64_t run(ArrayRef<GatheredValue> gathered) {
    SmallVector<Value> worklist;
    for (const GatheredValue &value : gathered)
      if (windowType(value.global, value.dim) == value.local.getType() &&
          offer(value.global, value.dim, worklist))
        origins[value.global] = value.local;
    while (!worklist.empty()) {
      Value value = worklist.pop_back_val();
      propagate(value, dimOf(value), worklist);
    }
    // The greatest fixed point: drop values until every kept one's uses
    // take its window.
    for (bool changed = true; changed;) {
      changed = false;
      for (auto &[value, dim] : candidates)
        if (dim != kGlobal && !keeps(value, dim)) {
          drop(value);
          changed = true;
        }
    }
    if (llvm::none_of(candidates,
                      [](auto &entry) { return entry.second != kGlobal; }))
      return 0;
    SmallVector<Operation *> maybeDead;
    // Every reader first: a producer may write what it unpacked from
    // another tape.
    for (Tape &tape : tapes)
      relayoutReaders(tape, maybeDead);
    for (Tape &tape : tapes)
      relayoutProducer(tape, maybeDead);
    for (auto &[value, dim] : candidates) {
      if (dim == kGlobal)
        continue;
      if (Operation *def = value.getDefiningOp())
        maybeDead.push_back(def);
      SmallVector<tensor::ExtractSliceOp> windows;
      for (Operation *user : value.getUsers())
        if (auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
            slice && isWindow(slice, dim))
          windows.push_back(slice);
      for (tensor::ExtractSliceOp slice : windows) {
        slice.getResult().replaceAllUsesWith(localOf(value));
        maybeDead.push_back(slice);
      }
    }
    for (Tape &tape : tapes)
      retypeDirect(tape);
    return eraseDead(maybeDead);
  }

private:
  int64_t dimOf(Value value) const {
    auto found = candidates.find(value);
    return found == candidates.end() ? kGlobal : found->second;
  }

  RankedTensorType windowType(Value value, int64_t dim) const {
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[dim] /= shards;
    return type.clone(shape);
  }

  /// Adds `value` to the set along `dim`; along another dimension than
  /// before, it leaves the set. Whether it is new.
  bool offer(Value value, int64_t dim, SmallVectorImpl<Value> &worklist) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || !type.hasStaticShape() || type.getDimSize(dim) % shards)
      return false;
    auto [found, inserted] = candidates.insert({value, dim});
    if (inserted)
      worklist.push_back(value);
    else if (found->second != dim)
      found->second = kGlobal;
    return inserted;
  }

  /// Offers what `value`'s window would let compute on windows.
  void propagate(Value value, int64_t dim, SmallVectorImpl<Value> &worklist) {
    if (dim == kGlobal)
      return;
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (isPointwiseInput(use)) {
        offer(user->getResult(0), resultDimOf(use, dim), worklist);
      } else if (Segment *segment = segmentWriting(value, user)) {
        for (Value unpacked : segment->unpacked)
          offer(unpacked, dim, worklist);
      }
    }
  }

  /// Whether every use of `value` takes its window along `dim`.
  bool keeps(Value value, int64_t dim) {
    // A value unpacked from a tape is a window only if the producer writes
    // one.
    if (auto found = sourceOf.find(value); found != sourceOf.end())
      if (dimOf(segmentAt(found->second).value) != dim)
        return false;
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
          slice && isWindow(slice, dim))
        continue;
      if (isPointwiseInput(use)) {
        if (dimOf(user->getResult(0)) != resultDimOf(use, dim))
          return false;
        continue;
      }
      Segment *segment = segmentWriting(value, user);
      if (!segment)
        return false;
      for (Value unpacked : segment->unpacked)
        if (dimOf(unpacked) != dim)
          return false;
    }
    return true;
  }

  /// Takes `value` out of the set, and the values a tape's segment would
  /// hold with it.
  void drop(Value value) {
    auto leave = [&](Value left) {
      if (auto found = candidates.find(left); found != candidates.end())
        found->second = kGlobal;
    };
    auto leaveSegment = [&](const Segment &segment) {
      leave(segment.value);
      for (Value linked : segment.unpacked)
        leave(linked);
    };
    leave(value);
    if (auto found = sourceOf.find(value); found != sourceOf.end())
      leaveSegment(segmentAt(found->second));
    if (auto found = writtenTo.find(value); found != writtenTo.end())
      for (SegmentIndex index : found->second)
        leaveSegment(segmentAt(index));
  }

  /// A segment of `tapes`: the tape's index and the segment's.
  using SegmentIndex = std::pair<size_t, size_t>;
  Segment &segmentAt(SegmentIndex index) {
    return tapes[index.first].segments[index.second];
  }

  /// Whether `slice` takes this rank's window of its source along `dim`.
  bool isWindow(tensor::ExtractSliceOp slice, int64_t dim) const {
    RankedTensorType source = slice.getSourceType();
    if (!source.hasStaticShape() ||
        slice.getType() != windowType(slice.getSource(), dim))
      return false;
    int64_t width = source.getDimSize(dim) / shards;
    for (auto [index, offset, size, stride] :
         llvm::enumerate(slice.getMixedOffsets(), slice.getMixedSizes(),
                         slice.getMixedStrides())) {
      int64_t expected =
          int64_t(index) == dim ? width : source.getDimSize(index);
      if (getConstantIntValue(size) != expected ||
          getConstantIntValue(stride) != 1)
        return false;
      if (int64_t(index) != dim) {
        if (getConstantIntValue(offset) != 0)
          return false;
        continue;
      }
      auto offsetValue = dyn_cast_if_present<Value>(offset);
      auto product = offsetValue ? offsetValue.getDefiningOp<arith::MulIOp>()
                                 : arith::MulIOp();
      if (!product)
        return false;
      Value lhs = product.getLhs(), rhs = product.getRhs();
      if (getConstantIntValue(lhs) == width)
        std::swap(lhs, rhs);
      auto shardIndexOp = lhs.getDefiningOp<shard::ProcessMultiIndexOp>();
      if (getConstantIntValue(rhs) != width || !shardIndexOp ||
          shardIndexOp.getGridAttr() != grid ||
          shardIndexOp.getAxes() != ArrayRef<int16_t>{kShardAxis})
        return false;
    }
    return true;
  }

  /// The segment of a tape that `user`, a use of `value`, writes `value`
  /// into, if it is one that can hold a window.
  Segment *segmentWriting(Value value, Operation *user) {
    if (auto ret = dyn_cast<func::ReturnOp>(user)) {
      auto producer = ret->getParentOfType<func::FuncOp>();
      auto position = llvm::find(ret.getOperands(), value);
      Tape *tape =
          tapeOf(producer,
                 unsigned(std::distance(ret.getOperands().begin(), position)));
      return tape && tape->direct && tape->segments.front().value == value
                 ? &tape->segments.front()
                 : nullptr;
    }
    auto write = dyn_cast<tensor::InsertSliceOp>(user);
    if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(user);
        collapse && collapse.getResultType().getRank() == 1 &&
        collapse->hasOneUse())
      write = dyn_cast<tensor::InsertSliceOp>(*collapse->user_begin());
    if (!write || write.getDest() == value)
      return nullptr;
    // The chain of writes ends in a function's return.
    Operation *end = write;
    while (end->hasOneUse() && isa<tensor::InsertSliceOp>(*end->user_begin()) &&
           cast<tensor::InsertSliceOp>(*end->user_begin()).getDest() ==
               end->getResult(0))
      end = *end->user_begin();
    if (!end->hasOneUse() || !isa<func::ReturnOp>(*end->user_begin()))
      return nullptr;
    auto producer = end->getParentOfType<func::FuncOp>();
    unsigned result = end->use_begin()->getOperandNumber();
    Tape *tape = tapeOf(producer, result);
    if (!tape)
      return nullptr;
    for (Segment &segment : tape->segments)
      if (segment.write == write)
        return segment.value == value && segment.unpackable ? &segment
                                                            : nullptr;
    return nullptr;
  }

  /// The tape `producer` returns as `result`, analysed once; null when it
  /// is not one.
  Tape *tapeOf(func::FuncOp producer, unsigned result) {
    auto key = std::make_pair(producer.getOperation(), result);
    if (auto found = tapeIndex.find(key); found != tapeIndex.end())
      return found->second < 0 ? nullptr : &tapes[found->second];
    std::optional<Tape> tape = analyzeTape(producer, result);
    if (!tape) {
      tapeIndex[key] = -1;
      return nullptr;
    }
    tapeIndex[key] = int(tapes.size());
    for (auto [index, segment] : llvm::enumerate(tape->segments)) {
      writtenTo[segment.value].push_back({tapes.size(), index});
      for (Value unpacked : segment.unpacked)
        sourceOf[unpacked] = {tapes.size(), index};
    }
    tapes.push_back(std::move(*tape));
    return &tapes.back();
  }

  std::optional<Tape> analyzeTape(func::FuncOp producer, unsigned result) {
    if (!producer.isPrivate() || !producer.getBody().hasOneBlock())
      return std::nullopt;
    Tape tape;
    tape.producer = producer;
    tape.result = result;
    auto ret = cast<func::ReturnOp>(producer.getBody().front().getTerminator());
    Value chain = ret.getOperand(result);
    if (!chain.getDefiningOp<tensor::InsertSliceOp>())
      return analyzeDirect(tape, ret);
    while (auto write = chain.getDefiningOp<tensor::InsertSliceOp>()) {
      auto segment =
          flatSegment(write.getStaticOffsets(), write.getStaticSizes(),
                      write.getStaticStrides());
      if (!segment || !chain.hasOneUse() ||
          write.getSourceType().getRank() != 1)
        return std::nullopt;
      Segment entry;
      entry.write = write;
      std::tie(entry.offset, entry.size) = *segment;
      entry.value = write.getSource();
      if (auto collapse = entry.value.getDefiningOp<tensor::CollapseShapeOp>();
          collapse && collapse->hasOneUse())
        entry.value = collapse.getSrc();
      tape.segments.push_back(entry);
      chain = write.getDest();
    }
    tape.empty = chain.getDefiningOp<tensor::EmptyOp>();
    if (!tape.empty || !chain.hasOneUse() || tape.segments.empty() ||
        !cast<RankedTensorType>(chain.getType()).hasStaticShape())
      return std::nullopt;
    std::reverse(tape.segments.begin(), tape.segments.end());
    // Segments that do not overlap.
    SmallVector<std::pair<int64_t, int64_t>> spans;
    for (const Segment &segment : tape.segments)
      spans.push_back({segment.offset, segment.size});
    llvm::sort(spans);
    for (size_t i = 1; i < spans.size(); ++i)
      if (spans[i - 1].first + spans[i - 1].second > spans[i].first)
        return std::nullopt;

    if (failed(findReaders(tape)))
      return std::nullopt;
    for (auto [reader, argument] : tape.readers) {
      for (Operation *user : reader.getArgument(argument).getUsers()) {
        auto read = dyn_cast<tensor::ExtractSliceOp>(user);
        std::optional<std::pair<int64_t, int64_t>> span;
        if (read && read.getType().getRank() == 1)
          span = flatSegment(read.getStaticOffsets(), read.getStaticSizes(),
                             read.getStaticStrides());
        Segment *segment = nullptr;
        for (Segment &candidate : tape.segments)
          if (span && candidate.offset == span->first &&
              candidate.size == span->second)
            segment = &candidate;
        if (!segment)
          return std::nullopt;
        segment->reads.push_back(read);
      }
    }
    // What each read unpacks.
    for (Segment &segment : tape.segments)
      for (tensor::ExtractSliceOp read : segment.reads) {
        Value unpacked = read.getResult();
        if (segment.value.getType() != unpacked.getType()) {
          auto expand =
              read->hasOneUse()
                  ? dyn_cast<tensor::ExpandShapeOp>(*read->user_begin())
                  : tensor::ExpandShapeOp();
          unpacked = expand ? expand.getResult() : Value();
        }
        if (!unpacked || unpacked.getType() != segment.value.getType()) {
          segment.unpackable = false;
          segment.unpacked.clear();
          break;
        }
        segment.unpacked.push_back(unpacked);
      }
    return tape;
  }

  /// Sets `tape.calls` and `tape.readers`: every call of the producer
  /// passes the result only to private functions, as an argument that only
  /// this result ever fills.
  LogicalResult findReaders(Tape &tape) {
    auto calls = callsOf(tape.producer);
    if (!calls)
      return failure();
    tape.calls = *calls;
    for (func::CallOp call : tape.calls)
      for (OpOperand &use : call.getResult(tape.result).getUses()) {
        auto reader = dyn_cast<func::CallOp>(use.getOwner());
        auto callee = reader ? symbols.lookupNearestSymbolFrom<func::FuncOp>(
                                   reader, reader.getCalleeAttr())
                             : func::FuncOp();
        if (!callee || !callee.isPrivate() || !callee.getBody().hasOneBlock())
          return failure();
        tape.readers.insert({callee, use.getOperandNumber()});
      }
    for (auto [reader, argument] : tape.readers) {
      auto readerCalls = callsOf(reader);
      if (!readerCalls)
        return failure();
      for (func::CallOp call : *readerCalls) {
        auto fill = dyn_cast<OpResult>(call.getOperand(argument));
        auto filler =
            fill ? dyn_cast<func::CallOp>(fill.getOwner()) : func::CallOp();
        if (!filler || filler.getCallee() != tape.producer.getName() ||
            fill.getResultNumber() != tape.result)
          return failure();
      }
    }
    return success();
  }

  /// A value the producer computes and returns once, as it is: a direct
  /// tape whose readers take it as their argument.
  std::optional<Tape> analyzeDirect(Tape &tape, func::ReturnOp ret) {
    Value value = ret.getOperand(tape.result);
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!value.getDefiningOp() || !type || !type.hasStaticShape() ||
        llvm::count(ret.getOperands(), value) != 1 || failed(findReaders(tape)))
      return std::nullopt;
    tape.direct = true;
    Segment segment;
    segment.value = value;
    segment.size = type.getNumElements();
    for (auto [reader, argument] : tape.readers)
      segment.unpacked.push_back(reader.getArgument(argument));
    tape.segments.push_back(segment);
    return tape;
  }

  /// The calls of `function`, if calls are its only uses.
  std::optional<SmallVector<func::CallOp>> callsOf(func::FuncOp function) {
    std::optional<SymbolTable::UseRange> uses =
        SymbolTable::getSymbolUses(function, module);
    if (!uses)
      return std::nullopt;
    SmallVector<func::CallOp> calls;
    for (const SymbolTable::SymbolUse &use : *uses) {
      auto call = dyn_cast<func::CallOp>(use.getUser());
      if (!call || call.getCallee() != function.getName())
        return std::nullopt;
      calls.push_back(call);
    }
    return calls;
  }

  /// This rank's window of kept value `value`, computed once.
  Value localOf(Value value) {
    if (Value local = locals.lookup(value))
      return local;
    int64_t dim = dimOf(value);
    assert(dim != kGlobal && "only kept values have a local window");
    Value local = origins.lookup(value);
    if (!local) {
      Operation *def = value.getDefiningOp();
      OpBuilder builder(def);
      Location loc = def->getLoc();
      auto init = [&](Value global) -> Value {
        if (global.getDefiningOp<tensor::EmptyOp>())
          return tensor::EmptyOp::create(
              builder, loc, windowType(global, dim).getShape(),
              windowType(global, dim).getElementType());
        return windowOf(builder, global, dim, def);
      };
      // A pointwise op (linalg.transpose is one) on the windows.
      auto linalgOp = cast<linalg::LinalgOp>(def);
      SmallVector<Value> operands;
      for (OpOperand *input : linalgOp.getDpsInputOperands()) {
        int64_t inputDim = inputDimOf(*input, dim);
        operands.push_back(
            inputDim < 0 ? input->get()
                         : windowOf(builder, input->get(), inputDim, def));
      }
      operands.push_back(init(linalgOp.getDpsInits()[0]));
      local =
          mlir::clone(builder, def, TypeRange{windowType(value, dim)}, operands)
              ->getResult(0);
    }
    locals[value] = local;
    return local;
  }

  /// The window of `value` along `dim` for `user`: its local when kept
  /// along `dim`, else a slice of it.
  Value windowOf(OpBuilder &builder, Value value, int64_t dim,
                 Operation *user) {
    if (dimOf(value) == dim)
      return localOf(value);
    return shardWindow(builder, user->getLoc(), value, dim, shardIndex(user),
                       shards);
  }

  /// Shrinks `tape` to hold the windows of its kept segments: lays it out
  /// anew and has the readers unpack the windows at their types.
  void relayoutReaders(Tape &tape, SmallVectorImpl<Operation *> &maybeDead) {
    for (Segment &segment : tape.segments)
      segment.sharded = segment.unpackable && dimOf(segment.value) != kGlobal;
    if (tape.direct) {
      // The readers' arguments are their own windows; retypeDirect gives
      // them the window's type once the rewrite no longer reads their old
      // one.
      Segment &segment = tape.segments.front();
      if (!segment.sharded)
        return;
      tape.newType = windowType(segment.value, dimOf(segment.value));
      for (Value argument : segment.unpacked)
        locals[argument] = argument;
      return;
    }
    if (llvm::none_of(tape.segments,
                      [](const Segment &segment) { return segment.sharded; }))
      return;
    // The new layout keeps the segments' order.
    SmallVector<unsigned> order(tape.segments.size());
    std::iota(order.begin(), order.end(), 0);
    llvm::sort(order, [&](unsigned a, unsigned b) {
      return tape.segments[a].offset < tape.segments[b].offset;
    });
    SmallVector<int64_t> &offsets = tape.newOffsets, &sizes = tape.newSizes;
    offsets.assign(order.size(), 0);
    sizes.assign(order.size(), 0);
    int64_t total = 0;
    for (unsigned index : order) {
      Segment &segment = tape.segments[index];
      offsets[index] = total;
      sizes[index] = segment.sharded ? segment.size / shards : segment.size;
      total += sizes[index];
    }
    auto oldType = cast<RankedTensorType>(tape.empty.getType());
    RankedTensorType newType = oldType.clone({total});
    tape.newType = newType;

    // The readers.
    for (auto [reader, argument] : tape.readers) {
      reader.getArgument(argument).setType(newType);
      SmallVector<Type> inputs(reader.getFunctionType().getInputs());
      inputs[argument] = newType;
      reader.setType(FunctionType::get(reader.getContext(), inputs,
                                       reader.getFunctionType().getResults()));
    }
    for (auto [index, segment] : llvm::enumerate(tape.segments))
      for (auto [position, old] : llvm::enumerate(segment.reads)) {
        OpBuilder builder(old);
        Value part = tensor::ExtractSliceOp::create(
            builder, old.getLoc(), oldType.clone({sizes[index]}),
            old.getSource(),
            ArrayRef<OpFoldResult>{builder.getIndexAttr(offsets[index])},
            ArrayRef<OpFoldResult>{builder.getIndexAttr(sizes[index])},
            ArrayRef<OpFoldResult>{builder.getIndexAttr(1)});
        maybeDead.push_back(old);
        if (!segment.sharded) {
          old.getResult().replaceAllUsesWith(part);
          continue;
        }
        Value global = segment.unpacked[position];
        RankedTensorType window = windowType(global, dimOf(global));
        Value local = part;
        if (window.getRank() != 1)
          local = tensor::ExpandShapeOp::create(
              builder, old.getLoc(), window, part, allDims(window.getRank()));
        locals[global] = local;
        if (Operation *expand = global.getDefiningOp(); expand && expand != old)
          maybeDead.push_back(expand);
      }
  }

  /// Has the producer of a tape that relayoutReaders laid out anew write
  /// the windows of its kept segments.
  void relayoutProducer(Tape &tape, SmallVectorImpl<Operation *> &maybeDead) {
    if (!tape.newType)
      return;
    RankedTensorType newType = tape.newType;
    auto ret =
        cast<func::ReturnOp>(tape.producer.getBody().front().getTerminator());
    auto retype = [&] {
      SmallVector<Type> results(tape.producer.getFunctionType().getResults());
      results[tape.result] = newType;
      tape.producer.setType(FunctionType::get(
          tape.producer.getContext(),
          tape.producer.getFunctionType().getInputs(), results));
      for (func::CallOp call : tape.calls)
        call.getResult(tape.result).setType(newType);
    };
    if (tape.direct) {
      ret.setOperand(tape.result, localOf(tape.segments.front().value));
      retype();
      return;
    }
    ArrayRef<int64_t> offsets = tape.newOffsets, sizes = tape.newSizes;
    OpBuilder builder(tape.empty);
    Value chain =
        tensor::EmptyOp::create(builder, tape.empty.getLoc(),
                                newType.getShape(), newType.getElementType());
    for (auto [index, segment] : llvm::enumerate(tape.segments)) {
      builder.setInsertionPoint(segment.write);
      Value source = segment.write.getSource();
      if (segment.sharded) {
        source = localOf(segment.value);
        auto type = cast<RankedTensorType>(source.getType());
        if (type.getRank() != 1)
          source = tensor::CollapseShapeOp::create(
              builder, segment.write.getLoc(), source, allDims(type.getRank()));
      }
      chain = tensor::InsertSliceOp::create(
          builder, segment.write.getLoc(), source, chain,
          ArrayRef<OpFoldResult>{builder.getIndexAttr(offsets[index])},
          ArrayRef<OpFoldResult>{builder.getIndexAttr(sizes[index])},
          ArrayRef<OpFoldResult>{builder.getIndexAttr(1)});
    }
    maybeDead.push_back(ret.getOperand(tape.result).getDefiningOp());
    ret.setOperand(tape.result, chain);
    retype();
  }

  /// Gives the readers' arguments of a kept direct tape the window's type.
  static void retypeDirect(Tape &tape) {
    if (!tape.direct || !tape.newType)
      return;
    for (auto [reader, argument] : tape.readers) {
      reader.getArgument(argument).setType(tape.newType);
      SmallVector<Type> inputs(reader.getFunctionType().getInputs());
      inputs[argument] = tape.newType;
      reader.setType(FunctionType::get(reader.getContext(), inputs,
                                       reader.getFunctionType().getResults()));
    }
  }

  static SmallVector<ReassociationIndices> allDims(int64_t rank) {
    ReassociationIndices dims(rank);
    std::iota(dims.begin(), dims.end(), 0);
    return {dims};
  }

  /// Erases what the rewrite left unread, from `roots` up through their
  /// operands. Returns how many all-gathers went.
  static int64_t eraseDead(ArrayRef<Operation *> roots) {
    SmallVector<Operation *> worklist(roots.begin(), roots.end());
    llvm::DenseSet<Operation *> erased;
    int64_t gathers = 0;
    while (!worklist.empty()) {
      Operation *op = worklist.pop_back_val();
      if (!op || erased.contains(op) || !isOpTriviallyDead(op))
        continue;
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          worklist.push_back(def);
      gathers += isa<AllGatherOp>(op);
      erased.insert(op);
      op->erase();
    }
    return gathers;
  }

  ModuleOp module;
  int64_t shards;
  FlatSymbolRefAttr grid;
  function_ref<Value(Operation *)> shardIndex;
  SymbolTableCollection symbols;
  /// The values kept sharded, with the dimension (kGlobal: not kept).
  llvm::MapVector<Value, int64_t> candidates;
  /// The partition's windows of the gathered values.
  llvm::DenseMap<Value, Value> origins;
  llvm::DenseMap<Value, Value> locals;
  std::vector<Tape> tapes;
  llvm::DenseMap<std::pair<Operation *, unsigned>, int> tapeIndex;
  /// Per value a tape's reader unpacks: its segment.
  llvm::DenseMap<Value, SegmentIndex> sourceOf;
  /// Per value a producer writes to tapes: those segments.
  llvm::DenseMap<Value, SmallVector<SegmentIndex, 1>> writtenTo;
};

} // namespace

int64_t keepActivationsSharded(ModuleOp module,
                               ArrayRef<GatheredValue> gathered, int64_t shards,
                               FlatSymbolRefAttr grid,
                               function_ref<Value(Operation *)> shardIndex) {
  return Sharder(module, shards, grid, shardIndex).run(gathered);
}

} // namespace hetero
