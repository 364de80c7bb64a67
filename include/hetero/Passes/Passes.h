//===- Passes.h - hetero passes ---------------------------------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_PASSES_PASSES_H
#define HETERO_PASSES_PASSES_H

#include "hetero/Dialect/Hetero.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

#include <memory>
#include <string>
#include <vector>

namespace hetero {

#define GEN_PASS_DECL
#include "hetero/Passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "hetero/Passes/Passes.h.inc"

/// Where the f32 products of the CPU pipeline run.
enum class CpuMatmul { blas, loops };

/// `blas` when hetero was built with OpenBLAS, `loops` otherwise.
CpuMatmul defaultCpuMatmul();

/// The CPU pipeline: prunable matmuls computed in full, canonicalization,
/// collectives lowered to libhetero_rt calls, one-shot bufferization with
/// ownership-based deallocation, the products as BLAS calls (or loops), and
/// the lowering of linalg, memref, math, arith, control flow and func to
/// the LLVM dialect. Built from pass constructors: no pass needs to be
/// registered.
struct CpuPipelineOptions
    : public mlir::PassPipelineOptions<CpuPipelineOptions> {
  Option<CpuMatmul> matmul{
      *this, "matmul", llvm::cl::desc("How f32 products on buffers run"),
      llvm::cl::init(defaultCpuMatmul()),
      llvm::cl::values(
          clEnumValN(CpuMatmul::blas, "blas",
                     "the host's BLAS through hrt_cpu_sgemm (the default "
                     "when hetero is built with OpenBLAS)"),
          clEnumValN(CpuMatmul::loops, "loops",
                     "loops, like the other linalg ops"))};
  Option<bool> blockingCollectives{
      *this, "blocking-collectives",
      llvm::cl::desc("Wait for every all-reduce where it stands instead of "
                     "before the first use of its result"),
      llvm::cl::init(false)};
  Option<bool> reassociateReductions{
      *this, "reassociate-reductions",
      llvm::cl::desc("Let floating-point reductions be reordered, so that "
                     "they vectorise (hetero-reassociate-reductions)"),
      llvm::cl::init(true)};
  Option<bool> runtimeAllocator{
      *this, "runtime-allocator",
      llvm::cl::desc("Allocate buffers through libhetero_rt, which reuses a "
                     "step's buffers (false: the C library's aligned_alloc "
                     "and free, for code run without libhetero_rt)"),
      llvm::cl::init(true)};
  Option<bool> gpuKernelsOnHost{
      *this, "gpu-kernels-on-host",
      llvm::cl::desc("Build the GPU pipeline's own kernels (split and "
                     "block reductions, row kernels, horizontal fusion) and "
                     "run them as loops on the host "
                     "(hetero-gpu-launches-to-loops), to check them without a "
                     "device"),
      llvm::cl::init(false)};
};
mlir::LogicalResult
buildLowerToCpuPipeline(mlir::OpPassManager &pm,
                        const CpuPipelineOptions &options = {});

/// What gpu-module-to-binary makes of the kernels.
enum class GpuKernelFormat { isa, bin, fatbin };

/// Options of the GPU pipeline.
/// Where the f32 matmuls of the GPU pipeline run.
enum class GpuMatmul { cublas, kernel };

struct GpuPipelineOptions
    : public mlir::PassPipelineOptions<GpuPipelineOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("Target GPU architecture"),
                           llvm::cl::init("sm_90")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("PTX features"),
                               llvm::cl::init("+ptx80")};
  Option<GpuKernelFormat> format{
      *this, "format", llvm::cl::desc("Kernel format"),
      llvm::cl::init(GpuKernelFormat::bin),
      llvm::cl::values(
          clEnumValN(GpuKernelFormat::isa, "isa", "PTX text"),
          clEnumValN(GpuKernelFormat::bin, "bin", "cubin, through ptxas"),
          clEnumValN(GpuKernelFormat::fatbin, "fatbin",
                     "fat binary of cubin and PTX"))};
  Option<GpuMatmul> matmul{
      *this, "matmul", llvm::cl::desc("How f32 matmuls on buffers run"),
      llvm::cl::init(GpuMatmul::cublas),
      llvm::cl::values(
          clEnumValN(GpuMatmul::cublas, "cublas",
                     "cuBLAS, through hrt_cuda_sgemm"),
          clEnumValN(GpuMatmul::kernel, "kernel",
                     "a generated kernel, like the other loop nests"))};
  Option<bool> deviceBuffers{
      *this, "device-buffers",
      llvm::cl::desc("Allocate the temporaries in device memory (gpu.alloc) "
                     "instead of host memory"),
      llvm::cl::init(true)};
  Option<bool> deviceCollectives{
      *this, "device-collectives",
      llvm::cl::desc("Hand the collectives and point-to-point calls device "
                     "addresses (the NCCL backend) instead of staged host "
                     "copies (the MPI backend)"),
      llvm::cl::init(false)};
  Option<bool> blockingCollectives{
      *this, "blocking-collectives",
      llvm::cl::desc("Wait for every all-reduce where it stands instead of "
                     "before the first use of its result"),
      llvm::cl::init(false)};
  Option<bool> rowKernels{
      *this, "row-kernels",
      llvm::cl::desc("Run chains of ops over the same rows (layer norms, "
                     "softmaxes, their adjoints) as one kernel of a block per "
                     "row (hetero-gpu-row-kernels)"),
      llvm::cl::init(true)};
  Option<bool> horizontalFusion{
      *this, "horizontal-fusion",
      llvm::cl::desc("Run independent element-wise ops that stand together "
                     "(gradient sums, optimizer updates) as one kernel "
                     "(hetero-gpu-horizontal-fusion)"),
      llvm::cl::init(true)};
  Option<int64_t> threadsPerBlock{
      *this, "threads-per-block",
      llvm::cl::desc("Threads per block of the generated kernels"),
      llvm::cl::init(256)};
  Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit root, for libdevice and ptxas (default: "
                     "$CUDA_ROOT, $CUDA_HOME or $CUDA_PATH, else the toolkit "
                     "hetero was built with)"),
      llvm::cl::init("")};
};

/// The GPU pipeline: the same hetero passes and bufferization as the CPU
/// pipeline, then every parallel loop nest mapped onto a `gpu` kernel,
/// kernels lowered to NVVM and serialized by gpu-module-to-binary, and the
/// host side lowered to the LLVM dialect with launches through the mgpu*
/// wrappers of libhetero_rt_cuda.
mlir::LogicalResult buildLowerToGpuPipeline(mlir::OpPassManager &pm,
                                            const GpuPipelineOptions &options);

/// Registers `hetero-lower-to-cpu` and `hetero-lower-to-gpu`.
void registerPipelines();

} // namespace hetero

#endif // HETERO_PASSES_PASSES_H
