/*===- hrt-planner.c - the runtime re-picks the kFkB group size ------------===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* REQUIRES: mpi
 * RUN: %mpirun -np 2 hrt-planner | FileCheck %s
 *
 * A 4-stage, 8-micro-batch pipeline with candidates k = 1, 2, 3, re-planned
 * every 2 iterations over a window of 2 samples. The network is fast for
 * four iterations (1F1B stays), then slow: the ranks measure 3 and 1 ms per
 * message, average 2 ms, and both switch to k = 3 at the same iteration
 * boundary (the simulator gives 65, 49 and 47 ms).
 *
 * CHECK-DAG: rank 0: iteration 3 ends with k = 1
 * CHECK-DAG: rank 1: iteration 3 ends with k = 1
 * CHECK-DAG: rank 0: iteration 5 switches to k = 3
 * CHECK-DAG: rank 1: iteration 5 switches to k = 3
 * CHECK-DAG: rank 0: iteration 9 ends with k = 3
 * CHECK-DAG: rank 1: iteration 9 ends with k = 3
 *
 * With a minimum gain of 30%, the same measurements keep 1F1B (47 ms is
 * 28% below 65 ms); with 25% they switch.
 * CHECK-DAG: rank 0: min gain 0.3: k = 1
 * CHECK-DAG: rank 0: min gain 0.25: k = 3
 * CHECK-DAG: bad min gain: invalid argument: hrt_planner_set_min_gain (0 bytes): needs a planner and a fraction in [0, 1), got 1.000000
 * CHECK-DAG: bad create: invalid argument: hrt_planner_create (0 bytes): candidate group size 0 is below 1
 */

#include "Inputs/hrt-test.h"

#include <stdio.h>


int main(int argc, char **argv) {
  CHECK_OK(hrt_init(HRT_BACKEND_MPI, &argc, &argv));
  hrt_comm world;
  int rank;
  CHECK_OK(hrt_comm_world(&world));
  CHECK_OK(hrt_comm_rank(world, &rank));

  int candidates[] = {1, 2, 3};
  hrt_planner planner;
  CHECK_OK(hrt_planner_create(4, 8, candidates, 3, /*period=*/2,
                              /*window=*/2, &planner));
  for (int iteration = 0; iteration < 10; ++iteration) {
    double transfer = iteration < 4 ? 0.0 : (rank == 0 ? 3.0 : 1.0);
    CHECK_OK(hrt_planner_record_compute(planner, 1.0, 2.0));
    CHECK_OK(hrt_planner_record_transfer(planner, transfer));
    int switched = 0;
    CHECK_OK(hrt_planner_end_iteration(planner, world, &switched));
    if (switched)
      printf("rank %d: iteration %d switches to k = %d\n", rank, iteration,
             hrt_planner_group_size(planner));
    else if (iteration == 3 || iteration == 9)
      printf("rank %d: iteration %d ends with k = %d\n", rank, iteration,
             hrt_planner_group_size(planner));
  }
  hrt_planner_destroy(planner);

  for (int round = 0; round < 2; ++round) {
    double gain = round == 0 ? 0.3 : 0.25;
    CHECK_OK(hrt_planner_create(4, 8, candidates, 3, /*period=*/2,
                                /*window=*/2, &planner));
    CHECK_OK(hrt_planner_set_min_gain(planner, gain));
    for (int iteration = 0; iteration < 2; ++iteration) {
      int switched = 0;
      CHECK_OK(hrt_planner_record_compute(planner, 1.0, 2.0));
      CHECK_OK(hrt_planner_record_transfer(planner, rank == 0 ? 3.0 : 1.0));
      CHECK_OK(hrt_planner_end_iteration(planner, world, &switched));
    }
    if (rank == 0)
      printf("rank 0: min gain %g: k = %d\n", gain,
             hrt_planner_group_size(planner));
    if (round == 1) {
      hrt_status status = hrt_planner_set_min_gain(planner, 1.0);
      if (rank == 0)
        printf("bad min gain: %s: %s\n", hrt_status_string(status),
               hrt_last_error());
    }
    hrt_planner_destroy(planner);
  }

  int bad[] = {2, 0};
  hrt_planner other;
  hrt_status status = hrt_planner_create(4, 8, bad, 2, 1, 1, &other);
  if (rank == 0)
    printf("bad create: %s: %s\n", hrt_status_string(status),
           hrt_last_error());
  fflush(stdout);
  CHECK_OK(hrt_finalize());
  return 0;
}
