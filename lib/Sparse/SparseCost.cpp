//===- SparseCost.cpp - Zen's cost model of sparse all-reduces ------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Sparse/SparseCost.h"

#include <algorithm>
#include <cmath>

namespace hetero::sparse {

int64_t expectedUnion(int64_t elements, int64_t nonZeros, int64_t ranks) {
  if (elements <= 0)
    return 0;
  double density = std::clamp(double(nonZeros) / double(elements), 0.0, 1.0);
  return int64_t(std::llround(double(elements) *
                              (1.0 - std::pow(1.0 - density, double(ranks)))));
}

double sparseAllReduceMs(SparseScheme scheme, const SparseShape &shape,
                         const SparseLink &link) {
  double n = double(std::max<int64_t>(shape.ranks, 1));
  double m = double(shape.elements);
  double a = link.alphaMs, b = link.msPerByte;
  double smallAllReduce = 2.0 * (n - 1.0) * a;
  double mean = double(shape.totalNonZeros) / n;
  double all = double(shape.unionNonZeros);
  switch (scheme) {
  case SparseScheme::Dense:
    return 2.0 * (n - 1.0) * a + 2.0 * (n - 1.0) / n * 4.0 * m * b;
  case SparseScheme::AllGather:
    return smallAllReduce +
           (n - 1.0) * (a + 8.0 * double(shape.maxNonZeros) * b);
  case SparseScheme::SparCml: {
    // Round i exchanges the sum over 2^(i-1) ranks, whose indices the
    // independent-overlap estimate gives; past half the elements the
    // exchange goes dense.
    double ms = 0.0;
    for (int64_t group = 1; group < shape.ranks; group *= 2) {
      double held = std::min(
          double(expectedUnion(shape.elements, int64_t(mean), group)), all);
      ms += a + std::min(8.0 * held, 4.0 * m) * b;
    }
    return ms;
  }
  case SparseScheme::SparsePs:
    return 2.0 * (n - 1.0) * a +
           (n - 1.0) * 8.0 * shape.skew * (mean + all) / n * b;
  case SparseScheme::ZenCoo:
    return 2.0 * smallAllReduce + 2.0 * (n - 1.0) * a +
           (n - 1.0) * 8.0 * (mean + all) / n * b;
  case SparseScheme::ZenBitmap:
    return 2.0 * smallAllReduce + 2.0 * (n - 1.0) * a +
           (n - 1.0) * (8.0 * mean / n + m / (8.0 * n) + 4.0 * all / n) * b;
  }
  return 0.0;
}

SparseScheme chooseSparseScheme(const SparseShape &shape,
                                const SparseLink &link) {
  SparseScheme best = SparseScheme::Dense;
  double bestMs = sparseAllReduceMs(best, shape, link);
  for (SparseScheme scheme : {SparseScheme::AllGather, SparseScheme::ZenCoo,
                              SparseScheme::ZenBitmap}) {
    double ms = sparseAllReduceMs(scheme, shape, link);
    if (ms < bestMs) {
      best = scheme;
      bestMs = ms;
    }
  }
  return best;
}

bool overlapping(const SparseShape &shape, double threshold) {
  return double(shape.unionNonZeros) < threshold * double(shape.totalNonZeros);
}

const char *name(SparseScheme scheme) {
  switch (scheme) {
  case SparseScheme::Dense:
    return "dense";
  case SparseScheme::AllGather:
    return "agsparse";
  case SparseScheme::SparCml:
    return "sparcml";
  case SparseScheme::SparsePs:
    return "sparse_ps";
  case SparseScheme::ZenCoo:
    return "zen_coo";
  case SparseScheme::ZenBitmap:
    return "zen_bitmap";
  }
  return "";
}

} // namespace hetero::sparse
