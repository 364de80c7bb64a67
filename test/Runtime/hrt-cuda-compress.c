/*===- hrt-cuda-compress.c - device compression kernels against the host ---===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* REQUIRES: cuda-device
 * RUN: hrt-cuda-compress | FileCheck %s
 *
 * The device kernels give what the host kernels give: the same top-k
 * indices and values, the same packed signs and EFSignSGD scale, the same
 * fp16 bits, and a DGC selection of exactly the elements at or above its
 * threshold.
 *
 * CHECK: topk: same as the host
 * CHECK: signs: same as the host
 * CHECK: fp16: same as the host
 * CHECK: dgc: same as the host
 */

#include "hetero-rt/compress.h"
#include "hetero-rt/compress_cuda.h"

#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 1 << 20, K = N / 100 };

#define CUDA_OK(call)                                                          \
  do {                                                                         \
    if ((call) != 0) {                                                         \
      fprintf(stderr, "%s failed\n", #call);                                   \
      return 2;                                                                \
    }                                                                          \
  } while (0)

static const char *verdict(int same) {
  return same ? "same as the host" : "DIFFERENT from the host";
}

int main(void) {
  float *g = malloc(sizeof(float) * N);
  for (int i = 0; i < N; ++i)
    g[i] = sinf(0.37f * i) * (1.0f + (float)(i % 7));
  float *dg, *dvalues;
  uint32_t *dindices, *dwords;
  uint16_t *dhalves;
  CUDA_OK(cudaMalloc((void **)&dg, sizeof(float) * N));
  CUDA_OK(cudaMalloc((void **)&dvalues, sizeof(float) * N));
  CUDA_OK(cudaMalloc((void **)&dindices, sizeof(uint32_t) * N));
  CUDA_OK(cudaMalloc((void **)&dwords, sizeof(uint32_t) * (N / 32)));
  CUDA_OK(cudaMalloc((void **)&dhalves, sizeof(uint16_t) * N));
  CUDA_OK(cudaMemcpy(dg, g, sizeof(float) * N, cudaMemcpyHostToDevice));

  uint32_t *indices = malloc(sizeof(uint32_t) * N), *got = malloc(sizeof(uint32_t) * N);
  float *values = malloc(sizeof(float) * N), *gotValues = malloc(sizeof(float) * N);
  hrt_topk(g, N, K, indices, values);
  CUDA_OK(hrt_cuda_topk(dg, N, K, dindices, dvalues, NULL));
  CUDA_OK(cudaMemcpy(got, dindices, sizeof(uint32_t) * K, cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(gotValues, dvalues, sizeof(float) * K, cudaMemcpyDeviceToHost));
  printf("topk: %s\n", verdict(!memcmp(got, indices, sizeof(uint32_t) * K) &&
                               !memcmp(gotValues, values, sizeof(float) * K)));

  uint32_t *words = malloc(sizeof(uint32_t) * (N / 32));
  float scale = hrt_efsignsgd(g, N, words), gotScale = 0.0f;
  CUDA_OK(hrt_cuda_efsignsgd(dg, N, dwords, &gotScale, NULL));
  CUDA_OK(cudaMemcpy(got, dwords, sizeof(uint32_t) * (N / 32), cudaMemcpyDeviceToHost));
  printf("signs: %s\n", verdict(!memcmp(got, words, sizeof(uint32_t) * (N / 32)) &&
                                fabsf(gotScale - scale) <= 1e-5f * scale));

  uint16_t *halves = malloc(sizeof(uint16_t) * N), *gotHalves = malloc(sizeof(uint16_t) * N);
  hrt_to_fp16(g, N, halves);
  CUDA_OK(hrt_cuda_to_fp16(dg, N, dhalves, NULL));
  CUDA_OK(cudaMemcpy(gotHalves, dhalves, sizeof(uint16_t) * N, cudaMemcpyDeviceToHost));
  printf("fp16: %s\n", verdict(!memcmp(gotHalves, halves, sizeof(uint16_t) * N)));

  float threshold = 5.5f;
  size_t kept = 0, expected = 0;
  CUDA_OK(hrt_cuda_dgc(dg, N, threshold, N, dindices, dvalues, &kept, NULL));
  CUDA_OK(cudaMemcpy(got, dindices, sizeof(uint32_t) * kept, cudaMemcpyDeviceToHost));
  int same = 1;
  for (int i = 0; i < N; ++i)
    if (fabsf(g[i]) >= threshold)
      same &= expected < kept && got[expected++] == (uint32_t)i;
  printf("dgc: %s\n", verdict(same && expected == kept));
  return 0;
}
