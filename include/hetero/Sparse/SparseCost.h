//===- SparseCost.h - Zen's cost model of sparse all-reduces ----*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free. The time of an all-reduce of a sparse gradient of M float32
// elements over n ranks under each scheme of Zen's design space (thesis
// ch. 3, Table 3.2), in the alpha-beta form of the thesis's §3.2.4
// formulas with a latency term added; bytes count 4 per value and 4 per
// index (COO):
//
//   dense ring all-reduce     2(n-1) a + 2(n-1)/n 4M b
//   AGsparse (all-gather of   one small all-reduce for the capacity, then
//   every rank's COO)         (n-1)(a + 8 dmax M b)
//   SparCML (recursive        log2 n rounds, round i sending the COO
//   doubling, incremental)    aggregated over 2^(i-1) ranks
//   Sparse PS (partitions by  (n-1)(a + 8 s d M/n b) push, the same with
//   contiguous ranges)        the aggregate's density pull
//   Zen (hashed partitions,   two small all-reduces for the capacities,
//   balanced)                 (n-1)(a + 8 d M/n b) push; pull as COO,
//                             (n-1)(a + 8 dn M/n b), or as hash bitmap,
//                             (n-1)(a + (M/8n + 4 dn M/n) b)
//
// with d the mean density of a rank's gradient, dmax the largest, dn the
// density after summing all n (the union of the indices), s the skew of
// contiguous partitions. A small all-reduce costs 2(n-1) a.
//
// Theorem 3.1: when the ranks' indices hardly overlap (dn close to n d)
// a centralised scheme is best; when they overlap partly or fully,
// balanced parallelism (Zen). `chooseSparseScheme` takes the cheapest of
// the schemes the runtime runs, which reproduces both regimes.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_SPARSE_SPARSECOST_H
#define HETERO_SPARSE_SPARSECOST_H

#include <cstdint>

namespace hetero::sparse {

enum class SparseScheme {
  Dense,
  AllGather,
  SparCml,
  SparsePs,
  ZenCoo,
  ZenBitmap
};

/// The gradient as the ranks hold it.
struct SparseShape {
  int64_t ranks = 2;
  int64_t elements = 0;
  /// Non-zeros of the fullest rank, of all ranks together, and of their
  /// sum (distinct indices).
  int64_t maxNonZeros = 0;
  int64_t totalNonZeros = 0;
  int64_t unionNonZeros = 0;
  /// Largest over mean load of contiguous index ranges (Sparse PS's
  /// partitions); Zen's hashed ones are taken as balanced.
  double skew = 1.0;
};

/// Latency per message and time per byte.
struct SparseLink {
  double alphaMs = 0.0;
  double msPerByte = 0.0;
};

/// The distinct indices `ranks` independent gradients of `nonZeros` each
/// (out of `elements`) are expected to cover: M (1 - (1 - d)^n).
int64_t expectedUnion(int64_t elements, int64_t nonZeros, int64_t ranks);

double sparseAllReduceMs(SparseScheme scheme, const SparseShape &shape,
                         const SparseLink &link);

/// The cheapest of the schemes the runtime runs: dense, AGsparse, Zen with
/// a COO or hash-bitmap pull.
SparseScheme chooseSparseScheme(const SparseShape &shape,
                                const SparseLink &link);

/// Theorem 3.1's regime: true when the indices overlap (the union is
/// below `threshold` of the sum of the ranks' non-zeros), where balanced
/// parallelism is optimal; false when they hardly overlap, where a
/// centralised scheme is.
bool overlapping(const SparseShape &shape, double threshold = 0.9);

const char *name(SparseScheme scheme);

} // namespace hetero::sparse

#endif // HETERO_SPARSE_SPARSECOST_H
