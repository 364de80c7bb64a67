/*===- compress_cuda.h - gradient compression kernels on the GPU -*- C -*-===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* Device counterparts of compress.h, in libhetero_rt_cuda (built when CUDA
 * is enabled, for sm_90). Every buffer is a device pointer; `stream` is a
 * cudaStream_t (NULL: the default stream). Each returns the cudaError_t of
 * its launch (0 on success). Selections keep index order. */

#ifndef HETERO_RT_COMPRESS_CUDA_H
#define HETERO_RT_COMPRESS_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

int hrt_cuda_to_fp16(const float *g, size_t n, uint16_t *out, void *stream);
int hrt_cuda_from_fp16(const uint16_t *in, size_t n, float *out, void *stream);
int hrt_cuda_to_bf16(const float *g, size_t n, uint16_t *out, void *stream);
int hrt_cuda_from_bf16(const uint16_t *in, size_t n, float *out, void *stream);
/* 32 signs per word, one warp per word (__ballot_sync). */
int hrt_cuda_pack_signs(const float *g, size_t n, uint32_t *words,
                        void *stream);
int hrt_cuda_unpack_signs(const uint32_t *words, size_t n, float scale,
                          float *out, void *stream);
/* out[i] += +positive where sign bit i is clear, -negative where it is set
 * (EFSignSGD's and 1-bit SGD's decompression, summed). */
int hrt_cuda_unpack_signs_add(const uint32_t *words, size_t n, float positive,
                              float negative, float *out, void *stream);
/* Signs and *scale = mean |g| (a host float). */
int hrt_cuda_efsignsgd(const float *g, size_t n, uint32_t *words, float *scale,
                       void *stream);
/* 1-bit SGD: signs, and the mean |g| of the non-negative and of the
 * negative elements (host floats). */
int hrt_cuda_onebit(const float *g, size_t n, uint32_t *words, float *positive,
                    float *negative, void *stream);
/* y = alpha x + beta y (y not read when beta is 0). */
int hrt_cuda_axpby(float alpha, const float *x, float beta, float *y, size_t n,
                   void *stream);
/* QSGD: signed steps and *norm = ||g||_2 (a host float). */
int hrt_cuda_qsgd(const float *g, size_t n, int levels, uint64_t seed,
                  int8_t *steps, float *norm, void *stream);
int hrt_cuda_qsgd_decompress(const int8_t *steps, size_t n, int levels,
                             float norm, float *out, void *stream);
/* out[indices[i]] += values[i] (atomic). */
int hrt_cuda_scatter_add(const uint32_t *indices, const float *values,
                         size_t count, float *out, void *stream);
/* values[i] = g[indices[i]]: random-k with indices drawn on the host. */
int hrt_cuda_gather(const float *g, const uint32_t *indices, size_t count,
                    float *values, void *stream);
/* Exact top-k by magnitude, ties by lower index, ascending indices. */
int hrt_cuda_topk(const float *g, size_t n, size_t k, uint32_t *indices,
                  float *values, void *stream);
/* DGC's selection: every |g| >= threshold, at most `capacity`; *kept is
 * how many (a host size_t). */
int hrt_cuda_dgc(const float *g, size_t n, float threshold, size_t capacity,
                 uint32_t *indices, float *values, size_t *kept, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* HETERO_RT_COMPRESS_CUDA_H */
