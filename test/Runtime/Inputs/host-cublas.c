/*===- host-cublas.c - cuBLAS's products on host-cuda's memory ------------===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* libcublas.so.13 beside host-cuda.c's libcuda.so.1: the calls that
 * libhetero_rt_cuda's hrt_cuda_sgemm makes, with the product computed on
 * the host. The arguments are checked as cuBLAS checks them, and every
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

/* C = alpha A B + beta C, column-major, neither operand transposed. */
cublasStatus_t cublasSgemm(cublasHandle_t handle, cublasOperation_t transa,
                           cublasOperation_t transb, int m, int n, int k,
                           const float *alpha, const float *a, int lda,
                           const float *b, int ldb, const float *beta, float *c,
                           int ldc) {
  (void)handle;
  if (transa != CUBLAS_OP_N || transb != CUBLAS_OP_N)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  if (m < 0 || n < 0 || k < 0 || lda < (m > 1 ? m : 1) ||
      ldb < (k > 1 ? k : 1) || ldc < (m > 1 ? m : 1)) {
    fprintf(stderr,
            "host-cuda: cublasSgemm: m %d, n %d, k %d, lda %d, ldb %d, ldc "
            "%d\n",
            m, n, k, lda, ldb, ldc);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (!m || !n)
    return CUBLAS_STATUS_SUCCESS;
  size_t floats = sizeof(float);
  void *openedA =
      k ? hostCudaOpen("cublasSgemm", "A", a, span(m, k, lda) * floats) : NULL;
  if (k && !openedA)
    return CUBLAS_STATUS_INVALID_VALUE;
  void *openedB =
      k ? hostCudaOpen("cublasSgemm", "B", b, span(k, n, ldb) * floats) : NULL;
  if (k && !openedB) {
    hostCudaClose(openedA);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  void *openedC = hostCudaOpen("cublasSgemm", "C", c, span(m, n, ldc) * floats);
  if (!openedC) {
    if (k) {
      hostCudaClose(openedB);
      hostCudaClose(openedA);
    }
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      float sum = 0;
      for (int l = 0; l < k; ++l)
        sum += a[i + (size_t)l * lda] * b[l + (size_t)j * ldb];
      float *out = &c[i + (size_t)j * ldc];
      /* beta = 0 does not read C, which may hold anything. */
      *out = *alpha * sum + (*beta == 0.0f ? 0.0f : *beta * *out);
    }
  hostCudaClose(openedC);
  if (k) {
    hostCudaClose(openedB);
    hostCudaClose(openedA);
  }
  hostCudaCountProduct();
  return CUBLAS_STATUS_SUCCESS;
}
