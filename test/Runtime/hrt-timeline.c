/*===- hrt-timeline.c - the spans of a measured iteration -------------------===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* REQUIRES: mpi
 * RUN: %mpirun -np 2 hrt-timeline | FileCheck %s
 *
 * Each rank runs what a 2-stage pipeline step calls: rank 1 receives the
 * activation of rank 0, both mark a forward task of micro-batch 0, rank 0
 * sends, both all-reduce and mark a backward task whose micro-batch the
 * mark does not say. A mark before hrt_timeline_begin_iteration is not
 * recorded. Rank 0 gathers every rank's spans, rank by rank in the order
 * recorded.
 * CHECK:      before init: not initialised: hrt_timeline_gather (0 bytes): the runtime is not initialised; call hrt_init first
 * CHECK-NEXT: null output: invalid argument: hrt_timeline_gather on rank 0 (0 bytes): null argument
 * CHECK-NEXT: 8 spans, 0 dropped
 * CHECK-NEXT: rank 0: forward 0
 * CHECK-NEXT: rank 0: send -1
 * CHECK-NEXT: rank 0: collective -1
 * CHECK-NEXT: rank 0: backward -1
 * CHECK-NEXT: rank 1: recv -1
 * CHECK-NEXT: rank 1: forward 0
 * CHECK-NEXT: rank 1: collective -1
 * CHECK-NEXT: rank 1: backward -1
 *
 * A task starts where the communication before it ended (the receive, the
 * all-reduce), no span of a rank overlaps the next, and rank 1's forward
 * starts after rank 0's ended: one clock on one host.
 * CHECK-NEXT: tasks start where the communication before them ended
 * CHECK-NEXT: no span overlaps the next on its rank
 * CHECK-NEXT: rank 1 computes after rank 0
 *
 * Past HRT_TIMELINE_MAX_SPANS a rank counts the spans it drops; each
 * iteration starts afresh.
 * CHECK-NEXT: 131072 spans, 6 dropped
 * CHECK-NEXT: 2 spans, 0 dropped
 */

#include "Inputs/hrt-test.h"

#include <stdio.h>

static int isTask(int kind) {
  return kind == HRT_TIMELINE_FORWARD || kind == HRT_TIMELINE_BACKWARD;
}

/* Gathers an iteration that marked `marks` tasks on every rank. */
static void gatherMarks(hrt_comm world, int rank, int marks) {
  const hrt_timeline_span *spans;
  size_t count, dropped;
  CHECK_OK(hrt_timeline_begin_iteration());
  for (int i = 0; i < marks; ++i)
    hrt_mlir_task_mark(HRT_TIMELINE_FORWARD, i);
  CHECK_OK(hrt_timeline_gather(world, &spans, &count, &dropped));
  if (rank == 0)
    printf("%zu spans, %zu dropped\n", count, dropped);
}

int main(int argc, char **argv) {
  const hrt_timeline_span *spans;
  size_t count, dropped;
  hrt_status early = hrt_timeline_gather(NULL, &spans, &count, &dropped);
  int rank, size;
  hrt_comm world = hrt_test_init(&argc, &argv, &rank, &size);
  if (rank == 0)
    printf("before init: %s: %s\n", hrt_status_string(early),
           hrt_last_error());
  hrt_status null = hrt_timeline_gather(world, NULL, &count, NULL);
  if (rank == 0)
    printf("null output: %s: %s\n", hrt_status_string(null),
           hrt_last_error());

  hrt_mlir_task_mark(HRT_TIMELINE_FORWARD, 7); /* before the iteration */
  CHECK_OK(hrt_timeline_begin_iteration());
  hrt_comm comm = hrt_mlir_world();
  float data[4] = {1, 2, 3, 4};
  if (rank > 0)
    hrt_mlir_recv(comm, data, 4, HRT_FLOAT32, rank - 1, 0);
  hrt_mlir_task_mark(HRT_TIMELINE_FORWARD, 0);
  if (rank + 1 < size)
    hrt_mlir_send(comm, data, 4, HRT_FLOAT32, rank + 1, 0);
  hrt_mlir_all_reduce(comm, data, 4, HRT_FLOAT32, HRT_SUM);
  hrt_mlir_task_mark(HRT_TIMELINE_BACKWARD, -1);
  CHECK_OK(hrt_timeline_gather(world, &spans, &count, &dropped));
  hrt_mlir_task_mark(HRT_TIMELINE_FORWARD, 8); /* after the gather */

  if (rank == 0) {
    printf("%zu spans, %zu dropped\n", count, dropped);
    int exact = 1, ordered = 1;
    double forwardEnd[2] = {0, 0}, forwardStart[2] = {0, 0};
    for (size_t i = 0; i < count; ++i) {
      const hrt_timeline_span *span = &spans[i];
      printf("rank %d: %s %lld\n", span->rank,
             hrt_timeline_kind_string((hrt_timeline_kind)span->kind),
             span->microbatch);
      if (span->kind == HRT_TIMELINE_FORWARD && span->rank < 2) {
        forwardStart[span->rank] = span->start;
        forwardEnd[span->rank] = span->end;
      }
      if (i == 0 || spans[i - 1].rank != span->rank)
        continue;
      const hrt_timeline_span *before = &spans[i - 1];
      if (isTask(span->kind) && !isTask(before->kind) &&
          span->start != before->end)
        exact = 0;
      if (span->start < before->end || span->end < span->start)
        ordered = 0;
    }
    if (exact)
      printf("tasks start where the communication before them ended\n");
    if (ordered)
      printf("no span overlaps the next on its rank\n");
    if (forwardStart[1] >= forwardEnd[0])
      printf("rank 1 computes after rank 0\n");
  }

  gatherMarks(world, rank, HRT_TIMELINE_MAX_SPANS + 3);
  gatherMarks(world, rank, 1);
  CHECK_OK(hrt_finalize());
  return 0;
}
