/*===- hrt-iall-reduce.c - non-blocking all-reduce and its emulated link ---===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* REQUIRES: mpi
 * RUN: env HETERO_RT_TIMEOUT=20 %mpirun -np 3 hrt-iall-reduce | FileCheck %s
 * RUN: env HETERO_RT_LINK=8,5 HETERO_RT_TIMEOUT=20 %mpirun -x HETERO_RT_LINK -np 2 hrt-iall-reduce --emulated | FileCheck %s --check-prefixes=CHECK,LINK
 *
 * Every rank posts two all-reduces of 1 MiB with hrt_iall_reduce (a sum and
 * an average), computes while they are in flight, then waits for both: the
 * results are exact, and the buffers were not touched before the wait.
 *
 * Under HETERO_RT_LINK=8,5 (8 MiB/s, 5 ms) on 2 ranks a ring all-reduce of
 * 1 MiB takes 2 x 5 ms + 1/8 s = 135 ms: posting returns at once, the first
 * completes no earlier than 135 ms after its post and the second, which
 * waits for the link, no earlier than 270 ms; a blocking hrt_all_reduce
 * takes its 135 ms too.
 *
 * CHECK: rank 0: sum exact, average exact
 * LINK: rank 0: posted at once
 * LINK: rank 0: the first completed after its 135 ms, the second after 270 ms
 * LINK: rank 0: the blocking all-reduce took its 135 ms
 */

#include "Inputs/hrt-test.h"

#include <stdlib.h>
#include <string.h>

enum { N = 1 << 18 };

int main(int argc, char **argv) {
  if (hrt_init(HRT_BACKEND_MPI, &argc, &argv) != HRT_SUCCESS) {
    fprintf(stderr, "hrt_init failed: %s\n", hrt_last_error());
    return 2;
  }
  int emulated = argc > 1 && strcmp(argv[1], "--emulated") == 0;
  hrt_comm world;
  int rank = 0, size = 1;
  CHECK_OK(hrt_comm_world(&world));
  CHECK_OK(hrt_comm_rank(world, &rank));
  CHECK_OK(hrt_comm_size(world, &size));
  float *sum = malloc(N * sizeof(float));
  float *average = malloc(N * sizeof(float));
  for (int i = 0; i < N; ++i) {
    sum[i] = (float)(rank + 1) * (float)(i % 97);
    average[i] = (float)rank;
  }
  CHECK_OK(hrt_barrier(world));
  double start = hrt_wtime();
  hrt_request first = NULL, second = NULL;
  CHECK_OK(hrt_iall_reduce(sum, sum, N, HRT_FLOAT32, HRT_SUM, world, &first));
  CHECK_OK(hrt_iall_reduce(average, average, N, HRT_FLOAT32, HRT_AVG, world,
                           &second));
  double posted = hrt_wtime() - start;
  /* Work that overlaps with the reductions. */
  volatile double busy = 0.0;
  for (int i = 0; i < 1000000; ++i)
    busy += (double)i * 1e-9;
  CHECK_OK(hrt_wait(&first));
  double firstDone = hrt_wtime() - start;
  CHECK_OK(hrt_wait(&second));
  double secondDone = hrt_wtime() - start;

  float ranks = (float)(size * (size + 1) / 2);
  int sumExact = 1, averageExact = 1;
  for (int i = 0; i < N; ++i) {
    sumExact &= sum[i] == ranks * (float)(i % 97);
    averageExact &= average[i] == (float)(size - 1) / 2.0f;
  }
  if (rank == 0)
    printf("rank 0: sum %s, average %s\n", sumExact ? "exact" : "WRONG",
           averageExact ? "exact" : "WRONG");

  CHECK_OK(hrt_barrier(world));
  double blockingStart = hrt_wtime();
  CHECK_OK(hrt_all_reduce(sum, sum, N, HRT_FLOAT32, HRT_SUM, world));
  double blocking = hrt_wtime() - blockingStart;
  if (emulated && rank == 0) {
    /* Well under the 135 ms a blocking post would take, with room for a
       loaded machine. */
    printf("rank 0: posted %s\n", posted < 0.1 ? "at once" : "SLOWLY");
    printf("rank 0: the first completed %s its 135 ms, the second %s 270 ms\n",
           firstDone >= 0.135 ? "after" : "BEFORE",
           secondDone >= 0.270 ? "after" : "BEFORE");
    printf("rank 0: the blocking all-reduce took %s 135 ms\n",
           blocking >= 0.135 ? "its" : "LESS THAN");
  }
  free(sum);
  free(average);
  CHECK_OK(hrt_finalize());
  return 0;
}
