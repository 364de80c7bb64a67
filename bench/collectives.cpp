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

#include "hetero-rt/hrt.h"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

struct Collective {
  const char *name;
  /// Bus bandwidth factor on the algorithm bandwidth for n ranks.
  double (*busFactor)(int ranks);
  /// Bytes the algorithm bandwidth is computed from, for a per-rank size.
  size_t (*algorithmBytes)(size_t bytes, int ranks);
  std::function<void(float *, float *, size_t)> raw;
  std::function<void(float *, float *, size_t)> hetero;
};

void require(hrt_status status) {
  if (status != HRT_SUCCESS) {
    std::fprintf(stderr, "bench-collectives: %s\n", hrt_last_error());
    hrt_abort(2);
  }
}

/// Seconds per call of `call` over one batch of `iterations`, as measured by
/// the slowest rank.
double timeCall(const std::function<void()> &call, int iterations) {
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  for (int i = 0; i < iterations; ++i)
    call();
  double elapsed = MPI_Wtime() - start;
  // Every rank reports the slowest rank's time.
  double slowest = 0.0;
  MPI_Allreduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest / iterations;
}

} // namespace

int main(int argc, char **argv) {
  size_t minBytes = 4 << 10, maxBytes = 64 << 20;
  int rounds = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--min-bytes")
      minBytes = std::strtoull(argv[i + 1], nullptr, 10);
    else if (flag == "--max-bytes")
      maxBytes = std::strtoull(argv[i + 1], nullptr, 10);
    else if (flag == "--rounds")
      rounds = std::atoi(argv[i + 1]);
  }
  require(hrt_init(HRT_BACKEND_MPI, &argc, &argv));
  hrt_comm world;
  require(hrt_comm_world(&world));
  int rank = 0, ranks = 1;
  hrt_comm_rank(world, &rank);
  hrt_comm_size(world, &ranks);
  MPI_Comm raw;
  MPI_Comm_dup(MPI_COMM_WORLD, &raw);

  auto one = [](int) { return 1.0; };
  auto allReduceFactor = [](int n) { return 2.0 * (n - 1) / n; };
  auto gatherFactor = [](int n) { return double(n - 1) / n; };
  auto perRank = [](size_t bytes, int) { return bytes; };
  auto total = [](size_t bytes, int n) { return bytes * n; };
  std::vector<Collective> collectives = {
      {"all_reduce", allReduceFactor, perRank,
       [&](float *s, float *r, size_t n) {
         MPI_Allreduce(s, r, int(n), MPI_FLOAT, MPI_SUM, raw);
       },
       [&](float *s, float *r, size_t n) {
         require(hrt_all_reduce(s, r, n, HRT_FLOAT32, HRT_SUM, world));
       }},
      {"all_gather", gatherFactor, total,
       [&](float *s, float *r, size_t n) {
         MPI_Allgather(s, int(n), MPI_FLOAT, r, int(n), MPI_FLOAT, raw);
       },
       [&](float *s, float *r, size_t n) {
         require(hrt_all_gather(s, r, n, HRT_FLOAT32, world));
       }},
      {"reduce_scatter", gatherFactor, total,
       [&](float *s, float *r, size_t n) {
         MPI_Reduce_scatter_block(s, r, int(n), MPI_FLOAT, MPI_SUM, raw);
       },
       [&](float *s, float *r, size_t n) {
         require(hrt_reduce_scatter(s, r, n, HRT_FLOAT32, HRT_SUM, world));
       }},
      {"broadcast", one, perRank,
       [&](float *s, float *, size_t n) {
         MPI_Bcast(s, int(n), MPI_FLOAT, 0, raw);
       },
       [&](float *s, float *, size_t n) {
         require(hrt_broadcast(s, n, HRT_FLOAT32, 0, world));
       }},
      {"all_to_all", gatherFactor, total,
       [&](float *s, float *r, size_t n) {
         MPI_Alltoall(s, int(n), MPI_FLOAT, r, int(n), MPI_FLOAT, raw);
       },
       [&](float *s, float *r, size_t n) {
         require(hrt_all_to_all(s, r, n, HRT_FLOAT32, world));
       }},
  };

  // Buffers for the largest case: per-rank size times the rank count.
  size_t capacity = maxBytes / sizeof(float) * ranks;
  std::vector<float> send(capacity, 1.0f), recv(capacity, 0.0f);

  if (rank == 0)
    std::printf("%-14s %10s %12s %12s %10s %10s %8s\n", "collective", "bytes",
                "raw_us", "hetero_us", "raw_GB/s", "busbw_GB/s", "ratio");
  for (const Collective &collective : collectives) {
    for (size_t bytes = minBytes; bytes <= maxBytes; bytes *= 4) {
      size_t count = bytes / sizeof(float);
      // `bytes` is per rank: the contribution of all_gather and all_to_all,
      // the result of reduce_scatter, the whole buffer otherwise.
      auto rawCall = [&] { collective.raw(send.data(), recv.data(), count); };
      auto heteroCall = [&] {
        collective.hetero(send.data(), recv.data(), count);
      };
      // Aim for about 20 ms per batch.
      rawCall();
      heteroCall();
      double probe = timeCall(rawCall, 3);
      int iterations = std::clamp(int(0.02 / std::max(probe, 1e-7)), 3, 2000);
      double bestRaw = 1e30, bestHetero = 1e30;
      for (int round = 0; round < rounds; ++round) {
        bestRaw = std::min(bestRaw, timeCall(rawCall, iterations));
        bestHetero = std::min(bestHetero, timeCall(heteroCall, iterations));
      }
      double algorithm =
          double(collective.algorithmBytes(bytes, ranks)) / bestHetero / 1e9;
      double rawAlgorithm =
          double(collective.algorithmBytes(bytes, ranks)) / bestRaw / 1e9;
      if (rank == 0)
        std::printf("%-14s %10zu %12.2f %12.2f %10.3f %10.3f %8.3f\n",
                    collective.name, bytes, bestRaw * 1e6, bestHetero * 1e6,
                    rawAlgorithm * collective.busFactor(ranks),
                    algorithm * collective.busFactor(ranks),
                    bestHetero / bestRaw);
    }
  }
  MPI_Comm_free(&raw);
  require(hrt_finalize());
  return 0;
}
