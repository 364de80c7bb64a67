//===- Gemm.cpp - linalg products on buffers as BLAS GEMMs ----------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "Gemm.h"
#include "RuntimeCalls.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

/// The result of `map` that is loop `loop`, if there is one.
static std::optional<unsigned> positionOf(AffineMap map, unsigned loop) {
  for (auto [position, result] : llvm::enumerate(map.getResults()))
    if (auto dim = dyn_cast<AffineDimExpr>(result))
      if (dim.getPosition() == loop)
        return unsigned(position);
  return std::nullopt;
}

/// Whether `map` reads exactly the loops `loops` (each once, no constants).
static bool readsExactly(AffineMap map, ArrayRef<unsigned> loops) {
  if (map.getNumResults() != loops.size())
    return false;
  return llvm::all_of(
      loops, [&](unsigned loop) { return positionOf(map, loop).has_value(); });
}

/// Whether `value` is a buffer of f32 elements.
static bool isF32Buffer(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  return type && type.getElementType().isF32();
}

/// The static strides of `buffer`'s type (dynamic ones as kDynamic).
static SmallVector<int64_t> stridesOf(Value buffer) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(cast<MemRefType>(buffer.getType())
                 .getStridesAndOffset(strides, offset)))
    strides.clear();
  return strides;
}

/// The operand `buffer` read through `map` as a matrix of rows `rows` and
/// columns `columns` (loops), batched along `batch`; nullopt when neither
/// dimension has unit stride.
static std::optional<hetero::GemmOperand>
operandOf(Value buffer, AffineMap map, unsigned rows, unsigned columns,
          std::optional<unsigned> batch) {
  SmallVector<int64_t> strides = stridesOf(buffer);
  if (strides.empty())
    return std::nullopt;
  hetero::GemmOperand operand;
  operand.buffer = buffer;
  operand.rowDim = *positionOf(map, rows);
  operand.columnDim = *positionOf(map, columns);
  if (batch)
    operand.batchDim = positionOf(map, *batch);
  if (strides[operand.columnDim] == 1)
    operand.transposed = false;
  else if (strides[operand.rowDim] == 1)
    operand.transposed = true;
  else
    return std::nullopt;
  return operand;
}

/// The linalg.fill of 0.0 into `op`'s output that immediately precedes it.
static linalg::FillOp zeroFillOf(linalg::LinalgOp op) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode());
  if (!fill || !fill.hasPureBufferSemantics() ||
      fill.getOutputs()[0] != op.getDpsInits()[0])
    return {};
  FloatAttr value;
  if (!matchPattern(fill.getInputs()[0], m_Constant(&value)) ||
      !value.getValue().isPosZero())
    return {};
  return fill;
}

std::optional<hetero::Gemm> hetero::matchGemm(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !llvm::all_of(op->getOperands(), isF32Buffer))
    return std::nullopt;
  if (!linalg::isaContractionOpInterface(op))
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 ||
      dims->k.size() != 1 || dims->batch.size() > 1)
    return std::nullopt;
  std::optional<unsigned> batch;
  if (!dims->batch.empty())
    batch = dims->batch.front();
  unsigned m = dims->m.front(), n = dims->n.front(), k = dims->k.front();
  if (op.getNumLoops() != (batch ? 4u : 3u))
    return std::nullopt;

  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  auto withBatch = [&](SmallVector<unsigned> loops) {
    if (batch)
      loops.push_back(*batch);
    return loops;
  };
  if (!readsExactly(maps[0], withBatch({m, k})) ||
      !readsExactly(maps[1], withBatch({k, n})) ||
      !readsExactly(maps[2], withBatch({m, n})))
    return std::nullopt;

  Value lhs = op.getDpsInputs()[0], rhs = op.getDpsInputs()[1],
        out = op.getDpsInits()[0];
  SmallVector<int64_t> outStrides = stridesOf(out);
  if (outStrides.empty())
    return std::nullopt;
  // C must be row-major; a C stored column by column is the row-major C^T,
  // computed as B^T A^T.
  bool swap = outStrides[*positionOf(maps[2], n)] != 1;
  if (swap) {
    std::swap(lhs, rhs);
    std::swap(maps[0], maps[1]);
    std::swap(m, n);
  }
  std::optional<GemmOperand> a = operandOf(lhs, maps[0], m, k, batch);
  std::optional<GemmOperand> b = operandOf(rhs, maps[1], k, n, batch);
  std::optional<GemmOperand> c = operandOf(out, maps[2], m, n, batch);
  if (!a || !b || !c || c->transposed)
    return std::nullopt;
  Gemm gemm;
  gemm.op = op;
  gemm.a = *a;
  gemm.b = *b;
  gemm.c = *c;
  gemm.m = m;
  gemm.n = n;
  gemm.k = k;
  gemm.batch = batch;
  gemm.zeroFill = zeroFillOf(op);
  return gemm;
}

/// `value` (an index or a constant) as an i64 value.
static Value asI64(OpBuilder &b, Location loc, OpFoldResult value) {
  Type i64 = b.getI64Type();
  if (std::optional<int64_t> known = getConstantIntValue(value))
    return arith::ConstantIntOp::create(b, loc, i64, *known);
  return arith::IndexCastOp::create(b, loc, i64, cast<Value>(value));
}

hetero::GemmArguments hetero::buildGemmArguments(OpBuilder &b, Location loc,
                                                 const GemmOperand &operand) {
  StridedLayout layout = stridedLayoutOf(b, loc, operand.buffer);
  Value start =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, operand.buffer);
  // The aligned pointer is the base buffer's; the view starts `offset`
  // elements (of 4 bytes) further.
  if (getConstantIntValue(layout.offset) != 0) {
    Value bytes = arith::MulIOp::create(
        b, loc, getValueOrCreateConstantIndexOp(b, loc, layout.offset),
        arith::ConstantIndexOp::create(b, loc, 4));
    start = arith::AddIOp::create(b, loc, start, bytes);
  }
  GemmArguments arguments;
  arguments.address = LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), asI64(b, loc, start));
  arguments.leading = asI64(
      b, loc,
      layout.strides[operand.transposed ? operand.columnDim : operand.rowDim]);
  arguments.batchStride = operand.batchDim
                              ? asI64(b, loc, layout.strides[*operand.batchDim])
                              : asI64(b, loc, b.getIndexAttr(0));
  return arguments;
}

Value hetero::buildGemmExtent(OpBuilder &b, Location loc, const Gemm &gemm,
                              unsigned loop) {
  linalg::LinalgOp op = gemm.op;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    std::optional<unsigned> position = positionOf(map, loop);
    if (!position)
      continue;
    auto type = cast<MemRefType>(operand.get().getType());
    if (!type.isDynamicDim(*position))
      return asI64(b, loc, b.getIndexAttr(type.getDimSize(*position)));
    Value size = memref::DimOp::create(b, loc, operand.get(), *position);
    return asI64(b, loc, size);
  }
  llvm_unreachable("every loop of a GEMM is read by an operand");
}

/// The call's arguments in the runtime's GEMM ABI (hetero-rt/blas.h):
/// (batch, transpose_a, transpose_b, m, n, k, a, lda, stride_a, b, ldb,
/// stride_b, beta, c, ldc, stride_c).
static SmallVector<Value> buildGemmCallArguments(OpBuilder &b, Location loc,
                                                 const hetero::Gemm &gemm,
                                                 Value beta) {
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), value);
  };
  Value batch = gemm.batch ? hetero::buildGemmExtent(b, loc, gemm, *gemm.batch)
                           : constant(1);
  Value m = hetero::buildGemmExtent(b, loc, gemm, gemm.m);
  Value n = hetero::buildGemmExtent(b, loc, gemm, gemm.n);
  Value k = hetero::buildGemmExtent(b, loc, gemm, gemm.k);
  hetero::GemmArguments lhs = hetero::buildGemmArguments(b, loc, gemm.a);
  hetero::GemmArguments rhs = hetero::buildGemmArguments(b, loc, gemm.b);
  hetero::GemmArguments out = hetero::buildGemmArguments(b, loc, gemm.c);
  return {batch,
          constant(gemm.a.transposed),
          constant(gemm.b.transposed),
          m,
          n,
          k,
          lhs.address,
          lhs.leading,
          lhs.batchStride,
          rhs.address,
          rhs.leading,
          rhs.batchStride,
          beta,
          out.address,
          out.leading,
          out.batchStride};
}

LogicalResult hetero::replaceGemmsWithCalls(ModuleOp module, StringRef callee,
                                            StringRef pass) {
  SmallVector<Gemm> gemms;
  module.walk([&](linalg::LinalgOp op) {
    if (std::optional<Gemm> gemm = matchGemm(op))
      gemms.push_back(*gemm);
  });
  if (gemms.empty())
    return success();
  MLIRContext *context = module.getContext();
  Type i64 = IntegerType::get(context, 64);
  Type pointer = LLVM::LLVMPointerType::get(context);
  Type f32 = Float32Type::get(context);
  auto type =
      FunctionType::get(context,
                        {i64, i64, i64, i64, i64, i64, pointer, i64, i64,
                         pointer, i64, i64, f32, pointer, i64, i64},
                        {});
  func::FuncOp function = declareRuntimeFunction(module, callee, type, pass);
  if (!function)
    return failure();
  for (const Gemm &gemm : gemms) {
    Operation *op = gemm.op;
    OpBuilder b(op);
    Location loc = op->getLoc();
    // A zero fill of C just before the product is beta = 0: one pass over
    // C fewer (and, on a GPU, one launch fewer).
    Value beta = arith::ConstantOp::create(
        b, loc, b.getF32FloatAttr(gemm.zeroFill ? 0.0f : 1.0f));
    func::CallOp::create(b, loc, function,
                         buildGemmCallArguments(b, loc, gemm, beta));
    op->erase();
    if (linalg::FillOp fill = gemm.zeroFill)
      fill.erase();
  }
  return success();
}
