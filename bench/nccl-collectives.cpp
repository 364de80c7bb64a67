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

void require(hrt_status status) {
  if (status != HRT_SUCCESS) {
    std::fprintf(stderr, "bench-nccl-collectives: %s\n", hrt_last_error());
    hrt_abort(2);
  }
}

void requireNccl(ncclResult_t result, const char *call) {
  if (result != ncclSuccess) {
    std::fprintf(stderr, "bench-nccl-collectives: %s: %s\n", call,
                 ncclGetErrorString(result));
    hrt_abort(2);
  }
}

void requireCuda(cudaError_t error, const char *call) {
  if (error != cudaSuccess) {
    std::fprintf(stderr, "bench-nccl-collectives: %s: %s\n", call,
                 cudaGetErrorString(error));
    hrt_abort(2);
  }
}

} // namespace

int main(int argc, char **argv) {
  TableOptions options(argc, argv);
  // hrt_init selects the rank's device.
  require(hrt_init(HRT_BACKEND_NCCL, &argc, &argv));
  hrt_comm world;
  require(hrt_comm_world(&world));
  int rank = 0, ranks = 1;
  hrt_comm_rank(world, &rank);
  hrt_comm_size(world, &ranks);

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
