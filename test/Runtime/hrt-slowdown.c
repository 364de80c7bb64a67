/*===- hrt-slowdown.c - a rank's tasks stretched by a factor ----------------===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* REQUIRES: mpi
 * RUN: env HETERO_RT_SLOWDOWN=1:3 %mpirun -x HETERO_RT_SLOWDOWN -np 2 hrt-slowdown | FileCheck %s
 * RUN: env HETERO_RT_SLOWDOWN=1:0.5 not %mpirun -x HETERO_RT_SLOWDOWN -np 2 hrt-slowdown 2>&1 | FileCheck %s --check-prefix=BAD
 * RUN: env HETERO_RT_SLOWDOWN=one:2 not %mpirun -x HETERO_RT_SLOWDOWN -np 2 hrt-slowdown 2>&1 | FileCheck %s --check-prefix=BAD
 *
 * Each rank runs a task of 30 ms of compute between two marks, as a stage
 * program does. Rank 1's task first waits in a receive for rank 0, which
 * sends after a sleep of 50 ms: the wait is communication, which a slower
 * device would not stretch. With rank 1 three times slower, its task takes
 * 3 x 30 ms plus the wait; rank 0's is not slowed.
 * CHECK:      rank 0: task 1.0 x its compute
 * CHECK-NEXT: rank 1: task 3.0 x its compute, the wait not stretched
 *
 * BAD: HETERO_RT_SLOWDOWN='{{.*}}' is not '<rank>:<slowdown >= 1>[,<rank>:<slowdown>]'
 */

#include "Inputs/hrt-test.h"

#include <stdio.h>
#include <time.h>

/* Computes for `seconds` of wall time. */
static void compute(double seconds) {
  double start = hrt_wtime();
  volatile double sink = 0;
  while (hrt_wtime() - start < seconds)
    sink += 1.0;
}

int main(int argc, char **argv) {
  int rank, size;
  hrt_comm world = hrt_test_init(&argc, &argv, &rank, &size);
  float value = 1.0f;
  const double work = 0.03, delay = 0.05;
  // The first mark starts the clock.
  hrt_mlir_task_mark(HRT_TIMELINE_FORWARD, 0);
  double start = hrt_wtime(), waited = 0;
  if (rank == 0) {
    struct timespec pause = {0, (long)(delay * 1e9)};
    nanosleep(&pause, NULL);
    hrt_mlir_send(world, &value, 1, HRT_FLOAT32, 1, 7);
    start = hrt_wtime();
  } else {
    hrt_mlir_recv(world, &value, 1, HRT_FLOAT32, 0, 7);
    waited = hrt_wtime() - start;
  }
  compute(work);
  hrt_mlir_task_mark(HRT_TIMELINE_FORWARD, 1);
  double task = hrt_wtime() - start - waited;
  double ratio = task / work;
  double ratios[2];
  CHECK_OK(hrt_all_gather(&ratio, ratios, 1, HRT_FLOAT64, world));
  if (rank == 0) {
    // Sleeps never end early; the bounds leave room for a loaded machine.
    // Had the wait been stretched too, rank 1's ratio would be 6.3.
    if (ratios[0] < 1.5)
      printf("rank 0: task 1.0 x its compute\n");
    else
      printf("rank 0: task %.2f x its compute\n", ratios[0]);
    if (ratios[1] >= 2.9 && ratios[1] < 4.5)
      printf("rank 1: task 3.0 x its compute, the wait not stretched\n");
    else
      printf("rank 1: task %.2f x its compute\n", ratios[1]);
  }
  CHECK_OK(hrt_finalize());
  return 0;
}
