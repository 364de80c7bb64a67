/*===- host-cublas.c - cuBLAS's products on host-cuda's memory ------------===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* libcublas.so.13 beside host-cuda.c's libcuda.so.1: the calls that
 * libhetero_rt_cuda's hrt_cuda_sgemm makes (plain and strided batched,
 * transposed or not), with the product computed on the host. The arguments are checked as cuBLAS checks them, and every
 * element the product reads or writes must lie in the device allocation
 * its pointer is in. */

#include "host-cuda.h"

#include <cublas_v2.h>

#include <stdio.h>

static int theHandle;

cublasStatus_t cublasCreate(cublasHandle_t *handle) {
  *handle = (cublasHandle_t)&theHandle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream) {
  (void)handle, (void)stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  (void)handle;
  return mode == CUBLAS_DEFAULT_MATH ? CUBLAS_STATUS_SUCCESS
                                     : CUBLAS_STATUS_NOT_SUPPORTED;
}

const char *cublasGetStatusName(cublasStatus_t status) {
  return status == CUBLAS_STATUS_SUCCESS ? "CUBLAS_STATUS_SUCCESS"
         : status == CUBLAS_STATUS_INVALID_VALUE
             ? "CUBLAS_STATUS_INVALID_VALUE"
             : "CUBLAS_STATUS_NOT_SUPPORTED";
}

const char *cublasGetStatusString(cublasStatus_t status) {
  return status == CUBLAS_STATUS_SUCCESS         ? "success"
         : status == CUBLAS_STATUS_INVALID_VALUE ? "invalid value"
                                                 : "not supported";
}

/* The elements a column-major rows x columns matrix with leading dimension
 * `ld` spans. */
static size_t span(int rows, int columns, int ld) {
  return rows && columns ? (size_t)(columns - 1) * (size_t)ld + (size_t)rows
                         : 0;
}

/* The elements `batch` matrices `stride` apart span, each a column-major
 * rows x columns matrix with leading dimension `ld`. */
static size_t batchSpan(int rows, int columns, int ld, long long stride,
                        int batch) {
  size_t one = span(rows, columns, ld);
  return one && batch ? (size_t)(batch - 1) * (size_t)stride + one : 0;
}

/* For every b < batch: C_b = alpha op(A_b) op(B_b) + beta C_b, column-major,
 * as cublasSgemmStridedBatched computes it; `call` names the entry point. */
static cublasStatus_t product(const char *call, cublasOperation_t transa,
                              cublasOperation_t transb, int m, int n, int k,
                              const float *alpha, const float *a, int lda,
                              long long strideA, const float *b, int ldb,
                              long long strideB, const float *beta, float *c,
                              int ldc, long long strideC, int batch) {
  int transposeA = transa == CUBLAS_OP_T, transposeB = transb == CUBLAS_OP_T;
  if ((!transposeA && transa != CUBLAS_OP_N) ||
      (!transposeB && transb != CUBLAS_OP_N))
    return CUBLAS_STATUS_NOT_SUPPORTED;
  /* op(A) is m x k: A is stored m x k, or k x m transposed; likewise B. */
  int rowsA = transposeA ? k : m, columnsA = transposeA ? m : k;
  int rowsB = transposeB ? n : k, columnsB = transposeB ? k : n;
  if (m < 0 || n < 0 || k < 0 || batch < 0 || strideA < 0 || strideB < 0 ||
      strideC < 0 || lda < (rowsA > 1 ? rowsA : 1) ||
      ldb < (rowsB > 1 ? rowsB : 1) || ldc < (m > 1 ? m : 1)) {
    fprintf(stderr,
            "host-cuda: %s: transa %d, transb %d, m %d, n %d, k %d, lda %d, "
            "ldb %d, ldc %d, batch %d\n",
            call, transposeA, transposeB, m, n, k, lda, ldb, ldc, batch);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (!m || !n || !batch)
    return CUBLAS_STATUS_SUCCESS;
  size_t floats = sizeof(float);
  void *openedA =
      k ? hostCudaOpen(call, "A", a,
                       batchSpan(rowsA, columnsA, lda, strideA, batch) * floats)
        : NULL;
  if (k && !openedA)
    return CUBLAS_STATUS_INVALID_VALUE;
  void *openedB =
      k ? hostCudaOpen(call, "B", b,
                       batchSpan(rowsB, columnsB, ldb, strideB, batch) * floats)
        : NULL;
  if (k && !openedB) {
    hostCudaClose(openedA);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  void *openedC =
      hostCudaOpen(call, "C", c, batchSpan(m, n, ldc, strideC, batch) * floats);
  if (!openedC) {
    if (k) {
      hostCudaClose(openedB);
      hostCudaClose(openedA);
    }
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  for (int index = 0; index < batch; ++index) {
    const float *ab = a + (size_t)index * (size_t)strideA;
    const float *bb = b + (size_t)index * (size_t)strideB;
    float *cb = c + (size_t)index * (size_t)strideC;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        float sum = 0;
        for (int l = 0; l < k; ++l) {
          float left = transposeA ? ab[l + (size_t)i * lda]
                                  : ab[i + (size_t)l * lda];
          float right = transposeB ? bb[j + (size_t)l * ldb]
                                   : bb[l + (size_t)j * ldb];
          sum += left * right;
        }
        float *out = &cb[i + (size_t)j * ldc];
        /* beta = 0 does not read C, which may hold anything. */
        *out = *alpha * sum + (*beta == 0.0f ? 0.0f : *beta * *out);
      }
  }
  hostCudaClose(openedC);
  if (k) {
    hostCudaClose(openedB);
    hostCudaClose(openedA);
  }
  hostCudaCountProduct();
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSgemm(cublasHandle_t handle, cublasOperation_t transa,
                           cublasOperation_t transb, int m, int n, int k,
                           const float *alpha, const float *a, int lda,
                           const float *b, int ldb, const float *beta, float *c,
                           int ldc) {
  (void)handle;
  return product("cublasSgemm", transa, transb, m, n, k, alpha, a, lda, 0, b,
                 ldb, 0, beta, c, ldc, 0, 1);
}

cublasStatus_t cublasSgemmStridedBatched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
    int m, int n, int k, const float *alpha, const float *a, int lda,
    long long strideA, const float *b, int ldb, long long strideB,
    const float *beta, float *c, int ldc, long long strideC, int batch) {
  (void)handle;
  return product("cublasSgemmStridedBatched", transa, transb, m, n, k, alpha,
                 a, lda, strideA, b, ldb, strideB, beta, c, ldc, strideC,
                 batch);
}
