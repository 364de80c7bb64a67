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
/// passes on tensors.
static void addHeteroPasses(OpPassManager &pm, bool blockingCollectives) {
  pm.addPass(hetero::createHeteroPartitionTensorParallel());
  pm.addPass(hetero::createHeteroPrunableToLinalg());
  pm.addPass(hetero::createHeteroColumnsToLinalg());
  pm.addPass(createCanonicalizerPass());
  hetero::HeteroLowerToRuntimeOptions lowering;
  lowering.blockingCollectives = blockingCollectives;
  pm.addPass(hetero::createHeteroLowerToRuntime(lowering));
}

/// Bufferization with ownership-based deallocation, shared by both
/// pipelines.
static void addBufferization(OpPassManager &pm) {
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

  // Ownership-based deallocation, per function; the deallocation helper the
  // lowering may need is a module-level symbol. buffer-deallocation-
  // simplification is left out: it compares every pair of the buffers one
  // dealloc releases, and the per-stage function of a pipeline step
  // releases a few per micro-batch at its end (at 64 micro-batches, 256),
  // which made it the largest share of the compile. Unsimplified deallocs
  // check their aliasing at run time instead (microseconds per step).
  OpPassManager &deallocation = pm.nest<func::FuncOp>();
  deallocation.addPass(
      bufferization::createOwnershipBasedBufferDeallocationPass());
  deallocation.addPass(createCanonicalizerPass());
  pm.addPass(bufferization::createLowerDeallocationsPass());
  OpPassManager &cleanup = pm.nest<func::FuncOp>();
  cleanup.addPass(createCSEPass());
  cleanup.addPass(createCanonicalizerPass());
  pm.addPass(createConvertBufferizationToMemRefPass());
}

hetero::CpuMatmul hetero::defaultCpuMatmul() {
#ifdef HETERO_HAVE_OPENBLAS
  return CpuMatmul::blas;
#else
  return CpuMatmul::loops;
#endif
}

LogicalResult
hetero::buildLowerToCpuPipeline(OpPassManager &pm,
                                const CpuPipelineOptions &options) {
  addHeteroPasses(pm, options.blockingCollectives);
  // Element-wise chains become one loop nest, so one pass over memory; the
  // products read transposed operands in place (BLAS takes them as such).
  hetero::HeteroFuseElementwiseOptions fusion;
  fusion.foldTransposes = options.matmul == hetero::CpuMatmul::blas;
  fusion.duplicateTranscendentals = options.gpuKernelsOnHost;
  pm.nest<func::FuncOp>().addPass(hetero::createHeteroFuseElementwise(fusion));
  if (options.gpuKernelsOnHost)
    pm.nest<func::FuncOp>().addPass(hetero::createHeteroGpuSplitReductions());
  // Sums and maxima along a row vectorise once they may be reordered.
  if (options.reassociateReductions)
    pm.nest<func::FuncOp>().addPass(
        hetero::createHeteroReassociateReductions());
  // An op whose result is inserted into a larger tensor (a block's tape, a
  // stage's stash) writes into its slot of that tensor instead of a buffer
  // of its own that is then copied in.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  addBufferization(pm);
  if (options.matmul == hetero::CpuMatmul::blas)
    pm.addPass(hetero::createHeteroMatmulToBlas());
  // The GPU pipeline's kernels, run as loops on the host.
  if (options.gpuKernelsOnHost) {
    OpPassManager &kernels = pm.nest<func::FuncOp>();
    kernels.addPass(hetero::createHeteroGpuRowKernels());
    kernels.addPass(hetero::createHeteroGpuBlockReductions());
    kernels.addPass(hetero::createHeteroGpuHorizontalFusion());
    kernels.addPass(hetero::createHeteroGpuLaunchesToLoops());
  }
  // Loops and control flow, one function at a time.
  OpPassManager &loops = pm.nest<func::FuncOp>();
  loops.addPass(createConvertLinalgToLoopsPass());
  loops.addPass(memref::createExpandStridedMetadataPass());
  loops.addPass(createLowerAffinePass());
  loops.addPass(createSCFToControlFlowPass());
  // The LLVM dialect, in one conversion.
  hetero::HeteroConvertToLLVMOptions llvmOptions;
  llvmOptions.runtimeAllocator = options.runtimeAllocator;
  pm.addPass(hetero::createHeteroConvertToLLVM(llvmOptions));
  pm.addPass(createReconcileUnrealizedCastsPass());
  return success();
}

/// The CUDA toolkit gpu-module-to-binary takes libdevice (for math functions
/// in kernels) and ptxas from: `requested`, else none (the pass then reads
/// $CUDA_ROOT, $CUDA_HOME or $CUDA_PATH) when the environment names one,
/// else the toolkit hetero was built with.
static std::string cudaToolkit(const std::string &requested) {
  if (!requested.empty())
    return requested;
  for (const char *variable : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"})
    if (std::getenv(variable))
      return "";
#ifdef HETERO_CUDA_TOOLKIT_ROOT
  return HETERO_CUDA_TOOLKIT_ROOT;
#else
  return "";
#endif
}

static StringRef formatName(hetero::GpuKernelFormat format) {
  switch (format) {
  case hetero::GpuKernelFormat::isa:
    return "isa";
  case hetero::GpuKernelFormat::bin:
    return "bin";
  case hetero::GpuKernelFormat::fatbin:
    return "fatbin";
  }
  llvm_unreachable("unknown GPU kernel format");
}

LogicalResult
hetero::buildLowerToGpuPipeline(OpPassManager &pm,
                                const GpuPipelineOptions &options) {
  addHeteroPasses(pm, options.blockingCollectives);
  // Element-wise chains become one loop nest, so one kernel and one pass
  // over memory; long reductions with few outputs become parallel
  // partials. Both on tensors.
  // The products read transposed operands in place (cuBLAS takes them as
  // such).
  hetero::HeteroFuseElementwiseOptions fusion;
  fusion.foldTransposes = options.matmul == hetero::GpuMatmul::cublas;
  OpPassManager &tensors = pm.nest<func::FuncOp>();
  tensors.addPass(hetero::createHeteroFuseElementwise(fusion));
  tensors.addPass(hetero::createHeteroGpuSplitReductions());
  // Results inserted into larger tensors are written in place.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  addBufferization(pm);
  // The step's data in device memory; the f32 GEMMs go to cuBLAS; every other
  // parallel loop nest (copies included) becomes a
  // kernel of thread blocks, its reductions sequential loops in a thread.
  if (options.deviceBuffers) {
    hetero::HeteroGpuDeviceBuffersOptions placement;
    placement.deviceCollectives = options.deviceCollectives;
    pm.addPass(hetero::createHeteroGpuDeviceBuffers(placement));
  }
  if (options.matmul == hetero::GpuMatmul::cublas)
    pm.addPass(hetero::createHeteroMatmulToCublas());
  // Chains of ops over the same rows become a kernel of a block per row.
  if (options.rowKernels) {
    hetero::HeteroGpuRowKernelsOptions rows;
    rows.threadsPerBlock = options.threadsPerBlock;
    pm.nest<func::FuncOp>().addPass(hetero::createHeteroGpuRowKernels(rows));
  }
  // Reductions with few outputs get a thread block per output; the ops left
  // without a parallel loop (0-d fills) get one of a single iteration, so
  // that they too run on the device.
  hetero::HeteroGpuBlockReductionsOptions reductions;
  reductions.threadsPerBlock = options.threadsPerBlock;
  pm.nest<func::FuncOp>().addPass(
      hetero::createHeteroGpuBlockReductions(reductions));
  // Independent element-wise ops that stand together become one kernel.
  if (options.horizontalFusion) {
    hetero::HeteroGpuHorizontalFusionOptions horizontal;
    horizontal.threadsPerBlock = options.threadsPerBlock;
    pm.nest<func::FuncOp>().addPass(
        hetero::createHeteroGpuHorizontalFusion(horizontal));
  }
  pm.nest<func::FuncOp>().addPass(hetero::createHeteroGpuSerialKernels());
  pm.addPass(createConvertLinalgToParallelLoopsPass());
  OpPassManager &kernels = pm.nest<func::FuncOp>();
  hetero::HeteroGpuMapLoopsOptions mapping;
  mapping.threadsPerBlock = options.threadsPerBlock;
  kernels.addPass(hetero::createHeteroGpuMapLoops(mapping));
  kernels.addPass(createConvertParallelLoopToGpuPass());
  pm.addPass(createGpuKernelOutliningPass());
  // Launches queue on the thread's stream; the host waits where data
  // leaves it.
  hetero::HeteroGpuAsyncLaunchesOptions launches;
  launches.deviceCollectives = options.deviceCollectives;
  pm.addPass(hetero::createHeteroGpuAsyncLaunches(launches));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  gpu::GPUToNVVMPipelineOptions nvvm;
  nvvm.cubinChip = options.chip;
  nvvm.cubinFeatures = options.features;
  nvvm.cubinFormat = formatName(options.format).str();
  gpu::buildLowerToNVVMPassPipeline(pm, nvvm);
  // The upstream pipeline builder does not take the toolkit; its
  // serialization pass does, as an option.
  if (std::string toolkit = cudaToolkit(options.toolkit); !toolkit.empty())
    for (Pass &pass : pm.getPasses())
      if (pass.getArgument() == "gpu-module-to-binary" &&
          failed(pass.initializeOptions(
              "toolkit=" + toolkit, [](const Twine &) { return failure(); })))
        return failure();
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
