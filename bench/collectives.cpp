//===- collectives.cpp - hrt_ collectives against raw MPI -----------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
//   mpirun -np 2 bench-collectives [--min-bytes N] [--max-bytes N] [--rounds R]
//
// For each collective and size, runs the raw MPI call and the hrt_ call on
// the same buffers, alternating in R rounds, and keeps each side's fastest
// round (the least disturbed by other load on the machine). Prints the time
// per call, the bus bandwidth (nccl-tests convention) and hetero/raw.
//
//===----------------------------------------------------------------------===//

#include "CollectiveTable.h"
#include "hetero-rt/hrt.h"

#include <mpi.h>

#include <cstdio>
#include <vector>

using namespace hetero::bench;

namespace {

void require(hrt_status status) {
  requireThat(status != HRT_SUCCESS, "bench-collectives", "", hrt_last_error());
}

} // namespace

int main(int argc, char **argv) {
  TableOptions options(argc, argv);
  World job(HRT_BACKEND_MPI, &argc, &argv, "bench-collectives");
  hrt_comm world = job.comm;
  int rank = job.rank, ranks = job.ranks;
  MPI_Comm raw;
  MPI_Comm_dup(MPI_COMM_WORLD, &raw);

  std::vector<Collective> collectives = {
      {"all_reduce", busAllReduce, perRankBytes,
       [&](float *s, float *r, size_t n) {
         MPI_Allreduce(s, r, int(n), MPI_FLOAT, MPI_SUM, raw);
       },
       [&](float *s, float *r, size_t n) {
         require(hrt_all_reduce(s, r, n, HRT_FLOAT32, HRT_SUM, world));
       }},
      {"all_gather", busGather, totalBytes,
       [&](float *s, float *r, size_t n) {
         MPI_Allgather(s, int(n), MPI_FLOAT, r, int(n), MPI_FLOAT, raw);
       },
       [&](float *s, float *r, size_t n) {
         require(hrt_all_gather(s, r, n, HRT_FLOAT32, world));
       }},
      {"reduce_scatter", busGather, totalBytes,
       [&](float *s, float *r, size_t n) {
         MPI_Reduce_scatter_block(s, r, int(n), MPI_FLOAT, MPI_SUM, raw);
       },
       [&](float *s, float *r, size_t n) {
         require(hrt_reduce_scatter(s, r, n, HRT_FLOAT32, HRT_SUM, world));
       }},
      {"broadcast", busOne, perRankBytes,
       [&](float *s, float *, size_t n) {
         MPI_Bcast(s, int(n), MPI_FLOAT, 0, raw);
       },
       [&](float *s, float *, size_t n) {
         require(hrt_broadcast(s, n, HRT_FLOAT32, 0, world));
       }},
      {"all_to_all", busGather, totalBytes,
       [&](float *s, float *r, size_t n) {
         MPI_Alltoall(s, int(n), MPI_FLOAT, r, int(n), MPI_FLOAT, raw);
       },
       [&](float *s, float *r, size_t n) {
         require(hrt_all_to_all(s, r, n, HRT_FLOAT32, world));
       }},
  };

  // Buffers for the largest case: per-rank size times the rank count.
  size_t capacity = options.maxBytes / sizeof(float) * ranks;
  std::vector<float> send(capacity, 1.0f), recv(capacity, 0.0f);
  printTable(collectives, options, rank, ranks, send.data(), recv.data());
  MPI_Comm_free(&raw);
  require(hrt_finalize());
  return 0;
}
