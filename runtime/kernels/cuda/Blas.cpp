//===- Blas.cpp - cuBLAS products for compiled GPU code -------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// hetero-matmul-to-cublas turns the f32 products of a GPU step (matmuls,
// batched and transposed products, contractions written as linalg.generic)
// into calls of hrt_cuda_sgemm, in hrt_cpu_sgemm's ABI. cuBLAS is
// column-major: a row-major C = op(A) op(B) is the column-major C^T =
// op(B)^T op(A)^T, so the product is taken with the operands swapped; a
// batch is one strided batched call. Each thread has one handle, on its
// stream.
//
//===----------------------------------------------------------------------===//

#include "../LeadingDimension.h"
#include "Context.h"
#include "hetero-rt/gpu.h"

#include <cublas_v2.h>

#include <algorithm>
#include <cstdio>

namespace {

/// Aborts with the cuBLAS status of a failed `call` on shapes m x n x k.
void checkBlas(cublasStatus_t status, const char *call, int64_t m, int64_t n,
               int64_t k) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return;
  char message[256];
  std::snprintf(message, sizeof message,
                "%s failed for a %lld x %lld x %lld product: %s (%s)", call,
                (long long)m, (long long)n, (long long)k,
                cublasGetStatusName(status), cublasGetStatusString(status));
  hetero::rt::cuda::fail(message);
}

/// This thread's handle, bound to its stream, in full f32 precision.
cublasHandle_t threadHandle() {
  static thread_local cublasHandle_t handle = nullptr;
  if (!handle) {
    hetero::rt::cuda::ensureContext();
    checkBlas(cublasCreate(&handle), "cublasCreate", 0, 0, 0);
    checkBlas(cublasSetStream(handle, static_cast<cudaStream_t>(
                                          hetero::rt::cuda::threadStream())),
              "cublasSetStream", 0, 0, 0);
    checkBlas(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH),
              "cublasSetMathMode", 0, 0, 0);
  }
  return handle;
}

/// Ends the process: `what` (an argument) of value `value` of the m x n x k
/// product is wrong, as `problem` says.
[[noreturn]] void failProduct(const char *what, int64_t value, int64_t m,
                              int64_t n, int64_t k, const char *problem) {
  char message[256];
  std::snprintf(message, sizeof message,
                "hrt_cuda_sgemm: %s %lld of a %lld x %lld x %lld product %s",
                what, (long long)value, (long long)m, (long long)n,
                (long long)k, problem);
  hetero::rt::cuda::fail(message);
}

/// `value` as cuBLAS's int; a failure naming what overflowed otherwise.
int asBlasInt(int64_t value, const char *what, int64_t m, int64_t n,
              int64_t k) {
  if (value < 0 || value > INT32_MAX)
    failProduct(what, value, m, n, k, "is outside cuBLAS's int range");
  return int(value);
}

} // namespace

HRT_CUDA_EXPORT void hrt_cuda_sgemm(int64_t batch, int64_t transposeA,
                                    int64_t transposeB, int64_t m, int64_t n,
                                    int64_t k, const float *a, int64_t lda,
                                    int64_t strideA, const float *b,
                                    int64_t ldb, int64_t strideB, float beta,
                                    float *c, int64_t ldc, int64_t strideC) {
  int64_t negative = 0;
  if (const char *name = hetero::rt::negativeGemmSize(batch, m, n, k, negative))
    failProduct(name, negative, m, n, k, "is negative");
  if (batch == 0 || m == 0 || n == 0)
    return;
  hetero::rt::GemmLeadingDimensions leading = hetero::rt::gemmLeadingDimensions(
      transposeA, transposeB, m, n, k, lda, ldb, ldc);
  if (leading.tooSmall)
    failProduct(leading.tooSmall, leading.tooSmallValue, m, n, k,
                "is too small");
  // Column-major C^T = op(B)^T op(A)^T: B first. A row-major matrix stored
  // transposed is its column-major self, so a transposed operand is
  // CUBLAS_OP_T.
  cublasOperation_t opA = transposeA ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opB = transposeB ? CUBLAS_OP_T : CUBLAS_OP_N;
  int mInt = asBlasInt(m, "m", m, n, k), nInt = asBlasInt(n, "n", m, n, k),
      kInt = asBlasInt(k, "k", m, n, k);
  int ldaInt = asBlasInt(leading.a, "lda", m, n, k),
      ldbInt = asBlasInt(leading.b, "ldb", m, n, k),
      ldcInt = asBlasInt(leading.c, "ldc", m, n, k);
  const float one = 1.0f;
  cublasHandle_t handle = threadHandle();
  if (batch == 1) {
    checkBlas(cublasSgemm(handle, opB, opA, nInt, mInt, kInt, &one, b, ldbInt,
                          a, ldaInt, &beta, c, ldcInt),
              "cublasSgemm", m, n, k);
    return;
  }
  checkBlas(cublasSgemmStridedBatched(handle, opB, opA, nInt, mInt, kInt, &one,
                                      b, ldbInt, strideB, a, ldaInt, strideA,
                                      &beta, c, ldcInt, strideC,
                                      asBlasInt(batch, "batch", m, n, k)),
            "cublasSgemmStridedBatched", m, n, k);
  // Queued: alpha and beta are read now (host pointer mode), and whatever
  // reads C waits for the stream.
}
