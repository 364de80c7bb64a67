/*===- hrt-blas.c - the host GEMM of compiled CPU code -----------------------===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* RUN: hrt-blas | FileCheck %s
 * RUN: not hrt-blas short-leading 2>&1 | FileCheck %s --check-prefix=LEADING
 * RUN: not hrt-blas negative 2>&1 | FileCheck %s --check-prefix=NEGATIVE
 *
 * hrt_cpu_sgemm against a double-precision reference, on every pair of
 * transposes, with leading dimensions wider than the matrices, batches
 * apart by strides of their own (0: one matrix for every batch index),
 * beta 1 (accumulating into C) and beta 0 (C's NaNs ignored), a 1-row
 * matrix whose stride is shorter than its row, and empty products.
 * CHECK: library: {{OpenBLAS [0-9.]+|loops}}
 * CHECK: threads: 1
 * CHECK: transposes nn: max error {{.*}} ok
 * CHECK: transposes nt: max error {{.*}} ok
 * CHECK: transposes tn: max error {{.*}} ok
 * CHECK: transposes tt: max error {{.*}} ok
 * CHECK: shared rhs (stride 0): ok
 * CHECK: beta 0 over NaN: ok
 * CHECK: one row, short stride: ok
 * CHECK: empty products leave C: ok
 * CHECK: k = 0 with beta 0 zeroes C: ok
 * CHECK: set_threads(0): refused
 * CHECK: threads: 2
 *
 * LEADING: hrt_cpu_sgemm: ldc 3 of a 4 x 5 x 6 product is too small
 * NEGATIVE: hrt_cpu_sgemm: m -4 of a -4 x 5 x 6 product is negative
 */

#include "Inputs/gemm-check.h"
#include "hetero-rt/blas.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  float a[64] = {0}, b[64] = {0}, c[64] = {0};
  if (argc > 1 && runRefusal(hrt_cpu_sgemm, argv[1]))
    return 0;
  printf("library: %s\n", hrt_blas_library());
  printf("threads: %d\n", hrt_blas_threads());
  const char *names[] = {"nn", "nt", "tn", "tt"};
  for (int t = 0; t < 4; ++t) {
    double worst = checkShapes(hrt_cpu_sgemm, t >> 1, t & 1);
    printf("transposes %s: max error %.3g %s\n", names[t], worst,
           worst < 1e-5 ? "ok" : "WRONG");
  }

  /* One rhs for three batch indices (stride 0). */
  {
    float lhs[3 * 2 * 2], rhs[2 * 2] = {1, 2, 3, 4}, out[3 * 2 * 2];
    for (int i = 0; i < 12; ++i)
      lhs[i] = (float)i;
    hrt_cpu_sgemm(3, 0, 0, 2, 2, 2, lhs, 2, 4, rhs, 2, 0, 0.0f, out, 2, 4);
    int ok = 1;
    for (int x = 0; x < 3; ++x)
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) {
          float e = lhs[x * 4 + i * 2] * rhs[j] + lhs[x * 4 + i * 2 + 1] * rhs[2 + j];
          ok &= out[x * 4 + i * 2 + j] == e;
        }
    printf("shared rhs (stride 0): %s\n", ok ? "ok" : "WRONG");
  }

  /* beta = 0 overwrites C, NaNs included. */
  {
    for (int i = 0; i < 16; ++i) {
      a[i] = 1.0f;
      b[i] = 2.0f;
      c[i] = NAN;
    }
    hrt_cpu_sgemm(1, 0, 0, 4, 4, 4, a, 4, 0, b, 4, 0, 0.0f, c, 4, 0);
    int ok = 1;
    for (int i = 0; i < 16; ++i)
      ok &= c[i] == 8.0f;
    printf("beta 0 over NaN: %s\n", ok ? "ok" : "WRONG");
  }

  /* A 1 x 4 row whose stride (1) is shorter than its row: any stride is
   * a valid layout for one row. */
  {
    for (int i = 0; i < 16; ++i)
      b[i] = (float)i;
    float row[4] = {1, 1, 1, 1}, out[4];
    hrt_cpu_sgemm(1, 0, 0, 1, 4, 4, row, 1, 0, b, 4, 0, 0.0f, out, 1, 0);
    printf("one row, short stride: %s\n",
           out[0] == 24 && out[1] == 28 && out[2] == 32 && out[3] == 36
               ? "ok"
               : "WRONG");
  }

  /* Nothing to compute: C stays as it was. */
  {
    c[0] = 5.0f;
    hrt_cpu_sgemm(0, 0, 0, 1, 1, 1, a, 1, 0, b, 1, 0, 0.0f, c, 1, 0);
    hrt_cpu_sgemm(1, 0, 0, 0, 1, 1, a, 1, 0, b, 1, 0, 0.0f, c, 1, 0);
    printf("empty products leave C: %s\n", c[0] == 5.0f ? "ok" : "WRONG");
  }

  /* k = 0: C = beta C. */
  {
    for (int i = 0; i < 4; ++i)
      c[i] = NAN;
    hrt_cpu_sgemm(1, 0, 0, 2, 2, 0, a, 1, 0, b, 2, 0, 0.0f, c, 2, 0);
    printf("k = 0 with beta 0 zeroes C: %s\n",
           c[0] == 0 && c[1] == 0 && c[2] == 0 && c[3] == 0 ? "ok" : "WRONG");
  }

  printf("set_threads(0): %s\n",
         hrt_blas_set_threads(0) == HRT_ERROR_INVALID_ARGUMENT ? "refused"
                                                              : "WRONG");
  hrt_blas_set_threads(2);
  printf("threads: %d\n", hrt_blas_threads());
  return 0;
}
