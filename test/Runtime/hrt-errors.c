/*===- hrt-errors.c - libhetero_rt reports bad calls with context ----------===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* REQUIRES: mpi
 * RUN: %mpirun -np 2 hrt-errors 2>&1 | FileCheck %s
 * RUN: env HETERO_RT_TIMEOUT=soon not %mpirun -x HETERO_RT_TIMEOUT -np 1 hrt-errors 2>&1 | FileCheck %s --check-prefix=TIMEOUT-ENV
 * TIMEOUT-ENV: hrt_init (0 bytes): HETERO_RT_TIMEOUT='soon' is not a number of seconds >= 0 (0 waits forever)
 *
 * Each line is printed by rank 0 only.
 */

#include "hetero-rt/compress.h"
#include "hetero-rt/hrt.h"

#include <math.h>
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
  // CHECK: finalize before init: not initialised: hrt_finalize (0 bytes): not initialised
  report("finalize before init", hrt_finalize());
  float early[2] = {0, 0};
  hrt_compression spec = {HRT_COMPRESS_TOPK, 0.5, 0, HRT_SCHEME_ALLGATHER, 1, NULL, 1};
  // CHECK: compressed before init: not initialised: hrt_compressed_all_reduce (8 bytes): the runtime is not initialised; call hrt_init first
  report("compressed before init", hrt_compressed_all_reduce(early, 2, &spec, HRT_SUM, NULL));
  // CHECK: bad backend: invalid argument: hrt_init (0 bytes): unknown backend 7
  report("bad backend", hrt_init((hrt_backend)7, &argc, &argv));

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
  // CHECK: timeout nan: invalid argument: hrt_set_timeout (0 bytes): the timeout must be >= 0 seconds (0 waits forever)
  report("timeout nan", hrt_set_timeout(NAN));
  // CHECK: split output: invalid argument: hrt_comm_split on rank 0 (0 bytes): the output is null
  report("split output", hrt_comm_split(world, 0, 0, NULL));
  // CHECK: rank of null: invalid argument: hrt_comm_rank (0 bytes): null argument
  report("rank of null", hrt_comm_rank(NULL, &rank));
  // CHECK: isend request: invalid argument: hrt_send on rank 0 (16 bytes, peer 1, tag 0): the request is null
  report("isend request", hrt_isend(values, 4, HRT_FLOAT32, 1, 0, world, NULL));
  // CHECK: iall_reduce request: invalid argument: hrt_iall_reduce on rank 0 (16 bytes): the request is null
  report("iall_reduce request", hrt_iall_reduce(values, values, 4, HRT_FLOAT32, HRT_SUM, world, NULL));
  // CHECK: bsend peer: invalid argument: hrt_bsend on rank 0 (16 bytes, peer 9, tag 0): peer 9 is outside the communicator of 2 ranks
  report("bsend peer", hrt_bsend(values, 4, HRT_FLOAT32, 9, 0, world));
  // CHECK: link model: invalid argument: hrt_set_link_model (0 bytes): {{.*}}
  report("link model", hrt_set_link_model(-1.0, 0.0));
  // CHECK: reduce root: invalid argument: hrt_reduce on rank 0 (16 bytes, root -2): root -2 is outside the communicator of 2 ranks
  report("reduce root", hrt_reduce(values, values, 4, HRT_FLOAT32, HRT_SUM, -2, world));
  // CHECK: barrier null: invalid argument: hrt_barrier (0 bytes): the communicator is null
  report("barrier null", hrt_barrier(NULL));

  /* Rank 0 splits itself out (negative color): it is in no communicator. */
  hrt_comm part = NULL;
  if (hrt_comm_split(world, rank == 0 ? -1 : 0, 0, &part) != HRT_SUCCESS) {
    fprintf(stderr, "%s\n", hrt_last_error());
    return 1;
  }
  // CHECK: not a member: invalid argument: hrt_all_reduce outside the communicator (16 bytes): this rank is not a member of the communicator (hrt_comm_split gave it a negative color)
  if (rank == 0)
    report("not a member", hrt_all_reduce(values, values, 4, HRT_FLOAT32, HRT_SUM, part));
  // CHECK: free non-member: success
  hrt_status freed = hrt_comm_free(part);
  if (rank == 0)
    printf("free non-member: %s\n", hrt_status_string(freed));

  // CHECK: compressor: invalid argument: hrt_compressed_all_reduce on rank 0 (16 bytes): unknown compressor 42
  spec.compressor = (hrt_compressor)42;
  report("compressor", hrt_compressed_all_reduce(values, 4, &spec, HRT_SUM, world));
  // CHECK: ratio: invalid argument: hrt_compressed_all_reduce on rank 0 (16 bytes): the kept ratio must be in (0, 1], got -3.000000
  spec.compressor = HRT_COMPRESS_TOPK;
  spec.ratio = -3.0;
  report("ratio", hrt_compressed_all_reduce(values, 4, &spec, HRT_SUM, world));
  // CHECK: levels: invalid argument: hrt_compressed_all_reduce on rank 0 (16 bytes): QSGD needs 1 to 127 levels, got 0
  spec.compressor = HRT_COMPRESS_QSGD;
  report("levels", hrt_compressed_all_reduce(values, 4, &spec, HRT_SUM, world));
  // CHECK: compressed max: invalid argument: hrt_compressed_all_reduce on rank 0 (16 bytes): compressed gradients are summed or averaged, not reduced with operation 2
  spec.levels = 4;
  report("compressed max", hrt_compressed_all_reduce(values, 4, &spec, HRT_MAX, world));
  // CHECK: placement: invalid argument: hrt_compressed_all_reduce on rank 0 (16 bytes): unknown placement 5
  spec.placement = (hrt_placement)5;
  report("placement", hrt_compressed_all_reduce(values, 4, &spec, HRT_SUM, world));
  // CHECK: no device kernels: invalid argument: hrt_compressed_all_reduce on rank 0 (16 bytes): placement on the device needs the device kernels of libhetero_rt_cuda, which is not loaded
  spec.placement = HRT_PLACEMENT_DEVICE;
  report("no device kernels", hrt_compressed_all_reduce(values, 4, &spec, HRT_SUM, world));
  spec.placement = HRT_PLACEMENT_HOST;
  // CHECK: sparse format: invalid argument: hrt_sparse_all_reduce on rank 0 (16 bytes): unknown sparse format 0
  report("sparse format", hrt_sparse_all_reduce(values, 4, (hrt_sparse_format)0, HRT_SUM, world));
  // CHECK: sparse prod: invalid argument: hrt_sparse_all_reduce on rank 0 (16 bytes): sparse gradients are summed or averaged, not reduced with operation 1
  report("sparse prod", hrt_sparse_all_reduce(values, 4, HRT_SPARSE_COO, HRT_PROD, world));
  // CHECK: planner null: invalid argument: hrt_planner_record_compute (0 bytes): needs a planner and times >= 0
  report("planner null", hrt_planner_record_compute(NULL, 1.0, 1.0));
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
