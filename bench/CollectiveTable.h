//===- CollectiveTable.h - hrt_ collectives against raw calls ---*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The harness of bench-collectives (against raw MPI) and
// bench-nccl-collectives (against raw NCCL): for each collective and size,
// the raw call and the hrt_ call on the same buffers, alternating in
// rounds, each side's fastest round kept. Prints the time per call, the
// bus bandwidth (nccl-tests convention) and hetero/raw.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_BENCH_COLLECTIVETABLE_H
#define HETERO_BENCH_COLLECTIVETABLE_H

#include "hetero-rt/hrt.h"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace hetero::bench {

/// Ends the job with `what` and `detail` when `failed`, as program
/// `program`'s error.
inline void requireThat(bool failed, const char *program, const char *what,
                        const char *detail) {
  if (!failed)
    return;
  std::fprintf(stderr, "%s: %s%s%s\n", program, what, *what ? ": " : "",
               detail);
  hrt_abort(2);
}

/// The job's world on `backend` (hrt_init), this rank and the rank count.
struct World {
  hrt_comm comm = nullptr;
  int rank = 0, ranks = 1;
  World(hrt_backend backend, int *argc, char ***argv, const char *program) {
    requireThat(hrt_init(backend, argc, argv) != HRT_SUCCESS ||
                    hrt_comm_world(&comm) != HRT_SUCCESS,
                program, "", hrt_last_error());
    hrt_comm_rank(comm, &rank);
    hrt_comm_size(comm, &ranks);
  }
};

struct Collective {
  const char *name;
  /// Bus bandwidth factor on the algorithm bandwidth for n ranks.
  double (*busFactor)(int ranks);
  /// Bytes the algorithm bandwidth is computed from, for a per-rank size.
  size_t (*algorithmBytes)(size_t bytes, int ranks);
  std::function<void(float *, float *, size_t)> raw;
  std::function<void(float *, float *, size_t)> hetero;
};

inline double busAllReduce(int n) { return 2.0 * (n - 1) / n; }
inline double busGather(int n) { return double(n - 1) / n; }
inline double busOne(int) { return 1.0; }
inline size_t perRankBytes(size_t bytes, int) { return bytes; }
inline size_t totalBytes(size_t bytes, int n) { return bytes * n; }

/// The sizes and rounds of a run: --min-bytes N --max-bytes N --rounds R.
struct TableOptions {
  size_t minBytes = 4 << 10, maxBytes = 64 << 20;
  int rounds = 5;
  TableOptions(int argc, char **argv) {
    for (int i = 1; i + 1 < argc; i += 2) {
      std::string flag = argv[i];
      if (flag == "--min-bytes")
        minBytes = std::strtoull(argv[i + 1], nullptr, 10);
      else if (flag == "--max-bytes")
        maxBytes = std::strtoull(argv[i + 1], nullptr, 10);
      else if (flag == "--rounds")
        rounds = std::atoi(argv[i + 1]);
    }
  }
};

/// Seconds per call of `call` over one batch of `iterations`, as measured by
/// the slowest rank.
inline double timeCall(const std::function<void()> &call, int iterations) {
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  for (int i = 0; i < iterations; ++i)
    call();
  double elapsed = MPI_Wtime() - start;
  double slowest = 0.0;
  MPI_Allreduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest / iterations;
}

/// Runs every collective at every size (per rank, times 4 from the least)
/// on `send` and `recv`, which hold the largest size times the rank count.
inline void printTable(const std::vector<Collective> &collectives,
                       const TableOptions &options, int rank, int ranks,
                       float *send, float *recv) {
  if (rank == 0)
    std::printf("%-14s %10s %12s %12s %10s %10s %8s\n", "collective", "bytes",
                "raw_us", "hetero_us", "raw_GB/s", "busbw_GB/s", "ratio");
  for (const Collective &collective : collectives) {
    for (size_t bytes = options.minBytes; bytes <= options.maxBytes;
         bytes *= 4) {
      size_t count = bytes / sizeof(float);
      // `bytes` is per rank: the contribution of all_gather and all_to_all,
      // the result of reduce_scatter, the whole buffer otherwise.
      auto rawCall = [&] { collective.raw(send, recv, count); };
      auto heteroCall = [&] { collective.hetero(send, recv, count); };
      // Aim for about 20 ms per batch.
      rawCall();
      heteroCall();
      double probe = timeCall(rawCall, 3);
      int iterations = std::clamp(int(0.02 / std::max(probe, 1e-7)), 3, 2000);
      double bestRaw = 1e30, bestHetero = 1e30;
      for (int round = 0; round < options.rounds; ++round) {
        bestRaw = std::min(bestRaw, timeCall(rawCall, iterations));
        bestHetero = std::min(bestHetero, timeCall(heteroCall, iterations));
      }
      double moved = double(collective.algorithmBytes(bytes, ranks));
      if (rank == 0)
        std::printf("%-14s %10zu %12.2f %12.2f %10.3f %10.3f %8.3f\n",
                    collective.name, bytes, bestRaw * 1e6, bestHetero * 1e6,
                    moved / bestRaw / 1e9 * collective.busFactor(ranks),
                    moved / bestHetero / 1e9 * collective.busFactor(ranks),
                    bestHetero / bestRaw);
    }
  }
}

} // namespace hetero::bench

#endif // HETERO_BENCH_COLLECTIVETABLE_H
