//===- LowerToRuntime.cpp - collectives as libhetero_rt calls -------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero-rt/compress.h"
#include "hetero-rt/hrt.h"
#include "hetero/Dialect/Hetero.h"
#include "hetero/Dialect/Utils.h"
#include "hetero/Passes/HeteroToRuntime.h"
#include "hetero/Passes/Passes.h"
#include "hetero/Support/Hash.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

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
static_assert(getMaxEnumValForSparseFormat() == HRT_SPARSE_ONLINE,
              "hrt_sparse_format and hetero::SparseFormat differ in size");
static_assert(getMaxEnumValForReplicaPlacement() == HRT_CKPT_MIXED,
              "hrt_ckpt_placement and hetero::ReplicaPlacement differ in size");
static_assert(getMaxEnumValForGemmEvent() == HRT_GEMM_END_MIGRATED,
              "hrt_gemm_event and hetero::GemmEvent differ in size");
static_assert(getMaxEnumValForPlacement() == HRT_PLACEMENT_DEVICE,
              "hrt_placement and hetero::Placement differ in size");

/// hrt_dtype of an element type, or none.
static std::optional<hrt_dtype> runtimeDtype(Type type) {
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

static hrt_reduce_op runtimeReduction(Reduction reduction) {
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

static hrt_compressor runtimeCompressor(Compressor compressor) {
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

static hrt_ckpt_placement runtimePlacement(ReplicaPlacement placement) {
  switch (placement) {
  case ReplicaPlacement::group:
    return HRT_CKPT_GROUP;
  case ReplicaPlacement::ring:
    return HRT_CKPT_RING;
  case ReplicaPlacement::mixed:
    return HRT_CKPT_MIXED;
  }
  llvm_unreachable("unknown hetero::ReplicaPlacement");
}

static hrt_gemm_event runtimeGemmEvent(GemmEvent event) {
  switch (event) {
  case GemmEvent::begin:
    return HRT_GEMM_BEGIN;
  case GemmEvent::end:
    return HRT_GEMM_END;
  case GemmEvent::begin_migrated:
    return HRT_GEMM_BEGIN_MIGRATED;
  case GemmEvent::end_migrated:
    return HRT_GEMM_END_MIGRATED;
  }
  llvm_unreachable("unknown hetero::GemmEvent");
}

static hrt_scheme runtimeScheme(CollectiveScheme scheme) {
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
static hrt_sparse_format runtimeSparseFormat(SparseFormat format) {
  switch (format) {
  case SparseFormat::coo:
    return HRT_SPARSE_COO;
  case SparseFormat::hash_bitmap:
    return HRT_SPARSE_HASH_BITMAP;
  case SparseFormat::allgather:
    return HRT_SPARSE_ALLGATHER;
  case SparseFormat::online:
    return HRT_SPARSE_ONLINE;
  case SparseFormat::dense:
    break;
  }
  llvm_unreachable("a dense all-reduce has no sparse format");
}

//===----------------------------------------------------------------------===//
// Runtime calls
//===----------------------------------------------------------------------===//

/// Whether the runtime's groups cover `grid`: static, at most 4 dimensions.
static bool isRuntimeGrid(shard::GridOp grid) {
  ArrayRef<int64_t> shape = grid.getShape();
  return shape.size() <= 4 && llvm::none_of(shape, ShapedType::isDynamic);
}

/// Builds calls to the runtime at the rewriter's insertion point, declaring
/// each runtime function in the module on first use.
class RuntimeCalls {
public:
  RuntimeCalls(Operation *op, RewriterBase &rewriter)
      : module(op->getParentOfType<ModuleOp>()), rewriter(rewriter),
        loc(op->getLoc()),
        pointer(LLVM::LLVMPointerType::get(op->getContext())),
        i64(rewriter.getI64Type()), i32(rewriter.getI32Type()) {}

  /// Calls `name` with `arguments`; returns its result, if any.
  Value call(StringRef name, ValueRange arguments, TypeRange results = {}) {
    func::FuncOp callee = declare(name, arguments.getTypes(), results);
    auto op = func::CallOp::create(rewriter, loc, callee, arguments);
    return results.empty() ? Value() : op.getResult(0);
  }

  Value constant64(int64_t value) {
    return arith::ConstantIntOp::create(rewriter, loc, i64, value);
  }
  /// An index as the runtime's i64.
  Value toI64(Value index) {
    return arith::IndexCastOp::create(rewriter, loc, i64, index);
  }
  /// The runtime's key of a resized layer: the FNV-1a hash of its name,
  /// moved along the blocks' Weyl sequence by `block` when given
  /// (hetero::blockLayerKey).
  Value layerKey(StringRef layer, Value block = {}) {
    Value key = constant64(int64_t(hashLayerKey(layer.data(), layer.size())));
    if (!block)
      return key;
    Value step = arith::MulIOp::create(rewriter, loc, toI64(block),
                                       constant64(int64_t(kBlockKeyStride)));
    return arith::AddIOp::create(rewriter, loc, key, step);
  }
  Value constant32(int64_t value) {
    return arith::ConstantIntOp::create(rewriter, loc, i32, value);
  }

  /// The communicator of the ranks of `grid` along `axes` (all axes when
  /// empty), or of the world when there is no grid.
  FailureOr<Value> group(Operation *op, shard::GridOp grid,
                         ArrayRef<int16_t> axes) {
    if (!grid)
      return call("hrt_mlir_world", {}, pointer);
    if (!isRuntimeGrid(grid))
      return op->emitOpError()
             << "needs a static device grid of at most 4 dimensions to be "
                "lowered to the runtime, '"
             << grid.getSymName() << "' is not";
    ArrayRef<int64_t> shape = grid.getShape();
    int64_t mask = 0;
    for (int16_t axis : axes)
      mask |= int64_t{1} << axis;
    SmallVector<Value> arguments = {constant64(shape.size())};
    for (size_t i = 0; i < 4; ++i)
      arguments.push_back(constant64(i < shape.size() ? shape[i] : 1));
    arguments.push_back(constant64(mask));
    return call("hrt_mlir_group", arguments, pointer);
  }
  FailureOr<Value> group(CollectiveOpInterface collective) {
    return group(collective, collective.getGrid(), collective.getGridAxes());
  }

  /// A fresh buffer of `type`, holding `tensor` when it is given.
  /// A dynamic dimension takes its size from `tensor`, which it then needs.
  Value buffer(RankedTensorType type, Value tensor = {}) {
    auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
    SmallVector<Value> sizes;
    for (int64_t dim = 0; dim < type.getRank(); ++dim)
      if (type.isDynamicDim(dim))
        sizes.push_back(tensor::DimOp::create(rewriter, loc, tensor, dim));
    Value memref = memref::AllocOp::create(rewriter, loc, memrefType, sizes);
    if (tensor)
      bufferization::MaterializeInDestinationOp::create(
          rewriter, loc, TypeRange{}, tensor, memref, /*restrict=*/false,
          /*writable=*/true);
    return memref;
  }

  /// The number of elements of `tensor` as an i64, read from its
  /// dimensions where they are dynamic.
  Value count(Value tensor) {
    auto type = cast<RankedTensorType>(tensor.getType());
    if (type.hasStaticShape())
      return constant64(type.getNumElements());
    Value product = constant64(1);
    for (int64_t dim = 0; dim < type.getRank(); ++dim) {
      Value size =
          type.isDynamicDim(dim)
              ? toI64(tensor::DimOp::create(rewriter, loc, tensor, dim))
              : constant64(type.getDimSize(dim));
      product = arith::MulIOp::create(rewriter, loc, product, size);
    }
    return product;
  }

  /// The buffer of `tensor` itself, for the runtime to read only (a send,
  /// the input of an out-of-place collective): no copy.
  Value readOnlyBuffer(Value tensor) {
    auto type = cast<RankedTensorType>(tensor.getType());
    auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
    return bufferization::ToBufferOp::create(rewriter, loc, memrefType, tensor,
                                             /*read_only=*/true);
  }

  /// The aligned pointer of `memref` as an !llvm.ptr.
  Value pointerOf(Value memref) {
    Value index =
        memref::ExtractAlignedPointerAsIndexOp::create(rewriter, loc, memref);
    Value address = arith::IndexCastOp::create(rewriter, loc, i64, index);
    return LLVM::IntToPtrOp::create(rewriter, loc, pointer, address);
  }

  /// The tensor a buffer holds after the runtime wrote it.
  Value tensorOf(RankedTensorType type, Value memref) {
    return bufferization::ToTensorOp::create(rewriter, loc, type, memref,
                                             rewriter.getUnitAttr(),
                                             rewriter.getUnitAttr());
  }

private:
  func::FuncOp declare(StringRef name, TypeRange arguments, TypeRange results) {
    if (auto existing = module.lookupSymbol<func::FuncOp>(name))
      return existing;
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(module.getBody());
    auto function =
        func::FuncOp::create(rewriter, module.getLoc(), name,
                             rewriter.getFunctionType(arguments, results));
    function.setPrivate();
    return function;
  }

  ModuleOp module;
  RewriterBase &rewriter;
  Location loc;

public:
  Type pointer, i64, i32;
};

//===----------------------------------------------------------------------===//
// What the runtime supports
//===----------------------------------------------------------------------===//

/// The hrt_dtype of the elements of a tensor of `type`, or an error.
static FailureOr<int64_t> dtypeOf(Operation *op, Type type) {
  Type element = cast<RankedTensorType>(type).getElementType();
  std::optional<hrt_dtype> dtype = runtimeDtype(element);
  if (!dtype)
    return op->emitOpError() << "moves elements of type " << element
                             << ", which the runtime does not support "
                                "(f32, f64, f16, bf16, i8, i32, i64)";
  return int64_t(*dtype);
}

/// Only all-reduces and buckets are compressed by the runtime.
static LogicalResult checkUncompressed(CollectiveOpInterface collective) {
  if (!collective.isCompressed())
    return success();
  return collective->emitOpError()
         << "with compressor '"
         << stringifyCompressor(collective.getCompression().getCompressor())
         << "' cannot be lowered to the runtime yet; only all-reduces "
            "and buckets are compressed";
}

/// What the runtime's compressed all-reduce takes beyond the op verifier's
/// rules (sums and averages only): float32 gradients, QSGD with at most 127
/// levels.
static LogicalResult checkCompressible(AllReduceOp reduce) {
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
static LogicalResult checkSparse(AllReduceOp reduce) {
  Type element = reduce.getInput().getType().getElementType();
  if (!element.isF32())
    return reduce.emitOpError()
           << "synchronises " << element
           << " gradients sparsely, but the runtime's sparse all-reduce "
              "takes f32 only";
  return success();
}

//===----------------------------------------------------------------------===//
// Shared shapes of a lowering
//===----------------------------------------------------------------------===//

/// Collectives other than the in-place ones (all-reduce, broadcast,
/// reduce) size their buffers at compile time.
static LogicalResult requireStaticShape(Operation *op, Type type,
                                        StringRef role) {
  if (cast<RankedTensorType>(type).hasStaticShape())
    return success();
  return op->emitOpError() << "needs a static shape for its " << role
                           << " to lower to the runtime, got " << type
                           << " (uncompressed all-reduces, broadcasts and "
                              "reduces take dynamic shapes)";
}

static int64_t elementCount(Type type) {
  return cast<RankedTensorType>(type).getNumElements();
}

/// The reassociation that folds every dimension of `type` into one.
static SmallVector<ReassociationIndices> flattening(RankedTensorType type) {
  if (type.getRank() == 0)
    return {};
  ReassociationIndices dims;
  for (int64_t d = 0; d < type.getRank(); ++d)
    dims.push_back(d);
  return {dims};
}

/// The first op of `block` that is or holds a use of `value`; null when
/// no use is in `block`.
static Operation *firstUseIn(Block *block, Value value) {
  Operation *first = nullptr;
  for (Operation *user : value.getUsers()) {
    Operation *ancestor = block->findAncestorOpInBlock(*user);
    if (ancestor && (!first || ancestor->isBeforeInBlock(first)))
      first = ancestor;
  }
  return first;
}

/// `callee(comm, buffer, count, dtype, trailing...)` on a copy of `input`,
/// which the runtime overwrites with the result. Returns the buffer and what
/// the call returns (of type `results`; null when it returns nothing).
static FailureOr<std::pair<Value, Value>>
callInPlace(Operation *op, Value input, Value comm, StringRef callee,
            ArrayRef<Value> trailing, TypeRange results, RuntimeCalls &calls) {
  FailureOr<int64_t> dtype = dtypeOf(op, input.getType());
  if (failed(dtype))
    return failure();
  auto type = cast<RankedTensorType>(input.getType());
  Value memref = calls.buffer(type, input);
  SmallVector<Value> arguments = {comm, calls.pointerOf(memref),
                                  calls.count(input), calls.constant32(*dtype)};
  arguments.append(trailing.begin(), trailing.end());
  return std::make_pair(memref, calls.call(callee, arguments, results));
}

/// callInPlace, its result replacing `op`: all-reduce, broadcast, reduce.
static LogicalResult lowerInPlace(Operation *op, Value input, Value comm,
                                  StringRef callee, ArrayRef<Value> trailing,
                                  RuntimeCalls &calls, RewriterBase &rewriter) {
  FailureOr<std::pair<Value, Value>> called =
      callInPlace(op, input, comm, callee, trailing, {}, calls);
  if (failed(called))
    return failure();
  rewriter.replaceOp(op, calls.tensorOf(cast<RankedTensorType>(input.getType()),
                                        called->first));
  return success();
}

/// callInPlace of a `callee` that returns a request, posted where `op`
/// stands, and `hrt_mlir_wait(request)` right before the first use of its
/// result (at the end of its block when unused), so that the collective
/// overlaps with the work in between.
static LogicalResult lowerStarted(Operation *op, Value input, Value comm,
                                  StringRef callee, ArrayRef<Value> trailing,
                                  RuntimeCalls &calls, RewriterBase &rewriter) {
  FailureOr<std::pair<Value, Value>> called =
      callInPlace(op, input, comm, callee, trailing, calls.pointer, calls);
  if (failed(called))
    return failure();
  Block *block = op->getBlock();
  if (Operation *use = firstUseIn(block, op->getResult(0)))
    rewriter.setInsertionPoint(use);
  else
    rewriter.setInsertionPoint(block->getTerminator());
  calls.call("hrt_mlir_wait", {called->second});
  rewriter.replaceOp(op, calls.tensorOf(cast<RankedTensorType>(input.getType()),
                                        called->first));
  return success();
}

/// `callee(comm, send, recv, count, dtype, trailing...)` from the buffer of
/// `input`, which the runtime only reads, into a fresh buffer of `outType`
/// (the op's result type, or its permutation when an axis is moved to the
/// front): all-gather, reduce-scatter, all-to-all. Returns the result.
static FailureOr<Value> callExchange(Operation *op, Value input,
                                     RankedTensorType outType, Value comm,
                                     StringRef callee, Value count,
                                     ArrayRef<Value> trailing,
                                     RuntimeCalls &calls) {
  FailureOr<int64_t> dtype = dtypeOf(op, input.getType());
  if (failed(dtype) ||
      failed(requireStaticShape(op, input.getType(), "input")) ||
      failed(requireStaticShape(op, op->getResult(0).getType(), "result")))
    return failure();
  Value send = calls.readOnlyBuffer(input);
  Value recv = calls.buffer(outType);
  SmallVector<Value> arguments = {comm, calls.pointerOf(send),
                                  calls.pointerOf(recv), count,
                                  calls.constant32(*dtype)};
  arguments.append(trailing.begin(), trailing.end());
  calls.call(callee, arguments);
  return calls.tensorOf(outType, recv);
}

/// The same for the op's own result type, which replaces the op.
static LogicalResult lowerOutOfPlace(Operation *op, Value input, Value comm,
                                     StringRef callee, Value count,
                                     ArrayRef<Value> trailing,
                                     RuntimeCalls &calls,
                                     RewriterBase &rewriter) {
  auto outType = cast<RankedTensorType>(op->getResult(0).getType());
  FailureOr<Value> result =
      callExchange(op, input, outType, comm, callee, count, trailing, calls);
  if (failed(result))
    return failure();
  rewriter.replaceOp(op, *result);
  return success();
}

// The runtime splits and concatenates along the outermost dimension:
// another axis is moved there first and back afterwards.

/// The permutation that moves dimension `axis` of a rank-`rank` tensor to
/// the front, keeping the others in order.
static SmallVector<int64_t> axisToFront(int64_t rank, int64_t axis) {
  SmallVector<int64_t> permutation = {axis};
  for (int64_t dim = 0; dim < rank; ++dim)
    if (dim != axis)
      permutation.push_back(dim);
  return permutation;
}

/// A type of `type`'s element type and shape permuted by `permutation`.
static RankedTensorType permutedType(RankedTensorType type,
                                     ArrayRef<int64_t> permutation) {
  SmallVector<int64_t> shape;
  for (int64_t dim : permutation)
    shape.push_back(type.getDimSize(dim));
  return RankedTensorType::get(shape, type.getElementType());
}

/// Lowers a collective that splits or concatenates along `axis` of its
/// input and result alike (an all-gather, a reduce-scatter, an all-to-all
/// that splits and concatenates along one axis): along axis 0 directly,
/// along another with the axis moved to the front and back.
static LogicalResult lowerAlongAxis(Operation *op, int64_t axis, Value input,
                                    Value comm, StringRef callee, Value count,
                                    ArrayRef<Value> trailing,
                                    RuntimeCalls &calls,
                                    RewriterBase &rewriter) {
  if (axis == 0)
    return lowerOutOfPlace(op, input, comm, callee, count, trailing, calls,
                           rewriter);
  auto outType = cast<RankedTensorType>(op->getResult(0).getType());
  SmallVector<int64_t> toFront = axisToFront(outType.getRank(), axis);
  Location loc = op->getLoc();
  FailureOr<Value> result = callExchange(
      op, transposeTensor(rewriter, loc, input, toFront),
      permutedType(outType, toFront), comm, callee, count, trailing, calls);
  if (failed(result))
    return failure();
  rewriter.replaceOp(op, transposeTensor(rewriter, loc, *result,
                                         invertPermutationVector(toFront)));
  return success();
}

//===----------------------------------------------------------------------===//
// hetero.bucket
//===----------------------------------------------------------------------===//

/// One all-reduce of the operands flattened and concatenated, sliced and
/// reshaped back right before the first use of any result (so that the
/// all-reduce is waited for only there): tensor fusion.
struct BucketLowering : OpConversionPattern<BucketOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(BucketOp bucket, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = bucket.getLoc();
    SmallVector<Value> flat;
    for (Value input : adaptor.getInputs()) {
      auto type = cast<RankedTensorType>(input.getType());
      auto flatType =
          RankedTensorType::get({type.getNumElements()}, type.getElementType());
      flat.push_back(tensor::CollapseShapeOp::create(rewriter, loc, flatType,
                                                     input, flattening(type)));
    }
    Value fused = flat.size() == 1
                      ? flat.front()
                      : tensor::ConcatOp::create(rewriter, loc, 0, flat);
    auto reduced = AllReduceOp::create(
        rewriter, loc, fused, bucket.getGridAttr(), bucket.getGridAxes(),
        bucket.getReduction(), bucket.getCompressAttr());
    Operation *firstUse = nullptr;
    for (Value result : bucket.getResults())
      if (Operation *use = firstUseIn(bucket->getBlock(), result))
        if (!firstUse || use->isBeforeInBlock(firstUse))
          firstUse = use;
    if (firstUse)
      rewriter.setInsertionPoint(firstUse);
    SmallVector<Value> results;
    int64_t offset = 0;
    for (Value input : adaptor.getInputs()) {
      auto type = cast<RankedTensorType>(input.getType());
      int64_t elements = type.getNumElements();
      Value slice = tensor::ExtractSliceOp::create(
          rewriter, loc, reduced,
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(offset)},
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(elements)},
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)});
      offset += elements;
      results.push_back(tensor::ExpandShapeOp::create(rewriter, loc, type,
                                                      slice, flattening(type)));
    }
    rewriter.replaceOp(bucket, results);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// hetero.all_reduce
//===----------------------------------------------------------------------===//

/// Sparse (Zen), compressed (the runtime's compressors), blocking, or dense
/// and overlapped: posted where it stands and waited for right before the
/// first use of its result (at the end of its block when unused), so that it
/// overlaps with the work in between.
struct AllReduceLowering : OpConversionPattern<AllReduceOp> {
  AllReduceLowering(MLIRContext *context, bool blocking,
                    std::shared_ptr<int64_t> nextCompressedSite)
      : OpConversionPattern(context), blocking(blocking),
        nextCompressedSite(std::move(nextCompressedSite)) {}

  LogicalResult
  matchAndRewrite(AllReduceOp reduce, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    bool compressed = cast<CollectiveOpInterface>(*reduce).isCompressed();
    bool sparse = reduce.getSparse() != SparseFormat::dense;
    if ((compressed && failed(checkCompressible(reduce))) ||
        (sparse && failed(checkSparse(reduce))))
      return failure();
    RuntimeCalls calls(reduce, rewriter);
    FailureOr<Value> comm = calls.group(reduce);
    if (failed(comm))
      return failure();
    Value reduction = calls.constant32(runtimeReduction(reduce.getReduction()));
    Value input = adaptor.getInput();
    if (sparse)
      return lowerInPlace(reduce, input, *comm, "hrt_mlir_sparse_all_reduce",
                          {reduction, calls.constant32(runtimeSparseFormat(
                                          reduce.getSparse()))},
                          calls, rewriter);
    if (compressed) {
      // The runtime keeps a residual of fixed size per compressed site.
      if (failed(requireStaticShape(reduce, input.getType(),
                                    "compressed gradient")))
        return failure();
      CompressAttr compress = reduce.getCompressAttr();
      Value ratio = arith::ConstantFloatOp::create(
          rewriter, reduce.getLoc(), rewriter.getF64Type(),
          llvm::APFloat(compress.getRatio().convertToDouble()));
      SmallVector<Value> trailing = {
          reduction,
          calls.constant32(runtimeCompressor(compress.getCompressor())),
          ratio,
          calls.constant64(compress.getLevels()),
          calls.constant32(runtimeScheme(compress.getScheme())),
          calls.constant32(compress.getErrorFeedback()),
          calls.constant64(compress.getNodeSize()),
          calls.constant32(compress.getPlacement() == Placement::gpu
                               ? HRT_PLACEMENT_DEVICE
                               : HRT_PLACEMENT_HOST),
          calls.constant64(*nextCompressedSite)};
      // Blocking where the program asks for it; otherwise compressed and
      // communicated on the runtime's communication thread while the
      // program computes, and waited for before the first use.
      LogicalResult lowered =
          blocking ? lowerInPlace(reduce, input, *comm,
                                  "hrt_mlir_compressed_all_reduce", trailing,
                                  calls, rewriter)
                   : lowerStarted(reduce, input, *comm,
                                  "hrt_mlir_compressed_all_reduce_start",
                                  trailing, calls, rewriter);
      if (failed(lowered))
        return failure();
      ++*nextCompressedSite;
      return success();
    }
    if (blocking)
      return lowerInPlace(reduce, input, *comm, "hrt_mlir_all_reduce",
                          {reduction}, calls, rewriter);
    return lowerStarted(reduce, input, *comm, "hrt_mlir_all_reduce_start",
                        {reduction}, calls, rewriter);
  }

private:
  bool blocking;
  /// The number of the next compressed all-reduce of the module: the
  /// runtime keeps the error-feedback residual and random seed of each.
  std::shared_ptr<int64_t> nextCompressedSite;
};

//===----------------------------------------------------------------------===//
// hetero.broadcast, hetero.reduce
//===----------------------------------------------------------------------===//

struct BroadcastLowering : OpConversionPattern<BroadcastOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(BroadcastOp broadcast, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RuntimeCalls calls(broadcast, rewriter);
    FailureOr<Value> comm = calls.group(broadcast);
    if (failed(comm))
      return failure();
    return lowerInPlace(
        broadcast, adaptor.getInput(), *comm, "hrt_mlir_broadcast",
        {calls.constant64(broadcast.getRoot())}, calls, rewriter);
  }
};

struct ReduceLowering : OpConversionPattern<ReduceOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ReduceOp reduce, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RuntimeCalls calls(reduce, rewriter);
    FailureOr<Value> comm = calls.group(reduce);
    if (failed(comm))
      return failure();
    return lowerInPlace(
        reduce, adaptor.getInput(), *comm, "hrt_mlir_reduce",
        {calls.constant32(runtimeReduction(reduce.getReduction())),
         calls.constant64(reduce.getRoot())},
        calls, rewriter);
  }
};

//===----------------------------------------------------------------------===//
// hetero.all_gather, hetero.reduce_scatter, hetero.all_to_all
//===----------------------------------------------------------------------===//

struct AllGatherLowering : OpConversionPattern<AllGatherOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(AllGatherOp gather, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkUncompressed(gather)))
      return failure();
    RuntimeCalls calls(gather, rewriter);
    FailureOr<Value> comm = calls.group(gather);
    if (failed(comm))
      return failure();
    // count is what each rank contributes.
    Value count = calls.constant64(elementCount(gather.getInput().getType()));
    return lowerAlongAxis(gather, gather.getAxis(), adaptor.getInput(), *comm,
                          "hrt_mlir_all_gather", count, {}, calls, rewriter);
  }
};

struct ReduceScatterLowering : OpConversionPattern<ReduceScatterOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ReduceScatterOp scatter, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkUncompressed(scatter)))
      return failure();
    RuntimeCalls calls(scatter, rewriter);
    FailureOr<Value> comm = calls.group(scatter);
    if (failed(comm))
      return failure();
    // count is what each rank receives.
    Value count = calls.constant64(elementCount(scatter.getResult().getType()));
    return lowerAlongAxis(
        scatter, scatter.getAxis(), adaptor.getInput(), *comm,
        "hrt_mlir_reduce_scatter", count,
        {calls.constant32(runtimeReduction(scatter.getReduction()))}, calls,
        rewriter);
  }
};

struct AllToAllLowering : OpConversionPattern<AllToAllOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(AllToAllOp exchange, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkUncompressed(exchange)))
      return failure();
    RuntimeCalls calls(exchange, rewriter);
    FailureOr<Value> comm = calls.group(exchange);
    if (failed(comm))
      return failure();
    // count is per rank pair: the input splits into group-size blocks, as
    // many as the concatenated result holds.
    Value size = calls.call("hrt_mlir_size", {*comm}, calls.i64);
    Value total = calls.constant64(elementCount(exchange.getInput().getType()));
    Value count =
        arith::DivSIOp::create(rewriter, exchange.getLoc(), total, size);
    int64_t split = exchange.getSplitAxis(), concat = exchange.getConcatAxis();
    if (split == concat)
      return lowerAlongAxis(exchange, split, adaptor.getInput(), *comm,
                            "hrt_mlir_all_to_all", count, {}, calls, rewriter);
    return lowerAcrossAxes(exchange, adaptor.getInput(), *comm, count, calls,
                           rewriter);
  }

private:
  /// Splits along one axis and concatenates along another. With the split
  /// axis in front, the runtime's exchange receives the blocks of the
  /// group's ranks one after the other, [P][m][the other dimensions]; the
  /// block index then moves next to the concatenation axis, whose blocks
  /// it joins, and the split axis back to its place.
  LogicalResult lowerAcrossAxes(AllToAllOp exchange, Value input, Value comm,
                                Value count, RuntimeCalls &calls,
                                ConversionPatternRewriter &rewriter) const {
    auto inType = cast<RankedTensorType>(input.getType());
    auto outType = cast<RankedTensorType>(exchange.getResult().getType());
    int64_t split = exchange.getSplitAxis(), concat = exchange.getConcatAxis();
    int64_t rank = inType.getRank();
    if (failed(requireStaticShape(exchange, inType, "input")) ||
        failed(requireStaticShape(exchange, outType, "result")))
      return failure();
    int64_t blocks = inType.getDimSize(split) / outType.getDimSize(split);
    Location loc = exchange.getLoc();
    SmallVector<int64_t> toFront = axisToFront(rank, split);
    Value front = transposeTensor(rewriter, loc, input, toFront);
    FailureOr<Value> received =
        callExchange(exchange, front, cast<RankedTensorType>(front.getType()),
                     comm, "hrt_mlir_all_to_all", count, {}, calls);
    if (failed(received))
      return failure();
    // [P * m, rest] -> [P, m, rest].
    SmallVector<int64_t> byBlock = {blocks, outType.getDimSize(split)};
    SmallVector<ReassociationIndices> split2 = {{0, 1}};
    for (int64_t dim = 1; dim < rank; ++dim) {
      byBlock.push_back(inType.getDimSize(toFront[dim]));
      split2.push_back({dim + 1});
    }
    Value expanded = tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get(byBlock, inType.getElementType()),
        *received, split2);
    // The dimensions of `expanded` in the order of the result, with the
    // block index right before the concatenation axis.
    auto position = [&](int64_t dim) {
      return dim == split ? 1 : 2 + (dim < split ? dim : dim - 1);
    };
    SmallVector<int64_t> order;
    SmallVector<ReassociationIndices> joined;
    for (int64_t dim = 0; dim < rank; ++dim) {
      ReassociationIndices group;
      if (dim == concat) {
        group.push_back(int64_t(order.size()));
        order.push_back(0);
      }
      group.push_back(int64_t(order.size()));
      order.push_back(position(dim));
      joined.push_back(group);
    }
    Value placed = transposeTensor(rewriter, loc, expanded, order);
    rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(exchange, outType,
                                                         placed, joined);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// hetero.send, hetero.recv
//===----------------------------------------------------------------------===//

struct SendLowering : OpConversionPattern<SendOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(SendOp send, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RuntimeCalls calls(send, rewriter);
    FailureOr<Value> comm = calls.group(send);
    FailureOr<int64_t> dtype = dtypeOf(send, send.getInput().getType());
    if (failed(comm) || failed(dtype))
      return failure();
    // The runtime's send is buffered: the tensor's buffer is free again
    // when the call returns.
    auto type = cast<RankedTensorType>(send.getInput().getType());
    Value memref = calls.readOnlyBuffer(adaptor.getInput());
    calls.call("hrt_mlir_send",
               {*comm, calls.pointerOf(memref),
                calls.constant64(type.getNumElements()),
                calls.constant32(*dtype), calls.constant64(send.getPeer()),
                calls.constant64(send.getTag())});
    rewriter.eraseOp(send);
    return success();
  }
};

struct RecvLowering : OpConversionPattern<RecvOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(RecvOp recv, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RuntimeCalls calls(recv, rewriter);
    FailureOr<Value> comm = calls.group(recv);
    FailureOr<int64_t> dtype = dtypeOf(recv, recv.getResult().getType());
    if (failed(comm) || failed(dtype))
      return failure();
    auto type = cast<RankedTensorType>(recv.getResult().getType());
    Value memref = calls.buffer(type);
    calls.call("hrt_mlir_recv",
               {*comm, calls.pointerOf(memref),
                calls.constant64(type.getNumElements()),
                calls.constant32(*dtype), calls.constant64(recv.getPeer()),
                calls.constant64(recv.getTag())});
    rewriter.replaceOp(recv, calls.tensorOf(type, memref));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// hetero.task_mark
//===----------------------------------------------------------------------===//

struct TaskMarkLowering : OpConversionPattern<TaskMarkOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(TaskMarkOp mark, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RuntimeCalls calls(mark, rewriter);
    hrt_timeline_kind kind = mark.getKind() == TaskKind::forward
                                 ? HRT_TIMELINE_FORWARD
                                 : HRT_TIMELINE_BACKWARD;
    // -1: no micro-batch.
    calls.call("hrt_mlir_task_mark",
               {calls.constant32(kind),
                calls.constant64(mark.getMicrobatch().value_or(-1))});
    rewriter.eraseOp(mark);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// shard.process_multi_index, shard.process_linear_index
//===----------------------------------------------------------------------===//

/// The grid coordinates of this rank: the row-major digits of its rank in
/// the whole grid (hrt_mlir_group checks the job's size).
struct ProcessMultiIndexLowering
    : OpConversionPattern<shard::ProcessMultiIndexOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(shard::ProcessMultiIndexOp index, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RuntimeCalls calls(index, rewriter);
    auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
        index, index.getGridAttr());
    FailureOr<Value> comm = calls.group(index, grid, {});
    if (failed(comm))
      return failure();
    ArrayRef<int64_t> shape = grid.getShape();
    Location loc = index.getLoc();
    Value rank = calls.call("hrt_mlir_rank", {*comm}, calls.i64);
    SmallVector<int16_t> axes(index.getAxes());
    if (axes.empty())
      for (int16_t axis = 0; axis < int16_t(shape.size()); ++axis)
        axes.push_back(axis);
    SmallVector<Value> coordinates;
    for (int16_t axis : axes) {
      int64_t stride = 1;
      for (size_t inner = axis + 1; inner < shape.size(); ++inner)
        stride *= shape[inner];
      Value digit =
          arith::DivSIOp::create(rewriter, loc, rank, calls.constant64(stride));
      digit = arith::RemSIOp::create(rewriter, loc, digit,
                                     calls.constant64(shape[axis]));
      coordinates.push_back(arith::IndexCastOp::create(
          rewriter, loc, rewriter.getIndexType(), digit));
    }
    rewriter.replaceOp(index, coordinates);
    return success();
  }
};

/// The rank's row-major index in the grid: its rank in the whole grid's
/// group (hrt_mlir_group checks the job's size, as for the multi-index).
struct ProcessLinearIndexLowering
    : OpConversionPattern<shard::ProcessLinearIndexOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(shard::ProcessLinearIndexOp index, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RuntimeCalls calls(index, rewriter);
    auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
        index, index.getGridAttr());
    FailureOr<Value> comm = calls.group(index, grid, {});
    if (failed(comm))
      return failure();
    Value rank = calls.call("hrt_mlir_rank", {*comm}, calls.i64);
    rewriter.replaceOpWithNewOp<arith::IndexCastOp>(
        index, rewriter.getIndexType(), rank);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// hetero.corpus_batch, hetero.sample_context, hetero.sample_next
//===----------------------------------------------------------------------===//

/// hetero.gemm_mark begin|end|begin_migrated|end_migrated ->
/// hrt_mlir_gemm_mark(0|1|2|3).
struct GemmMarkLowering : OpConversionPattern<GemmMarkOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(GemmMarkOp mark, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RuntimeCalls calls(mark, rewriter);
    calls.call("hrt_mlir_gemm_mark",
               {calls.constant32(runtimeGemmEvent(mark.getEvent()))});
    rewriter.eraseOp(mark);
    return success();
  }
};

/// hetero.observe_weight -> hrt_mlir_observe_weight(layer key, rows,
/// columns, data): the runtime reads the weight in place.
struct ObserveWeightLowering : OpConversionPattern<ObserveWeightOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ObserveWeightOp observe, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RuntimeCalls calls(observe, rewriter);
    Value weight = adaptor.getWeight();
    calls.call("hrt_mlir_observe_weight",
               {calls.layerKey(observe.getLayer(), adaptor.getBlock()),
                calls.constant64(observe.getWeight().getType().getDimSize(0)),
                calls.toI64(tensor::DimOp::create(rewriter, observe.getLoc(),
                                                  weight, 1)),
                calls.pointerOf(calls.readOnlyBuffer(weight))});
    rewriter.eraseOp(observe);
    return success();
  }
};

/// Calls `callee`(layer key, product, bytes, data) of the runtime for a
/// value of static-shaped `type` at `data` (same imputation's store).
static void callWithProduct(RuntimeCalls &calls, StringRef callee,
                            StringRef layer, MatmulProduct product,
                            RankedTensorType type, Value data) {
  int64_t bytes = type.getNumElements() * type.getElementTypeBitWidth() / 8;
  calls.call(callee, {calls.layerKey(layer), calls.constant64(int64_t(product)),
                      calls.constant64(bytes), calls.pointerOf(data)});
}

/// hetero.previous_product -> hrt_mlir_previous_product into a fresh
/// buffer; hetero.keep_product -> hrt_mlir_keep_product, which copies the
/// value from its own buffer.
struct PreviousProductLowering : OpConversionPattern<PreviousProductOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(PreviousProductOp previous, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RuntimeCalls calls(previous, rewriter);
    RankedTensorType type = previous.getResult().getType();
    Value buffer = calls.buffer(type);
    callWithProduct(calls, "hrt_mlir_previous_product", previous.getLayer(),
                    previous.getProduct(), type, buffer);
    rewriter.replaceOp(previous, calls.tensorOf(type, buffer));
    return success();
  }
};
struct KeepProductLowering : OpConversionPattern<KeepProductOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(KeepProductOp keep, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RuntimeCalls calls(keep, rewriter);
    callWithProduct(calls, "hrt_mlir_keep_product", keep.getLayer(),
                    keep.getProduct(), keep.getValue().getType(),
                    calls.readOnlyBuffer(adaptor.getValue()));
    rewriter.eraseOp(keep);
    return success();
  }
};

/// Calls `function`(layer key (of `block`, when given), columns, extra...,
/// buffer) of the runtime,
/// which writes up to `columns` column indices into the buffer and returns
/// how many (a negative count: none), and reads them as a tensor<?xi64>.
/// Returns the tensor and the runtime's answer.
std::pair<Value, Value> readColumns(RuntimeCalls &calls,
                                    ConversionPatternRewriter &rewriter,
                                    Location loc, StringRef function,
                                    StringRef layer, Value block,
                                    int64_t columns, ArrayRef<Value> extra) {
  auto bufferType = RankedTensorType::get({columns}, calls.i64);
  Value buffer = calls.buffer(bufferType);
  SmallVector<Value> arguments = {calls.layerKey(layer, block),
                                  calls.constant64(columns)};
  llvm::append_range(arguments, extra);
  arguments.push_back(calls.pointerOf(buffer));
  Value answer = calls.call(function, arguments, calls.i64);
  Value count =
      arith::MaxSIOp::create(rewriter, loc, answer, calls.constant64(0));
  Value size =
      arith::IndexCastOp::create(rewriter, loc, rewriter.getIndexType(), count);
  Value read = tensor::ExtractSliceOp::create(
      rewriter, loc, calls.tensorOf(bufferType, buffer),
      ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{size},
      ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)});
  return {read, answer};
}

/// The i64 indices `read` as a 1-D tensor of `type`.
Value castIndices(ConversionPatternRewriter &rewriter, Location loc, Value read,
                  RankedTensorType type) {
  Type element = type.getElementType();
  auto dynamic = RankedTensorType::get({ShapedType::kDynamic}, element);
  if (element.isIndex())
    read = arith::IndexCastOp::create(rewriter, loc, dynamic, read);
  else if (element.getIntOrFloatBitWidth() < 64)
    read = arith::TruncIOp::create(rewriter, loc, dynamic, read);
  else if (element.getIntOrFloatBitWidth() > 64)
    read = arith::ExtSIOp::create(rewriter, loc, dynamic, read);
  if (read.getType() != type)
    read = tensor::CastOp::create(rewriter, loc, type, read);
  return read;
}

/// hetero.prune_plan: the runtime writes the kept columns into a buffer of
/// `columns` and says how many; the plan is their prefix.
struct PrunePlanLowering : OpConversionPattern<PrunePlanOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(PrunePlanOp plan, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RuntimeCalls calls(plan, rewriter);
    Value kept =
        readColumns(calls, rewriter, plan.getLoc(), "hrt_mlir_prune_plan",
                    plan.getLayer(), adaptor.getBlock(), plan.getColumns(), {})
            .first;
    rewriter.replaceOp(plan, castIndices(rewriter, plan.getLoc(), kept,
                                         plan.getKept().getType()));
    return success();
  }
};

/// hetero.migration_plan: the runtime writes the received columns into a
/// buffer of `columns` and returns how many, or -1 when the source
/// migrates none of the layer's columns.
struct MigrationPlanLowering : OpConversionPattern<MigrationPlanOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(MigrationPlanOp plan, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RuntimeCalls calls(plan, rewriter);
    Location loc = plan.getLoc();
    auto [received, answer] =
        readColumns(calls, rewriter, loc, "hrt_mlir_migration_plan",
                    plan.getLayer(), adaptor.getBlock(), plan.getColumns(),
                    {calls.toI64(adaptor.getSource())});
    Value migrates = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::sge, answer, calls.constant64(0));
    rewriter.replaceOp(plan, {castIndices(rewriter, loc, received,
                                          plan.getReceived().getType()),
                              migrates});
    return success();
  }
};

/// hetero.migrated_columns: the runtime writes the source's migrated
/// columns into a buffer of `columns`, returns how many, and writes where
/// this rank's block starts into a one-element buffer.
struct MigratedColumnsLowering : OpConversionPattern<MigratedColumnsOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(MigratedColumnsOp migrated, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RuntimeCalls calls(migrated, rewriter);
    Location loc = migrated.getLoc();
    Value firstBuffer = calls.buffer(RankedTensorType::get({1}, calls.i64));
    Value columns =
        readColumns(
            calls, rewriter, loc, "hrt_mlir_migrated_columns",
            migrated.getLayer(), adaptor.getBlock(), migrated.getColumns(),
            {calls.toI64(adaptor.getSource()), calls.pointerOf(firstBuffer)})
            .first;
    Value first = memref::LoadOp::create(
        rewriter, loc, firstBuffer,
        ValueRange{arith::ConstantIndexOp::create(rewriter, loc, 0)});
    rewriter.replaceOp(
        migrated,
        {castIndices(rewriter, loc, columns, migrated.getMigrated().getType()),
         arith::IndexCastOp::create(rewriter, loc, rewriter.getIndexType(),
                                    first)});
    return success();
  }
};

struct CorpusBatchLowering : OpConversionPattern<CorpusBatchOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(CorpusBatchOp batch, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RuntimeCalls calls(batch, rewriter);
    RankedTensorType type = batch.getInput().getType();
    Value input = calls.buffer(type);
    Value target = calls.buffer(type);
    calls.call("hrt_mlir_corpus_batch",
               {calls.pointerOf(input), calls.pointerOf(target),
                calls.constant64(type.getDimSize(0)),
                calls.constant64(type.getDimSize(1)), adaptor.getStep(),
                adaptor.getReplica(), adaptor.getMicrobatch(),
                calls.constant64(batch.getVocab()),
                calls.constant64(batch.getReplicas())});
    rewriter.replaceOp(
        batch, {calls.tensorOf(type, input), calls.tensorOf(type, target)});
    return success();
  }
};

struct SampleContextLowering : OpConversionPattern<SampleContextOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(SampleContextOp sample, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RuntimeCalls calls(sample, rewriter);
    RankedTensorType type = sample.getContext().getType();
    Value context = calls.buffer(type);
    calls.call("hrt_mlir_sample_context",
               {calls.pointerOf(context), calls.constant64(type.getDimSize(0)),
                calls.constant64(type.getDimSize(1)),
                calls.constant64(sample.getVocab())});
    rewriter.replaceOp(sample, calls.tensorOf(type, context));
    return success();
  }
};

struct SampleNextLowering : OpConversionPattern<SampleNextOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(SampleNextOp sample, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RuntimeCalls calls(sample, rewriter);
    RankedTensorType type = sample.getLogits().getType();
    Value logits = calls.buffer(type, adaptor.getLogits());
    rewriter.replaceOp(sample,
                       calls.call("hrt_mlir_sample_next",
                                  {calls.pointerOf(logits),
                                   calls.constant64(type.getDimSize(0)),
                                   calls.constant64(type.getDimSize(1))},
                                  rewriter.getF32Type()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// hetero.group_sync
//===----------------------------------------------------------------------===//

/// hrt_mlir_sync_ready's policy argument.
static int64_t runtimeSyncPolicy(SyncPolicy policy) {
  switch (policy) {
  case SyncPolicy::allreduce:
    return 0;
  case SyncPolicy::dynamic:
    return 1;
  }
  llvm_unreachable("unknown hetero::SyncPolicy");
}

/// READY to the runtime, which returns once this rank's group is known, then
/// one in-place average per parameter. With one replica there is nothing to
/// average.
struct GroupSyncLowering : OpConversionPattern<GroupSyncOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(GroupSyncOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
        op, op.getGridAttr());
    if (!grid || !isRuntimeGrid(grid) || grid.getShape().size() > 2)
      return op.emitOpError() << "needs a static (stage[, replica]) grid to "
                                 "be lowered to the runtime";
    ArrayRef<int64_t> shape = grid.getShape();
    int64_t stages = shape[0], replicas = shape.size() > 1 ? shape[1] : 1;
    if (replicas == 1) {
      rewriter.replaceOp(op, adaptor.getParams());
      return success();
    }
    RuntimeCalls calls(op, rewriter);
    SyncAttr sync = op.getSync();
    double window = sync.getWindow() ? sync.getWindow().getValueAsDouble() : -1;
    Value windowValue = arith::ConstantFloatOp::create(
        rewriter, op.getLoc(), rewriter.getF64Type(), llvm::APFloat(window));
    calls.call(
        "hrt_mlir_sync_ready",
        {calls.constant64(stages), calls.constant64(replicas),
         calls.constant32(runtimeSyncPolicy(sync.getPolicy())),
         calls.constant64(sync.getPeriod()),
         calls.constant32(sync.getSemantics() == SyncSemantics::periodic),
         calls.constant32(sync.getLock()), windowValue},
        calls.i64);
    SmallVector<Value> results;
    for (Value param : adaptor.getParams()) {
      FailureOr<int64_t> dtype = dtypeOf(op, param.getType());
      if (failed(dtype))
        return failure();
      auto type = cast<RankedTensorType>(param.getType());
      Value memref = calls.buffer(type, param);
      calls.call("hrt_mlir_sync_average",
                 {calls.pointerOf(memref),
                  calls.constant64(type.getNumElements()),
                  calls.constant32(*dtype)});
      results.push_back(calls.tensorOf(type, memref));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// hetero.checkpoint, hetero.ckpt_chunk, hetero.ckpt_commit
//===----------------------------------------------------------------------===//

/// The global memref that holds a checkpointed tensor: the runtime copies it
/// out, and restores a recovered checkpoint into it.
FailureOr<Value> stateBuffer(Operation *op, Value tensor) {
  auto toTensor = tensor.getDefiningOp<bufferization::ToTensorOp>();
  if (toTensor && toTensor.getBuffer().getDefiningOp<memref::GetGlobalOp>())
    return toTensor.getBuffer();
  return op->emitOpError()
         << "checkpoints a tensor that is not read from a memref.global; "
            "training state lives in globals, which a recovered checkpoint "
            "is restored into";
}

struct CheckpointLowering : OpConversionPattern<CheckpointOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(CheckpointOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    bool committed = false;
    for (Operation *after = op->getNextNode(); after && !committed;
         after = after->getNextNode())
      committed = isa<CkptCommitOp>(after);
    if (!committed)
      return op.emitOpError()
             << "has no hetero.ckpt_commit: place its chunks with "
                "hetero-interleave-checkpoints before lowering to the runtime";
    RuntimeCalls calls(op, rewriter);
    SmallVector<Value> buffers;
    for (Value tensor : op.getTensors()) {
      FailureOr<Value> buffer = stateBuffer(op, tensor);
      if (failed(buffer))
        return failure();
      buffers.push_back(*buffer);
    }
    calls.call("hrt_mlir_ckpt_begin",
               {adaptor.getIteration(), calls.constant64(op.getReplicas()),
                calls.constant64(op.getWorld()),
                calls.constant32(runtimePlacement(op.getPlacement())),
                calls.constant64(op.getEvery()),
                calls.constant64(op.getTensors().size())});
    for (auto [tensor, buffer] : llvm::zip(op.getTensors(), buffers))
      calls.call("hrt_mlir_ckpt_tensor",
                 {calls.pointerOf(buffer),
                  calls.constant64(tensorBytes(tensor.getType()))});
    rewriter.eraseOp(op);
    return success();
  }
};

struct CkptChunkLowering : OpConversionPattern<CkptChunkOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(CkptChunkOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<Value> buffer = stateBuffer(op, op.getTensor());
    if (failed(buffer))
      return failure();
    RuntimeCalls calls(op, rewriter);
    calls.call("hrt_mlir_ckpt_chunk",
               {calls.pointerOf(*buffer), calls.constant64(op.getOffset()),
                calls.constant64(op.getBytes()),
                calls.constant64(op.getCopy())});
    rewriter.eraseOp(op);
    return success();
  }
};

struct CkptCommitLowering : OpConversionPattern<CkptCommitOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(CkptCommitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RuntimeCalls(op, rewriter).call("hrt_mlir_ckpt_commit", {});
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void hetero::populateHeteroToRuntimeConversionPatterns(
    RewritePatternSet &patterns, const RuntimeLoweringOptions &options) {
  MLIRContext *context = patterns.getContext();
  // The dialects of the ops the patterns create (a no-op inside the pass,
  // which declares them).
  context->loadDialect<arith::ArithDialect, bufferization::BufferizationDialect,
                       func::FuncDialect, LLVM::LLVMDialect,
                       memref::MemRefDialect, tensor::TensorDialect>();
  patterns.add<AllReduceLowering>(context, options.blockingCollectives,
                                  std::make_shared<int64_t>(0));
  patterns
      .add<BucketLowering, BroadcastLowering, ReduceLowering, AllGatherLowering,
           ReduceScatterLowering, AllToAllLowering, SendLowering, RecvLowering,
           TaskMarkLowering, ProcessMultiIndexLowering,
           ProcessLinearIndexLowering, PrunePlanLowering, MigrationPlanLowering,
           MigratedColumnsLowering, GemmMarkLowering, ObserveWeightLowering,
           PreviousProductLowering, KeepProductLowering, CorpusBatchLowering,
           SampleContextLowering, SampleNextLowering, GroupSyncLowering,
           CheckpointLowering, CkptChunkLowering, CkptCommitLowering>(context);
}

void hetero::configureHeteroToRuntimeTarget(ConversionTarget &target) {
  // What the patterns create.
  target.addLegalDialect<arith::ArithDialect,
                         bufferization::BufferizationDialect, func::FuncDialect,
                         linalg::LinalgDialect, LLVM::LLVMDialect,
                         memref::MemRefDialect, tensor::TensorDialect>();
  target.addIllegalDialect<HeteroDialect>();
  target
      .addLegalOp<PipelineOp, StageOp, StageVariantOp, ScheduleOp, PlanSetOp>();
  // A schedule's tasks are data, whatever their kind.
  target.markOpRecursivelyLegal<ScheduleOp>();
  target
      .addIllegalOp<shard::ProcessMultiIndexOp, shard::ProcessLinearIndexOp>();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {

struct HeteroLowerToRuntimePass
    : public hetero::impl::HeteroLowerToRuntimeBase<HeteroLowerToRuntimePass> {
  using Base::Base;

  void runOnOperation() override;
  void createGroupsOnEntry(ModuleOp module);
};

/// Creating a grid's groups is collective over the world, and ranks of
/// different stages reach their first collective at different points of
/// their programs. So a function every rank of a grid calls (a compiled
/// training step, `hetero.grid`) creates the groups of every grid of the
/// module on entry, in module order, on every rank alike.
void HeteroLowerToRuntimePass::createGroupsOnEntry(ModuleOp module) {
  SmallVector<shard::GridOp> grids;
  for (auto grid : module.getOps<shard::GridOp>())
    if (isRuntimeGrid(grid))
      grids.push_back(grid);
  if (grids.empty())
    return;
  auto gridOf = getHeteroDialect(module.getContext()).getGridAttrHelper();
  // Grids of another size than the step's cannot cover the job.
  auto devices = [](shard::GridOp grid) {
    return ShapedType::getNumElements(grid.getShape());
  };
  IRRewriter rewriter(module.getContext());
  for (auto function : module.getOps<func::FuncOp>()) {
    FlatSymbolRefAttr gridName = gridOf.getAttr(function);
    if (function.isDeclaration() || !gridName)
      continue;
    auto own =
        SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(function, gridName);
    if (!own)
      continue;
    rewriter.setInsertionPointToStart(&function.front());
    RuntimeCalls calls(function, rewriter);
    // The grids are runtime grids, so creating their groups cannot fail.
    for (shard::GridOp grid : grids)
      if (devices(grid) == devices(own))
        (void)calls.group(function, grid, {});
  }
}

void HeteroLowerToRuntimePass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *context = &getContext();
  ConversionTarget target(*context);
  configureHeteroToRuntimeTarget(target);
  // Whether the module has anything to lower: only then do steps create the
  // groups of the module's grids.
  bool communicates = module
                          .walk([&](Operation *op) {
                            return target.isIllegal(op)
                                       ? WalkResult::interrupt()
                                       : WalkResult::advance();
                          })
                          .wasInterrupted();

  RewritePatternSet patterns(context);
  populateHeteroToRuntimeConversionPatterns(patterns, {blockingCollectives});
  // A pattern that rejects its op says why; the driver's "failed to
  // legalize" that follows would only repeat it. Ops without a pattern get
  // the driver's message alone.
  bool explained = false;
  ScopedDiagnosticHandler handler(context, [&](Diagnostic &diagnostic) {
    if (diagnostic.getSeverity() != DiagnosticSeverity::Error)
      return failure();
    if (explained &&
        StringRef(diagnostic.str()).starts_with("failed to legalize"))
      return success();
    explained = true;
    return failure();
  });
  if (failed(applyPartialConversion(module, target, std::move(patterns))))
    return signalPassFailure();

  if (communicates)
    createGroupsOnEntry(module);

  // The module now holds only functions.
  for (Operation &op : llvm::make_early_inc_range(module.getOps()))
    if (isa<shard::GridOp, PipelineOp, ScheduleOp, PlanSetOp>(op))
      op.erase();
}

} // namespace
