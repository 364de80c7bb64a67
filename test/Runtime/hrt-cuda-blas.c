/*===- hrt-cuda-blas.c - cuBLAS products of compiled GPU code -------------===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* REQUIRES: host-cuda
 * RUN: env LD_LIBRARY_PATH=%host_cuda HETERO_HOST_CUDA_REPORT=1 hrt-cuda-blas 2>&1 | FileCheck %s
 * RUN: not env LD_LIBRARY_PATH=%host_cuda hrt-cuda-blas short-leading 2>&1 | FileCheck %s --check-prefix=LEADING
 * RUN: not env LD_LIBRARY_PATH=%host_cuda hrt-cuda-blas negative 2>&1 | FileCheck %s --check-prefix=NEGATIVE
 *
 * hrt_cuda_sgemm (include/hetero-rt/gpu.h), in hrt_cpu_sgemm's ABI, against
 * a double-precision reference on the driver and cuBLAS of host memory
 * (Inputs/host-cuda.c, host-cublas.c, which compute column-major products
 * as cuBLAS defines them and refuse any access outside an operand's
 * device allocation): every pair of transposes, leading dimensions wider
 * than the matrices, batches apart by strides of their own (one strided
 * batched call), both betas. The operands are device copies of host
 * buffers; the host reads C back through the driver.
 * CHECK: transposes nn: max error {{.*}} ok
 * CHECK: transposes nt: max error {{.*}} ok
 * CHECK: transposes tn: max error {{.*}} ok
 * CHECK: transposes tt: max error {{.*}} ok
 * CHECK: host-cuda: launches 0
 *
 * LEADING: hetero GPU runtime: hrt_cuda_sgemm: ldc 3 of a 4 x 5 x 6 product is too small
 * NEGATIVE: hetero GPU runtime: hrt_cuda_sgemm: m -4 of a -4 x 5 x 6 product is negative
 */

#include "Inputs/gemm-check.h"
#include "hetero-rt/gpu.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The operands' spans (the check's buffers, batch strides included). */
static int64_t spanOf(int64_t batch, int64_t stride, int64_t rows,
                      int64_t ld) {
  return (batch - 1) * stride + rows * ld;
}

/* hrt_cuda_sgemm on device copies of the host operands; C comes back. */
static void deviceSgemm(int64_t batch, int64_t ta, int64_t tb, int64_t m,
                        int64_t n, int64_t k, const float *a, int64_t lda,
                        int64_t sa, const float *b, int64_t ldb, int64_t sb,
                        float beta, float *c, int64_t ldc, int64_t sc) {
  int64_t bytesA = sizeof(float) * spanOf(batch, sa, ta ? k : m, lda);
  int64_t bytesB = sizeof(float) * spanOf(batch, sb, tb ? n : k, ldb);
  int64_t bytesC = sizeof(float) * spanOf(batch, sc, m, ldc);
  /* hrt_cuda_mirror reads the host buffers; it takes them as void *. */
  const float *da = hrt_cuda_mirror((void *)(uintptr_t)a, bytesA);
  const float *db = hrt_cuda_mirror((void *)(uintptr_t)b, bytesB);
  float *dc = hrt_cuda_mirror(c, bytesC);
  hrt_cuda_sgemm(batch, ta, tb, m, n, k, da, lda, sa, db, ldb, sb, beta, dc,
                 ldc, sc);
  hrt_cuda_mirror_copy(c, bytesC, /*to_device=*/0);
  /* The next check's buffers may reuse these addresses with other sizes. */
  hrt_cuda_release();
}

int main(int argc, char **argv) {
  if (argc > 1 && runRefusal(hrt_cuda_sgemm, argv[1]))
    return 0;
  const char *names[] = {"nn", "nt", "tn", "tt"};
  for (int t = 0; t < 4; ++t) {
    double worst = checkShapes(deviceSgemm, t >> 1, t & 1);
    printf("transposes %s: max error %.3g %s\n", names[t], worst,
           worst < 1e-5 ? "ok" : "WRONG");
  }
  fflush(stdout);
  return 0;
}
