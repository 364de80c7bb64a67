/*===- hrt-nccl.c - libhetero_rt over NCCL on device buffers ---------------===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* REQUIRES: mpi, cuda-device
 * RUN: %mpirun -np 2 hrt-nccl | FileCheck %s
 *
 * CHECK-DAG: rank 0: nccl all_reduce, all_gather, broadcast and send/recv ok
 * CHECK-DAG: rank 1: nccl all_reduce, all_gather, broadcast and send/recv ok
 *
 * Needs a GPU per rank: the buffers are device memory.
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
  cudaFree(device);
  cudaFree(gathered);
  CHECK_OK(hrt_finalize());
  return failures != 0;
}
