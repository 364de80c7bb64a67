/*===- hrt-timeout.c - a peer that never arrives is an error, not a hang ---===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* REQUIRES: mpi
 * RUN: not %mpirun -np 2 hrt-timeout 2>&1 | FileCheck %s
 *
 * Rank 0 sends 4 MiB (beyond MPI's eager limit, so the send cannot complete
 * before it is matched) to rank 1, which never posts the matching receive:
 * it waits on another tag. Rank 0's send times out after 1 s; it reports the
 * error and aborts the job, which exits non-zero.
 *
 * CHECK: rank 0: hrt_send on rank 0 (4194304 bytes, peer 1, tag 7): timed out after 1 s: the peer never arrived
 * CHECK-NOT: rank 1 received
 */

#include "hetero-rt/hrt.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (hrt_init(HRT_BACKEND_MPI, &argc, &argv) != HRT_SUCCESS)
    return 2;
  hrt_comm world;
  int rank = 0;
  hrt_comm_world(&world);
  hrt_comm_rank(world, &rank);
  enum { N = 1 << 20 };
  float *buffer = calloc(N, sizeof(float));
  if (rank == 0) {
    hrt_set_timeout(1.0);
    hrt_status status = hrt_send(buffer, N, HRT_FLOAT32, 1, 7, world);
    if (status != HRT_SUCCESS) {
      fprintf(stderr, "rank 0: %s\n", hrt_last_error());
      fflush(stderr);
      hrt_abort(3);
    }
  } else {
    hrt_set_timeout(30.0);
    if (hrt_recv(buffer, N, HRT_FLOAT32, 0, 8, world) == HRT_SUCCESS)
      printf("rank 1 received\n");
  }
  free(buffer);
  hrt_finalize();
  return 0;
}
