//===- Pipelines.cpp - hetero pass pipelines ------------------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Passes/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/ErrorHandling.h"

#include <cstdlib>
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

/// Appends upstream passes named by their registered names.
static LogicalResult parse(OpPassManager &pm, const std::string &pipeline) {
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  if (succeeded(parsePassPipeline(pipeline, pm, errorStream)))
    return success();
  llvm::errs() << "hetero pipelines: " << errors
               << " (are the upstream passes registered?)\n";
  return failure();
}

static LogicalResult addHeteroAndBufferization(OpPassManager &pm,
                                               bool blockingCollectives);

LogicalResult
hetero::buildLowerToCpuPipeline(OpPassManager &pm,
                                const CpuPipelineOptions &options) {
  if (failed(addHeteroAndBufferization(pm, options.blockingCollectives)))
    return failure();
  return parse(pm, "convert-linalg-to-loops,expand-strided-metadata,"
                   "lower-affine,convert-scf-to-cf,convert-math-to-llvm,"
                   "finalize-memref-to-llvm,convert-arith-to-llvm,"
                   "convert-cf-to-llvm,convert-func-to-llvm,"
                   "convert-index-to-llvm,reconcile-unrealized-casts");
}

/// The structured-op prefix the CPU and GPU pipelines share: hetero's own
/// passes, then bufferization with ownership-based deallocation.
static LogicalResult addHeteroAndBufferization(OpPassManager &pm,
                                               bool blockingCollectives) {
  pm.addPass(hetero::createHeteroPrunableToLinalg());
  pm.addPass(createCanonicalizerPass());
  hetero::HeteroLowerToRuntimeOptions lowering;
  lowering.blockingCollectives = blockingCollectives;
  pm.addPass(hetero::createHeteroLowerToRuntime(lowering));
  return parse(pm, "one-shot-bufferize{bufferize-function-boundaries "
                   "function-boundary-type-conversion=identity-layout-map},"
                   "buffer-deallocation-pipeline,"
                   "convert-bufferization-to-memref");
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

LogicalResult hetero::buildLowerToGpuPipeline(OpPassManager &pm,
                                              const GpuPipelineOptions &options) {
  useCudaToolkit(options.toolkit);
  if (failed(addHeteroAndBufferization(pm, /*blockingCollectives=*/false)))
    return failure();
  // Every parallel loop nest becomes a kernel; reductions stay sequential
  // loops inside the kernel.
  std::string nvvm = "gpu-lower-to-nvvm-pipeline{cubin-chip=" + options.chip +
                     " cubin-features=" + options.features +
                     " cubin-format=" + options.format + "}";
  return parse(pm, "convert-linalg-to-parallel-loops,"
                   "func.func(gpu-map-parallel-loops,"
                   "convert-parallel-loops-to-gpu),gpu-kernel-outlining,"
                   "lower-affine,convert-scf-to-cf," +
                       nvvm + ",reconcile-unrealized-casts");
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
