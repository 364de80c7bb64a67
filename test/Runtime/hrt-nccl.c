/*===- hrt-nccl.c - libhetero_rt over NCCL on device buffers ---------------===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* REQUIRES: mpi, cuda-devices-2
 * RUN: env HETERO_RT_TIMEOUT=60 %mpirun -x HETERO_RT_TIMEOUT -np 2 hrt-nccl | FileCheck %s
 *
 * CHECK-DAG: rank 0: nccl all_reduce, all_gather, broadcast and send/recv ok
 * CHECK-DAG: rank 1: nccl all_reduce, all_gather, broadcast and send/recv ok
 * CHECK-DAG: rank 0: buffered exchange ok
 * CHECK-DAG: rank 1: buffered exchange ok
 *
 * Needs a GPU per rank (NCCL refuses two ranks on one device): the buffers
 * are device memory. The exchange is 1F1B's: both ranks send to each other
 * before either receives, which waits forever if a send waits for its
 * receive.
 */

#include "Inputs/hrt-test.h"

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>


int main(int argc, char **argv) {
  CHECK_OK(hrt_init(HRT_BACKEND_NCCL, &argc, &argv));
  hrt_comm world;
  int rank, size;
  CHECK_OK(hrt_comm_world(&world));
  CHECK_OK(hrt_comm_rank(world, &rank));
  CHECK_OK(hrt_comm_size(world, &size));
  enum { N = 1024 };
  float host[N * 2], *device, *gathered;
  cudaMalloc((void **)&device, N * sizeof(float));
  cudaMalloc((void **)&gathered, (size_t)size * N * sizeof(float));
  for (int i = 0; i < N; ++i)
    host[i] = (float)(rank + 1) * i;
  cudaMemcpy(device, host, N * sizeof(float), cudaMemcpyHostToDevice);
  int failures = 0;

  CHECK_OK(hrt_all_reduce(device, device, N, HRT_FLOAT32, HRT_SUM, world));
  cudaMemcpy(host, device, N * sizeof(float), cudaMemcpyDeviceToHost);
  float total = (float)size * (size + 1) / 2;
  for (int i = 0; i < N; ++i)
    failures += host[i] != total * i;

  CHECK_OK(hrt_all_gather(device, gathered, N, HRT_FLOAT32, world));
  CHECK_OK(hrt_broadcast(device, N, HRT_FLOAT32, 0, world));
  if (size >= 2) {
    if (rank == 0)
      CHECK_OK(hrt_send(device, N, HRT_FLOAT32, 1, 0, world));
    else if (rank == 1)
      CHECK_OK(hrt_recv(device, N, HRT_FLOAT32, 0, 0, world));
  }
  CHECK_OK(hrt_barrier(world));
  if (failures == 0)
    printf("rank %d: nccl all_reduce, all_gather, broadcast and send/recv "
           "ok\n",
           rank);

  /* Buffered sends copy on the device: the source is overwritten at once,
   * and the peer still gets what was sent. 16 MiB each way. */
  if (size == 2) {
    enum { M = 4 << 20 };
    float *out, *in, *check = malloc(M * sizeof(float));
    cudaMalloc((void **)&out, M * sizeof(float));
    cudaMalloc((void **)&in, M * sizeof(float));
    for (int i = 0; i < M; ++i)
      check[i] = (float)(rank * 7 + i % 1000);
    cudaMemcpy(out, check, M * sizeof(float), cudaMemcpyHostToDevice);
    int peer = 1 - rank;
    CHECK_OK(hrt_bsend(out, M, HRT_FLOAT32, peer, 3, world));
    cudaMemset(out, 0, M * sizeof(float));
    CHECK_OK(hrt_recv(in, M, HRT_FLOAT32, peer, 3, world));
    CHECK_OK(hrt_flush_sends());
    cudaMemcpy(check, in, M * sizeof(float), cudaMemcpyDeviceToHost);
    int wrong = 0;
    for (int i = 0; i < M; ++i)
      wrong += check[i] != (float)(peer * 7 + i % 1000);
    if (wrong == 0)
      printf("rank %d: buffered exchange ok\n", rank);
    failures += wrong;
    cudaFree(out);
    cudaFree(in);
    free(check);
  }
  cudaFree(device);
  cudaFree(gathered);
  CHECK_OK(hrt_finalize());
  return failures != 0;
}
