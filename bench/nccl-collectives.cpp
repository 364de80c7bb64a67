//===- nccl-collectives.cpp - hrt_ over NCCL against raw NCCL -------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
//   mpirun -np 2 bench-nccl-collectives [--min-bytes N] [--max-bytes N]
//                                       [--rounds R]
//
// One GPU per rank (the local rank's, as the NCCL backend picks it). For
// each collective and size, a raw NCCL call on a communicator and stream of
// its own, waited for with cudaStreamSynchronize, against the hrt_ call of
// the NCCL backend (which enqueues on its stream and polls until done,
// under the runtime's timeout), on the same device buffers. The table is
// bench-collectives' (CollectiveTable.h): bus bandwidth in nccl-tests'
// convention and the ratio hetero/raw.
//
//===----------------------------------------------------------------------===//

#include "CollectiveTable.h"
#include "hetero-rt/hrt.h"

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <cstdio>
#include <vector>

using namespace hetero::bench;

namespace {

constexpr const char *kProgram = "bench-nccl-collectives";

void require(hrt_status status) {
  requireThat(status != HRT_SUCCESS, kProgram, "", hrt_last_error());
}

void requireNccl(ncclResult_t result, const char *call) {
  requireThat(result != ncclSuccess, kProgram, call,
              ncclGetErrorString(result));
}

void requireCuda(cudaError_t error, const char *call) {
  requireThat(error != cudaSuccess, kProgram, call, cudaGetErrorString(error));
}

} // namespace

int main(int argc, char **argv) {
  TableOptions options(argc, argv);
  // hrt_init selects the rank's device.
  World job(HRT_BACKEND_NCCL, &argc, &argv, kProgram);
  hrt_comm world = job.comm;
  int rank = job.rank, ranks = job.ranks;

  ncclUniqueId id;
  if (rank == 0)
    requireNccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t raw;
  requireNccl(ncclCommInitRank(&raw, ranks, id, rank), "ncclCommInitRank");
  cudaStream_t stream;
  requireCuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
              "cudaStreamCreateWithFlags");
  auto finish = [&](ncclResult_t result, const char *call) {
    requireNccl(result, call);
    requireCuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  };

  std::vector<Collective> collectives = {
      {"all_reduce", busAllReduce, perRankBytes,
       [&](float *s, float *r, size_t n) {
         finish(ncclAllReduce(s, r, n, ncclFloat32, ncclSum, raw, stream),
                "ncclAllReduce");
       },
       [&](float *s, float *r, size_t n) {
         require(hrt_all_reduce(s, r, n, HRT_FLOAT32, HRT_SUM, world));
       }},
      {"all_gather", busGather, totalBytes,
       [&](float *s, float *r, size_t n) {
         finish(ncclAllGather(s, r, n, ncclFloat32, raw, stream),
                "ncclAllGather");
       },
       [&](float *s, float *r, size_t n) {
         require(hrt_all_gather(s, r, n, HRT_FLOAT32, world));
       }},
      {"reduce_scatter", busGather, totalBytes,
       [&](float *s, float *r, size_t n) {
         finish(ncclReduceScatter(s, r, n, ncclFloat32, ncclSum, raw, stream),
                "ncclReduceScatter");
       },
       [&](float *s, float *r, size_t n) {
         require(hrt_reduce_scatter(s, r, n, HRT_FLOAT32, HRT_SUM, world));
       }},
      {"broadcast", busOne, perRankBytes,
       [&](float *s, float *, size_t n) {
         finish(ncclBroadcast(s, s, n, ncclFloat32, 0, raw, stream),
                "ncclBroadcast");
       },
       [&](float *s, float *, size_t n) {
         require(hrt_broadcast(s, n, HRT_FLOAT32, 0, world));
       }},
  };

  size_t capacity = options.maxBytes / sizeof(float) * size_t(ranks);
  float *send = nullptr, *recv = nullptr;
  requireCuda(cudaMalloc(&send, capacity * sizeof(float)), "cudaMalloc");
  requireCuda(cudaMalloc(&recv, capacity * sizeof(float)), "cudaMalloc");
  requireCuda(cudaMemset(send, 0, capacity * sizeof(float)), "cudaMemset");
  printTable(collectives, options, rank, ranks, send, recv);
  cudaFree(send);
  cudaFree(recv);
  ncclCommDestroy(raw);
  cudaStreamDestroy(stream);
  require(hrt_finalize());
  return 0;
}
