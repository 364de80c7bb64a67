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
HRT_EXPORT void hrt_topk(const float *g, size_t n, size_t k, uint32_t *indices,
                         float *values);

/* DGC: estimates the top-`ratio` threshold from a seeded sample of
 * `sample` elements, keeps the elements at or above it (at most
 * `capacity`), and returns how many it kept. */
HRT_EXPORT size_t hrt_dgc(const float *g, size_t n, double ratio, size_t sample,
                          uint64_t seed, size_t capacity, uint32_t *indices,
                          float *values);

/* DGC's threshold in two steps, for a caller whose gradient is elsewhere
 * (device memory): the `sample` positions of [0, n) that `seed` draws,
 * and the threshold for keeping `ratio` of the elements, from the
 * magnitudes found there (`magnitudes` is reordered). hrt_dgc keeps every
 * element at or above that threshold. */
HRT_EXPORT void hrt_dgc_sample(size_t n, size_t sample, uint64_t seed,
                               uint32_t *positions);
HRT_EXPORT float hrt_dgc_threshold(float *magnitudes, size_t sample,
                                   double ratio);

/* Random-k: k distinct indices drawn from `seed` alone, ascending. */
HRT_EXPORT void hrt_randomk(const float *g, size_t n, size_t k, uint64_t seed,
                            uint32_t *indices, float *values);
/* Random-k's indices alone. */
HRT_EXPORT void hrt_randomk_indices(size_t n, size_t k, uint64_t seed,
                                    uint32_t *indices);

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

/*===----------------------------------------------------------------------===*
 * Compressed all-reduce (MPI backend, float32 host buffers).
 *
 *  - allgather (indivisible): each rank compresses its buffer once; the
 *    compressed payloads are all-gathered and every rank decompresses and
 *    sums them in rank order.
 *  - alltoall (divisible): the buffer is cut into one chunk per rank; chunk
 *    c of every rank goes to rank c, which decompresses and sums them,
 *    compresses the sum again and all-gathers it.
 *  - allreduce: for the casts (fp16, bf16), whose compressed values can be
 *    summed: here the casts are all-gathered and summed in float32.
 *
 * With `residual` (n floats, kept by the caller between calls) error
 * feedback compresses g + residual and leaves the part not sent in it.
 * `seed` must be the same on every rank for a call (random-k picks its
 * indices from it); QSGD and DGC mix the rank into it.
 *===----------------------------------------------------------------------===*/
typedef HRT_ENUM(hrt_compressor) {
  HRT_COMPRESS_NONE = 0,
  HRT_COMPRESS_FP16 = 1,
  HRT_COMPRESS_BF16 = 2,
  HRT_COMPRESS_TOPK = 3,
  HRT_COMPRESS_DGC = 4,
  HRT_COMPRESS_RANDOMK = 5,
  HRT_COMPRESS_EFSIGNSGD = 6,
  HRT_COMPRESS_ONEBIT = 7,
  HRT_COMPRESS_QSGD = 8,
} hrt_compressor;

/* Where a compressed all-reduce compresses and decompresses: the host's
 * kernels (above) on host buffers, or the device kernels of
 * libhetero_rt_cuda on device buffers (include/hetero-rt/compress_cuda.h).
 * With HRT_PLACEMENT_DEVICE the data and the residual must be device
 * memory and libhetero_rt_cuda loaded; the payloads cross to the host
 * only when the backend moves host memory (MPI). */
typedef HRT_ENUM(hrt_placement) {
  HRT_PLACEMENT_HOST = 0,
  HRT_PLACEMENT_DEVICE = 1,
} hrt_placement;

typedef HRT_ENUM(hrt_scheme) {
  HRT_SCHEME_ALLREDUCE = 0,
  HRT_SCHEME_ALLGATHER = 1,
  HRT_SCHEME_ALLTOALL = 2,
} hrt_scheme;

typedef struct hrt_compression {
  hrt_compressor compressor;
  double ratio; /* kept fraction: topk, dgc, randomk */
  int levels;   /* qsgd */
  hrt_scheme scheme;
  uint64_t seed;
  float *residual; /* error feedback, or NULL */
  /* Hierarchical when > 1: ranks r / node_size form nodes; each node sums
   * densely to its first rank, those ranks run the compressed collective,
   * and each node's first rank broadcasts the result. Flat when the nodes
   * do not split the communicator into several. */
  int node_size;
  hrt_placement placement; /* zero: the host */
} hrt_compression;

/* The device side of HRT_PLACEMENT_DEVICE, which libhetero_rt_cuda
 * registers when it is loaded. Every call works on the calling thread's
 * device and stream and ends the process on a CUDA error (as compiled
 * code's calls do); pointers are device memory unless named otherwise. */
typedef struct hrt_device_compression {
  /* Whether `pointer` is device memory. */
  int (*is_device)(const void *pointer);
  /* `bytes` of zeroed device memory, and its release. */
  void *(*allocate)(size_t bytes);
  void (*release)(void *pointer);
  /* Copies between any two of host and device memory, then waits for the
   * thread's stream. */
  void (*copy)(void *to, const void *from, size_t bytes);
  /* hrt_compressed_size(spec, n) bytes of payload, laid out as the host
   * kernels lay it out, compressed with `seed`. */
  void (*compress)(const hrt_compression *spec, const float *g, size_t n,
                   uint64_t seed, char *payload);
  /* out += decompress(payload). */
  void (*decompress_add)(const hrt_compression *spec, const char *payload,
                         size_t n, float *out);
  /* y[i] = alpha x[i] + beta y[i] (y not read when beta is 0). */
  void (*axpby)(float alpha, const float *x, float beta, float *y, size_t n);
  /* Returns when the work queued on the thread's stream is done. */
  void (*synchronize)(void);
} hrt_device_compression;

/* Makes `ops` (NULL: none) the device side of every later compressed
 * all-reduce with HRT_PLACEMENT_DEVICE. */
HRT_EXPORT void
hrt_register_device_compression(const hrt_device_compression *ops);

/* Bytes one rank's compressed payload of n elements takes on the wire. */
HRT_EXPORT size_t hrt_compressed_size(const hrt_compression *spec, size_t n);

/* One payload as a compressed all-reduce sends it: g compressed with
 * `seed` (the all-reduce mixes the rank into it, but for random-k) into
 * hrt_compressed_size(spec, n) bytes, zeroed beforehand, laid out as the
 * device kernels lay it out; and its decompression added to `out`. The
 * residual of `spec` is not used. */
HRT_EXPORT void hrt_compress_payload(const hrt_compression *spec,
                                     const float *g, size_t n, uint64_t seed,
                                     void *payload);
HRT_EXPORT void hrt_decompress_add(const hrt_compression *spec,
                                   const void *payload, size_t n, float *out);

/* out += decompress(compress(g)) as one rank of `rank` would send it; the
 * single-process reference of what a compressed all-reduce aggregates. */
HRT_EXPORT void hrt_compress_roundtrip_add(const hrt_compression *spec,
                                           const float *g, size_t n, int rank,
                                           float *out);

/* In place: data <- the sum (HRT_SUM) or mean (HRT_AVG) over the ranks of
 * `comm` of every rank's compressed data. */
HRT_EXPORT hrt_status hrt_compressed_all_reduce(float *data, size_t n,
                                                const hrt_compression *spec,
                                                hrt_reduce_op op,
                                                hrt_comm comm);

/*===----------------------------------------------------------------------===*
 * Sparse all-reduce (Zen), float32 host buffers, MPI backend. The non-zero
 * elements of every rank are pushed to the rank that owns their hash
 * partition (all-to-all), summed there in rank order, and pulled back by
 * every rank (all-gather) as (index, value) pairs (COO) or as a hash bitmap
 * plus the values. The hash seeds come from rank 0 (broadcast once per
 * communicator). Equal to a dense all-reduce up to the order of the sums.
 *===----------------------------------------------------------------------===*/
typedef HRT_ENUM(hrt_sparse_format) {
  HRT_SPARSE_COO = 1,
  HRT_SPARSE_HASH_BITMAP = 2,
  /* AGsparse: every rank all-gathers every rank's (index, value) pairs and
   * sums them in rank order; no partitions, no pull. */
  HRT_SPARSE_ALLGATHER = 3,
  /* Decided at every call from the gradients at hand: the ranks share
   * their non-zero counts and link estimates, and all take the cheapest of
   * dense, AGsparse and Zen (COO or hash-bitmap pull) in Zen's cost model
   * (include/hetero/Sparse/SparseCost.h). */
  HRT_SPARSE_ONLINE = 4,
} hrt_sparse_format;

HRT_EXPORT hrt_status hrt_sparse_all_reduce(float *data, size_t n,
                                            hrt_sparse_format format,
                                            hrt_reduce_op op, hrt_comm comm);

/* Bytes the last hrt_sparse_all_reduce of this process pushed and pulled
 * (its own payloads, padding included; AGsparse pushes nothing). */
HRT_EXPORT void hrt_sparse_last_traffic(size_t *pushed, size_t *pulled);
/* The scheme the last hrt_sparse_all_reduce of this process ran: 0 for a
 * dense all-reduce, else its format. */
HRT_EXPORT int hrt_sparse_last_format(void);
/* The link HRT_SPARSE_ONLINE's model assumes on this rank (the ranks use
 * the mean of theirs): latency and time per byte. Until it is set, the
 * mean of this rank's measured link estimates (hrt_link_estimates), else
 * 0.05 ms and 1 GB/s. A negative value goes back to that default. */
HRT_EXPORT hrt_status hrt_sparse_set_link(double alpha_ms, double ms_per_byte);

#ifdef __cplusplus
}
#endif

#endif /* HETERO_RT_COMPRESS_H */
