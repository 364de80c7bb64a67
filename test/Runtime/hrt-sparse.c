/*===- hrt-sparse.c - Zen's sparse all-reduce equals the dense one ---------===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* REQUIRES: mpi
 * RUN: %mpirun -np 2 hrt-sparse | FileCheck %s
 * RUN: %mpirun -np 4 hrt-sparse | FileCheck %s
 *
 * Each rank's gradient of 200000 elements holds about 1% non-zeros at
 * skewed (Zipf-like) rows, with values that are multiples of 1/4, so that
 * every sum is exact in float32 whatever its order. The sparse all-reduce
 * in COO and in hash-bitmap form, and AGsparse, summed and averaged,
 * equals the dense all-reduce of the same buffers element for element, on
 * every rank. The online format picks a sparse scheme for these gradients,
 * the dense all-reduce for a gradient without zeros or on a link where
 * latency dominates (every rank agreeing), and still equals the dense
 * result.
 *
 * CHECK: coo sum: 0 mismatches, traffic below 1/10 of dense: yes
 * CHECK: coo avg: 0 mismatches, traffic below 1/10 of dense: yes
 * CHECK: hash_bitmap sum: 0 mismatches, traffic below 1/10 of dense: yes
 * CHECK: hash_bitmap avg: 0 mismatches, traffic below 1/10 of dense: yes
 * CHECK: allgather sum: 0 mismatches, traffic below 1/10 of dense: yes
 * CHECK: allgather avg: 0 mismatches, traffic below 1/10 of dense: yes
 * CHECK: online sparse: 0 mismatches, scheme {{coo|hash_bitmap|allgather}}
 * CHECK: online without zeros: 0 mismatches, scheme dense
 * CHECK: online, 100 ms a message: 0 mismatches, scheme dense
 * CHECK: online, 1 us a byte: 0 mismatches, scheme {{coo|hash_bitmap|allgather}}
 * CHECK: pushed {{[0-9]+}} bytes, pulled {{[0-9]+}} bytes per rank against 800000 dense
 */

#include "Inputs/hrt-test.h"
#include "hetero-rt/compress.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { N = 200000, NONZEROS = 2000 };

static void gradient(int rank, float *g) {
  memset(g, 0, sizeof(float) * N);
  unsigned state = 12345u + 977u * (unsigned)rank;
  for (int j = 0; j < NONZEROS; ++j) {
    state = state * 1664525u + 1013904223u;
    double u = (state >> 8) / 16777216.0;
    /* Zipf-like: row ~ N^u^3 concentrates on the low rows. */
    int row = (int)pow((double)N, u * u * u) - 1;
    int quarters = (int)(state % 41) - 20;
    g[row % N] += 0.25f * (float)(quarters == 0 ? 1 : quarters);
  }
}

int main(int argc, char **argv) {
  CHECK_OK(hrt_init(HRT_BACKEND_MPI, &argc, &argv));
  hrt_comm world;
  int rank = 0;
  CHECK_OK(hrt_comm_world(&world));
  CHECK_OK(hrt_comm_rank(world, &rank));
  static float g[N], dense[N], sparse[N];
  gradient(rank, g);
  const char *formats[] = {"dense", "coo", "hash_bitmap", "allgather"};
  for (int format = HRT_SPARSE_COO; format <= HRT_SPARSE_ALLGATHER; ++format)
    for (int avg = 0; avg <= 1; ++avg) {
      hrt_reduce_op op = avg ? HRT_AVG : HRT_SUM;
      CHECK_OK(hrt_all_reduce(g, dense, N, HRT_FLOAT32, op, world));
      memcpy(sparse, g, sizeof sparse);
      CHECK_OK(hrt_sparse_all_reduce(sparse, N, (hrt_sparse_format)format,
                                     op, world));
      long long mismatches = 0;
      for (int i = 0; i < N; ++i)
        mismatches += sparse[i] != dense[i];
      CHECK_OK(hrt_all_reduce(&mismatches, &mismatches, 1, HRT_INT64,
                              HRT_SUM, world));
      /* A dense fallback would give the same sums: the traffic of every
       * case must be a fraction of the dense all-reduce's. */
      size_t pushed = 0, pulled = 0;
      hrt_sparse_last_traffic(&pushed, &pulled);
      if (rank == 0)
        printf("%s %s: %lld mismatches, traffic below 1/10 of dense: %s\n",
               formats[format], avg ? "avg" : "sum", mismatches,
               10 * (pushed + pulled) < sizeof(float) * (size_t)N ? "yes"
                                                                   : "no");
    }
  /* Online: the same gradient; one without zeros; the sparse one under a
   * configured link, latency-bound and then bandwidth-bound. */
  static float full[N];
  for (int i = 0; i < N; ++i)
    full[i] = 0.25f * (float)(1 + (i + rank) % 7);
  struct {
    const char *what;
    const float *input;
    double alpha_ms, ms_per_byte;
  } cases[] = {{"online sparse", g, -1.0, -1.0},
               {"online without zeros", full, -1.0, -1.0},
               {"online, 100 ms a message", g, 100.0, 1e-6},
               {"online, 1 us a byte", g, 0.0, 1e-3}};
  for (int c = 0; c < 4; ++c) {
    CHECK_OK(hrt_sparse_set_link(cases[c].alpha_ms, cases[c].ms_per_byte));
    CHECK_OK(hrt_all_reduce(cases[c].input, dense, N, HRT_FLOAT32, HRT_SUM,
                            world));
    memcpy(sparse, cases[c].input, sizeof sparse);
    CHECK_OK(
        hrt_sparse_all_reduce(sparse, N, HRT_SPARSE_ONLINE, HRT_SUM, world));
    long long mismatches = 0;
    for (int i = 0; i < N; ++i)
      mismatches += sparse[i] != dense[i];
    CHECK_OK(hrt_all_reduce(&mismatches, &mismatches, 1, HRT_INT64, HRT_SUM,
                            world));
    /* Every rank ran the same scheme: the largest equals the smallest. */
    long long scheme = hrt_sparse_last_format(), lowest = -scheme;
    CHECK_OK(hrt_all_reduce(&scheme, &scheme, 1, HRT_INT64, HRT_MAX, world));
    CHECK_OK(hrt_all_reduce(&lowest, &lowest, 1, HRT_INT64, HRT_MAX, world));
    if (rank == 0)
      printf("%s: %lld mismatches, scheme %s\n", cases[c].what, mismatches,
             scheme == -lowest ? formats[scheme] : "differs between ranks");
  }
  CHECK_OK(hrt_sparse_set_link(-1.0, -1.0));
  size_t pushed = 0, pulled = 0;
  hrt_sparse_last_traffic(&pushed, &pulled);
  if (rank == 0)
    printf("pushed %zu bytes, pulled %zu bytes per rank against %zu dense\n",
           pushed, pulled, sizeof(float) * (size_t)N);
  CHECK_OK(hrt_finalize());
  return 0;
}
