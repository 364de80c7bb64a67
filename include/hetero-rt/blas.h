/*===- hetero-rt/blas.h - host GEMMs of compiled CPU code ------------*- C
-*-===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
|* hetero-matmul-to-blas turns the f32 products of a CPU step (linalg.matmul, *|
|* linalg.batch_matmul, products with transposed operands, contractions      *|
|* written as linalg.generic) into calls of hrt_cpu_sgemm, which runs them   *|
|* with OpenBLAS's cblas_sgemm when libhetero_rt was built with it, and with *|
|* a blocked loop nest otherwise.                                             *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef HETERO_RT_BLAS_H
#define HETERO_RT_BLAS_H

#include "hetero-rt/hrt.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* For every b in [0, batch):
 *   C_b = op(A_b) op(B_b) + beta C_b
 * with row-major matrices: C_b is m x n (rows ldc apart) at c + b stride_c;
 * op(A_b) is m x k, and A_b is stored at a + b stride_a as m x k rows lda
 * apart, or, when transpose_a is non-zero, as its k x m transpose; likewise
 * B_b (k x n, or n x k when transpose_b). A stride of 0 reuses one matrix
 * for every b. beta = 0 ignores C's previous contents (NaNs included).
 * Sizes that do not fit the BLAS's int, or a leading dimension smaller than
 * its matrix's row, print the product's shapes and end the process:
 * compiled code has no error path. */
HRT_EXPORT void hrt_cpu_sgemm(int64_t batch, int64_t transpose_a,
                              int64_t transpose_b, int64_t m, int64_t n,
                              int64_t k, const float *a, int64_t lda,
                              int64_t stride_a, const float *b, int64_t ldb,
                              int64_t stride_b, float beta, float *c,
                              int64_t ldc, int64_t stride_c);

/* The threads each hrt_cpu_sgemm may use (at least 1). Until this is
 * called, products run on the calling thread alone, whatever the BLAS's own
 * default: ranks of a job share the machine's cores. */
HRT_EXPORT hrt_status hrt_blas_set_threads(int threads);
HRT_EXPORT int hrt_blas_threads(void);

/* Profiling of the products: while on, hrt_cpu_sgemm counts its calls by
 * shape (batch, transposes, m, n, k) with the seconds they took (a clock
 * read before and after each call). hrt_blas_profile_write writes the
 * counts to `path`, one line per shape after a header,
 *   batch transpose_a transpose_b m n k calls seconds
 * and clears them; it returns 0, or -1 with errno set. */
HRT_EXPORT void hrt_blas_profile(int on);
HRT_EXPORT int hrt_blas_profile_write(const char *path);

/* The counted products' calls, FLOPs (2 batch m n k a call) and seconds,
 * all shapes together, as hrt_blas_profile_write would write them. */
HRT_EXPORT void hrt_blas_profile_totals(long long *calls, double *flops,
                                        double *seconds);

/* The library that runs the products ("OpenBLAS 0.3.21"), or "loops". */
HRT_EXPORT const char *hrt_blas_library(void);

#ifdef __cplusplus
}
#endif

#endif /* HETERO_RT_BLAS_H */
