/*===- compress.h - gradient compression kernels -----------------*- C -*-===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* Host (CPU) kernels for gradient compression, used by the runtime's
 * compressed collectives and callable on their own. float32 gradients;
 * indices are uint32. Sparse results are (index, value) pairs in ascending
 * index order. Seeds make the random kernels reproducible: random-k with
 * the same seed picks the same indices on every rank. */

#ifndef HETERO_RT_COMPRESS_H
#define HETERO_RT_COMPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "hetero-rt/hrt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Exact top-k by magnitude: the k elements of largest |g| (ties: lower
 * index first). */
HRT_EXPORT void hrt_topk(const float *g, size_t n, size_t k,
                         uint32_t *indices, float *values);

/* DGC: estimates the top-`ratio` threshold from a seeded sample of
 * `sample` elements, keeps the elements at or above it (at most
 * `capacity`), and returns how many it kept. */
HRT_EXPORT size_t hrt_dgc(const float *g, size_t n, double ratio,
                          size_t sample, uint64_t seed, size_t capacity,
                          uint32_t *indices, float *values);

/* Random-k: k distinct indices drawn from `seed` alone, ascending. */
HRT_EXPORT void hrt_randomk(const float *g, size_t n, size_t k, uint64_t seed,
                            uint32_t *indices, float *values);

/* Signs, 32 per word (bit i of word w: element 32 w + i is negative),
 * and their inverse; words = ceil(n / 32). */
HRT_EXPORT void hrt_pack_signs(const float *g, size_t n, uint32_t *words);
HRT_EXPORT void hrt_unpack_signs(const uint32_t *words, size_t n, float scale,
                                 float *out);

/* EFSignSGD: the packed signs and scale = mean |g|. */
HRT_EXPORT float hrt_efsignsgd(const float *g, size_t n, uint32_t *words);

/* QSGD with `levels` levels: |g_i| / ||g||_2 is rounded stochastically to
 * one of levels + 1 steps, so that the decompressed value is unbiased.
 * Stores the signed step per element (|step| <= levels <= 127) and
 * returns ||g||_2. */
HRT_EXPORT float hrt_qsgd(const float *g, size_t n, int levels, uint64_t seed,
                          int8_t *steps);
HRT_EXPORT void hrt_qsgd_decompress(const int8_t *steps, size_t n, int levels,
                                    float norm, float *out);

/* IEEE half and bfloat16, round to nearest even. */
HRT_EXPORT void hrt_to_fp16(const float *g, size_t n, uint16_t *out);
HRT_EXPORT void hrt_from_fp16(const uint16_t *in, size_t n, float *out);
HRT_EXPORT void hrt_to_bf16(const float *g, size_t n, uint16_t *out);
HRT_EXPORT void hrt_from_bf16(const uint16_t *in, size_t n, float *out);

/* Decompress-and-aggregate: out[indices[i]] += values[i]. */
HRT_EXPORT void hrt_scatter_add(const uint32_t *indices, const float *values,
                                size_t count, float *out);

#ifdef __cplusplus
}
#endif

#endif /* HETERO_RT_COMPRESS_H */
