//===- LowerToRuntime.cpp - collectives as libhetero_rt calls -------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Dialect/Hetero.h"
#include "hetero/Passes/Passes.h"
#include "hetero-rt/compress.h"
#include "hetero-rt/hrt.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/TypeSwitch.h"

namespace hetero {
#define GEN_PASS_DEF_HETEROLOWERTORUNTIME
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;
using namespace hetero;

namespace {

// The runtime's enums (hetero-rt/hrt.h, hetero-rt/compress.h) are the
// values compiled code passes; each dialect enum maps to them by an
// exhaustive switch, so a case added on either side without the other
// fails to compile (-Wswitch) rather than passing a wrong number.

// A runtime value added without a dialect case is caught here.
static_assert(getMaxEnumValForReduction() == HRT_AVG,
              "hrt_reduce_op and hetero::Reduction differ in size");
static_assert(getMaxEnumValForCompressor() == HRT_COMPRESS_QSGD,
              "hrt_compressor and hetero::Compressor differ in size");
static_assert(getMaxEnumValForCollectiveScheme() == HRT_SCHEME_ALLTOALL,
              "hrt_scheme and hetero::CollectiveScheme differ in size");
static_assert(getMaxEnumValForSparseFormat() == HRT_SPARSE_HASH_BITMAP,
              "hrt_sparse_format and hetero::SparseFormat differ in size");

/// hrt_dtype of an element type, or none.
std::optional<hrt_dtype> runtimeDtype(Type type) {
  if (type.isF32())
    return HRT_FLOAT32;
  if (type.isF64())
    return HRT_FLOAT64;
  if (type.isInteger(32))
    return HRT_INT32;
  if (type.isInteger(64))
    return HRT_INT64;
  if (type.isInteger(8))
    return HRT_UINT8;
  if (type.isF16())
    return HRT_FLOAT16;
  if (type.isBF16())
    return HRT_BFLOAT16;
  return std::nullopt;
}

hrt_reduce_op runtimeReduction(Reduction reduction) {
  switch (reduction) {
  case Reduction::sum:
    return HRT_SUM;
  case Reduction::prod:
    return HRT_PROD;
  case Reduction::max:
    return HRT_MAX;
  case Reduction::min:
    return HRT_MIN;
  case Reduction::avg:
    return HRT_AVG;
  }
  llvm_unreachable("unknown hetero::Reduction");
}

hrt_compressor runtimeCompressor(Compressor compressor) {
  switch (compressor) {
  case Compressor::none:
    return HRT_COMPRESS_NONE;
  case Compressor::fp16:
    return HRT_COMPRESS_FP16;
  case Compressor::bf16:
    return HRT_COMPRESS_BF16;
  case Compressor::topk:
    return HRT_COMPRESS_TOPK;
  case Compressor::dgc:
    return HRT_COMPRESS_DGC;
  case Compressor::randomk:
    return HRT_COMPRESS_RANDOMK;
  case Compressor::efsignsgd:
    return HRT_COMPRESS_EFSIGNSGD;
  case Compressor::onebit:
    return HRT_COMPRESS_ONEBIT;
  case Compressor::qsgd:
    return HRT_COMPRESS_QSGD;
  }
  llvm_unreachable("unknown hetero::Compressor");
}

hrt_scheme runtimeScheme(CollectiveScheme scheme) {
  switch (scheme) {
  case CollectiveScheme::allreduce:
    return HRT_SCHEME_ALLREDUCE;
  case CollectiveScheme::allgather:
    return HRT_SCHEME_ALLGATHER;
  case CollectiveScheme::alltoall:
    return HRT_SCHEME_ALLTOALL;
  }
  llvm_unreachable("unknown hetero::CollectiveScheme");
}

/// The runtime's format of a sparse all-reduce; dense ones do not reach it.
hrt_sparse_format runtimeSparseFormat(SparseFormat format) {
  switch (format) {
  case SparseFormat::coo:
    return HRT_SPARSE_COO;
  case SparseFormat::hash_bitmap:
    return HRT_SPARSE_HASH_BITMAP;
  case SparseFormat::dense:
    break;
  }
  llvm_unreachable("a dense all-reduce has no sparse format");
}

/// Emits calls to the runtime for one module.
class RuntimeCalls {
  ModuleOp module;
  RewriterBase &rewriter;

public:
  RuntimeCalls(ModuleOp module, RewriterBase &rewriter)
      : module(module), rewriter(rewriter),
        pointer(LLVM::LLVMPointerType::get(module.getContext())),
        i64(rewriter.getI64Type()), i32(rewriter.getI32Type()) {}

  /// Calls `name` (declared on first use) with `arguments`.
  Value call(Location loc, StringRef name, ValueRange arguments,
             TypeRange results = {}) {
    func::FuncOp callee = declare(name, arguments.getTypes(), results);
    auto op = func::CallOp::create(rewriter, loc, callee, arguments);
    return results.empty() ? Value() : op.getResult(0);
  }

  Value constant64(Location loc, int64_t value) {
    return arith::ConstantIntOp::create(rewriter, loc, i64, value);
  }
  Value constant32(Location loc, int64_t value) {
    return arith::ConstantIntOp::create(rewriter, loc, i32, value);
  }

  /// The communicator of the group of `op`: its grid along its axes, or
  /// the world.
  FailureOr<Value> group(Operation *op, FlatSymbolRefAttr gridName,
                         ArrayRef<int16_t> axes) {
    Location loc = op->getLoc();
    if (!gridName)
      return call(loc, "hrt_mlir_world", {}, pointer);
    auto grid =
        SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(op, gridName);
    ArrayRef<int64_t> shape = grid.getShape();
    if (shape.size() > 4 || llvm::any_of(shape, ShapedType::isDynamic))
      return op->emitOpError()
             << "needs a static device grid of at most 4 dimensions to be "
                "lowered to the runtime, '"
             << gridName.getValue() << "' is not";
    int64_t mask = 0;
    for (int16_t axis : axes)
      mask |= int64_t{1} << axis;
    SmallVector<Value> arguments = {constant64(loc, shape.size())};
    for (size_t i = 0; i < 4; ++i)
      arguments.push_back(constant64(loc, i < shape.size() ? shape[i] : 1));
    arguments.push_back(constant64(loc, mask));
    return call(loc, "hrt_mlir_group", arguments, pointer);
  }

  /// A fresh buffer of `type`, holding `tensor` when it is given.
  Value buffer(Location loc, RankedTensorType type, Value tensor = {}) {
    auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
    Value memref = memref::AllocOp::create(rewriter, loc, memrefType);
    if (tensor)
      bufferization::MaterializeInDestinationOp::create(
          rewriter, loc, TypeRange{}, tensor, memref, /*restrict=*/false,
          /*writable=*/true);
    return memref;
  }

  /// The aligned pointer of `memref` as an !llvm.ptr.
  Value pointerOf(Location loc, Value memref) {
    Value index =
        memref::ExtractAlignedPointerAsIndexOp::create(rewriter, loc, memref);
    Value address = arith::IndexCastOp::create(rewriter, loc, i64, index);
    return LLVM::IntToPtrOp::create(rewriter, loc, pointer, address);
  }

  /// The tensor a buffer holds after the runtime wrote it.
  Value tensorOf(Location loc, RankedTensorType type, Value memref) {
    return bufferization::ToTensorOp::create(rewriter, loc, type, memref,
                                             rewriter.getUnitAttr(),
                                             rewriter.getUnitAttr());
  }

  Type pointer, i64, i32;

private:
  func::FuncOp declare(StringRef name, TypeRange arguments,
                       TypeRange results) {
    if (auto existing = module.lookupSymbol<func::FuncOp>(name))
      return existing;
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(module.getBody());
    auto function = func::FuncOp::create(
        rewriter, module.getLoc(), name,
        rewriter.getFunctionType(arguments, results));
    function.setPrivate();
    return function;
  }
};

/// Rejects what this lowering does not handle, with the reason.
LogicalResult checkLowerable(Operation *op, CompressAttr compress) {
  if (compress && compress.getCompressor() != Compressor::none)
    return op->emitOpError()
           << "with compressor '"
           << stringifyCompressor(compress.getCompressor())
           << "' cannot be lowered to the runtime yet; only all-reduces "
              "and buckets are compressed";
  return success();
}

/// What the runtime's compressed all-reduce takes beyond the op verifier's
/// rules (sums and averages only): float32 gradients, QSGD with at most 127
/// levels.
LogicalResult checkCompressible(AllReduceOp reduce) {
  CompressAttr compress = reduce.getCompressAttr();
  Type element = reduce.getInput().getType().getElementType();
  if (!element.isF32())
    return reduce.emitOpError()
           << "compresses " << element
           << " gradients, but the runtime compresses f32 only";
  if (compress.getCompressor() == Compressor::qsgd &&
      (compress.getLevels() < 1 || compress.getLevels() > 127))
    return reduce.emitOpError()
           << "uses qsgd with " << compress.getLevels()
           << " levels; the runtime quantises to 1..127 levels";
  return success();
}

/// Zen's sparse all-reduce takes float32 gradients.
LogicalResult checkSparse(AllReduceOp reduce) {
  Type element = reduce.getInput().getType().getElementType();
  if (!element.isF32())
    return reduce.emitOpError()
           << "synchronises " << element
           << " gradients sparsely, but the runtime's sparse all-reduce "
              "takes f32 only";
  return success();
}

/// The element type and hrt_dtype of a tensor, or an error.
FailureOr<int64_t> dtypeOf(Operation *op, Type type) {
  Type element = cast<RankedTensorType>(type).getElementType();
  std::optional<hrt_dtype> dtype = runtimeDtype(element);
  if (!dtype)
    return op->emitOpError() << "moves elements of type " << element
                             << ", which the runtime does not support "
                                "(f32, f64, f16, bf16, i8, i32, i64)";
  return int64_t(*dtype);
}

/// The reassociation that folds every dimension of `type` into one.
SmallVector<ReassociationIndices> flattening(RankedTensorType type) {
  if (type.getRank() == 0)
    return {};
  ReassociationIndices dims;
  for (int64_t d = 0; d < type.getRank(); ++d)
    dims.push_back(d);
  return {dims};
}

/// The first op of `block` that is or holds a use of `value`; null when
/// no use is in `block`.
Operation *firstUseIn(Block *block, Value value) {
  Operation *first = nullptr;
  for (Operation *user : value.getUsers()) {
    Operation *ancestor = block->findAncestorOpInBlock(*user);
    if (ancestor && (!first || ancestor->isBeforeInBlock(first)))
      first = ancestor;
  }
  return first;
}

/// hetero.bucket -> one all_reduce of the operands flattened and
/// concatenated, then sliced and reshaped back.
void fuseBucket(BucketOp bucket, RewriterBase &rewriter) {
  Location loc = bucket.getLoc();
  rewriter.setInsertionPoint(bucket);
  SmallVector<Value> flat;
  SmallVector<int64_t> sizes;
  for (Value input : bucket.getInputs()) {
    auto type = cast<RankedTensorType>(input.getType());
    int64_t elements = type.getNumElements();
    sizes.push_back(elements);
    auto flatType = RankedTensorType::get({elements}, type.getElementType());
    flat.push_back(tensor::CollapseShapeOp::create(rewriter, loc, flatType,
                                                   input, flattening(type)));
  }
  Value fused = flat.size() == 1
                    ? flat.front()
                    : tensor::ConcatOp::create(rewriter, loc, 0, flat);
  auto reduced = AllReduceOp::create(
      rewriter, loc, fused.getType(), bucket.getGridAttr(),
      bucket.getGridAxesAttr(), fused, bucket.getReductionAttr(),
      bucket.getCompressAttr(),
      SparseFormatAttr::get(rewriter.getContext(), SparseFormat::dense));
  // The results are split off right before the first use of any of them,
  // so that the all-reduce is waited for only there.
  Operation *firstUse = nullptr;
  for (Value result : bucket.getResults())
    if (Operation *use = firstUseIn(bucket->getBlock(), result))
      if (!firstUse || use->isBeforeInBlock(firstUse))
        firstUse = use;
  if (firstUse)
    rewriter.setInsertionPoint(firstUse);
  SmallVector<Value> results;
  int64_t offset = 0;
  for (auto [input, elements] : llvm::zip(bucket.getInputs(), sizes)) {
    auto type = cast<RankedTensorType>(input.getType());
    Value slice = tensor::ExtractSliceOp::create(
        rewriter, loc, reduced, ArrayRef<OpFoldResult>{rewriter.getIndexAttr(offset)},
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(elements)},
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)});
    offset += elements;
    results.push_back(tensor::ExpandShapeOp::create(rewriter, loc, type, slice,
                                                    flattening(type)));
  }
  rewriter.replaceOp(bucket, results);
}

/// A dense all-reduce posted where it stands and waited for right before
/// the first use of its result (at the end of its block when unused), so
/// that it overlaps with the work in between.
LogicalResult startAllReduce(AllReduceOp reduce, Value comm,
                             RuntimeCalls &calls, IRRewriter &rewriter) {
  Location loc = reduce.getLoc();
  FailureOr<int64_t> dtype = dtypeOf(reduce, reduce.getInput().getType());
  if (failed(dtype))
    return failure();
  auto type = cast<RankedTensorType>(reduce.getInput().getType());
  Value reduction =
      calls.constant32(loc, runtimeReduction(reduce.getReduction()));
  Value memref = calls.buffer(loc, type, reduce.getInput());
  Value request = calls.call(
      loc, "hrt_mlir_all_reduce_start",
      {comm, calls.pointerOf(loc, memref),
       calls.constant64(loc, type.getNumElements()),
       calls.constant32(loc, *dtype), reduction},
      calls.pointer);
  Block *block = reduce->getBlock();
  if (Operation *use = firstUseIn(block, reduce.getResult()))
    rewriter.setInsertionPoint(use);
  else
    rewriter.setInsertionPoint(block->getTerminator());
  calls.call(loc, "hrt_mlir_wait", {request});
  rewriter.replaceOp(reduce, calls.tensorOf(loc, type, memref));
  return success();
}

struct HeteroLowerToRuntimePass
    : public hetero::impl::HeteroLowerToRuntimeBase<HeteroLowerToRuntimePass> {
  using Base::Base;

  void runOnOperation() override;
  LogicalResult lower(Operation *op, RuntimeCalls &calls, IRRewriter &rewriter);

  /// Numbers the compressed all-reduces of the module: the runtime keeps
  /// the error-feedback residual and the random seed of each.
  int64_t nextCompressedSite = 0;
};

/// Lowers one communicating op; returns failure after a diagnostic.
LogicalResult HeteroLowerToRuntimePass::lower(Operation *op,
                                              RuntimeCalls &calls,
                                              IRRewriter &rewriter) {
  Location loc = op->getLoc();
  rewriter.setInsertionPoint(op);
  auto elements = [](Type type) {
    return cast<RankedTensorType>(type).getNumElements();
  };
  // In place on a copy of `input`: all_reduce, broadcast, reduce.
  auto inPlace = [&](Value input, Value comm, StringRef callee,
                     ArrayRef<Value> trailing) -> LogicalResult {
    FailureOr<int64_t> dtype = dtypeOf(op, input.getType());
    if (failed(dtype))
      return failure();
    auto type = cast<RankedTensorType>(input.getType());
    Value memref = calls.buffer(loc, type, input);
    SmallVector<Value> arguments = {comm, calls.pointerOf(loc, memref),
                                    calls.constant64(loc, elements(type)),
                                    calls.constant32(loc, *dtype)};
    arguments.append(trailing.begin(), trailing.end());
    calls.call(loc, callee, arguments);
    rewriter.replaceOp(op, calls.tensorOf(loc, type, memref));
    return success();
  };
  // From a copy of `input` into a fresh buffer of the result type.
  auto outOfPlace = [&](Value input, Value comm, StringRef callee,
                        int64_t count,
                        ArrayRef<Value> trailing) -> LogicalResult {
    FailureOr<int64_t> dtype = dtypeOf(op, input.getType());
    if (failed(dtype))
      return failure();
    auto inType = cast<RankedTensorType>(input.getType());
    auto outType = cast<RankedTensorType>(op->getResult(0).getType());
    Value send = calls.buffer(loc, inType, input);
    Value recv = calls.buffer(loc, outType);
    SmallVector<Value> arguments = {comm, calls.pointerOf(loc, send),
                                    calls.pointerOf(loc, recv),
                                    calls.constant64(loc, count),
                                    calls.constant32(loc, *dtype)};
    arguments.append(trailing.begin(), trailing.end());
    calls.call(loc, callee, arguments);
    rewriter.replaceOp(op, calls.tensorOf(loc, outType, recv));
    return success();
  };
  auto axisZero = [&](int64_t axis, StringRef name) -> LogicalResult {
    if (axis == 0)
      return success();
    return op->emitOpError() << "along " << name << " " << axis
                             << " cannot be lowered to the runtime yet; "
                                "only axis 0 is";
  };

  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](AllReduceOp reduce) -> LogicalResult {
        CompressAttr compress = reduce.getCompressAttr();
        bool compressed =
            compress && compress.getCompressor() != Compressor::none;
        bool sparse = reduce.getSparse() != SparseFormat::dense;
        if ((compressed && failed(checkCompressible(reduce))) ||
            (sparse && failed(checkSparse(reduce))))
          return failure();
        FailureOr<Value> comm =
            calls.group(op, reduce.getGridAttr(), reduce.getGridAxes());
        if (failed(comm))
          return failure();
        if (sparse)
          return inPlace(
              reduce.getInput(), *comm, "hrt_mlir_sparse_all_reduce",
              {calls.constant32(loc, runtimeReduction(reduce.getReduction())),
               calls.constant32(loc, runtimeSparseFormat(reduce.getSparse()))});
        if (compressed)
          return inPlace(
              reduce.getInput(), *comm, "hrt_mlir_compressed_all_reduce",
              {calls.constant32(loc, runtimeReduction(reduce.getReduction())),
               calls.constant32(loc, runtimeCompressor(compress.getCompressor())),
               arith::ConstantFloatOp::create(
                   rewriter, loc, rewriter.getF64Type(),
                   llvm::APFloat(compress.getRatio().convertToDouble())),
               calls.constant64(loc, compress.getLevels()),
               calls.constant32(loc, runtimeScheme(compress.getScheme())),
               calls.constant32(loc, compress.getErrorFeedback()),
               calls.constant64(loc, compress.getNodeSize()),
               calls.constant64(loc, nextCompressedSite++)});
        if (blockingCollectives)
          return inPlace(reduce.getInput(), *comm, "hrt_mlir_all_reduce",
                         {calls.constant32(
                             loc, runtimeReduction(reduce.getReduction()))});
        return startAllReduce(reduce, *comm, calls, rewriter);
      })
      .Case([&](BroadcastOp broadcast) -> LogicalResult {
        FailureOr<Value> comm = calls.group(op, broadcast.getGridAttr(),
                                            broadcast.getGridAxes());
        if (failed(comm))
          return failure();
        return inPlace(broadcast.getInput(), *comm, "hrt_mlir_broadcast",
                       {calls.constant64(loc, broadcast.getRoot())});
      })
      .Case([&](ReduceOp reduce) -> LogicalResult {
        FailureOr<Value> comm =
            calls.group(op, reduce.getGridAttr(), reduce.getGridAxes());
        if (failed(comm))
          return failure();
        return inPlace(
            reduce.getInput(), *comm, "hrt_mlir_reduce",
            {calls.constant32(loc, runtimeReduction(reduce.getReduction())),
             calls.constant64(loc, reduce.getRoot())});
      })
      .Case([&](AllGatherOp gather) -> LogicalResult {
        if (failed(checkLowerable(op, gather.getCompressAttr())) ||
            failed(axisZero(gather.getAxis(), "axis")))
          return failure();
        FailureOr<Value> comm =
            calls.group(op, gather.getGridAttr(), gather.getGridAxes());
        if (failed(comm))
          return failure();
        return outOfPlace(gather.getInput(), *comm, "hrt_mlir_all_gather",
                          elements(gather.getInput().getType()), {});
      })
      .Case([&](ReduceScatterOp scatter) -> LogicalResult {
        if (failed(checkLowerable(op, scatter.getCompressAttr())) ||
            failed(axisZero(scatter.getAxis(), "axis")))
          return failure();
        FailureOr<Value> comm =
            calls.group(op, scatter.getGridAttr(), scatter.getGridAxes());
        if (failed(comm))
          return failure();
        return outOfPlace(
            scatter.getInput(), *comm, "hrt_mlir_reduce_scatter",
            elements(scatter.getResult().getType()),
            {calls.constant32(loc, runtimeReduction(scatter.getReduction()))});
      })
      .Case([&](AllToAllOp exchange) -> LogicalResult {
        if (failed(checkLowerable(op, exchange.getCompressAttr())) ||
            failed(axisZero(exchange.getSplitAxis(), "split_axis")) ||
            failed(axisZero(exchange.getConcatAxis(), "concat_axis")))
          return failure();
        FailureOr<Value> comm =
            calls.group(op, exchange.getGridAttr(), exchange.getGridAxes());
        if (failed(comm))
          return failure();
        // count is per rank pair: the input splits into group-size blocks,
        // as many as the concatenated result holds.
        auto input = cast<RankedTensorType>(exchange.getInput().getType());
        auto result = cast<RankedTensorType>(exchange.getResult().getType());
        Value size = calls.call(loc, "hrt_mlir_size", {*comm}, calls.i64);
        Value total = calls.constant64(loc, elements(input));
        Value count = arith::DivSIOp::create(rewriter, loc, total, size);
        FailureOr<int64_t> dtype = dtypeOf(op, input);
        if (failed(dtype))
          return failure();
        Value send = calls.buffer(loc, input, exchange.getInput());
        Value recv = calls.buffer(loc, result);
        calls.call(loc, "hrt_mlir_all_to_all",
                   {*comm, calls.pointerOf(loc, send),
                    calls.pointerOf(loc, recv), count,
                    calls.constant32(loc, *dtype)});
        rewriter.replaceOp(op, calls.tensorOf(loc, result, recv));
        return success();
      })
      .Case([&](SendOp send) -> LogicalResult {
        FailureOr<Value> comm =
            calls.group(op, send.getGridAttr(), send.getGridAxes());
        FailureOr<int64_t> dtype = dtypeOf(op, send.getInput().getType());
        if (failed(comm) || failed(dtype))
          return failure();
        auto type = cast<RankedTensorType>(send.getInput().getType());
        Value memref = calls.buffer(loc, type, send.getInput());
        calls.call(loc, "hrt_mlir_send",
                   {*comm, calls.pointerOf(loc, memref),
                    calls.constant64(loc, elements(type)),
                    calls.constant32(loc, *dtype),
                    calls.constant64(loc, send.getPeer()),
                    calls.constant64(loc, send.getTag())});
        rewriter.eraseOp(op);
        return success();
      })
      .Case([&](RecvOp recv) -> LogicalResult {
        FailureOr<Value> comm =
            calls.group(op, recv.getGridAttr(), recv.getGridAxes());
        FailureOr<int64_t> dtype = dtypeOf(op, recv.getResult().getType());
        if (failed(comm) || failed(dtype))
          return failure();
        auto type = cast<RankedTensorType>(recv.getResult().getType());
        Value memref = calls.buffer(loc, type);
        calls.call(loc, "hrt_mlir_recv",
                   {*comm, calls.pointerOf(loc, memref),
                    calls.constant64(loc, elements(type)),
                    calls.constant32(loc, *dtype),
                    calls.constant64(loc, recv.getPeer()),
                    calls.constant64(loc, recv.getTag())});
        rewriter.replaceOp(op, calls.tensorOf(loc, type, memref));
        return success();
      })
      .Case([&](TaskMarkOp mark) -> LogicalResult {
        // hrt_timeline_kind: 0 forward, 1 backward; -1: no micro-batch.
        calls.call(
            loc, "hrt_mlir_task_mark",
            {calls.constant32(loc, mark.getKind() == TaskKind::forward ? 0 : 1),
             calls.constant64(loc, mark.getMicrobatch().value_or(-1))});
        rewriter.eraseOp(op);
        return success();
      })
      .Case([&](shard::ProcessMultiIndexOp index) -> LogicalResult {
        // The grid coordinates of this rank: the row-major digits of its
        // rank in the whole grid (hrt_mlir_group checks the job's size).
        FailureOr<Value> comm = calls.group(op, index.getGridAttr(), {});
        if (failed(comm))
          return failure();
        auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
            op, index.getGridAttr());
        ArrayRef<int64_t> shape = grid.getShape();
        Value rank = calls.call(loc, "hrt_mlir_rank", {*comm}, calls.i64);
        SmallVector<int16_t> axes(index.getAxes());
        if (axes.empty())
          for (int16_t axis = 0; axis < int16_t(shape.size()); ++axis)
            axes.push_back(axis);
        SmallVector<Value> coordinates;
        for (int16_t axis : axes) {
          int64_t stride = 1;
          for (size_t inner = axis + 1; inner < shape.size(); ++inner)
            stride *= shape[inner];
          Value digit = arith::DivSIOp::create(
              rewriter, loc, rank, calls.constant64(loc, stride));
          digit = arith::RemSIOp::create(rewriter, loc, digit,
                                         calls.constant64(loc, shape[axis]));
          coordinates.push_back(arith::IndexCastOp::create(
              rewriter, loc, rewriter.getIndexType(), digit));
        }
        rewriter.replaceOp(op, coordinates);
        return success();
      })
      .Case([&](shard::ProcessLinearIndexOp index) -> LogicalResult {
        Value world = calls.call(loc, "hrt_mlir_world", {}, calls.pointer);
        Value rank = calls.call(loc, "hrt_mlir_rank", {world}, calls.i64);
        rewriter.replaceOp(op, arith::IndexCastOp::create(
                                   rewriter, loc, rewriter.getIndexType(),
                                   rank));
        return success();
      })
      .Case([&](CorpusBatchOp batch) -> LogicalResult {
        RankedTensorType type = batch.getInput().getType();
        Value input = calls.buffer(loc, type);
        Value target = calls.buffer(loc, type);
        calls.call(loc, "hrt_mlir_corpus_batch",
                   {calls.pointerOf(loc, input), calls.pointerOf(loc, target),
                    calls.constant64(loc, type.getDimSize(0)),
                    calls.constant64(loc, type.getDimSize(1)), batch.getStep(),
                    batch.getReplica(), batch.getMicrobatch(),
                    calls.constant64(loc, batch.getVocab()),
                    calls.constant64(loc, batch.getReplicas())});
        rewriter.replaceOp(op, {calls.tensorOf(loc, type, input),
                                calls.tensorOf(loc, type, target)});
        return success();
      })
      .Case([&](SampleContextOp sample) -> LogicalResult {
        RankedTensorType type = sample.getContext().getType();
        Value context = calls.buffer(loc, type);
        calls.call(loc, "hrt_mlir_sample_context",
                   {calls.pointerOf(loc, context),
                    calls.constant64(loc, type.getDimSize(0)),
                    calls.constant64(loc, type.getDimSize(1)),
                    calls.constant64(loc, sample.getVocab())});
        rewriter.replaceOp(op, calls.tensorOf(loc, type, context));
        return success();
      })
      .Case([&](SampleNextOp sample) -> LogicalResult {
        RankedTensorType type = sample.getLogits().getType();
        Value logits = calls.buffer(loc, type, sample.getLogits());
        rewriter.replaceOp(
            op, calls.call(loc, "hrt_mlir_sample_next",
                           {calls.pointerOf(loc, logits),
                            calls.constant64(loc, type.getDimSize(0)),
                            calls.constant64(loc, type.getDimSize(1))},
                           rewriter.getF32Type()));
        return success();
      })
      .Case<CheckpointOp, CkptChunkOp, GroupSyncOp, PrunePlanOp,
            SelectColsOp, ImputeColsOp, PrunableMatmulOp>(
          [&](Operation *) -> LogicalResult {
            return op->emitOpError()
                   << "cannot be lowered to the runtime yet";
          })
      .Default([](Operation *) { return success(); });
}

void HeteroLowerToRuntimePass::runOnOperation() {
  ModuleOp module = getOperation();
  IRRewriter rewriter(&getContext());
  SmallVector<BucketOp> buckets;
  module.walk([&](BucketOp bucket) { buckets.push_back(bucket); });
  for (BucketOp bucket : buckets)
    fuseBucket(bucket, rewriter);

  RuntimeCalls calls(module, rewriter);
  SmallVector<Operation *> communicating;
  module.walk([&](Operation *op) {
    if (isa<HeteroDialect>(op->getDialect()) &&
        !isa<PipelineOp, StageOp, ScheduleOp, StageProgramOp, FwdOp, BwdOp,
             SendTaskOp, RecvTaskOp, PlanSetOp>(op))
      communicating.push_back(op);
    else if (isa<shard::ProcessLinearIndexOp, shard::ProcessMultiIndexOp>(op))
      communicating.push_back(op);
  });
  bool failedAny = false;
  for (Operation *op : communicating)
    failedAny |= failed(lower(op, calls, rewriter));
  if (failedAny)
    return signalPassFailure();

  // Creating a grid's groups is collective over the world, and ranks of
  // different stages reach their first collective at different points of
  // their programs. So a function every rank of a grid calls (a compiled
  // training step, `hetero.grid`) creates the groups of every grid of the
  // module on entry, in module order, on every rank alike.
  SmallVector<shard::GridOp> grids;
  for (auto grid : module.getOps<shard::GridOp>())
    if (grid.getShape().size() <= 4 &&
        llvm::none_of(grid.getShape(), ShapedType::isDynamic))
      grids.push_back(grid);
  if (!communicating.empty() && !grids.empty())
    for (auto function : module.getOps<func::FuncOp>()) {
      auto gridName = function->getAttrOfType<FlatSymbolRefAttr>("hetero.grid");
      if (function.isDeclaration() || !gridName)
        continue;
      // Grids of another size than the step's cannot cover the job.
      auto devices = [](shard::GridOp grid) {
        return ShapedType::getNumElements(grid.getShape());
      };
      auto own = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
          function, gridName);
      if (!own)
        continue;
      rewriter.setInsertionPointToStart(&function.front());
      for (shard::GridOp grid : grids)
        if (devices(grid) == devices(own) &&
            failed(calls.group(function,
                               FlatSymbolRefAttr::get(grid.getSymNameAttr()),
                               {})))
          return signalPassFailure();
    }

  // The module now holds only functions.
  for (Operation &op : llvm::make_early_inc_range(module.getOps()))
    if (isa<shard::GridOp, PipelineOp, ScheduleOp, PlanSetOp>(op))
      op.erase();
}

} // namespace
