//===- Pipelines.cpp - hetero pass pipelines ------------------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Passes/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

/// After hetero's own passes the module holds functions on tensors; these
/// upstream passes turn them into the LLVM dialect.
static constexpr const char *kCpuLowering =
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},"
    "buffer-deallocation-pipeline,convert-bufferization-to-memref,"
    "convert-linalg-to-loops,expand-strided-metadata,lower-affine,"
    "convert-scf-to-cf,convert-math-to-llvm,finalize-memref-to-llvm,"
    "convert-arith-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,"
    "convert-index-to-llvm,reconcile-unrealized-casts";

LogicalResult hetero::buildLowerToCpuPipeline(OpPassManager &pm) {
  pm.addPass(createHeteroPrunableToLinalg());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createHeteroLowerToRuntime());
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  if (failed(parsePassPipeline(kCpuLowering, pm, errorStream))) {
    llvm::errs() << "hetero-lower-to-cpu: " << errors
                 << " (are the upstream passes registered?)\n";
    return failure();
  }
  return success();
}

void hetero::registerPipelines() {
  PassPipelineRegistration<>(
      "hetero-lower-to-cpu",
      "Lower a hetero module to the LLVM dialect for CPUs, calling "
      "libhetero_rt for communication",
      [](OpPassManager &pm) { (void)buildLowerToCpuPipeline(pm); });
}
