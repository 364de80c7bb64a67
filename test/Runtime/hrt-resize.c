/*===- hrt-resize.c - ZERO-resizing's online planner in the runtime --------===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* REQUIRES: mpi
 * RUN: env HETERO_RT_SLOW_GEMM=1:4 %mpirun -x HETERO_RT_SLOW_GEMM -np 2 hrt-resize | FileCheck %s
 *
 * Two tensor-parallel ranks run one layer of 32 contraction columns whose
 * GEMM is an 80 ms sleep per 32 kept columns (hrt_mlir_gemm_mark around
 * it); rank 1's GEMMs are emulated 4 times as slow. Nothing is pruned
 * before the first plan; then rank 1 prunes about 3/4 of its columns
 * (Eq. 1, target min: (320 - 80) / 320), rank 0 none.
 * CHECK-DAG: rank 0: iteration 0 keeps 32 of 32
 * CHECK-DAG: rank 1: iteration 0 keeps 32 of 32
 * CHECK-DAG: rank 0: iteration 0 plans alpha 0 for itself, about 3/4 for rank 1
 * CHECK-DAG: rank 1: iteration 0 plans alpha 0 for rank 0, about 3/4 for itself
 * CHECK-DAG: rank 1: iteration 1 keeps 5 to 12 of 32
 * CHECK-DAG: rank 0: iteration 1 keeps 32 of 32
 *
 * Measured while pruning, the times are unpruned-equivalent: the same
 * straggler gets the same plan (raw times would show no straggler, and
 * undo the pruning). Scaled by 4 from the few kept columns, scheduling
 * delays on a busy machine can push it towards the cap of 31/32.
 * CHECK-DAG: rank 0: iteration 1 still plans over 0.6 for rank 1
 * CHECK-DAG: rank 1: iteration 1 still plans over 0.6 for rank 1
 *
 * When rank 1's GEMMs run as fast as rank 0's again, its busy time drops by
 * more than 10%: the plan is refreshed and rank 1 prunes far less (about
 * 0 on a quiet machine; its few kept columns' sleeps, scaled by 4 to the
 * unpruned equivalent, magnify scheduling delays on a busy one, but a delay
 * d gives 4d / (80 + 4d), always below iteration 1's (240 + 4d) /
 * (320 + 4d)).
 * CHECK-DAG: rank 0: iteration 2 re-plans rank 1 below its share
 * CHECK-DAG: rank 1: iteration 2 re-plans rank 1 below its share
 *
 * Migration with fixed shares: rank 1 hands half of the layer's columns to
 * rank 0, which receives exactly the ones rank 1 does not keep; rank 0
 * migrates nothing, and every rank says so alike.
 * CHECK-DAG: rank 0: keeps 32, receives the 16 columns rank 1 leaves out
 * CHECK-DAG: rank 1: keeps 16, receives 0
 * CHECK-DAG: rank 0: rank 1 migrates 16 columns, alike on both ranks 1, block from 0 matching 1; rank 0 migrates 0 from 0
 * CHECK-DAG: rank 1: rank 1 migrates 16 columns, alike on both ranks 1, block from 0 matching 1; rank 0 migrates 0 from 0
 * CHECK-DAG: rank 0: rank 0 migrates -1, rank 1 migrates 1
 * CHECK-DAG: rank 1: rank 0 migrates -1, rank 1 migrates 1
 *
 * The online planner with policy migrate gives rank 1 Eq. 1's share
 * against the fastest rank to migrate. Rank 0 then runs rank 1's columns
 * too (here at 80 ms per 32), but that time is not its own work: the plan
 * stays (counted, it would cut rank 1's share to about 0.4).
 * CHECK-DAG: rank 0: migrate plans 0 for rank 0, about 3/4 for rank 1
 * CHECK-DAG: rank 1: migrate plans 0 for rank 0, about 3/4 for rank 1
 * CHECK-DAG: rank 0: migrating, keeps 32 and receives 20 to 27
 * CHECK-DAG: rank 1: migrating, keeps 5 to 12 and receives 0
 * CHECK-DAG: rank 0: migrating, still over 0.6 for rank 1
 * CHECK-DAG: rank 1: migrating, still over 0.6 for rank 1
 *
 * ZERO-Pri (both ranks prune half of a layer of 8 columns, epochs of 2
 * iterations): the columns a rank pruned in the first epoch keep their
 * statistic (1) when the epoch's change ranks the others (all far below
 * 1), so the second epoch keeps exactly the columns the first pruned; the
 * third keeps the two columns that changed most in the second epoch and the
 * two kept ones of the first epoch that changed most then. A full refresh
 * would prune the first epoch's pruned columns forever.
 * CHECK-DAG: priority: epoch 1 keeps the 4 columns epoch 0 pruned
 * CHECK-DAG: priority: epoch 2 keeps the 2 that moved most in epoch 1 and the 2 that moved most in epoch 0
 * CHECK-DAG: priority: 2 rankings of the layer
 *
 * PriDiff (a quarter pruned, epochs of 1 iteration): after an epoch in
 * which 6 of the 8 columns changed by less than epsilon, the layer prunes
 * 0.8 x 6/8 = 0.6 of its columns instead of a quarter.
 * CHECK-DAG: pridiff: epsilon 1e-4 keeps 4 of 8, without it 6
 *
 * ZERO-Pri with migration (rank 1 prunes a quarter of a layer of 8 columns
 * and migrates a quarter to rank 0, epochs of 2 iterations): in epoch 0
 * both split by ZERO-Rd's draw. Then rank 1's columns moved by 0.001 (k +
 * 1) and rank 0's by 0.001 (8 - k): when epoch 1 starts the ranks
 * exchange their statistics, and rank 0 computes exactly the columns rank
 * 1's ranking hands it: of the 6 it did not prune in epoch 0, the third
 * and fourth lowest, while rank 1 prunes the two lowest and keeps the rest.
 * CHECK-DAG: rank 0: priority migration: epoch 0 splits all 8 columns
 * CHECK-DAG: rank 1: priority migration: epoch 0 splits all 8 columns
 * CHECK-DAG: rank 0: priority migration: epoch 1 receives the 2 columns rank 1's ranking migrates
 * CHECK-DAG: rank 1: priority migration: epoch 1 keeps what its ranking keeps
 *
 * The exchange checks that every rank of the group shows the runtime the
 * same layers: here rank 1 observes another layer, then one more.
 * CHECK-DAG: other layers: invalid argument: hrt_resize_begin_iteration on rank 0 (8 bytes): rank 1 of the migration group observed other layers; expected the same layers on every rank
 * CHECK-DAG: more layers: invalid argument: hrt_resize_begin_iteration on rank 0 (8 bytes): the ranks of the migration group observed different weights (12 and 24 values of statistics); expected the same layers on every rank
 * CHECK-DAG: priority without epochs: invalid argument: hrt_resize_configure_priority (0 bytes): the columns are ranked by their change over an epoch; configure epoch_iterations >= 1 first
 *
 * SEMI (policy HRT_RESIZE_SEMI): a layer of 32 columns whose GEMM takes
 * 80 ms and, when it prunes, 16 ms more gathering its kept columns (the
 * extraction; all slowed 4 times on rank 1). Before any extraction was
 * measured, Eq. 2 sees pruning as free and rank 1 prunes all of its 3/4.
 * Its first pruned iteration measures E(3/4) = 144 - 320 / 4 = 64 ms and
 * an unpruned-equivalent GEMM of 144 x 4 = 576 ms, so alpha = (576 - 80) /
 * 576 = 0.86, and Eq. 2 splits it where E(beta alpha) = Comp((1 - beta)
 * alpha), Comp(m) = m x 80 ms on rank 0: beta = 80 / (80 + 85.3) = 0.48,
 * pruning 0.42 and migrating 0.44. In the next iteration rank 0 computes
 * the columns rank 1 migrates.
 * CHECK-DAG: semi: iteration 0 prunes about 3/4, migrates 0
 * CHECK-DAG: semi: iteration 1 prunes about 0.42 and migrates about 0.44
 * CHECK-DAG: semi: iteration 2: rank 0 computes the columns rank 1 migrates
 *
 * Eq. 2's Comm is measured: while a rank migrates, the layer's products
 * return through a larger collective. Here it takes 390 ms (400 KiB over
 * an emulated 1 MB/s link), more than pruning all of the straggler's share
 * costs: once the first migrating iteration prices it, SEMI prunes almost
 * all of the share and migrates next to nothing (Comm 0 would keep the
 * split of about 0.42 and 0.44 above).
 * CHECK-DAG: semi: a 390 ms collective turns migration into pruning
 *
 * SEMI's pre-test (Algorithm 2, line 1) measures the extraction before
 * training: an unpruned iteration, every rank pruning 1/8 to 7/8, rank 1
 * migrating 1/8 to 3/4. Its first plan then splits the straggler's share
 * between pruning and migration, where without it (above) rank 1 first
 * prunes all of its 3/4. A pre-test iteration plans nothing, and one needs
 * the SEMI planner.
 * CHECK-DAG: pretest: E(0.5) over 0, 10 iterations planned nothing
 * CHECK-DAG: pretest: the first plan prunes and migrates
 * CHECK-DAG: pretest without SEMI: invalid argument: hrt_resize_pretest on rank 0 (0 bytes): the pre-test fits SEMI's costs; configure the online planner with HRT_RESIZE_SEMI first
 * CHECK-DAG: pretest of both on every rank: invalid argument: hrt_resize_pretest on rank 0 (0 bytes): needs a rank of the group of 2 (or -1: every rank prunes, none migrates) and shares >= 0 with a sum below 1, got rank -1, prune 0.250000, migrate 0.250000
 *
 * Same imputation's store (rank 0 prunes a fixed half, rank 1 nothing): per
 * layer and product, a question reads the value the last iteration kept
 * where this iteration's next keep goes (the (n+1)-th after n keeps); a
 * value not kept in the last iteration, or of another size, reads as
 * zeros; a rank that never prunes keeps nothing.
 * CHECK-DAG: same: rank 0 reads the last iteration's values in order
 * CHECK-DAG: same: rank 1 keeps nothing
 *
 * CHECK-DAG: no planner: invalid argument: hrt_resize_end_iteration (48 bytes): needs hrt_resize_configure_online first and a flag to set
 * CHECK-DAG: bad target: invalid argument: hrt_resize_configure_online on rank 0 (0 bytes): needs a group, target 0 (mean) or 1 (min) and policy HRT_RESIZE_PRUNE, HRT_RESIZE_MIGRATE or HRT_RESIZE_SEMI
 */

#include "Inputs/hrt-test.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static void sleepMs(double ms) {
  struct timespec span;
  span.tv_sec = (time_t)(ms / 1000);
  span.tv_nsec = (long)((ms - (double)span.tv_sec * 1000) * 1e6);
  nanosleep(&span, NULL);
}

/* The world, for the collectives of the emulated layers. */
static hrt_comm everyone;

/* One iteration of the layer; returns the columns kept. `gemmMs` is the
 * unslowed time of the whole GEMM. */
/* One iteration of layer 7 (8 columns) under priority pruning: the plan,
 * then the forward weight (8 x 2, every element of row k equal to
 * weight[k]) shown to the runtime. Returns the columns kept. */
static long long priorityStep(long long i, const float *rows, long long *kept) {
  float weight[16];
  for (int k = 0; k < 8; ++k)
    weight[2 * k] = weight[2 * k + 1] = rows[k];
  hrt_resize_begin_iteration(i);
  long long count = hrt_mlir_prune_plan(/*layer=*/7, 8, kept);
  hrt_mlir_observe_weight(7, 8, 2, weight);
  return count;
}

/* Whether sorted `set` (of `count`) holds column j. */
static int holds(const long long *set, long long count, long long j) {
  for (long long i = 0; i < count; ++i)
    if (set[i] == j)
      return 1;
  return 0;
}

/* The columns of `layer` (32) this rank computes for the other rank, 80
 * ms per 32 (between the migrated GEMM marks); returns how many. */
static long long receiveMigrated(unsigned long long layer) {
  long long received[32], total = 0;
  for (long long source = 0; source < 2; ++source) {
    long long got = hrt_mlir_migration_plan(layer, 32, source, received);
    if (got <= 0)
      continue;
    hrt_mlir_gemm_mark(2);
    sleepMs(80.0 * (double)got / 32.0);
    hrt_mlir_gemm_mark(3);
    total += got;
  }
  return total;
}

/* One SEMI iteration of layer 43 (32 columns, 80 ms per 32 kept, 16 ms to
 * gather the kept ones when some are not): this rank's own GEMM, then the
 * columns it computes for the other. Returns the columns received. */
static long long semiIteration(long long i, double *ratios, double *migrated,
                               int *changed) {
  long long kept[32];
  hrt_resize_begin_iteration(i);
  long long count = hrt_mlir_prune_plan(/*layer=*/43, 32, kept);
  hrt_mlir_gemm_mark(0);
  sleepMs(80.0 * (double)count / 32.0 + (count < 32 ? 16.0 : 0.0));
  hrt_mlir_gemm_mark(1);
  long long total = receiveMigrated(43);
  /* While some rank migrates, the layer's products return through a
   * larger collective (an all-reduce in place of an all-gather). */
  if (migrated[0] > 0 || migrated[1] > 0) {
    static float payload[102400];
    hrt_mlir_all_reduce(everyone, payload, 102400, HRT_FLOAT32, HRT_SUM);
  }
  CHECK_OK(hrt_resize_end_iteration(ratios, migrated, 2, changed));
  return total;
}

static void pretest(hrt_comm world, int rank) {
  double ratios[2] = {0, 0}, migrated[2] = {0, 0};
  int changed = 0, quiet = 1;
  CHECK_OK(hrt_resize_configure_online(world, /*min*/ 1, HRT_RESIZE_PRUNE, 0,
                                       1));
  hrt_status status = hrt_resize_pretest(-1, 0.25, 0);
  if (rank == 0)
    printf("pretest without SEMI: %s: %s\n", hrt_status_string(status),
           hrt_last_error());
  CHECK_OK(hrt_resize_configure_online(world, /*min*/ 1, HRT_RESIZE_SEMI, 0,
                                       1));
  status = hrt_resize_pretest(-1, 0.25, 0.25);
  if (rank == 0)
    printf("pretest of both on every rank: %s: %s\n",
           hrt_status_string(status), hrt_last_error());
  const double shares[10][2] = {{0, 0},     {0.125, 0}, {0.25, 0}, {0.5, 0},
                                {0.75, 0},  {0.875, 0}, {0, 0.125}, {0, 0.25},
                                {0, 0.5},   {0, 0.75}};
  for (int i = 0; i < 10; ++i) {
    CHECK_OK(hrt_resize_pretest(shares[i][1] > 0 ? 1 : -1, shares[i][0],
                                shares[i][1]));
    /* The iteration runs the forced shares; the planner's are 0 after. */
    semiIteration(0, ratios, migrated, &changed);
    quiet &= !changed && ratios[0] == 0 && ratios[1] == 0 &&
             migrated[0] == 0 && migrated[1] == 0;
    migrated[0] = migrated[1] = 0;
  }
  double extract = 0, communicate = 0;
  CHECK_OK(hrt_resize_end_pretest(0.5, &extract, &communicate));
  if (rank == 0)
    printf("pretest: E(0.5) %s, %s\n", extract > 0 ? "over 0" : "is 0",
           quiet ? "10 iterations planned nothing" : "an iteration planned");
  semiIteration(0, ratios, migrated, &changed);
  if (rank == 0 && changed && ratios[1] > 0.05 && migrated[1] > 0.05)
    printf("pretest: the first plan prunes and migrates\n");
  else if (rank == 0)
    printf("pretest: the first plan prunes %g and migrates %g\n", ratios[1],
           migrated[1]);
}

/* SEMI's plan after 4 iterations in which the collective that migration
 * adds takes 390 ms (400 KiB over an emulated 1 MB/s link). */
static void semiCommunication(hrt_comm world, int rank) {
  double ratios[2] = {0, 0}, migrated[2] = {0, 0};
  int changed = 0;
  CHECK_OK(hrt_resize_configure_online(world, /*min*/ 1, HRT_RESIZE_SEMI, 0,
                                       1));
  CHECK_OK(hrt_set_link_model(1.0, 0.0));
  for (long long i = 0; i < 4; ++i)
    semiIteration(i, ratios, migrated, &changed);
  CHECK_OK(hrt_set_link_model(0.0, 0.0));
  if (rank != 0)
    return;
  if (ratios[1] > 0.6 && migrated[1] < 0.05)
    printf("semi: a 390 ms collective turns migration into pruning\n");
  else
    printf("semi: with a 390 ms collective, prunes %g and migrates %g\n",
           ratios[1], migrated[1]);
}

static void semi(hrt_comm world, int rank) {
  double ratios[2] = {0, 0}, migrated[2] = {0, 0};
  int changed = 0;
  CHECK_OK(hrt_resize_configure_online(world, /*min*/ 1, HRT_RESIZE_SEMI, 0,
                                       1));
  semiIteration(0, ratios, migrated, &changed);
  if (rank == 0 && changed && ratios[1] > 0.6 && ratios[1] < 0.85 &&
      migrated[1] == 0.0 && ratios[0] == 0.0)
    printf("semi: iteration 0 prunes about 3/4, migrates 0\n");
  else if (rank == 0)
    printf("semi: iteration 0 prunes %g, migrates %g\n", ratios[1],
           migrated[1]);
  semiIteration(1, ratios, migrated, &changed);
  if (rank == 0 && changed && ratios[1] > 0.3 && ratios[1] < 0.55 &&
      migrated[1] > 0.3 && migrated[1] < 0.58)
    printf("semi: iteration 1 prunes about 0.42 and migrates about 0.44\n");
  else if (rank == 0)
    printf("semi: iteration 1 prunes %g, migrates %g (changed %d)\n",
           ratios[1], migrated[1], changed);
  long long expected = (long long)(migrated[1] * 32 + 1e-9);
  long long received = semiIteration(2, ratios, migrated, &changed);
  if (rank == 0 && expected > 0 && received == expected)
    printf("semi: iteration 2: rank 0 computes the columns rank 1 migrates\n");
  else if (rank == 0)
    printf("semi: iteration 2: rank 0 received %lld of %lld\n", received,
           expected);
}

/* ZERO-Pri and PriDiff on one rank's statistics. */
static void priority(int rank) {
  long long kept[8], epoch0[8], epoch1[8];
  float w[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  CHECK_OK(hrt_resize_configure(0.5, 0, /*epoch_iterations=*/2, 3));
  CHECK_OK(hrt_resize_configure_priority(0));
  /* Epoch 0: iteration 0's copy starts it, iteration 1's ends it; column k
   * moves by 0.001 (k + 1) in between. */
  priorityStep(0, w, kept);
  for (int k = 0; k < 8; ++k)
    w[k] += 0.001f * (float)(k + 1);
  long long count0 = priorityStep(1, w, epoch0);
  /* Epoch 1: ranked by epoch 0's change. The two lowest columns of those
   * epoch 0 pruned move by 0.5, the others hardly or not at all. */
  long long count1 = priorityStep(2, w, epoch1);
  int big = 0;
  for (int k = 0; k < 8; ++k) {
    if (holds(epoch0, count0, k))
      continue;
    w[k] += big < 2 ? 0.5f : 1e-5f;
    ++big;
  }
  priorityStep(3, w, kept);
  long long count2 = priorityStep(4, w, kept);
  int swapped = count0 == 4 && count1 == 4;
  for (int k = 0; k < 8; ++k)
    swapped &= holds(epoch0, count0, k) != holds(epoch1, count1, k);
  if (rank == 0 && swapped)
    printf("priority: epoch 1 keeps the 4 columns epoch 0 pruned\n");
  else if (rank == 0)
    printf("priority: epoch 1 keeps %lld columns\n", count1);
  /* Expected in epoch 2: the two lowest columns pruned in epoch 0 and the
   * two highest kept in epoch 0. */
  long long expected[4], found = 0;
  for (int k = 0; k < 8 && found < 2; ++k)
    if (!holds(epoch0, count0, k))
      expected[found++] = k;
  for (int k = 7; k >= 0 && found < 4; --k)
    if (holds(epoch0, count0, k))
      expected[found++] = k;
  int ranked = count2 == 4;
  for (int j = 0; j < 4; ++j)
    ranked &= holds(kept, count2, expected[j]);
  if (rank == 0) {
    if (ranked)
      printf("priority: epoch 2 keeps the 2 that moved most in epoch 1 and "
             "the 2 that moved most in epoch 0\n");
    else
      printf("priority: epoch 2 keeps %lld columns, first %lld\n", count2,
             kept[0]);
  }
  hrt_resize_stats stats;
  CHECK_OK(hrt_resize_get_stats(&stats));
  if (rank == 0)
    printf("priority: %lld rankings of the layer\n", stats.rankings);

  /* PriDiff: iteration 1's plan is recorded (the layer is known), and
   * every column moves by 1e-6 until iteration 2 ranks them. */
  long long pruned[2];
  for (int differentiated = 1; differentiated >= 0; --differentiated) {
    for (int k = 0; k < 8; ++k)
      w[k] = 0;
    CHECK_OK(hrt_resize_configure(0.25, 0, /*epoch_iterations=*/1, 3));
    CHECK_OK(hrt_resize_configure_priority(differentiated ? 1e-4 : 0));
    priorityStep(0, w, kept);
    priorityStep(1, w, kept);
    for (int k = 0; k < 8; ++k)
      w[k] += 1e-6f;
    pruned[differentiated] = priorityStep(2, w, kept);
  }
  if (rank == 0)
    printf("pridiff: epsilon 1e-4 keeps %lld of 8, without it %lld\n",
           pruned[1], pruned[0]);
}

/* Whether `value` holds `bytes` copies of byte `fill`. */
static int filled(const unsigned char *value, int bytes, int fill) {
  for (int i = 0; i < bytes; ++i)
    if (value[i] != fill)
      return 0;
  return 1;
}

static void keptProducts(int rank) {
  CHECK_OK(hrt_resize_configure(0.5, /*ranks=*/1ULL << 0, 0, 1));
  unsigned char value[16], read[16];
  int ok = 1;
  /* Iteration 0 keeps A = 1 and B = 2 of (9, grad_weight), C = 3 of (9,
   * grad_input); nothing was kept before. */
  hrt_resize_begin_iteration(0);
  for (int n = 0; n < 2; ++n) {
    memset(read, 7, sizeof read);
    hrt_mlir_previous_product(9, 2, 16, read);
    ok &= filled(read, 16, 0);
    memset(value, 1 + n, sizeof value);
    hrt_mlir_keep_product(9, 2, 16, value);
  }
  memset(value, 3, sizeof value);
  hrt_mlir_keep_product(9, 1, 16, value);
  /* Iteration 1 reads A, keeps A' = 4 in its place, reads B (and C for
   * the other product), and keeps nothing more. */
  hrt_resize_begin_iteration(1);
  hrt_mlir_previous_product(9, 2, 16, read);
  ok &= filled(read, 16, 1);
  memset(value, 4, sizeof value);
  hrt_mlir_keep_product(9, 2, 16, value);
  hrt_mlir_previous_product(9, 2, 16, read);
  ok &= filled(read, 16, 2);
  hrt_mlir_previous_product(9, 1, 16, read);
  ok &= filled(read, 16, 3);
  /* Iteration 2: A' is there, but a question of another size reads zeros;
   * then A'' = 5. */
  hrt_resize_begin_iteration(2);
  hrt_mlir_previous_product(9, 2, 8, read);
  ok &= filled(read, 8, 0);
  memset(value, 5, sizeof value);
  hrt_mlir_keep_product(9, 2, 16, value);
  /* Iteration 3: A'' comes back; B is gone, as iteration 1 did not keep a
   * second value. */
  hrt_resize_begin_iteration(3);
  hrt_mlir_previous_product(9, 2, 16, read);
  ok &= filled(read, 16, 5);
  hrt_mlir_keep_product(9, 2, 16, value);
  hrt_mlir_previous_product(9, 2, 16, read);
  ok &= filled(read, 16, 0);
  if (rank == 0)
    printf("same: rank 0 %s\n",
           ok ? "reads the last iteration's values in order" : "misreads");
  else
    printf("same: rank 1 %s\n", filled(read, 16, 0) ? "keeps nothing"
                                                      : "keeps values");
}

/* One iteration of layer 7 (8 columns) with priority pruning and
 * migration: rank 1's kept columns (gathered to every rank; -1 pads) and
 * what this rank computes of rank 1's, after showing the weight. */
static void priorityMigrationStep(hrt_comm world, long long i, const float *rows,
                                  long long keptBy1[8], long long received[8],
                                  long long *receivedCount) {
  long long kept[8], keptBy[2][8];
  float weight[16];
  for (int k = 0; k < 8; ++k)
    weight[2 * k] = weight[2 * k + 1] = rows[k];
  CHECK_OK(hrt_resize_begin_iteration(i));
  for (int j = 0; j < 8; ++j)
    kept[j] = received[j] = -1;
  hrt_mlir_prune_plan(/*layer=*/7, 8, kept);
  *receivedCount = hrt_mlir_migration_plan(7, 8, 1, received);
  hrt_mlir_observe_weight(7, 8, 2, weight);
  CHECK_OK(hrt_all_gather(kept, keptBy, 8, HRT_INT64, world));
  memcpy(keptBy1, keptBy[1], sizeof keptBy[1]);
}

static void priorityMigration(hrt_comm world, int rank) {
  CHECK_OK(hrt_resize_configure(0.25, 1ULL << 1, /*epoch_iterations=*/2, 5));
  CHECK_OK(hrt_resize_configure_migration(world, 0.25, 1ULL << 1));
  CHECK_OK(hrt_resize_configure_priority(0));
  float w[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  long long kept1[8], received[8], count = 0, pruned0[8] = {0};
  priorityMigrationStep(world, 0, w, kept1, received, &count);
  /* Rank 0 tells rank 1 which columns it computed for it. */
  long long receivedBy[2][8];
  CHECK_OK(hrt_all_gather(received, receivedBy, 8, HRT_INT64, world));
  int split = 1, seen[8] = {0}, keptCount = 0;
  for (int j = 0; j < 8; ++j) {
    if (kept1[j] >= 0)
      ++seen[kept1[j]], ++keptCount;
    if (receivedBy[0][j] >= 0)
      ++seen[receivedBy[0][j]];
  }
  for (int k = 0; k < 8; ++k) {
    split &= seen[k] <= 1;
    pruned0[k] = !seen[k];
  }
  split &= keptCount == 4;
  printf("rank %d: priority migration: epoch 0 %s\n", rank,
         split ? "splits all 8 columns" : "splits wrongly");
  for (int k = 0; k < 8; ++k)
    w[k] += 0.001f * (float)(rank == 1 ? k + 1 : 8 - k);
  priorityMigrationStep(world, 1, w, kept1, received, &count);
  priorityMigrationStep(world, 2, w, kept1, received, &count);
  /* Rank 1's ranking: epoch 0's pruned columns first (their statistic
   * stays 1), then the others by their change, highest first. */
  long long order[8], n = 0, lowest[6];
  for (int k = 0; k < 8; ++k)
    if (pruned0[k])
      order[n++] = k;
  long long others = 0;
  for (int k = 7; k >= 0; --k)
    if (!pruned0[k])
      order[n++] = k;
  for (int k = 0; k < 8; ++k)
    if (!pruned0[k])
      lowest[others++] = k;
  if (rank == 0) {
    int right = count == 2 && holds(received, count, lowest[2]) &&
                holds(received, count, lowest[3]);
    if (right)
      printf("rank 0: priority migration: epoch 1 receives the 2 columns "
             "rank 1's ranking migrates\n");
    else
      printf("rank 0: priority migration: epoch 1 receives %lld: %lld %lld\n",
             count, received[0], received[1]);
  } else {
    int right = 1;
    for (int j = 0; j < 4; ++j)
      right &= holds(kept1, 8, order[j]);
    right &= !holds(kept1, 8, lowest[0]) && !holds(kept1, 8, lowest[1]);
    printf("rank 1: priority migration: epoch 1 %s\n",
           right ? "keeps what its ranking keeps" : "keeps other columns");
  }
}

/* Epoch 0 (2 iterations) of priority pruning with migration, rank 0
 * observing layer 7 and rank 1 `layers` others; then the exchange. */
static void mismatchedLayers(hrt_comm world, int rank, int layers,
                             const char *what) {
  CHECK_OK(hrt_resize_configure(0.25, 1ULL << 1, /*epoch_iterations=*/2, 5));
  CHECK_OK(hrt_resize_configure_migration(world, 0.25, 1ULL << 1));
  CHECK_OK(hrt_resize_configure_priority(0));
  float weight[16] = {0};
  for (long long i = 0; i < 2; ++i) {
    CHECK_OK(hrt_resize_begin_iteration(i));
    for (int k = 0; k < 16; ++k)
      weight[k] += (float)(k + 1) * 1e-3f;
    if (rank == 0)
      hrt_mlir_observe_weight(7, 8, 2, weight);
    else
      for (int layer = 0; layer < layers; ++layer)
        hrt_mlir_observe_weight(8 + (unsigned long long)layer, 8, 2, weight);
  }
  hrt_status status = hrt_resize_begin_iteration(2);
  if (rank == 0)
    printf("%s: %s: %s\n", what, hrt_status_string(status), hrt_last_error());
}

static long long iteration(long long i, double gemmMs) {
  long long kept[32];
  hrt_resize_begin_iteration(i);
  long long count = hrt_mlir_prune_plan(/*layer=*/42, 32, kept);
  hrt_mlir_gemm_mark(0);
  sleepMs(gemmMs * (double)count / 32.0);
  hrt_mlir_gemm_mark(1);
  return count;
}

int main(int argc, char **argv) {
  int rank, size;
  hrt_comm world = hrt_test_init(&argc, &argv, &rank, &size);
  everyone = world;
  double ratios[2] = {0, 0};
  int changed = 0;

  hrt_status status = hrt_resize_end_iteration(ratios, NULL, 2, &changed);
  if (rank == 0)
    printf("no planner: %s: %s\n", hrt_status_string(status),
           hrt_last_error());
  CHECK_OK(hrt_resize_configure(0.5, 0, 0, 1));
  status = hrt_resize_configure_priority(0);
  if (rank == 0)
    printf("priority without epochs: %s: %s\n", hrt_status_string(status),
           hrt_last_error());
  status = hrt_resize_configure_online(world, 5, HRT_RESIZE_PRUNE, 0, 1);
  if (rank == 0)
    printf("bad target: %s: %s\n", hrt_status_string(status),
           hrt_last_error());

  CHECK_OK(hrt_resize_configure_online(world, /*min*/ 1, HRT_RESIZE_PRUNE, 0, 1));
  long long count = iteration(0, 80.0);
  printf("rank %d: iteration 0 keeps %lld of 32\n", rank, count);
  CHECK_OK(hrt_resize_end_iteration(ratios, NULL, 2, &changed));
  if (changed && ratios[0] == 0.0 && ratios[1] > 0.6 && ratios[1] < 0.85)
    printf("rank %d: iteration 0 plans alpha 0 for %s, about 3/4 for %s\n",
           rank, rank == 0 ? "itself" : "rank 0",
           rank == 1 ? "itself" : "rank 1");
  else
    printf("rank %d: iteration 0 plans %g and %g (changed %d)\n", rank,
           ratios[0], ratios[1], changed);

  count = iteration(1, 80.0);
  if (count == 32)
    printf("rank %d: iteration 1 keeps 32 of 32\n", rank);
  else if (count >= 5 && count <= 12)
    printf("rank %d: iteration 1 keeps 5 to 12 of 32\n", rank);
  else
    printf("rank %d: iteration 1 keeps %lld of 32\n", rank, count);
  CHECK_OK(hrt_resize_end_iteration(ratios, NULL, 2, &changed));
  if (ratios[0] == 0.0 && ratios[1] > 0.6)
    printf("rank %d: iteration 1 still plans over 0.6 for rank 1\n", rank);
  else
    printf("rank %d: iteration 1 plans %g and %g\n", rank, ratios[0],
           ratios[1]);

  double before = ratios[1];
  iteration(2, rank == 1 ? 20.0 : 80.0);
  CHECK_OK(hrt_resize_end_iteration(ratios, NULL, 2, &changed));
  if (changed && ratios[1] < before)
    printf("rank %d: iteration 2 re-plans rank 1 below its share\n",
           rank);
  else
    printf("rank %d: iteration 2 plans %g and %g (changed %d)\n", rank,
           ratios[0], ratios[1], changed);

  priority(rank);
  priorityMigration(world, rank);
  mismatchedLayers(world, rank, 1, "other layers");
  mismatchedLayers(world, rank, 2, "more layers");
  semi(world, rank);
  semiCommunication(world, rank);
  pretest(world, rank);
  keptProducts(rank);

  /* Fixed migration: rank 1 migrates half. */
  CHECK_OK(hrt_resize_configure(0, 0, 0, 1));
  CHECK_OK(hrt_resize_configure_migration(world, 0.5, 1ULL << 1));
  CHECK_OK(hrt_resize_begin_iteration(0));
  long long kept[32], received[32], keptBy[2][32];
  for (int j = 0; j < 32; ++j)
    kept[j] = -1;
  count = hrt_mlir_prune_plan(/*layer=*/42, 32, kept);
  long long fromZero = hrt_mlir_migration_plan(42, 32, 0, received);
  long long fromOne = hrt_mlir_migration_plan(42, 32, 1, received);
  CHECK_OK(hrt_all_gather(kept, keptBy, 32, HRT_INT64, world));
  int covered = 1, seen[32] = {0};
  for (int j = 0; j < 32; ++j)
    if (keptBy[1][j] >= 0)
      ++seen[keptBy[1][j]];
  for (long long j = 0; j < (fromOne > 0 ? fromOne : 0); ++j)
    ++seen[received[j]];
  for (int j = 0; j < 32; ++j)
    covered &= seen[j] == 1;
  if (rank == 0 && covered && fromOne == 16)
    printf("rank 0: keeps %lld, receives the 16 columns rank 1 leaves out\n",
           count);
  else
    printf("rank %d: keeps %lld, receives %lld\n", rank, count, fromOne);
  printf("rank %d: rank 0 migrates %lld, rank 1 migrates %d\n", rank,
         fromZero, fromOne >= 0);
  /* The whole list rank 1 migrates (what it broadcasts the rows of): the
   * same on both ranks, and rank 0's block, all of it, from position 0. */
  long long moved[32], movedBy[2][32], first = -1, firstOfNone = -1;
  for (int j = 0; j < 32; ++j)
    moved[j] = -1;
  long long movedCount = hrt_mlir_migrated_columns(42, 32, 1, &first, moved);
  long long noneMoved =
      hrt_mlir_migrated_columns(42, 32, 0, &firstOfNone, movedBy[0]);
  CHECK_OK(hrt_all_gather(moved, movedBy, 32, HRT_INT64, world));
  int sameList = memcmp(movedBy[0], movedBy[1], sizeof movedBy[0]) == 0;
  int blockMatches =
      rank != 0 || (fromOne == movedCount && first == 0 &&
                    memcmp(received, moved, sizeof(long long) * 16) == 0);
  printf("rank %d: rank 1 migrates %lld columns, alike on both ranks %d, "
         "block from %lld matching %d; rank 0 migrates %lld from %lld\n",
         rank, movedCount, sameList, first, blockMatches, noneMoved,
         firstOfNone);

  /* Online migration against the fastest rank. */
  CHECK_OK(hrt_resize_configure_online(world, /*min*/ 1, HRT_RESIZE_MIGRATE, 0,
                                       1));
  double migrated[2] = {0, 0};
  iteration(0, 40.0);
  CHECK_OK(hrt_resize_end_iteration(ratios, migrated, 2, &changed));
  if (changed && ratios[0] == 0.0 && ratios[1] == 0.0 && migrated[0] == 0.0 &&
      migrated[1] > 0.6 && migrated[1] < 0.85)
    printf("rank %d: migrate plans 0 for rank 0, about 3/4 for rank 1\n", rank);
  else
    printf("rank %d: migrate plans %g and %g (pruned %g and %g)\n", rank,
           migrated[0], migrated[1], ratios[0], ratios[1]);
  hrt_resize_begin_iteration(1);
  count = hrt_mlir_prune_plan(42, 32, kept);
  hrt_mlir_gemm_mark(0);
  sleepMs(40.0 * (double)count / 32.0);
  hrt_mlir_gemm_mark(1);
  long long total = receiveMigrated(42);
  if (rank == 0 && count == 32 && total >= 20 && total <= 27)
    printf("rank 0: migrating, keeps 32 and receives 20 to 27\n");
  else if (rank == 1 && count >= 5 && count <= 12 && total == 0)
    printf("rank 1: migrating, keeps 5 to 12 and receives 0\n");
  else
    printf("rank %d: migrating, keeps %lld and receives %lld\n", rank, count,
           total);
  CHECK_OK(hrt_resize_end_iteration(ratios, migrated, 2, &changed));
  if (migrated[0] == 0.0 && migrated[1] > 0.6)
    printf("rank %d: migrating, still over 0.6 for rank 1\n", rank);
  else
    printf("rank %d: migrating, plans %g and %g (changed %d)\n", rank,
           migrated[0], migrated[1], changed);

  CHECK_OK(hrt_finalize());
  return 0;
}
