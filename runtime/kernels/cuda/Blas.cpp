//===- Blas.cpp - cuBLAS products for compiled GPU code -------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// hetero-matmul-to-cublas turns the f32 linalg.matmul of a GPU step into a
// call of hrt_cuda_sgemm. cuBLAS is column-major: a row-major C = A B is the
// column-major C^T = B^T A^T, so the product is taken with the operands
// swapped and no transposes. Each thread has one handle, on its stream.
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

/// `value` as cuBLAS's int; a failure naming what overflowed otherwise.
int asBlasInt(int64_t value, const char *what, int64_t m, int64_t n,
              int64_t k) {
  if (value < 0 || value > INT32_MAX) {
    char message[256];
    std::snprintf(message, sizeof message,
                  "hrt_cuda_sgemm: %s %lld of a %lld x %lld x %lld product is "
                  "outside cuBLAS's int range",
                  what, (long long)value, (long long)m, (long long)n,
                  (long long)k);
    hetero::rt::cuda::fail(message);
  }
  return int(value);
}

} // namespace

HRT_CUDA_EXPORT void hrt_cuda_sgemm(int64_t m, int64_t n, int64_t k,
                                    const float *a, int64_t lda, const float *b,
                                    int64_t ldb, float beta, float *c,
                                    int64_t ldc) {
  if (m == 0 || n == 0)
    return;
  lda = hetero::rt::leadingDimension(lda, m, k);
  ldb = hetero::rt::leadingDimension(ldb, k, n);
  ldc = hetero::rt::leadingDimension(ldc, m, n);
  const float one = 1.0f;
  cublasHandle_t handle = threadHandle();
  checkBlas(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N,
                        asBlasInt(n, "n", m, n, k), asBlasInt(m, "m", m, n, k),
                        asBlasInt(k, "k", m, n, k), &one, b,
                        asBlasInt(ldb, "ldb", m, n, k), a,
                        asBlasInt(lda, "lda", m, n, k), &beta, c,
                        asBlasInt(ldc, "ldc", m, n, k)),
            "cublasSgemm", m, n, k);
  // Queued: alpha and beta are read now (host pointer mode), and whatever
  // reads C waits for the stream.
}
