/*===- hrt-sync-groups.c - SDPipe's sync groups on real ranks --------------===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* REQUIRES: mpi
 * RUN: %mpirun -np 4 hrt-sync-groups 2 2 | FileCheck %s --check-prefix=MESH
 * RUN: %mpirun -np 4 hrt-sync-groups 1 4 | FileCheck %s --check-prefix=MESH
 * RUN: %mpirun -np 4 hrt-sync-groups busy | FileCheck %s --check-prefix=BUSY
 *
 * Random arrivals with stragglers, 40 syncs per worker: every group's
 * members agree on its size, each stage's replica sum is what it was (the
 * averages keep the mean, T2, within the f32 bound), and a worker creates
 * one communicator per distinct member set it meets (T12).
 * MESH-DAG: rank 0: mean kept, communicators = distinct sets
 * MESH-DAG: rank 1: mean kept, communicators = distinct sets
 * MESH-DAG: rank 2: mean kept, communicators = distinct sets
 * MESH-DAG: rank 3: mean kept, communicators = distinct sets
 *
 * Three replicas form a group and average while the fourth sleeps: creating
 * their communicator does not involve it.
 * BUSY: rank 0: group of 3 averaged while rank 3 slept
 * BUSY: rank 3: alone, no communicator
 *
 * The deadlock of SDPipe's Fig. 3 (T7 a) on real ranks, with the runtime's
 * timeout as the watchdog: with P = 1 and T = 0 every singleton candidate
 * must wait for its stage's other replica. (0, a) and (1, b) sync first;
 * (0, b) syncs only after a message (1, b) sends after its sync, and (1, a)
 * only after one from (0, a). Without the lock both stages wait: the job
 * times out. With it, the candidate that closes second is dispatched anyway
 * (ignored), and every worker completes: the stage whose candidate closed
 * first holds the token and syncs whole, the other's replicas sync alone.
 * Which stage closes first is a race between ranks 0 and 3.
 * RUN: not %mpirun -np 4 hrt-sync-groups fig3 off 2>&1 | FileCheck %s --check-prefix=DEADLOCK
 * RUN: %mpirun -np 4 hrt-sync-groups fig3 on | FileCheck %s --check-prefix=LOCK
 * DEADLOCK: hrt_sync_ready{{.*}}no sync group within 3{{.*}} s: the coordinator on rank 0 is waiting for other replicas of stage
 * LOCK: coordinator: enforced 1, ignored 1
 * LOCK-NEXT: group sizes by rank: {{2 2 1 1|1 1 2 2}}
 */

#include "Inputs/hrt-test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { kSyncs = 40, kWeights = 1000 };

static void sleep_ms(double ms) {
  struct timespec pause = {(time_t)(ms / 1000),
                           (long)(fmod(ms, 1000.0) * 1e6)};
  nanosleep(&pause, NULL);
}

static int mesh(hrt_comm world, int rank, int stages, int replicas) {
  int stage = rank / replicas, replica = rank % replicas;
  hrt_sync_options options;
  hrt_sync_default_options(&options);
  options.period = 3;
  options.window_max_ms = 2.0;
  hrt_sync sync;
  CHECK_OK(hrt_sync_create(world, stages, replicas, stage, replica, &options,
                           &sync));
  hrt_comm stageComm;
  CHECK_OK(hrt_comm_split(world, stage, replica, &stageComm));

  static float weights[kWeights];
  for (int i = 0; i < kWeights; ++i)
    weights[i] = (float)sin(rank * 1000.0 + i) * 10.0f;
  double before = 0.0, largest = 0.0;
  for (int i = 0; i < kWeights; ++i) {
    before += weights[i];
    largest = fmax(largest, fabs(weights[i]));
  }
  CHECK_OK(hrt_all_reduce(&before, &before, 1, HRT_FLOAT64, HRT_SUM,
                          stageComm));

  /* The member sets this worker met, as bit masks. */
  unsigned long long seen[kSyncs];
  int distinct = 0, agreed = 1, largestGroup = 1;
  unsigned seed = 17u * (unsigned)rank + 1u;
  for (int step = 0; step < kSyncs; ++step) {
    double work = 2.0 + (rand_r(&seed) % 100) / 50.0;
    if (rand_r(&seed) % 10 == 0)
      work += 15.0;
    sleep_ms(work);
    int size = 0, members[64];
    CHECK_OK(hrt_sync_ready(sync, step == kSyncs - 1, &size, members));
    unsigned long long mask = 0;
    for (int i = 0; i < size; ++i)
      mask |= 1ull << members[i];
    int known = 0;
    for (int i = 0; i < distinct; ++i)
      known |= seen[i] == mask;
    if (!known && size > 1)
      seen[distinct++] = mask;
    if (size > largestGroup)
      largestGroup = size;
    /* Every member averages its view of the size: they agree when it stays
     * put. */
    float view = (float)size;
    CHECK_OK(hrt_sync_average(sync, &view, 1, HRT_FLOAT32));
    agreed &= view == (float)size;
    CHECK_OK(hrt_sync_average(sync, weights, kWeights, HRT_FLOAT32));
  }
  double after = 0.0;
  for (int i = 0; i < kWeights; ++i)
    after += weights[i];
  CHECK_OK(hrt_all_reduce(&after, &after, 1, HRT_FLOAT64, HRT_SUM,
                          stageComm));
  hrt_sync_stats stats;
  CHECK_OK(hrt_sync_get_stats(sync, &stats));
  /* kSyncs averages, each within 4 |S| 2^-24 max|x| per element. */
  double bound = kSyncs * 4.0 * replicas * ldexp(1.0, -24) * largest *
                 kWeights * replicas;
  int kept = fabs(after - before) <= bound;
  if (kept && agreed && stats.communicators == distinct &&
      stats.groups == kSyncs)
    printf("rank %d: mean kept, communicators = distinct sets\n", rank);
  else
    printf("rank %d: FAILED: sum %.9g -> %.9g (bound %.3g), agreed %d, "
           "communicators %ld for %d sets, %ld groups\n",
           rank, before, after, bound, agreed, stats.communicators, distinct,
           stats.groups);
  fprintf(stderr, "rank %d: largest group %d, %d sets, enforced %ld\n", rank,
          largestGroup, distinct, stats.enforced);
  CHECK_OK(hrt_comm_free(stageComm));
  CHECK_OK(hrt_sync_destroy(sync));
  return 0;
}

/* Replicas 0-2 form a group while replica 3 sleeps for a second. */
static int busy(hrt_comm world, int rank) {
  hrt_sync_options options;
  hrt_sync_default_options(&options);
  options.enforce = 0;
  options.window_max_ms = 200.0;
  hrt_sync sync;
  CHECK_OK(hrt_sync_create(world, 1, 4, 0, rank, &options, &sync));
  /* Long beside the window, so that ranks slowed by other jobs on the
   * machine still finish their group before rank 3 wakes. */
  if (rank == 3)
    sleep_ms(3000.0);
  double start = hrt_wtime();
  int size = 0;
  CHECK_OK(hrt_sync_ready(sync, 1, &size, NULL));
  float value = (float)rank;
  CHECK_OK(hrt_sync_average(sync, &value, 1, HRT_FLOAT32));
  double took = hrt_wtime() - start;
  hrt_sync_stats stats;
  CHECK_OK(hrt_sync_get_stats(sync, &stats));
  if (rank == 0)
    printf(size == 3 && value == 1.0f && took < 2.5
               ? "rank 0: group of 3 averaged while rank 3 slept\n"
               : "rank 0: FAILED: size %d, value %g, %.3f s\n",
           size, value, took);
  if (rank == 3)
    printf(size == 1 && value == 3.0f && stats.communicators == 0
               ? "rank 3: alone, no communicator\n"
               : "rank 3: FAILED: size %d, value %g, %ld communicators\n",
           size, value, stats.communicators);
  fflush(stdout);
  CHECK_OK(hrt_sync_destroy(sync));
  return 0;
}

/* Fig. 3's cycle on 2 x 2 workers; rank = stage * 2 + replica. */
static int fig3(hrt_comm world, int rank, int lock) {
  CHECK_OK(hrt_set_timeout(3.0));
  int stage = rank / 2, replica = rank % 2;
  hrt_sync_options options;
  hrt_sync_default_options(&options);
  options.period = 1;
  options.window_max_ms = 0.0;
  options.lock = lock;
  hrt_sync sync;
  CHECK_OK(hrt_sync_create(world, 2, 2, stage, replica, &options, &sync));
  float token = 1.0f;
  /* (0, b) waits for (1, b); (1, a) waits for (0, a). */
  if (rank == 1 || rank == 2)
    CHECK_OK(hrt_recv(&token, 1, HRT_FLOAT32, rank == 1 ? 3 : 0, 7, world));
  int size = 0;
  if (hrt_sync_ready(sync, 0, &size, NULL) != HRT_SUCCESS) {
    fprintf(stderr, "rank %d: %s\n", rank, hrt_last_error());
    fflush(stderr);
    hrt_abort(3);
  }
  float value = (float)replica;
  CHECK_OK(hrt_sync_average(sync, &value, 1, HRT_FLOAT32));
  if (rank == 0 || rank == 3)
    CHECK_OK(hrt_send(&token, 1, HRT_FLOAT32, rank == 0 ? 2 : 1, 7, world));
  /* The counters are read once the enforced group has been dispatched and
   * before the loser stage's waiting replica can sync: that sync ends the
   * enforcement waiting for its departed partner (rank 3 when stage 0 won,
   * rank 0 when stage 1 did), and would count as a second one. */
  if (rank == 2 && size == 2)
    CHECK_OK(hrt_send(&token, 1, HRT_FLOAT32, 0, 8, world));
  if (rank == 0 && size == 1)
    CHECK_OK(hrt_recv(&token, 1, HRT_FLOAT32, 2, 8, world));
  if (rank == 0) {
    hrt_sync_stats stats;
    CHECK_OK(hrt_sync_get_stats(sync, &stats));
    printf("coordinator: enforced %ld, ignored %ld\n", stats.enforced,
           stats.ignored);
    if (size == 2)
      CHECK_OK(hrt_send(&token, 1, HRT_FLOAT32, 3, 9, world));
  }
  if (rank == 3 && size == 1)
    CHECK_OK(hrt_recv(&token, 1, HRT_FLOAT32, 0, 9, world));
  /* A departure ends the enforcement that waits for a finished worker. */
  CHECK_OK(hrt_sync_destroy(sync));
  double sizes[4] = {0, 0, 0, 0};
  sizes[rank] = size;
  CHECK_OK(hrt_all_reduce(sizes, sizes, 4, HRT_FLOAT64, HRT_SUM, world));
  if (rank == 0)
    printf("group sizes by rank: %g %g %g %g\n", sizes[0], sizes[1], sizes[2],
           sizes[3]);
  return 0;
}

int main(int argc, char **argv) {
  int rank, size;
  hrt_comm world = hrt_test_init(&argc, &argv, &rank, &size);
  CHECK_OK(hrt_set_timeout(30.0));
  if (argc == 2 && strcmp(argv[1], "busy") == 0)
    busy(world, rank);
  else if (argc == 3 && strcmp(argv[1], "fig3") == 0)
    fig3(world, rank, strcmp(argv[2], "on") == 0);
  else if (argc == 3)
    mesh(world, rank, atoi(argv[1]), atoi(argv[2]));
  else
    fprintf(stderr, "usage: hrt-sync-groups <stages> <replicas> | busy | "
                    "fig3 on|off\n");
  fflush(stdout);
  CHECK_OK(hrt_finalize());
  return 0;
}
