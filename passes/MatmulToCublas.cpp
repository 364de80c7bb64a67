//===- MatmulToCublas.cpp - f32 matmuls on buffers as cuBLAS calls --------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The GEMMs of a step are the work a GPU is bought for; generated kernels
// keep the element-wise and reduction work, and the f32 matmuls go to
// cuBLAS through libhetero_rt_cuda's hrt_cuda_sgemm (include/hetero-rt/
// gpu.h). A matmul qualifies when its buffers are f32 with unit stride
// along their rows (cuBLAS takes a leading dimension, not a column stride)
// and it has the default indexing maps. A zero fill of the output right
// before the product becomes cuBLAS's beta = 0.
//
//===----------------------------------------------------------------------===//

#include "GpuRuntime.h"
#include "hetero/Passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"

namespace hetero {
#define GEN_PASS_DEF_HETEROMATMULTOCUBLAS
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;

namespace {

constexpr StringLiteral kSgemm = "hrt_cuda_sgemm";

/// Whether `value` is an f32 2-d buffer with unit stride along its rows.
bool rowContiguousF32(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type || type.getRank() != 2 || !type.getElementType().isF32())
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return false;
  return strides[1] == 1;
}

/// Whether `matmul` can be one sgemm.
bool qualifies(linalg::MatmulOp matmul) {
  if (!matmul.hasPureBufferSemantics() || matmul.hasUserDefinedMaps() ||
      matmul.getInputs().size() != 2 || matmul.getOutputs().size() != 1)
    return false;
  return llvm::all_of(matmul->getOperands(), rowContiguousF32);
}

/// The i64 and pointer values one operand of the call needs.
struct Matrix {
  Value address; // !llvm.ptr to the first element
  Value rows, columns, rowStride;
};

Matrix matrixOf(OpBuilder &b, Location loc, Value memref) {
  hetero::StridedLayout layout = hetero::stridedLayoutOf(b, loc, memref);
  Type i64 = b.getI64Type();
  auto asI64 = [&](OpFoldResult value) -> Value {
    if (std::optional<int64_t> known = getConstantIntValue(value))
      return arith::ConstantIntOp::create(b, loc, i64, *known);
    return arith::IndexCastOp::create(b, loc, i64, cast<Value>(value));
  };
  Value start = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  // The aligned pointer is the base buffer's; the view starts `offset`
  // elements (of 4 bytes) further.
  if (getConstantIntValue(layout.offset) != 0) {
    Value bytes = arith::MulIOp::create(
        b, loc, getValueOrCreateConstantIndexOp(b, loc, layout.offset),
        arith::ConstantIndexOp::create(b, loc, 4));
    start = arith::AddIOp::create(b, loc, start, bytes);
  }
  Value address = LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), asI64(start));
  Value rows = asI64(layout.sizes[0]);
  Value columns = asI64(layout.sizes[1]);
  return {address, rows, columns, asI64(layout.strides[0])};
}

/// The linalg.fill of 0.0 into `matmul`'s output that immediately precedes
/// it, if there is one.
linalg::FillOp zeroFillOf(linalg::MatmulOp matmul) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(matmul->getPrevNode());
  if (!fill || !fill.hasPureBufferSemantics() ||
      fill.getOutputs()[0] != matmul.getOutputs()[0])
    return {};
  FloatAttr value;
  if (!matchPattern(fill.getInputs()[0], m_Constant(&value)) ||
      !value.getValue().isPosZero())
    return {};
  return fill;
}

struct MatmulToCublasPass
    : hetero::impl::HeteroMatmulToCublasBase<MatmulToCublasPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::MatmulOp> matmuls;
    module.walk([&](linalg::MatmulOp matmul) {
      if (qualifies(matmul))
        matmuls.push_back(matmul);
    });
    if (matmuls.empty())
      return;
    MLIRContext *context = &getContext();
    Type i64 = IntegerType::get(context, 64);
    Type pointer = LLVM::LLVMPointerType::get(context);
    Type f32 = Float32Type::get(context);
    FunctionType sgemmType = FunctionType::get(
        context, {i64, i64, i64, pointer, i64, pointer, i64, f32, pointer, i64},
        {});
    func::FuncOp sgemm =
        hetero::declareGpuRuntime(module, kSgemm, sgemmType, getArgument());
    if (!sgemm)
      return signalPassFailure();
    for (linalg::MatmulOp matmul : matmuls) {
      // A zero fill of C just before the product is cuBLAS's beta = 0:
      // one pass over C fewer, and no kernel launch.
      linalg::FillOp zeroFill = zeroFillOf(matmul);
      OpBuilder b(matmul);
      Location loc = matmul.getLoc();
      Matrix a = matrixOf(b, loc, matmul.getInputs()[0]);
      Matrix bMatrix = matrixOf(b, loc, matmul.getInputs()[1]);
      Matrix c = matrixOf(b, loc, matmul.getOutputs()[0]);
      Value beta = arith::ConstantOp::create(
          b, loc, b.getF32FloatAttr(zeroFill ? 0.0f : 1.0f));
      func::CallOp::create(b, loc, sgemm,
                           ValueRange{a.rows, c.columns, a.columns, a.address,
                                      a.rowStride, bMatrix.address,
                                      bMatrix.rowStride, beta, c.address,
                                      c.rowStride});
      matmul.erase();
      if (zeroFill)
        zeroFill.erase();
    }
  }
};

} // namespace
