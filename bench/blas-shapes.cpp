//===- blas-shapes.cpp - a step's products against OpenBLAS ---------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Replays the products of a compiled step (hetero-run --blas-profile FILE)
// against OpenBLAS on the same shapes. For every shape, cblas_sgemm is
// called directly, in a loop on the same buffers (the fastest of 5 timed
// rounds of enough calls to take a few milliseconds): the best OpenBLAS does
// on that shape. Prints each shape's rate in the step and OpenBLAS's, then
// the step's products as a whole, their FLOPs over the seconds they took in
// the step against the same FLOPs at OpenBLAS's rates, and OpenBLAS's rate
// on a large square product (the machine's sgemm rate).
//
//   usage: bench-blas-shapes PROFILE
//
//===----------------------------------------------------------------------===//

#include "Fastest.h"

#include <cblas.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>

namespace {

struct Shape {
  long long batch, transposeA, transposeB, m, n, k, calls;
  double seconds; // in the step, all calls together
};

double flopsOf(const Shape &shape) {
  return 2.0 * double(shape.batch) * double(shape.m) * double(shape.n) *
         double(shape.k);
}

/// Seconds of one product of `shape` by cblas_sgemm, at its best.
double openblasSeconds(const Shape &shape) {
  long long rowsA = shape.transposeA ? shape.k : shape.m;
  long long colsA = shape.transposeA ? shape.m : shape.k;
  long long rowsB = shape.transposeB ? shape.n : shape.k;
  long long colsB = shape.transposeB ? shape.k : shape.n;
  std::vector<float> a(size_t(shape.batch * rowsA * colsA)),
      b(size_t(shape.batch * rowsB * colsB)),
      c(size_t(shape.batch * shape.m * shape.n));
  std::mt19937 random(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (float &value : a)
    value = uniform(random);
  for (float &value : b)
    value = uniform(random);
  auto once = [&] {
    for (long long index = 0; index < shape.batch; ++index)
      cblas_sgemm(CblasRowMajor, shape.transposeA ? CblasTrans : CblasNoTrans,
                  shape.transposeB ? CblasTrans : CblasNoTrans, int(shape.m),
                  int(shape.n), int(shape.k), 1.0f,
                  a.data() + index * rowsA * colsA, int(colsA),
                  b.data() + index * rowsB * colsB, int(colsB), 0.0f,
                  c.data() + index * shape.m * shape.n, int(shape.n));
  };
  once();
  // Enough calls a round to take about 5 ms.
  double single = hetero::bench::fastestSeconds(1, once);
  int repeats = std::max(1, int(5e-3 / std::max(single, 1e-9)));
  return hetero::bench::fastestSeconds(5,
                                       [&] {
                                         for (int i = 0; i < repeats; ++i)
                                           once();
                                       }) /
         repeats;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: bench-blas-shapes PROFILE\n");
    return 2;
  }
  std::FILE *file = std::fopen(argv[1], "r");
  if (!file) {
    std::perror(argv[1]);
    return 1;
  }
  openblas_set_num_threads(1);
  std::vector<Shape> shapes;
  char header[256];
  if (!std::fgets(header, sizeof header, file)) {
    std::fprintf(stderr, "%s: empty profile\n", argv[1]);
    return 1;
  }
  Shape shape;
  while (std::fscanf(file, "%lld %lld %lld %lld %lld %lld %lld %lf",
                     &shape.batch, &shape.transposeA, &shape.transposeB,
                     &shape.m, &shape.n, &shape.k, &shape.calls,
                     &shape.seconds) == 8)
    shapes.push_back(shape);
  std::fclose(file);
  if (shapes.empty()) {
    std::fprintf(stderr, "%s: no products\n", argv[1]);
    return 1;
  }
  double stepFlops = 0, stepSeconds = 0, openblasTotal = 0;
  std::printf("%-28s %8s %12s %12s %6s\n", "batch x m x n x k (op)", "calls",
              "step GF/s", "OpenBLAS", "ratio");
  for (const Shape &each : shapes) {
    double flops = flopsOf(each) * double(each.calls);
    double best = openblasSeconds(each) * double(each.calls);
    stepFlops += flops;
    stepSeconds += each.seconds;
    openblasTotal += best;
    char name[64];
    std::snprintf(name, sizeof name, "%lld x %lld x %lld x %lld (%c%c)",
                  each.batch, each.m, each.n, each.k,
                  each.transposeA ? 't' : 'n', each.transposeB ? 't' : 'n');
    std::printf("%-28s %8lld %12.1f %12.1f %6.2f\n", name, each.calls,
                flops * 1e-9 / each.seconds, flops * 1e-9 / best,
                best / each.seconds);
  }
  Shape square{1, 0, 0, 1024, 1024, 1024, 1, 0};
  double machine = flopsOf(square) * 1e-9 / openblasSeconds(square);
  double inStep = stepFlops * 1e-9 / stepSeconds;
  double sameShapes = stepFlops * 1e-9 / openblasTotal;
  std::printf("step products: %.3f GFLOP in %.4f s: %.1f GFLOP/s\n",
              stepFlops * 1e-9, stepSeconds, inStep);
  std::printf("OpenBLAS on the same shapes: %.1f GFLOP/s; the step's "
              "products at %.2f of it\n",
              sameShapes, inStep / sameShapes);
  std::printf("OpenBLAS on 1024 x 1024 x 1024: %.1f GFLOP/s; the step's "
              "products at %.2f of it\n",
              machine, inStep / machine);
  return 0;
}
