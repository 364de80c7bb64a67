/*===- gemm-check.h - a GEMM in the runtime's ABI against a reference ----===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* Shared by hrt-blas.c (hrt_cpu_sgemm) and hrt-cuda-blas.c (hrt_cuda_sgemm
 * on host-cuda's device memory): random operands with leading dimensions
 * wider than their matrices and batches apart by strides of their own, and
 * a double-precision reference. */

#ifndef HETERO_TEST_RUNTIME_GEMM_CHECK_H
#define HETERO_TEST_RUNTIME_GEMM_CHECK_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A GEMM in the ABI of hetero-rt/blas.h, on host buffers. */
typedef void (*GemmFunction)(int64_t batch, int64_t ta, int64_t tb, int64_t m,
                             int64_t n, int64_t k, const float *a, int64_t lda,
                             int64_t sa, const float *b, int64_t ldb,
                             int64_t sb, float beta, float *c, int64_t ldc,
                             int64_t sc);

static unsigned long long state = 88172645463325252ull;
static float uniform(void) {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return (float)((state >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

/* Element (i, p) of op(X) for X stored with leading dimension ld. */
static double at(const float *x, int transposed, long long ld, long long i,
                 long long p) {
  return transposed ? x[p * ld + i] : x[i * ld + p];
}

/* The largest |hrt - reference| / (1 + |reference|) over a batch. */
static double check(GemmFunction sgemm, int ta, int tb, long long batch,
                    long long m, long long n, long long k, float beta) {
  long long lda = (ta ? m : k) + 3, ldb = (tb ? k : n) + 5, ldc = n + 2;
  long long sa = (ta ? k : m) * lda + 7, sb = (tb ? n : k) * ldb + 1,
            sc = m * ldc + 4;
  float *a = malloc(sizeof(float) * batch * sa);
  float *b = malloc(sizeof(float) * batch * sb);
  float *c = malloc(sizeof(float) * batch * sc);
  double *expected = malloc(sizeof(double) * batch * sc);
  for (long long i = 0; i < batch * sa; ++i)
    a[i] = uniform();
  for (long long i = 0; i < batch * sb; ++i)
    b[i] = uniform();
  for (long long i = 0; i < batch * sc; ++i)
    c[i] = uniform();
  for (long long x = 0; x < batch; ++x)
    for (long long i = 0; i < m; ++i)
      for (long long j = 0; j < n; ++j) {
        double sum = beta * (double)c[x * sc + i * ldc + j];
        for (long long p = 0; p < k; ++p)
          sum += at(a + x * sa, ta, lda, i, p) * at(b + x * sb, tb, ldb, p, j);
        expected[x * sc + i * ldc + j] = sum;
      }
  sgemm(batch, ta, tb, m, n, k, a, lda, sa, b, ldb, sb, beta, c, ldc, sc);
  double worst = 0;
  for (long long x = 0; x < batch; ++x)
    for (long long i = 0; i < m; ++i)
      for (long long j = 0; j < n; ++j) {
        double e = expected[x * sc + i * ldc + j];
        double error = fabs(c[x * sc + i * ldc + j] - e) / (1 + fabs(e));
        if (!(error <= worst))
          worst = isnan(error) ? INFINITY : error;
      }
  free(a);
  free(b);
  free(c);
  free(expected);
  return worst;
}

/* The largest error of `sgemm` over odd shapes, a batch and both betas,
 * with transposes (ta, tb). */
static double checkShapes(GemmFunction sgemm, int ta, int tb) {
  double worst = 0;
  long long shapes[][4] = {{1, 17, 9, 13}, {3, 33, 65, 31}, {2, 1, 7, 5},
                           {4, 20, 1, 64}, {1, 70, 50, 129}};
  for (int s = 0; s < 5; ++s)
    for (int beta = 0; beta < 2; ++beta) {
      double error = check(sgemm, ta, tb, shapes[s][0], shapes[s][1],
                           shapes[s][2], shapes[s][3], (float)beta);
      if (!(error <= worst))
        worst = error;
    }
  return worst;
}

/* The refusals the tests' RUN lines ask for by name: a leading dimension
 * of C shorter than its rows ("short-leading") and a negative m
 * ("negative"). Returns whether `what` named one (the GEMM ends the
 * process first when it refuses, as it should). */
static int runRefusal(GemmFunction sgemm, const char *what) {
  static float a[64], b[64], c[64];
  if (strcmp(what, "short-leading") == 0) {
    sgemm(1, 0, 0, 4, 5, 6, a, 6, 0, b, 5, 0, 1.0f, c, 3, 0);
    return 1;
  }
  if (strcmp(what, "negative") == 0) {
    sgemm(1, 0, 0, -4, 5, 6, a, 6, 0, b, 5, 0, 1.0f, c, 5, 0);
    return 1;
  }
  return 0;
}

#endif /* HETERO_TEST_RUNTIME_GEMM_CHECK_H */
