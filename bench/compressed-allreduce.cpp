//===- compressed-allreduce.cpp - compressed against dense all-reduce -----===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// hrt_compressed_all_reduce of a float32 gradient against the dense
// hrt_all_reduce of the same buffer in the same run, on every rank of the
// job (the slowest rank's time, fastest of 5 runs). Prints the wire bytes
// each rank sends and the time ratio compressed / dense.
//
//   usage: mpirun -np <ranks> bench-compressed-allreduce [elements ...]
//
//===----------------------------------------------------------------------===//

#include "RtCheck.h"
#include "hetero-rt/compress.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

namespace {

double slowestOfFastest(hrt_comm world, const std::function<void()> &run) {
  double best = 1e30;
  for (int i = 0; i < 5; ++i) {
    CHECK(hrt_barrier(world));
    double start = hrt_wtime();
    run();
    double took = hrt_wtime() - start;
    CHECK(hrt_all_reduce(&took, &took, 1, HRT_FLOAT64, HRT_MAX, world));
    best = std::min(best, took);
  }
  return best;
}

} // namespace

int main(int argc, char **argv) {
  CHECK(hrt_init(HRT_BACKEND_MPI, &argc, &argv));
  hrt_comm world;
  int rank = 0, size = 1;
  CHECK(hrt_comm_world(&world));
  CHECK(hrt_comm_rank(world, &rank));
  CHECK(hrt_comm_size(world, &size));
  std::vector<size_t> sizes;
  for (int i = 1; i < argc; ++i)
    sizes.push_back(std::strtoull(argv[i], nullptr, 10));
  if (sizes.empty())
    sizes = {size_t(1) << 18, size_t(1) << 22};
  struct Case {
    const char *name;
    hrt_compression spec;
  } cases[] = {
      {"fp16", {HRT_COMPRESS_FP16, 1.0, 0, HRT_SCHEME_ALLREDUCE, 1, nullptr}},
      {"topk_1%",
       {HRT_COMPRESS_TOPK, 0.01, 0, HRT_SCHEME_ALLGATHER, 1, nullptr}},
      {"dgc_1%", {HRT_COMPRESS_DGC, 0.01, 0, HRT_SCHEME_ALLGATHER, 1, nullptr}},
      {"randomk_1%",
       {HRT_COMPRESS_RANDOMK, 0.01, 0, HRT_SCHEME_ALLTOALL, 1, nullptr}},
      {"efsignsgd",
       {HRT_COMPRESS_EFSIGNSGD, 1.0, 0, HRT_SCHEME_ALLGATHER, 1, nullptr}},
      {"qsgd_16",
       {HRT_COMPRESS_QSGD, 1.0, 16, HRT_SCHEME_ALLGATHER, 1, nullptr}},
  };
  if (rank == 0)
    std::printf("%d ranks\n%-10s %-11s %12s %10s %10s %8s\n", size, "elements",
                "compressor", "wire_bytes", "dense_ms", "ms", "ratio");
  for (size_t n : sizes) {
    std::vector<float> g(n), buffer(n);
    for (size_t i = 0; i < n; ++i)
      g[i] = std::sin(0.001f * float(i) + float(rank));
    double dense = slowestOfFastest(world, [&] {
      CHECK(hrt_all_reduce(g.data(), buffer.data(), n, HRT_FLOAT32, HRT_AVG,
                           world));
    });
    for (const Case &c : cases) {
      double seconds = slowestOfFastest(world, [&] {
        buffer = g;
        CHECK(hrt_compressed_all_reduce(buffer.data(), n, &c.spec, HRT_AVG,
                                        world));
      });
      if (rank == 0)
        std::printf("%-10zu %-11s %12zu %10.3f %10.3f %8.2f\n", n, c.name,
                    hrt_compressed_size(&c.spec, n), dense * 1e3, seconds * 1e3,
                    seconds / dense);
    }
  }
  CHECK(hrt_finalize());
  return 0;
}
