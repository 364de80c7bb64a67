/*===- hrt-compressed.c - compressed all-reduce against a reference --------===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* REQUIRES: mpi
 * RUN: %mpirun -np 2 hrt-compressed | FileCheck %s
 * RUN: %mpirun -np 4 hrt-compressed | FileCheck %s
 * RUN: %mpirun -np 4 hrt-compressed --hierarchical | FileCheck %s
 * RUN: %mpirun -np 2 hrt-compressed-hosted | FileCheck %s
 * RUN: %mpirun -np 4 hrt-compressed-hosted --hierarchical | FileCheck %s
 *
 * Every compressor under every scheme it supports, with and without error
 * feedback, over 3 iterations: the result of hrt_compressed_all_reduce on
 * every rank equals, bit for bit, the same compress / aggregate chain that
 * one process computes from all the ranks' gradients (each rank's residual
 * simulated alongside). Rank 0 prints one line per case, the number of
 * elements that differ on any rank. With --hierarchical, 4 ranks form 2
 * nodes of 2: the reference sums each node's two gradients (one float
 * addition, exact in either order) and runs the chain over the 2 node sums,
 * with the residuals on each node's first rank.
 *
 * Built as hrt-compressed-device (HRT_TEST_DEVICE), the same cases run with
 * HRT_PLACEMENT_DEVICE on device buffers (the data and the residual): the
 * device kernels compress and sum, so a result may differ from the host
 * chain in its last bits (sums in another order, atomics); an element
 * counts as a mismatch when it is off by more than 1e-4 (1 + |expected|).
 *
 * Built as hrt-compressed-hosted (HRT_TEST_HOSTED_DEVICE), the cases run
 * with HRT_PLACEMENT_DEVICE on a stand-in device registered through
 * hrt_register_device_compression whose memory is host memory and whose
 * kernels are the host's payload kernels: the device path of the runtime
 * (its buffers, its exchanges through staging copies on MPI, its residual)
 * runs on any machine and must give the host path's bits.
 *
 * CHECK-COUNT-39: : 0 mismatches
 * CHECK: all cases match
 */

#include "Inputs/hrt-test.h"
#include "hetero-rt/compress.h"
#ifdef HRT_TEST_DEVICE
#include "hetero-rt/gpu.h"
#endif

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { N = 1000, ITERATIONS = 3, MAX_RANKS = 8 };

static float gradient(int rank, int iteration, int i) {
  return sinf(0.37f * i + 1.3f * rank + 0.7f * iteration) * (1.0f + rank) +
         0.01f * (float)((i * 7919) % 13);
}

/* Whether a result element differs from the reference. */
static int differs(float actual, float expected) {
#ifdef HRT_TEST_DEVICE
  return !(fabsf(actual - expected) <= 1e-4f * (1.0f + fabsf(expected)));
#else
  return actual != expected;
#endif
}

#ifdef HRT_TEST_HOSTED_DEVICE
static int hostedIsDevice(const void *pointer) { return pointer != NULL; }
static void *hostedAllocate(size_t bytes) { return calloc(bytes, 1); }
static void hostedRelease(void *pointer) { free(pointer); }
static void hostedCopy(void *to, const void *from, size_t bytes) {
  memmove(to, from, bytes);
}
static void hostedCompress(const hrt_compression *spec, const float *g,
                           size_t n, uint64_t seed, char *payload) {
  hrt_compress_payload(spec, g, n, seed, payload);
}
static void hostedDecompressAdd(const hrt_compression *spec,
                                const char *payload, size_t n, float *out) {
  hrt_decompress_add(spec, payload, n, out);
}
static void hostedAxpby(float alpha, const float *x, float beta, float *y,
                        size_t n) {
  for (size_t i = 0; i < n; ++i)
    y[i] = beta == 0.0f ? x[i] * alpha : beta * y[i] + alpha * x[i];
}
static void hostedSynchronize(void) {}
static const hrt_device_compression hostedDevice = {
    hostedIsDevice,      hostedAllocate, hostedRelease,    hostedCopy,
    hostedCompress, hostedDecompressAdd, hostedAxpby, hostedSynchronize};
#endif

static const char *names[] = {"none", "fp16", "bf16", "topk", "dgc",
                              "randomk", "efsignsgd", "onebit", "qsgd"};
static const char *schemes[] = {"allreduce", "allgather", "alltoall"};

/* The chain one process computes: what `size` senders of g send,
 * aggregated. */
static void reference(hrt_compression spec, int size, float g[][N],
                      float residuals[][N], float *out) {
  memset(out, 0, sizeof(float) * N);
  int feedback = spec.residual != NULL;
  if (spec.scheme != HRT_SCHEME_ALLTOALL) {
    for (int r = 0; r < size; ++r) {
      spec.residual = feedback ? residuals[r] : NULL;
      hrt_compress_roundtrip_add(&spec, g[r], N, r, out);
    }
    return;
  }
  /* All-to-all: error feedback over the chunks, then each chunk summed by
   * its owner and compressed once more. */
  float corrected[MAX_RANKS][N];
  for (int r = 0; r < size; ++r) {
    for (int i = 0; i < N; ++i)
      corrected[r][i] = g[r][i] + (feedback ? residuals[r][i] : 0.0f);
    if (!feedback)
      continue;
    float sent[N];
    memset(sent, 0, sizeof sent);
    for (int c = 0; c < size; ++c) {
      hrt_compression chunk = spec;
      chunk.seed = spec.seed + c + 1;
      chunk.residual = NULL;
      size_t begin = (size_t)c * N / size, end = (size_t)(c + 1) * N / size;
      hrt_compress_roundtrip_add(&chunk, corrected[r] + begin, end - begin, r,
                                 sent + begin);
    }
    for (int i = 0; i < N; ++i)
      residuals[r][i] = corrected[r][i] - sent[i];
  }
  for (int c = 0; c < size; ++c) {
    hrt_compression chunk = spec;
    chunk.seed = spec.seed + c + 1;
    chunk.residual = NULL;
    size_t begin = (size_t)c * N / size, end = (size_t)(c + 1) * N / size;
    float aggregate[N];
    memset(aggregate, 0, sizeof aggregate);
    for (int r = 0; r < size; ++r)
      hrt_compress_roundtrip_add(&chunk, corrected[r] + begin, end - begin, r,
                                 aggregate);
    hrt_compress_roundtrip_add(&chunk, aggregate, end - begin, c,
                               out + begin);
  }
}

int main(int argc, char **argv) {
  int rank = 0, size = 1;
  hrt_comm world = hrt_test_init(&argc, &argv, &rank, &size);
  int hierarchical = argc > 1 && strcmp(argv[1], "--hierarchical") == 0;
  int nodeSize = hierarchical ? 2 : 1;
  int senders = size / nodeSize;
  static float data[N], expected[N], residual[N];
  static float residuals[MAX_RANKS][N], sent[MAX_RANKS][N];
  long long allMismatches = 0;
#ifdef HRT_TEST_HOSTED_DEVICE
  hrt_register_device_compression(&hostedDevice);
#endif
#ifdef HRT_TEST_DEVICE
  /* Device copies of the data and the residual, which the collective
   * works on in place. */
  float *deviceData = (float *)hrt_cuda_mirror(data, sizeof data);
  float *deviceResidual = (float *)hrt_cuda_mirror(residual, sizeof residual);
#endif
  for (int compressor = HRT_COMPRESS_NONE; compressor <= HRT_COMPRESS_QSGD;
       ++compressor)
    for (int scheme = HRT_SCHEME_ALLREDUCE; scheme <= HRT_SCHEME_ALLTOALL;
         ++scheme) {
      int linear = compressor <= HRT_COMPRESS_BF16;
      if (scheme == HRT_SCHEME_ALLREDUCE && !linear)
        continue; /* only casts may be summed */
      for (int feedback = 0; feedback <= 1; ++feedback) {
        if (feedback && linear && compressor == HRT_COMPRESS_NONE)
          continue;
        hrt_compression spec = {(hrt_compressor)compressor, 0.05, 8,
                                (hrt_scheme)scheme, 1234, NULL, nodeSize};
        memset(residual, 0, sizeof residual);
#ifdef HRT_TEST_HOSTED_DEVICE
        spec.placement = HRT_PLACEMENT_DEVICE;
#endif
#ifdef HRT_TEST_DEVICE
        spec.placement = HRT_PLACEMENT_DEVICE;
        hrt_cuda_copy(deviceResidual, residual, sizeof residual);
#endif
        memset(residuals, 0, sizeof residuals);
        long long mismatches = 0;
        for (int iteration = 0; iteration < ITERATIONS; ++iteration) {
          spec.seed = 1234 + iteration;
          for (int i = 0; i < N; ++i)
            data[i] = gradient(rank, iteration, i);
#ifdef HRT_TEST_DEVICE
          hrt_cuda_copy(deviceData, data, sizeof data);
          spec.residual = feedback ? deviceResidual : NULL;
          CHECK_OK(
              hrt_compressed_all_reduce(deviceData, N, &spec, HRT_AVG, world));
          hrt_cuda_copy(data, deviceData, sizeof data);
          hrt_cuda_copy(residual, deviceResidual, sizeof residual);
#else
          spec.residual = feedback ? residual : NULL;
          CHECK_OK(hrt_compressed_all_reduce(data, N, &spec, HRT_AVG, world));
#endif
          spec.residual = feedback ? residual : NULL;
          /* What each sender contributes: a rank's gradient, or a node's
           * sum. */
          for (int s = 0; s < senders; ++s)
            for (int i = 0; i < N; ++i) {
              sent[s][i] = gradient(s * nodeSize, iteration, i);
              if (hierarchical)
                sent[s][i] += gradient(s * nodeSize + 1, iteration, i);
            }
          reference(spec, senders, sent, residuals, expected);
          for (int i = 0; i < N; ++i)
            mismatches += differs(data[i], expected[i] * (1.0f / size));
          /* This rank's residual matches its simulation (in a node, only
           * the first rank compresses). */
          if (feedback && rank % nodeSize == 0)
            for (int i = 0; i < N; ++i)
              mismatches += differs(residual[i], residuals[rank / nodeSize][i]);
        }
        CHECK_OK(hrt_all_reduce(&mismatches, &mismatches, 1, HRT_INT64,
                                HRT_SUM, world));
        allMismatches += mismatches;
        if (rank == 0)
          printf("%s %s%s%s: %lld mismatches\n", names[compressor],
                 schemes[scheme], feedback ? " error-feedback" : "",
                 hierarchical ? " hierarchical" : "", mismatches);
      }
    }
  if (rank == 0 && allMismatches == 0)
    printf("all cases match\n");
  CHECK_OK(hrt_finalize());
  return 0;
}
