//===- migration.cpp - broadcast-reduce against scatter-gather ------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
//   mpirun -np 4 bench-migration [--columns K] [--tokens M] [--width N]
//                                [--gemm-ms G] [--rounds R]
//
// The analogue of Table I of the ZERO-resizing paper
// (shared/seeds/000-zero-resizing.md 4.7, 5.3 item 6): x stragglers each
// migrate a share f of the K contraction columns of their weight shard
// W_s (K x N) of a column-parallel forward Y_s = X W_s (X: M x K,
// replicated) to the ranks that do not migrate, one straggler after the
// other, with two pairs of primitives:
//
//   broadcast-reduce  the straggler broadcasts its c = f K migrated rows
//                     of W_s to every receiver; each computes its block
//                     of them (a full-size M x N partial) and a reduce
//                     (sum) returns the partials to the straggler;
//   scatter-gather    the straggler scatters each receiver only its block
//                     of rows; each returns its M x N partial by a gather,
//                     and the straggler sums them.
//
// Compute is emulated by sleeping (G ms for a GEMM over all K columns), so
// that oversubscribed ranks do not compete for cores; communication is
// real. Every rank computes its own K columns, the stragglers their kept
// ones. For each x and f, R rounds alternate the two methods and keep each
// one's fastest iteration (the slowest rank's time); the ratio is
// scatter-gather over broadcast-reduce, as in the paper's table.
//
// With the Open MPI of the machine, the collectives run its tuned
// component's default algorithm choices unless the caller sets the
// coll_tuned_* MCA parameters; the script that runs this records them.
//
//===----------------------------------------------------------------------===//

#include "hetero/Resize/Migration.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Setup {
  int columns = 512, tokens = 256, width = 256;
  double gemmMs = 20;
  int rounds = 5;
};

void sleepMs(double ms) {
  if (ms > 0)
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
}

enum class Method { BroadcastReduce, ScatterGather };

/// Straggler s's group (its receivers and itself, s first) for each of
/// `stragglers` stragglers 0..x-1; MPI_COMM_NULL where this rank is not in
/// it. Collective over the world.
std::vector<MPI_Comm> migrationGroups(int rank, int ranks, int stragglers) {
  std::vector<MPI_Comm> groups;
  for (int s = 0; s < stragglers; ++s) {
    bool member = rank == s || rank >= stragglers;
    MPI_Comm group;
    MPI_Comm_split(MPI_COMM_WORLD, member ? 0 : MPI_UNDEFINED,
                   rank == s ? 0 : rank + 1, &group);
    groups.push_back(group);
  }
  return groups;
}

/// One iteration with `stragglers` (ranks 0..x-1) migrating `share` of
/// their columns to the other ranks over `groups`; returns the slowest
/// rank's seconds.
double iteration(const Setup &setup, int rank, int ranks, int stragglers,
                 const std::vector<MPI_Comm> &groups, double share,
                 Method method) {
  int64_t migrated = int64_t(share * setup.columns + 1e-9);
  std::vector<bool> migrating(size_t(ranks), false);
  for (int s = 0; s < stragglers && share > 0; ++s)
    migrating[size_t(s)] = true;
  size_t rowFloats = size_t(setup.width);
  size_t partialFloats = size_t(setup.tokens) * size_t(setup.width);
  std::vector<float> rows(size_t(migrated) * rowFloats, 1.0f);
  std::vector<float> partial(partialFloats, 1.0f), sum(partialFloats);
  double msPerColumn = setup.gemmMs / setup.columns;

  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  // Own work: every column, or the kept ones on a straggler.
  bool straggling = rank < stragglers && share > 0;
  sleepMs(msPerColumn * double(setup.columns - (straggling ? migrated : 0)));
  for (int s = 0; s < stragglers && migrated > 0; ++s) {
    std::vector<hetero::resize::Block> blocks =
        hetero::resize::migrationBlocks(ranks, s, migrated, migrating);
    MPI_Comm group = groups[size_t(s)];
    if (group == MPI_COMM_NULL)
      continue;
    int64_t mine = 0;
    for (const hetero::resize::Block &block : blocks)
      if (block.rank == rank)
        mine = block.size();
    if (method == Method::BroadcastReduce) {
      MPI_Bcast(rows.data(), int(rows.size()), MPI_FLOAT, 0, group);
      sleepMs(msPerColumn * double(mine));
      MPI_Reduce(rank == s ? MPI_IN_PLACE : partial.data(),
                 rank == s ? partial.data() : nullptr, int(partialFloats),
                 MPI_FLOAT, MPI_SUM, 0, group);
    } else {
      std::vector<int> counts = {0}, offsets = {0};
      for (const hetero::resize::Block &block : blocks) {
        counts.push_back(int(block.size() * int64_t(rowFloats)));
        offsets.push_back(int(block.begin * int64_t(rowFloats)));
      }
      std::vector<float> block(size_t(mine) * rowFloats);
      MPI_Scatterv(rows.data(), counts.data(), offsets.data(), MPI_FLOAT,
                   rank == s ? MPI_IN_PLACE : block.data(), int(block.size()),
                   MPI_FLOAT, 0, group);
      sleepMs(msPerColumn * double(mine));
      int size = 0;
      MPI_Comm_size(group, &size);
      std::vector<float> gathered(rank == s ? size_t(size) * partialFloats : 0);
      MPI_Gather(partial.data(), int(partialFloats), MPI_FLOAT, gathered.data(),
                 int(partialFloats), MPI_FLOAT, 0, group);
      if (rank == s)
        for (int r = 1; r < size; ++r)
          for (size_t j = 0; j < partialFloats; ++j)
            sum[j] += gathered[size_t(r) * partialFloats + j];
    }
  }
  double elapsed = MPI_Wtime() - start, slowest = 0;
  MPI_Allreduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  Setup setup;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--columns")
      setup.columns = std::atoi(argv[i + 1]);
    else if (flag == "--tokens")
      setup.tokens = std::atoi(argv[i + 1]);
    else if (flag == "--width")
      setup.width = std::atoi(argv[i + 1]);
    else if (flag == "--gemm-ms")
      setup.gemmMs = std::atof(argv[i + 1]);
    else if (flag == "--rounds")
      setup.rounds = std::atoi(argv[i + 1]);
  }
  if (ranks < 3 || setup.columns < 1 || setup.tokens < 1 || setup.width < 1 ||
      setup.rounds < 1) {
    if (rank == 0)
      std::fprintf(stderr, "bench-migration: needs 3 or more ranks and "
                           "positive --columns, --tokens, --width, "
                           "--rounds\n");
    MPI_Finalize();
    return 2;
  }
  if (rank == 0)
    std::printf("%d ranks, K %d, M %d, N %d, GEMM %.1f ms, fastest of %d\n",
                ranks, setup.columns, setup.tokens, setup.width, setup.gemmMs,
                setup.rounds);
  const double shares[] = {0.0, 0.25, 0.5, 0.75, 1.0};
  std::vector<int> counts = {1};
  if (ranks / 2 > 1)
    counts.push_back(ranks / 2);
  for (int stragglers : counts) {
    std::vector<MPI_Comm> groups = migrationGroups(rank, ranks, stragglers);
    double base = 0;
    for (double share : shares) {
      double best[2] = {1e30, 1e30};
      for (int round = 0; round < setup.rounds; ++round)
        for (Method method : {Method::BroadcastReduce, Method::ScatterGather})
          best[int(method)] = std::min(
              best[int(method)],
              iteration(setup, rank, ranks, stragglers, groups, share, method));
      if (share == 0)
        base = best[0];
      if (rank == 0)
        std::printf("x %d share %.2f: broadcast-reduce %.2f ms (%.3f x f=0), "
                    "scatter-gather %.2f ms (%.3f x f=0), "
                    "scatter-gather / broadcast-reduce %.3f\n",
                    stragglers, share, best[0] * 1e3, best[0] / base,
                    best[1] * 1e3, best[1] / base, best[1] / best[0]);
    }
    for (MPI_Comm &group : groups)
      if (group != MPI_COMM_NULL)
        MPI_Comm_free(&group);
  }
  MPI_Finalize();
  return 0;
}
