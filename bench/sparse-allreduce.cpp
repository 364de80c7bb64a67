//===- sparse-allreduce.cpp - Zen, AGsparse and dense on embeddings -------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The gradient of an embedding table of `rows` x `dim` float32, where each
// rank looked up `tokens` rows drawn from a Zipf(1.1) distribution over the
// rows (a different stream per rank, so the ranks' rows overlap mostly on
// the popular ones). Every scheme of the runtime's sparse all-reduce runs
// on the same buffers in the same job, interleaved over `rounds` rounds:
// the dense all-reduce (the baseline), AGsparse, Zen with a COO and with a
// hash-bitmap pull, and the online choice. Prints per scheme the median
// over rounds of the slowest rank's time, its ratio to dense, what Zen's
// cost model (hetero/Sparse/SparseCost.h) predicts on the given link, and
// whether the result equals the dense one.
//
//   usage: mpirun -np <ranks> bench-sparse-allreduce <rows> <dim> <tokens>
//            <rounds> <link alpha ms> <link Mbit/s>
//
//===----------------------------------------------------------------------===//

#include "RtCheck.h"
#include "hetero-rt/compress.h"
#include "hetero/Sparse/SparseCost.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

using namespace hetero::sparse;

namespace {

/// Rows drawn from Zipf(1.1) over `rows`, by inverting the CDF.
std::vector<float> embeddingGradient(int64_t rows, int64_t dim, int64_t tokens,
                                     unsigned seed) {
  std::vector<double> cdf(rows);
  double sum = 0.0;
  for (int64_t r = 0; r < rows; ++r)
    cdf[r] = sum += 1.0 / std::pow(double(r + 1), 1.1);
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> unit(0.0, sum);
  std::vector<float> g(size_t(rows * dim), 0.0f);
  for (int64_t t = 0; t < tokens; ++t) {
    int64_t row =
        std::lower_bound(cdf.begin(), cdf.end(), unit(random)) - cdf.begin();
    // Multiples of 1/8: every sum is exact, whatever its order.
    for (int64_t d = 0; d < dim; ++d)
      g[size_t(row * dim + d)] += 0.125f * float(1 + (t + d) % 5);
  }
  return g;
}

int64_t nonZeros(const std::vector<float> &g) {
  return std::count_if(g.begin(), g.end(), [](float v) { return v != 0.0f; });
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[(values.size() - 1) / 2];
}

} // namespace

int main(int argc, char **argv) {
  CHECK(hrt_init(HRT_BACKEND_MPI, &argc, &argv));
  hrt_comm world;
  int rank = 0, size = 1;
  CHECK(hrt_comm_world(&world));
  CHECK(hrt_comm_rank(world, &rank));
  CHECK(hrt_comm_size(world, &size));
  if (argc != 7) {
    if (rank == 0)
      std::fprintf(stderr, "usage: bench-sparse-allreduce <rows> <dim> "
                           "<tokens> <rounds> <link alpha ms> <link Mbit/s>\n");
    CHECK(hrt_finalize());
    return 2;
  }
  int64_t rows = std::atoll(argv[1]), dim = std::atoll(argv[2]);
  int64_t tokens = std::atoll(argv[3]);
  int rounds = std::max(1, std::atoi(argv[4]));
  SparseLink link{std::atof(argv[5]), 8.0 / (std::atof(argv[6]) * 1e3)};
  CHECK(hrt_sparse_set_link(link.alphaMs, link.msPerByte));
  size_t n = size_t(rows * dim);
  std::vector<float> g = embeddingGradient(rows, dim, tokens, 7 + rank);

  // The shape the model sees, and the real union, from a dense reduction
  // of the non-zero pattern.
  SparseShape shape;
  shape.ranks = size;
  shape.elements = int64_t(n);
  int64_t mine = nonZeros(g);
  shape.maxNonZeros = mine;
  shape.totalNonZeros = mine;
  CHECK(hrt_all_reduce(&shape.maxNonZeros, &shape.maxNonZeros, 1, HRT_INT64,
                       HRT_MAX, world));
  CHECK(hrt_all_reduce(&shape.totalNonZeros, &shape.totalNonZeros, 1, HRT_INT64,
                       HRT_SUM, world));
  std::vector<float> reference(n);
  CHECK(hrt_all_reduce(g.data(), reference.data(), n, HRT_FLOAT32, HRT_SUM,
                       world));
  shape.unionNonZeros = nonZeros(reference);

  struct Scheme {
    const char *name;
    int format; // 0: dense
    SparseScheme model;
    std::vector<double> ms;
    long long mismatches = 0;
  } schemes[] = {
      {"dense", 0, SparseScheme::Dense, {}},
      {"agsparse", HRT_SPARSE_ALLGATHER, SparseScheme::AllGather, {}},
      {"zen_coo", HRT_SPARSE_COO, SparseScheme::ZenCoo, {}},
      {"zen_bitmap", HRT_SPARSE_HASH_BITMAP, SparseScheme::ZenBitmap, {}},
      {"online", HRT_SPARSE_ONLINE, SparseScheme::Dense, {}}};
  std::vector<float> buffer(n);
  int online = 0;
  for (int round = 0; round < rounds; ++round)
    for (Scheme &scheme : schemes) {
      buffer = g;
      CHECK(hrt_barrier(world));
      double start = hrt_wtime();
      if (scheme.format == 0)
        CHECK(hrt_all_reduce(buffer.data(), buffer.data(), n, HRT_FLOAT32,
                             HRT_SUM, world));
      else
        CHECK(hrt_sparse_all_reduce(buffer.data(), n,
                                    hrt_sparse_format(scheme.format), HRT_SUM,
                                    world));
      double took = (hrt_wtime() - start) * 1e3;
      if (scheme.format == HRT_SPARSE_ONLINE)
        online = hrt_sparse_last_format();
      CHECK(hrt_all_reduce(&took, &took, 1, HRT_FLOAT64, HRT_MAX, world));
      scheme.ms.push_back(took);
      long long wrong = 0;
      for (size_t i = 0; i < n; ++i)
        wrong += buffer[i] != reference[i];
      scheme.mismatches += wrong;
    }
  const char *onlineName[] = {"dense", "zen_coo", "zen_bitmap", "agsparse"};
  if (rank == 0) {
    std::printf("%d ranks, %lld x %lld embedding, %lld tokens a rank: "
                "density %.4f a rank, %.4f summed (%.2f of the ranks' "
                "non-zeros distinct); link %.3f ms + %.1f Mbit/s\n",
                size, (long long)rows, (long long)dim, (long long)tokens,
                double(shape.totalNonZeros) / size / double(n),
                double(shape.unionNonZeros) / double(n),
                double(shape.unionNonZeros) / double(shape.totalNonZeros),
                link.alphaMs, std::atof(argv[6]));
    std::printf("%-11s %10s %9s %11s %11s\n", "scheme", "ms", "dense/it",
                "model_ms", "exact");
    double dense = median(schemes[0].ms);
    for (Scheme &scheme : schemes) {
      double ms = median(scheme.ms);
      bool modelled = scheme.format != HRT_SPARSE_ONLINE;
      std::printf("%-11s %10.2f %9.2f %11s %11s\n", scheme.name, ms, dense / ms,
                  modelled ? std::to_string(
                                 sparseAllReduceMs(scheme.model, shape, link))
                                 .substr(0, 9)
                                 .c_str()
                           : onlineName[online],
                  scheme.mismatches == 0 ? "yes" : "NO");
    }
    std::printf("model's choice: %s\n", name(chooseSparseScheme(shape, link)));
  }
  CHECK(hrt_finalize());
  return 0;
}
