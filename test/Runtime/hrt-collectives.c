/*===- hrt-collectives.c - libhetero_rt results against a local reference --===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* REQUIRES: mpi
 * RUN: %mpirun -np 2 hrt-collectives | FileCheck %s --check-prefix=TWO
 * RUN: %mpirun -np 4 hrt-collectives | FileCheck %s --check-prefix=FOUR
 *
 * TWO-DAG: rank 0 of 2: all checks passed
 * TWO-DAG: rank 1 of 2: all checks passed
 * FOUR-DAG: rank 0 of 4: all checks passed
 * FOUR-DAG: rank 1 of 4: all checks passed
 * FOUR-DAG: rank 2 of 4: all checks passed
 * FOUR-DAG: rank 3 of 4: all checks passed
 *
 * Every rank computes what each collective must produce from the inputs of
 * all ranks (which it can generate itself) and compares. Sums of floats are
 * compared with a relative tolerance of 1e-6 (the summation order differs);
 * everything else must match exactly.
 */

#include "Inputs/hrt-test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;
static int rank = 0, size = 1;


static void expectClose(const char *what, size_t i, double got, double want) {
  double scale = fabs(want) > 1.0 ? fabs(want) : 1.0;
  /* Written so that a NaN on either side is a failure. */
  if (!(fabs(got - want) <= 1e-6 * scale)) {
    if (failures++ < 10)
      fprintf(stderr, "rank %d: %s[%zu] = %.9g, expected %.9g\n", rank, what,
              i, got, want);
  }
}

/* The gradient rank r contributes: deterministic, different per rank. */
static float gradient(int r, size_t i) {
  return (float)sin(0.1 * (double)i + 1.7 * r) * (float)(r + 1);
}

static void testAllReduce(hrt_comm world, size_t n) {
  float *g = malloc(n * sizeof(float));
  float *sum = malloc(n * sizeof(float));
  for (size_t i = 0; i < n; ++i)
    g[i] = gradient(rank, i);
  CHECK_OK(hrt_all_reduce(g, sum, n, HRT_FLOAT32, HRT_SUM, world));
  for (size_t i = 0; i < n; ++i) {
    double want = 0.0;
    for (int r = 0; r < size; ++r)
      want += gradient(r, i);
    expectClose("all_reduce sum", i, sum[i], want);
  }
  /* In place, averaged: the data-parallel gradient average. */
  CHECK_OK(hrt_all_reduce(g, g, n, HRT_FLOAT32, HRT_AVG, world));
  for (size_t i = 0; i < n; ++i)
    expectClose("all_reduce avg", i, g[i], sum[i] / size);
  free(g);
  free(sum);

  double value = rank + 1.0, result = 0.0;
  CHECK_OK(hrt_all_reduce(&value, &result, 1, HRT_FLOAT64, HRT_MAX, world));
  expectClose("all_reduce max", 0, result, size);
  CHECK_OK(hrt_all_reduce(&value, &result, 1, HRT_FLOAT64, HRT_MIN, world));
  expectClose("all_reduce min", 0, result, 1.0);
  CHECK_OK(hrt_all_reduce(&value, &result, 1, HRT_FLOAT64, HRT_PROD, world));
  double factorial = 1.0;
  for (int r = 1; r <= size; ++r)
    factorial *= r;
  expectClose("all_reduce prod", 0, result, factorial);
  long long count = 1, total = 0;
  CHECK_OK(hrt_all_reduce(&count, &total, 1, HRT_INT64, HRT_SUM, world));
  expectClose("all_reduce int64", 0, (double)total, size);
}

static void testGatherScatter(hrt_comm world) {
  enum { N = 5 };
  int mine[N], gathered[N * 16];
  for (int i = 0; i < N; ++i)
    mine[i] = rank * 100 + i;
  CHECK_OK(hrt_all_gather(mine, gathered, N, HRT_INT32, world));
  for (int r = 0; r < size; ++r)
    for (int i = 0; i < N; ++i)
      expectClose("all_gather", r * N + i, gathered[r * N + i], r * 100 + i);

  /* reduce_scatter: rank r keeps the sum of everybody's slice r. */
  float send[N * 16], part[N];
  for (int q = 0; q < size; ++q)
    for (int i = 0; i < N; ++i)
      send[q * N + i] = (float)(rank + 1) * (q * N + i);
  CHECK_OK(hrt_reduce_scatter(send, part, N, HRT_FLOAT32, HRT_SUM, world));
  for (int i = 0; i < N; ++i) {
    double want = 0.0;
    for (int r = 0; r < size; ++r)
      want += (double)(r + 1) * (rank * N + i);
    expectClose("reduce_scatter", i, part[i], want);
  }

  /* all_to_all: rank r sends block q to rank q. */
  int blocks[N * 16], received[N * 16];
  for (int q = 0; q < size; ++q)
    for (int i = 0; i < N; ++i)
      blocks[q * N + i] = rank * 1000 + q * 10 + i;
  CHECK_OK(hrt_all_to_all(blocks, received, N, HRT_INT32, world));
  for (int r = 0; r < size; ++r)
    for (int i = 0; i < N; ++i)
      expectClose("all_to_all", r * N + i, received[r * N + i],
                  r * 1000 + rank * 10 + i);
}

static void testRooted(hrt_comm world) {
  int root = size - 1;
  double values[3] = {0, 0, 0};
  if (rank == root)
    values[0] = 1.5, values[1] = -2.0, values[2] = 42.0;
  CHECK_OK(hrt_broadcast(values, 3, HRT_FLOAT64, root, world));
  expectClose("broadcast", 0, values[0], 1.5);
  expectClose("broadcast", 2, values[2], 42.0);

  float contribution = (float)rank, reduced = -1.0f;
  CHECK_OK(hrt_reduce(&contribution, &reduced, 1, HRT_FLOAT32, HRT_SUM, 0,
                      world));
  if (rank == 0)
    expectClose("reduce", 0, reduced, size * (size - 1) / 2.0);
  CHECK_OK(hrt_barrier(world));
}

static void testPointToPoint(hrt_comm world) {
  /* A ring: everybody sends to the right and receives from the left. */
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  enum { N = 1 << 16 };
  static float out[N], in[N];
  for (int i = 0; i < N; ++i)
    out[i] = (float)(rank * N + i);
  hrt_request receive, send;
  CHECK_OK(hrt_irecv(in, N, HRT_FLOAT32, left, 3, world, &receive));
  CHECK_OK(hrt_isend(out, N, HRT_FLOAT32, right, 3, world, &send));
  CHECK_OK(hrt_wait(&send));
  CHECK_OK(hrt_wait(&receive));
  if (receive != NULL)
    failures++;
  for (int i = 0; i < N; i += 997)
    expectClose("ring", (size_t)i, in[i], (double)left * N + i);
}

static void testSplit(hrt_comm world) {
  /* Even and odd ranks: the sub-communicators of a 2D device grid. */
  hrt_comm half;
  CHECK_OK(hrt_comm_split(world, rank % 2, rank, &half));
  int halfRank = -1, halfSize = 0;
  CHECK_OK(hrt_comm_rank(half, &halfRank));
  CHECK_OK(hrt_comm_size(half, &halfSize));
  expectClose("split rank", 0, halfRank, rank / 2);
  expectClose("split size", 0, halfSize, (size + 1 - rank % 2) / 2);
  int one = 1, members = 0;
  CHECK_OK(hrt_all_reduce(&one, &members, 1, HRT_INT32, HRT_SUM, half));
  expectClose("split all_reduce", 0, members, halfSize);
  CHECK_OK(hrt_comm_free(half));
}

int main(int argc, char **argv) {
  hrt_comm world = hrt_test_init(&argc, &argv, &rank, &size);
  if (size > 16) {
    fprintf(stderr, "run with at most 16 ranks\n");
    hrt_abort(2);
  }
  testAllReduce(world, 1000);
  testAllReduce(world, 1 << 20); /* large enough for pipelined algorithms */
  testGatherScatter(world);
  testRooted(world);
  testPointToPoint(world);
  testSplit(world);
  /* The same again with a timeout: the non-blocking paths. */
  CHECK_OK(hrt_set_timeout(60.0));
  testAllReduce(world, 1000);
  testGatherScatter(world);
  testRooted(world);
  testPointToPoint(world);
  CHECK_OK(hrt_barrier(world));
  /* The comparison itself counts a NaN result as a failure. */
  int counted = failures;
  expectClose("NaN control (expected to fail)", 0, NAN, 1.0);
  if (failures != counted + 1)
    printf("rank %d of %d: a NaN passed the comparison\n", rank, size);
  failures = counted + (failures != counted + 1);
  if (failures == 0)
    printf("rank %d of %d: all checks passed\n", rank, size);
  else
    printf("rank %d of %d: %d checks failed\n", rank, size, failures);
  fflush(stdout);
  CHECK_OK(hrt_finalize());
  return failures == 0 ? 0 : 1;
}
