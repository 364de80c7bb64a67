/*===- hrt-link.c - buffered sends and the emulated link -------------------===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* REQUIRES: mpi
 * RUN: env HETERO_RT_TIMEOUT=20 %mpirun -np 2 hrt-link > %t.out
 * RUN: FileCheck %s < %t.out
 * RUN: FileCheck %s --check-prefix=FLUSH < %t.out
 * RUN: env HETERO_RT_LINK=8,5 HETERO_RT_TIMEOUT=20 %mpirun -np 2 hrt-link --emulated | FileCheck %s --check-prefixes=CHECK,LINK
 * RUN: env HETERO_RT_LINK=8,5,nic HETERO_RT_TIMEOUT=20 %mpirun -np 3 hrt-link --emulated | FileCheck %s --check-prefix=NIC
 * RUN: env HETERO_RT_LINK=fast not %mpirun -np 1 hrt-link 2>&1 | FileCheck %s --check-prefix=BADENV
 * RUN: env HETERO_RT_LINK=8,5,wifi not %mpirun -np 1 hrt-link 2>&1 | FileCheck %s --check-prefix=BADNIC
 *
 * Rank 0 posts four 1 MiB buffered sends (far above MPI's eager limit) and
 * overwrites its buffer after each, before rank 1 has posted any receive:
 * rank 1 waits at a barrier that rank 0 reaches only after its sends. A
 * blocking send would deadlock here (and time out); a buffered one returns
 * at once and the data that arrives is what was sent.
 *
 * Under HETERO_RT_LINK=8,5 (8 MiB/s, 5 ms) the link carries one message at
 * a time: the last of the four arrives no earlier than 4 x 1/8 s + 5 ms =
 * 505 ms after the first was sent, whenever rank 1 asks for it.
 *
 * With three ranks rank 0 sends its messages to ranks 1 and 2 in turn. Two
 * links would carry two each (the last arriving after 255 ms); with `nic`
 * all four share rank 0's one link, so the last, rank 2's, arrives after
 * 505 ms again.
 *
 * CHECK: rank 0: 4 sends posted before any receive
 * CHECK: rank 1: 4 messages intact
 * FLUSH-DAG: rank 0: 0 sends in flight after the flush
 * FLUSH-DAG: rank 1: 0 sends in flight after the flush
 * LINK: rank 1: the last message arrived after the link's 505 ms
 * NIC-DAG: rank 1: 2 messages intact
 * NIC-DAG: rank 2: 2 messages intact
 * NIC-DAG: rank 2: the last message arrived after the link's 505 ms
 * BADENV: hrt_init failed: hrt_init (0 bytes): HETERO_RT_LINK='fast' is not '<MB/s>[,<latency ms>[,nic]]'
 * BADNIC: hrt_init failed: hrt_init (0 bytes): HETERO_RT_LINK='8,5,wifi' is not '<MB/s>[,<latency ms>[,nic]]'
 */

#include "Inputs/hrt-test.h"

#include <stdlib.h>
#include <string.h>

enum { N = 1 << 18, MESSAGES = 4 };

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
  int peers = size > 1 ? size - 1 : 1;
  float *buffer = malloc(N * sizeof(float));
  double start = 0.0;
  if (rank == 0) {
    start = hrt_wtime();
    for (int m = 0; m < MESSAGES; ++m) {
      for (int i = 0; i < N; ++i)
        buffer[i] = (float)(m * N + i);
      CHECK_OK(hrt_bsend(buffer, N, HRT_FLOAT32, 1 + m % peers, m, world));
      memset(buffer, 0xff, N * sizeof(float));
    }
    printf("rank 0: %d sends posted before any receive\n", MESSAGES);
    fflush(stdout);
  }
  CHECK_OK(hrt_broadcast(&start, 1, HRT_FLOAT64, 0, world));
  CHECK_OK(hrt_barrier(world));
  if (rank >= 1) {
    int intact = 0;
    for (int m = rank - 1; m < MESSAGES; m += peers) {
      CHECK_OK(hrt_recv(buffer, N, HRT_FLOAT32, 0, m, world));
      int good = 1;
      for (int i = 0; i < N; ++i)
        good &= buffer[i] == (float)(m * N + i);
      intact += good;
    }
    double elapsed = hrt_wtime() - start;
    printf("rank %d: %d messages intact\n", rank, intact);
    if (emulated && rank == 1 + (MESSAGES - 1) % peers)
      printf("rank %d: the last message arrived %s the link's 505 ms\n",
             rank, elapsed >= 0.505 ? "after" : "BEFORE");
  }
  CHECK_OK(hrt_flush_sends());
  printf("rank %d: %zu sends in flight after the flush\n", rank,
         hrt_sends_in_flight());
  free(buffer);
  CHECK_OK(hrt_finalize());
  return 0;
}
