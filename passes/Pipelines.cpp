//===- Pipelines.cpp - hetero pass pipelines ------------------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The CPU and GPU pipelines, built from pass constructors. Passes that work
// on one function at a time are nested on func.func, so that the pass
// manager runs them on the module's functions in parallel and each sees one
// function's IR only (the step of a large model is many functions of
// moderate size, not one large one).
//
//===----------------------------------------------------------------------===//

#include "hetero/Passes/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/ErrorHandling.h"

#include <cstdlib>

using namespace mlir;

/// The structured-op prefix the CPU and GPU pipelines share: hetero's own
/// passes, then bufferization with ownership-based deallocation.
static void addHeteroAndBufferization(OpPassManager &pm,
                                      bool blockingCollectives) {
  pm.addPass(hetero::createHeteroPrunableToLinalg());
  pm.addPass(createCanonicalizerPass());
  hetero::HeteroLowerToRuntimeOptions lowering;
  lowering.blockingCollectives = blockingCollectives;
  pm.addPass(hetero::createHeteroLowerToRuntime(lowering));

  // Tensors to buffers across function boundaries, with plain row-major
  // layouts at the boundaries so that the runtime's ABI stays fixed.
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // Results that are their arguments updated in place (the gradient sums
  // of a backward task) are not returned, so no one deallocates them.
  pm.addPass(bufferization::createDropEquivalentBufferResultsPass());

  // The buffer-deallocation pipeline, with its per-function passes nested:
  // the deallocation helper the lowering may need is a module-level symbol.
  OpPassManager &deallocation = pm.nest<func::FuncOp>();
  deallocation.addPass(
      bufferization::createOwnershipBasedBufferDeallocationPass());
  deallocation.addPass(createCanonicalizerPass());
  deallocation.addPass(
      bufferization::createBufferDeallocationSimplificationPass());
  pm.addPass(bufferization::createLowerDeallocationsPass());
  OpPassManager &cleanup = pm.nest<func::FuncOp>();
  cleanup.addPass(createCSEPass());
  cleanup.addPass(createCanonicalizerPass());
  pm.addPass(createConvertBufferizationToMemRefPass());
}

LogicalResult
hetero::buildLowerToCpuPipeline(OpPassManager &pm,
                                const CpuPipelineOptions &options) {
  addHeteroAndBufferization(pm, options.blockingCollectives);
  // Loops and control flow, one function at a time.
  OpPassManager &loops = pm.nest<func::FuncOp>();
  loops.addPass(createConvertLinalgToLoopsPass());
  loops.addPass(memref::createExpandStridedMetadataPass());
  loops.addPass(createLowerAffinePass());
  loops.addPass(createSCFToControlFlowPass());
  // The LLVM dialect.
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  return success();
}

/// gpu-module-to-binary finds libdevice (for math functions in kernels) and
/// ptxas through the CUDA toolkit named by the environment. Point it at
/// `toolkit`, or at the toolkit hetero was built with, unless the user's
/// environment already names one.
static void useCudaToolkit(const std::string &toolkit) {
  if (!toolkit.empty()) {
    ::setenv("CUDA_ROOT", toolkit.c_str(), /*overwrite=*/1);
    return;
  }
  for (const char *variable : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"})
    if (std::getenv(variable))
      return;
#ifdef HETERO_CUDA_TOOLKIT_ROOT
  ::setenv("CUDA_ROOT", HETERO_CUDA_TOOLKIT_ROOT, /*overwrite=*/0);
#endif
}

LogicalResult
hetero::buildLowerToGpuPipeline(OpPassManager &pm,
                                const GpuPipelineOptions &options) {
  useCudaToolkit(options.toolkit);
  addHeteroAndBufferization(pm, /*blockingCollectives=*/false);
  // Every parallel loop nest becomes a kernel; reductions stay sequential
  // loops inside the kernel.
  pm.addPass(createConvertLinalgToParallelLoopsPass());
  OpPassManager &kernels = pm.nest<func::FuncOp>();
  kernels.addPass(createGpuMapParallelLoopsPass());
  kernels.addPass(createConvertParallelLoopToGpuPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  gpu::GPUToNVVMPipelineOptions nvvm;
  nvvm.cubinChip = options.chip;
  nvvm.cubinFeatures = options.features;
  nvvm.cubinFormat = options.format;
  gpu::buildLowerToNVVMPassPipeline(pm, nvvm);
  pm.addPass(createReconcileUnrealizedCastsPass());
  return success();
}

void hetero::registerPipelines() {
  PassPipelineRegistration<CpuPipelineOptions>(
      "hetero-lower-to-cpu",
      "Lower a hetero module to the LLVM dialect for CPUs, calling "
      "libhetero_rt for communication",
      [](OpPassManager &pm, const CpuPipelineOptions &options) {
        if (failed(buildLowerToCpuPipeline(pm, options)))
          llvm::report_fatal_error("hetero-lower-to-cpu: cannot build the "
                                   "pipeline");
      });
  PassPipelineRegistration<GpuPipelineOptions>(
      "hetero-lower-to-gpu",
      "Lower a hetero module to NVVM kernels serialized by "
      "gpu-module-to-binary (PTX or cubin) and host code in the LLVM "
      "dialect that launches them through libhetero_rt_cuda",
      [](OpPassManager &pm, const GpuPipelineOptions &options) {
        if (failed(buildLowerToGpuPipeline(pm, options)))
          llvm::report_fatal_error("hetero-lower-to-gpu: cannot build the "
                                   "pipeline");
      });
}
