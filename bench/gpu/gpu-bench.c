/*===- gpu-bench.c - hetero's generated GPU code against the libraries ----===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* Drives the functions of kernels.mlir, lowered by hetero-lower-to-gpu and
 * linked in (bench/gpu.sh builds one binary per matmul mode), on device
 * buffers.
 *
 *   gpu-bench check   the lowered functions against a host reference on
 *                     odd shapes (partial tiles), exit status 1 on a miss
 *   gpu-bench bench   times against a baseline run in the same process:
 *                     the product against cublasSgemm on the same shapes,
 *                     the element-wise and reduction kernels and the
 *                     compression kernels against a device-to-device copy
 *
 * Bandwidths count the bytes read and written (a copy of b bytes moves 2b).
 * Calls are queued back to back, as the generated host code queues its
 * launches and products; each timed batch, ours and the baselines', ends
 * with one device synchronisation. */

#include "hetero-rt/compress_cuda.h"
#include "hetero-rt/gpu.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The lowered functions, with each memref expanded into (allocated,
 * aligned, offset, sizes..., strides...). */
#define MEMREF1 float *, float *, int64_t, int64_t, int64_t
#define MEMREF2 float *, float *, int64_t, int64_t, int64_t, int64_t, int64_t
void matmul(MEMREF2, MEMREF2, MEMREF2);
void gelu(MEMREF1, MEMREF1);
void rowsum(MEMREF2, MEMREF1);
void layer(MEMREF2, MEMREF2, MEMREF2);
void rowsum_tensor(MEMREF2, MEMREF1); /* 8192 x 8192 */
#define ARG1(p, n) (p), (p), 0, (int64_t)(n), 1
#define ARG2(p, r, c) (p), (p), 0, (int64_t)(r), (int64_t)(c), (int64_t)(c), 1

#define CUDA(call)                                                             \
  do {                                                                         \
    cudaError_t error_ = (call);                                               \
    if (error_ != cudaSuccess) {                                               \
      fprintf(stderr, "gpu-bench: %s failed: %s\n", #call,                     \
              cudaGetErrorString(error_));                                     \
      exit(2);                                                                 \
    }                                                                          \
  } while (0)
#define BLAS(call)                                                             \
  do {                                                                         \
    cublasStatus_t status_ = (call);                                           \
    if (status_ != CUBLAS_STATUS_SUCCESS) {                                    \
      fprintf(stderr, "gpu-bench: %s failed: %s\n", #call,                     \
              cublasGetStatusString(status_));                                 \
      exit(2);                                                                 \
    }                                                                          \
  } while (0)

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static float *device(size_t count) {
  float *p = NULL;
  CUDA(cudaMalloc((void **)&p, count * sizeof(float)));
  return p;
}

/* Small integers, so that products and sums are exact in f32. */
static float *integers(size_t count, unsigned seed) {
  float *p = malloc(count * sizeof(float));
  for (size_t i = 0; i < count; ++i) {
    seed = seed * 1103515245u + 12345u;
    p[i] = (float)((int)((seed >> 16) % 5) - 2);
  }
  return p;
}

static float geluHost(float v) {
  return 0.5f * v * (1.0f + tanhf(0.797884583f * (v + 0.044715f * v * v * v)));
}

/* Runs `sum` (a row sum's ABI) on rows x cols small integers and prints
 * how many rows differ from the host's sums; returns that count. */
static int64_t checkRowSums(const char *name, void (*sum)(MEMREF2, MEMREF1),
                            int64_t rows, int64_t cols, unsigned seed) {
  float *r = integers(rows * cols, seed), *s = malloc(rows * sizeof(float));
  float *dr = device(rows * cols), *ds = device(rows);
  CUDA(cudaMemcpy(dr, r, rows * cols * sizeof(float), cudaMemcpyHostToDevice));
  sum(ARG2(dr, rows, cols), ARG1(ds, rows));
  CUDA(cudaDeviceSynchronize()); /* the launches are asynchronous */
  CUDA(cudaMemcpy(s, ds, rows * sizeof(float), cudaMemcpyDeviceToHost));
  int64_t wrong = 0;
  for (int64_t i = 0; i < rows; ++i) {
    float expected = 0;
    for (int64_t j = 0; j < cols; ++j)
      expected += r[i * cols + j];
    wrong += s[i] != expected;
  }
  printf("%s %lldx%lld: %lld of %lld rows differ\n", name, (long long)rows,
         (long long)cols, (long long)wrong, (long long)rows);
  CUDA(cudaFree(dr));
  CUDA(cudaFree(ds));
  free(r);
  free(s);
  return wrong;
}

static int check(void) {
  const int64_t m = 129, n = 67, k = 95, rows = 301, cols = 1003;
  float *a = integers(m * k, 1), *b = integers(k * n, 2);
  float *c = malloc(m * n * sizeof(float));
  float *da = device(m * k), *db = device(k * n), *dc = device(m * n);
  CUDA(cudaMemcpy(da, a, m * k * sizeof(float), cudaMemcpyHostToDevice));
  CUDA(cudaMemcpy(db, b, k * n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA(cudaMemset(dc, 0x7f, m * n * sizeof(float))); /* not zero: fill must */
  matmul(ARG2(da, m, k), ARG2(db, k, n), ARG2(dc, m, n));
  CUDA(cudaDeviceSynchronize()); /* the launches are asynchronous */
  CUDA(cudaMemcpy(c, dc, m * n * sizeof(float), cudaMemcpyDeviceToHost));
  int64_t wrong = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float expected = 0;
      for (int64_t l = 0; l < k; ++l)
        expected += a[i * k + l] * b[l * n + j];
      wrong += c[i * n + j] != expected;
    }
  printf("matmul %lldx%lldx%lld: %lld of %lld elements differ\n", (long long)m,
         (long long)n, (long long)k, (long long)wrong, (long long)(m * n));

  const int64_t count = 100003;
  float *x = malloc(count * sizeof(float)), *y = malloc(count * sizeof(float));
  for (int64_t i = 0; i < count; ++i)
    x[i] = -6.0f + 12.0f * (float)i / (float)count;
  float *dx = device(count), *dy = device(count);
  CUDA(cudaMemcpy(dx, x, count * sizeof(float), cudaMemcpyHostToDevice));
  gelu(ARG1(dx, count), ARG1(dy, count));
  CUDA(cudaDeviceSynchronize()); /* the launches are asynchronous */
  CUDA(cudaMemcpy(y, dy, count * sizeof(float), cudaMemcpyDeviceToHost));
  /* Relative where |gelu| > 1, absolute below: in the far negative tail
   * 1 + tanh cancels, and one ulp of tanh there is a large relative change
   * of a result near 0. */
  double worst = 0;
  for (int64_t i = 0; i < count; ++i) {
    double expected = geluHost(x[i]);
    worst =
        fmax(worst, fabs((double)y[i] - expected) / fmax(1.0, fabs(expected)));
  }
  printf("gelu %lld: largest error %s 1e-5 (%.1e)\n", (long long)count,
         worst <= 1e-5 ? "within" : "BEYOND", worst);

  int64_t rowsWrong = checkRowSums("rowsum", rowsum, rows, cols, 3);

  /* relu(a b): the product and the activation are device temporaries. */
  float *dl = device(m * n), *l = malloc(m * n * sizeof(float));
  layer(ARG2(da, m, k), ARG2(db, k, n), ARG2(dl, m, n));
  CUDA(cudaDeviceSynchronize()); /* the launches are asynchronous */
  CUDA(cudaMemcpy(l, dl, m * n * sizeof(float), cudaMemcpyDeviceToHost));
  int64_t layerWrong = 0;
  for (int64_t i = 0; i < m * n; ++i)
    layerWrong += l[i] != fmaxf(c[i], 0.0f);
  printf("layer %lldx%lldx%lld: %lld of %lld elements differ\n", (long long)m,
         (long long)n, (long long)k, (long long)layerWrong, (long long)(m * n));

  /* The split row sum: integers, so any order of the partials is exact. */
  int64_t splitWrong =
      checkRowSums("rowsum_tensor", rowsum_tensor, 8192, 8192, 4);
  return wrong || worst > 1e-5 || rowsWrong || layerWrong || splitWrong;
}

/* Seconds per call of `body`, the best of 5 rounds of `reps` calls after
 * `reps` warm-up calls. */
#define TIME(seconds, reps, body)                                              \
  do {                                                                         \
    for (int w_ = 0; w_ < (reps); ++w_) {                                      \
      body;                                                                    \
    }                                                                          \
    CUDA(cudaDeviceSynchronize());                                             \
    (seconds) = 1e30;                                                          \
    for (int round_ = 0; round_ < 5; ++round_) {                               \
      double start_ = now();                                                   \
      for (int r_ = 0; r_ < (reps); ++r_) {                                    \
        body;                                                                  \
      }                                                                        \
      CUDA(cudaDeviceSynchronize());                                           \
      double t_ = (now() - start_) / (reps);                                   \
      if (t_ < (seconds))                                                      \
        (seconds) = t_;                                                        \
    }                                                                          \
  } while (0)

static void benchMatmul(cublasHandle_t handle) {
  static const int64_t shapes[][3] = {{4096, 4096, 4096},
                                      {2048, 3072, 768},
                                      {2048, 768, 3072},
                                      {8192, 768, 768},
                                      {512, 512, 512}};
  const float one = 1.0f, zero = 0.0f;
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i) {
    int64_t m = shapes[i][0], n = shapes[i][1], k = shapes[i][2];
    float *da = device(m * k), *db = device(k * n), *dc = device(m * n);
    CUDA(cudaMemset(da, 0, m * k * sizeof(float)));
    CUDA(cudaMemset(db, 0, k * n * sizeof(float)));
    double flops = 2.0 * m * n * k, ours, blas;
    int reps = flops > 1e11 ? 5 : 20;
    TIME(ours, reps, matmul(ARG2(da, m, k), ARG2(db, k, n), ARG2(dc, m, n)));
    TIME(blas, reps, {
      BLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m, (int)k,
                       &one, db, (int)n, da, (int)k, &zero, dc, (int)n));
    });
    printf("matmul %lldx%lldx%lld: %.2f TFLOP/s, cublasSgemm %.2f TFLOP/s, "
           "ratio %.3f\n",
           (long long)m, (long long)n, (long long)k, flops / ours / 1e12,
           flops / blas / 1e12, blas / ours);
    if (i == 0) {
      /* The tensor-level layer: allocation of two temporaries, the
       * product, the activation and a copy, against the product alone. */
      double whole;
      TIME(whole, reps, layer(ARG2(da, m, k), ARG2(db, k, n), ARG2(dc, m, n)));
      printf("layer %lldx%lldx%lld (product, relu, copy, 2 device "
             "temporaries): %.3f ms, cublasSgemm %.3f ms, ratio %.3f\n",
             (long long)m, (long long)n, (long long)k, whole * 1e3, blas * 1e3,
             blas / whole);
    }
    CUDA(cudaFree(da));
    CUDA(cudaFree(db));
    CUDA(cudaFree(dc));
  }
}

/* Prints `name`'s bandwidth (bytes moved per call, seconds per call)
 * against the copy's. */
static void report(const char *name, double bytes, double seconds,
                   double copyBandwidth) {
  double bandwidth = bytes / seconds / 1e9;
  printf("%s: %.0f GB/s, device copy %.0f GB/s, ratio %.3f\n", name, bandwidth,
         copyBandwidth, bandwidth / copyBandwidth);
}

static void benchMemory(cudaStream_t stream) {
  const int64_t count = 64 << 20, rows = 8192, cols = 8192;
  float *dx = device(count), *dy = device(count);
  CUDA(cudaMemset(dx, 0, count * sizeof(float)));
  double copy;
  TIME(copy, 10, {
    CUDA(cudaMemcpyAsync(dy, dx, count * sizeof(float),
                         cudaMemcpyDeviceToDevice, stream));
  });
  double copyBandwidth = 2.0 * count * sizeof(float) / copy / 1e9;
  printf("device copy of %lld MiB: %.0f GB/s (read + write)\n",
         (long long)(count * sizeof(float) >> 20), copyBandwidth);

  double seconds;
  TIME(seconds, 10, gelu(ARG1(dx, count), ARG1(dy, count)));
  report("gelu (generated, 64 Mi elements)", 2.0 * count * sizeof(float),
         seconds, copyBandwidth);
  TIME(seconds, 10, rowsum(ARG2(dx, rows, cols), ARG1(dy, rows)));
  report("rowsum (generated, 8192x8192)",
         (double)(rows * cols + rows) * sizeof(float), seconds, copyBandwidth);
  TIME(seconds, 10, rowsum_tensor(ARG2(dx, rows, cols), ARG1(dy, rows)));
  report("rowsum_tensor (split reduction, 8192x8192)",
         (double)(rows * cols + rows) * sizeof(float), seconds, copyBandwidth);

  uint16_t *halves = NULL;
  uint32_t *words = NULL, *indices = NULL;
  int8_t *steps = NULL;
  CUDA(cudaMalloc((void **)&halves, count * sizeof(uint16_t)));
  CUDA(cudaMalloc((void **)&words, (count / 32) * sizeof(uint32_t)));
  CUDA(cudaMalloc((void **)&steps, count));
  const int64_t k = count / 100;
  CUDA(cudaMalloc((void **)&indices, k * sizeof(uint32_t)));
  float scale = 0, norm = 0;
  /* Gradient-like data: the copy's zeros would make top-k trivial. */
  float *host = malloc(count * sizeof(float));
  for (int64_t i = 0; i < count; ++i)
    host[i] = sinf(0.37f * (float)i) * (1.0f + (float)(i % 7));
  CUDA(cudaMemcpy(dx, host, count * sizeof(float), cudaMemcpyHostToDevice));
#define COMPRESS(name, bytes, call)                                            \
  do {                                                                         \
    TIME(seconds, 5, {                                                         \
      if ((call) != 0) {                                                       \
        fprintf(stderr, "gpu-bench: %s failed\n", #call);                      \
        exit(2);                                                               \
      }                                                                        \
    });                                                                        \
    report(name, (double)(bytes), seconds, copyBandwidth);                     \
  } while (0)
  COMPRESS("hrt_cuda_to_fp16 (64 Mi)", count * 6,
           hrt_cuda_to_fp16(dx, count, halves, stream));
  COMPRESS("hrt_cuda_pack_signs (64 Mi)", count * 4 + count / 8,
           hrt_cuda_pack_signs(dx, count, words, stream));
  COMPRESS("hrt_cuda_efsignsgd (64 Mi)", count * 4 + count / 8,
           hrt_cuda_efsignsgd(dx, count, words, &scale, stream));
  COMPRESS("hrt_cuda_qsgd (64 Mi, 127 levels)", count * 5,
           hrt_cuda_qsgd(dx, count, 127, 7, steps, &norm, stream));
  COMPRESS("hrt_cuda_topk (64 Mi, 1%)", count * 4 + k * 8,
           hrt_cuda_topk(dx, count, k, indices, dy, stream));
}

int main(int argc, char **argv) {
  if (argc != 2 || (strcmp(argv[1], "check") && strcmp(argv[1], "bench"))) {
    fprintf(stderr, "usage: %s check|bench\n", argv[0]);
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  /* The runtime API on the device the compiled code chose. */
  CUDA(cudaSetDevice(hrt_cuda_device()));
  if (!strcmp(argv[1], "check"))
    return check();
  struct cudaDeviceProp properties;
  CUDA(cudaGetDeviceProperties(&properties, hrt_cuda_device()));
  printf("device: %s, %d multiprocessors\n", properties.name,
         properties.multiProcessorCount);
  cudaStream_t stream = (cudaStream_t)hrt_cuda_stream();
  cublasHandle_t handle;
  BLAS(cublasCreate(&handle));
  BLAS(cublasSetStream(handle, stream));
  benchMatmul(handle);
  benchMemory(stream);
  return 0;
}
