//===- ConvertToLLVM.cpp - the LLVM dialect in one conversion -------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// After bufferization and the loop lowering, a module holds func, arith,
// math, index, cf, memref and ub ops. Their upstream lowerings run here as
// one dialect conversion: each op of a large training step is visited once
// instead of once per dialect's pass. The math functions that LLVM has no
// intrinsic for (erf, the inverse and hyperbolic trigonometry) become calls
// of the C library first, except a float32 erf, which becomes upstream's
// polynomial approximation.
//
//===----------------------------------------------------------------------===//

#include "hetero/Passes/Passes.h"

#include "mlir/Analysis/DataLayoutAnalysis.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/LoweringOptions.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace hetero {
#define GEN_PASS_DEF_HETEROCONVERTTOLLVM
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;

namespace {

struct HeteroConvertToLLVMPass
    : public hetero::impl::HeteroConvertToLLVMBase<HeteroConvertToLLVMPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    // A float32 erf (the exact GELU of an imported model) as the upstream
    // polynomial approximation, inline code that the loop vectoriser
    // widens, where a call of the C library's erff stays one element at a
    // time.
    SmallVector<Operation *> approximated;
    module.walk([&](math::ErfOp op) {
      if (op.getType().isF32())
        approximated.push_back(op);
    });
    if (!approximated.empty()) {
      RewritePatternSet approximations(context);
      populatePolynomialApproximateErfPattern(approximations);
      if (failed(
              applyOpPatternsGreedily(approximated, std::move(approximations))))
        return signalPassFailure();
    }
    // Calls of the C library for the math functions without an LLVM
    // intrinsic; the others stay intrinsics, which the vectorisers widen.
    SmallVector<Operation *> library;
    module.walk([&](Operation *op) {
      if (isa<math::ErfOp, math::ErfcOp, math::TanOp, math::AtanOp,
              math::Atan2Op, math::SinhOp, math::CoshOp, math::AsinOp,
              math::AcosOp, math::AsinhOp, math::AcoshOp, math::AtanhOp,
              math::CbrtOp>(op))
        library.push_back(op);
    });
    if (!library.empty()) {
      RewritePatternSet calls(context);
      populateMathToLibmConversionPatterns(calls);
      if (failed(applyOpPatternsGreedily(library, std::move(calls))))
        return signalPassFailure();
    }
    const auto &dataLayout = getAnalysis<DataLayoutAnalysis>();
    LowerToLLVMOptions options(context, dataLayout.getAtOrAbove(module));
    // aligned_alloc's pointer is the buffer's: with malloc's, the aligned
    // pointer is computed through an integer, alias analysis loses track of
    // which allocation a store writes, and a reduction's accumulator is
    // stored at every step instead of once after its loop.
    options.allocLowering = LowerToLLVMOptions::AllocLowering::AlignedAlloc;
    // Through libhetero_rt's allocator (include/hetero-rt/memory.h), which
    // hands a step the buffers it freed in the previous iteration.
    options.useGenericFunctions = runtimeAllocator;
    LLVMTypeConverter converter(context, options, &dataLayout);

    SymbolTableCollection symbolTables;
    RewritePatternSet patterns(context);
    populateFuncToLLVMConversionPatterns(converter, patterns, &symbolTables);
    populateFinalizeMemRefToLLVMConversionPatterns(converter, patterns,
                                                   &symbolTables);
    arith::populateArithToLLVMConversionPatterns(converter, patterns);
    cf::populateControlFlowToLLVMConversionPatterns(converter, patterns);
    cf::populateAssertToLLVMConversionPattern(
        converter, patterns, /*abortOnFailure=*/true, &symbolTables);
    index::populateIndexToLLVMConversionPatterns(converter, patterns);
    populateMathToLLVMConversionPatterns(converter, patterns);
    ub::populateUBToLLVMConversionPatterns(converter, patterns);

    LLVMConversionTarget target(*context);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
