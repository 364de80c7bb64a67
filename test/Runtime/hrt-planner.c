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
 *
 * Per stage: two stages, the second twice as slow (F = 2, B = 4 against 1
 * and 2 ms), 3 ms a message, k in 1, 2, 3, 4, 8. The per-stage model
 * predicts what the simulator gives for those costs and picks k = 2; the
 * averaged one sees two alike stages and picks k = 3, which really takes
 * 59 ms, not 49.5 (unittests/Sim/PlanModelTest.cpp).
 * CHECK-DAG: rank 0: per-stage model: k = 2, b = 1; predicted 66.0 58.0 59.0 60.0 64.0
 * CHECK-DAG: rank 1: per-stage model: k = 2, b = 1; predicted 66.0 58.0 59.0 60.0 64.0
 * CHECK-DAG: rank 0: averaged model: k = 3, b = 1; predicted 64.5 51.0 49.5 51.0 57.0
 * CHECK-DAG: rank 1: averaged model: k = 3, b = 1; predicted 64.5 51.0 49.5 51.0 57.0
 * CHECK-DAG: bad stage: invalid argument: hrt_planner_record_stage (0 bytes): stage 5 is not one of the 2 stages
 * CHECK-DAG: other stage: invalid argument: hrt_planner_record_stage (0 bytes): this rank recorded stage 0 before; a rank runs one stage
 * CHECK-DAG: bad link: invalid argument: hrt_planner_record_link (0 bytes): stage 7 is not one of the 2 stages
 * CHECK-DAG: negative link: invalid argument: hrt_planner_record_link (0 bytes): needs a planner and costs >= 0
 * CHECK-DAG: bad model: invalid argument: hrt_planner_set_model (0 bytes): needs a planner and HRT_PLANNER_PER_STAGE or HRT_PLANNER_AVERAGED
 * CHECK-DAG: bad plan: invalid argument: hrt_planner_create_plans (0 bytes): plan 0 (k = 2, b = 0, M = 4, tasks = 0) needs k, b and M of at least 1 and tasks (0 or 1: one) dividing b
 *
 * Over b, 16 samples: measured at b = 1 only, compute looks proportional
 * to b and the planner tries b = 4; measured there too, the fitted line
 * (0.5 + 0.5 b) moves it to b = 8, the model's best, where it stays.
 * CHECK-DAG: rank 0: iteration 0 switches to k = 1, b = 4
 * CHECK-DAG: rank 1: iteration 0 switches to k = 1, b = 4
 * CHECK-DAG: rank 0: iteration 1 switches to k = 1, b = 8
 * CHECK-DAG: rank 1: iteration 1 switches to k = 1, b = 8
 * CHECK-NOT: iteration 2 switches
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

  /* Per stage: rank r runs stage r, stage 1 twice as slow as stage 0. */
  hrt_plan plans[5] = {
      {1, 1, 8, 1}, {2, 1, 8, 1}, {3, 1, 8, 1}, {4, 1, 8, 1}, {8, 1, 8, 1}};
  for (int averaged = 0; averaged < 2; ++averaged) {
    CHECK_OK(hrt_planner_create_plans(2, plans, 5, 1, 1, &planner));
    CHECK_OK(hrt_planner_set_model(planner, averaged ? HRT_PLANNER_AVERAGED
                                                     : HRT_PLANNER_PER_STAGE));
    CHECK_OK(hrt_planner_record_stage(planner, rank, rank ? 2.0 : 1.0,
                                      rank ? 4.0 : 2.0));
    CHECK_OK(hrt_planner_record_link(planner, 1 - rank, 3.0, 0.0, 16384));
    int switched = 0;
    CHECK_OK(hrt_planner_end_iteration(planner, world, &switched));
    double predicted[5];
    int count = hrt_planner_predictions(planner, predicted, 5);
    printf("rank %d: %s model: k = %d, b = %d; predicted", rank,
           averaged ? "averaged" : "per-stage",
           hrt_planner_group_size(planner),
           hrt_planner_microbatch_size(planner));
    for (int i = 0; i < count; ++i)
      printf(" %.1f", predicted[i]);
    printf("\n");
    if (averaged == 0 && rank == 0) {
      status = hrt_planner_record_stage(planner, 5, 1.0, 1.0);
      printf("bad stage: %s: %s\n", hrt_status_string(status),
             hrt_last_error());
      status = hrt_planner_record_stage(planner, 1, 1.0, 1.0);
      printf("other stage: %s: %s\n", hrt_status_string(status),
             hrt_last_error());
      status = hrt_planner_record_link(planner, 7, 1.0, 0.0, 16);
      printf("bad link: %s: %s\n", hrt_status_string(status),
             hrt_last_error());
      status = hrt_planner_record_link(planner, 1, -1.0, 0.0, 16);
      printf("negative link: %s: %s\n", hrt_status_string(status),
             hrt_last_error());
      status = hrt_planner_set_model(planner, (hrt_planner_model)5);
      printf("bad model: %s: %s\n", hrt_status_string(status),
             hrt_last_error());
    }
    hrt_planner_destroy(planner);
  }
  hrt_plan badPlan = {2, 0, 4, 0};
  status = hrt_planner_create_plans(2, &badPlan, 1, 1, 1, &other);
  if (rank == 0)
    printf("bad plan: %s: %s\n", hrt_status_string(status),
           hrt_last_error());

  /* Plans over b: 16 samples, compute 0.5 + 0.5 b per forward task,
   * messages 2 ms + 0.25 ms a sample. */
  hrt_plan sizes[5] = {
      {1, 1, 16, 1}, {1, 2, 8, 1}, {1, 4, 4, 1}, {1, 8, 2, 1}, {1, 16, 1, 1}};
  CHECK_OK(hrt_planner_create_plans(2, sizes, 5, 1, 1, &planner));
  for (int iteration = 0; iteration < 3; ++iteration) {
    double b = hrt_planner_microbatch_size(planner);
    CHECK_OK(hrt_planner_record_stage(planner, rank, 0.5 + 0.5 * b,
                                      1.0 + 1.0 * b));
    CHECK_OK(hrt_planner_record_link(planner, 1 - rank, 2.0, 0.25 / 100,
                                     100 * b));
    int switched = 0;
    CHECK_OK(hrt_planner_end_iteration(planner, world, &switched));
    if (switched)
      printf("rank %d: iteration %d switches to k = %d, b = %d\n", rank,
             iteration, hrt_planner_group_size(planner),
             hrt_planner_microbatch_size(planner));
  }
  hrt_planner_destroy(planner);
  fflush(stdout);
  CHECK_OK(hrt_finalize());
  return 0;
}
