/*===- hrt-errors.c - libhetero_rt reports bad calls with context ----------===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* REQUIRES: mpi
 * RUN: %mpirun -np 2 hrt-errors 2>&1 | FileCheck %s
 *
 * Each line is printed by rank 0 only.
 */

#include "hetero-rt/hrt.h"

#include <stdio.h>

static int rank = 0;

static void report(const char *what, hrt_status status) {
  if (rank == 0)
    printf("%s: %s: %s\n", what, hrt_status_string(status), hrt_last_error());
}

int main(int argc, char **argv) {
  hrt_comm world = NULL;
  // CHECK: before init: not initialised: hrt_comm_world (0 bytes): not initialised
  report("before init", hrt_comm_world(&world));

  /* Without a GPU (or without NCCL) the NCCL backend refuses cleanly. */
  hrt_status nccl = hrt_init(HRT_BACKEND_NCCL, &argc, &argv);
  if (nccl == HRT_SUCCESS) {
    hrt_finalize();
    /* A machine with a device: the failures below still hold for MPI. */
  } else if (rank == 0) {
    // CHECK: nccl init refused: {{unavailable|backend error}}: hrt_init {{.*}}: {{no CUDA device is visible|CUDA: .*|this libhetero_rt was built without the NCCL backend.*}}
    printf("nccl init refused: %s: %s\n", hrt_status_string(nccl),
           hrt_last_error());
  }

  if (hrt_init(HRT_BACKEND_MPI, &argc, &argv) != HRT_SUCCESS) {
    fprintf(stderr, "%s\n", hrt_last_error());
    return 1;
  }
  hrt_comm_world(&world);
  hrt_comm_rank(world, &rank);
  float values[4] = {1, 2, 3, 4};

  // CHECK: twice: invalid argument: hrt_init (0 bytes): already initialised
  report("twice", hrt_init(HRT_BACKEND_MPI, NULL, NULL));
  // CHECK: peer: invalid argument: hrt_send on rank 0 (16 bytes, peer 2, tag 1): peer 2 is outside the communicator of 2 ranks
  report("peer", hrt_send(values, 4, HRT_FLOAT32, 2, 1, world));
  // CHECK: tag: invalid argument: hrt_recv on rank 0 (16 bytes, peer 1, tag -3): the tag must be >= 0
  report("tag", hrt_recv(values, 4, HRT_FLOAT32, 1, -3, world));
  // CHECK: negative peer: invalid argument: hrt_send on rank 0 (4 bytes, peer -1, tag 0): peer -1 is outside the communicator of 2 ranks
  report("negative peer", hrt_send(values, 1, HRT_FLOAT32, -1, 0, world));
  // CHECK: big: invalid argument: hrt_all_reduce on rank 0 (8589934592 bytes): the count 4294967296 exceeds the 2^31-1 elements one call can move
  report("big", hrt_all_reduce(values, values, (size_t)1 << 32, HRT_FLOAT16, HRT_SUM, world));
  // CHECK: null buffer: invalid argument: hrt_all_reduce on rank 0 (16 bytes): the buffer is null but the count is 4
  report("null buffer", hrt_all_reduce(values, NULL, 4, HRT_FLOAT32, HRT_SUM, world));
  // CHECK: root: invalid argument: hrt_broadcast on rank 0 (16 bytes, root 5): root 5 is outside the communicator of 2 ranks
  report("root", hrt_broadcast(values, 4, HRT_FLOAT32, 5, world));
  // CHECK: dtype: invalid argument: hrt_all_gather on rank 0 (0 bytes): unknown data type 99
  report("dtype", hrt_all_gather(values, values, 4, (hrt_dtype)99, world));
  // CHECK: op: invalid argument: hrt_all_reduce on rank 0 (16 bytes): unknown reduction 17
  report("op", hrt_all_reduce(values, values, 4, HRT_FLOAT32, (hrt_reduce_op)17, world));
  // CHECK: int avg: invalid argument: hrt_all_reduce on rank 0 (16 bytes): avg needs a floating-point type
  report("int avg", hrt_all_reduce(values, values, 4, HRT_INT32, HRT_AVG, world));
  // CHECK: half int op: invalid argument: hrt_all_reduce on rank 0 (8 bytes): unknown reduction -1
  report("half int op", hrt_all_reduce(values, values, 4, HRT_BFLOAT16, (hrt_reduce_op)-1, world));
  // CHECK: world free: invalid argument: hrt_comm_free on rank 0 (0 bytes): the world communicator belongs to the runtime
  report("world free", hrt_comm_free(world));
  // CHECK: timeout: invalid argument: hrt_set_timeout (0 bytes): the timeout must be >= 0 seconds (0 waits forever)
  report("timeout", hrt_set_timeout(-1.0));
  // CHECK: wait: invalid argument: hrt_wait (0 bytes): the request is null
  report("wait", hrt_wait(NULL));
  // CHECK: finalize: success
  hrt_status finalized = hrt_finalize();
  if (rank == 0)
    printf("finalize: %s\n", hrt_status_string(finalized));
  return finalized == HRT_SUCCESS ? 0 : 1;
}
