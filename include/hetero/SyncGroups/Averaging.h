//===- Averaging.h - sync groups as averaging matrices ----------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free. What a sync group does to the replicas of a stage (SDPipe's
// Eq. 1-2), when a window of groups connects them (Assumption 1), SDPipe's
// Adam variance rescale, and the bound of its Theorem 1.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_SYNCGROUPS_AVERAGING_H
#define HETERO_SYNCGROUPS_AVERAGING_H

#include <cstdint>
#include <vector>

namespace hetero::sync {

/// Disjoint sets over 0..n-1 with path halving and union by size.
class UnionFind {
public:
  explicit UnionFind(int64_t n);
  int64_t find(int64_t x);
  /// Returns true when x and y were in different sets.
  bool unite(int64_t x, int64_t y);
  int64_t components() const { return count; }

private:
  std::vector<int64_t> parent;
  std::vector<int64_t> size;
  int64_t count;
};

/// Whether the groups, each a clique, connect all `nodes` replicas, leaving
/// out those marked in `excluded` (departed workers) when it is given.
bool connects(int64_t nodes, const std::vector<std::vector<int64_t>> &groups,
              const std::vector<bool> *excluded = nullptr);

/// W of Eq. 2 for disjoint groups over `replicas` replicas, row-major: 1/|S|
/// between members of a group S, 1 on the diagonal of a non-member.
std::vector<double>
averagingMatrix(int64_t replicas,
                const std::vector<std::vector<int64_t>> &groups);

/// SDPipe's rebuilt second moment: the square of the mean plus the variance
/// over the data-parallel degree, m2^2 + max(v - m2^2, 0) / replicas, where
/// m2 is a first moment decayed with beta2.
double rescaledSecondMoment(double m2, double v, int64_t replicas);

/// Theorem 1's terms (with the appendix's t1), in log space because they
/// overflow a double for any useful N and P: n1 is the largest group size,
/// n2 the smallest.
struct TheoremTerms {
  double logT1;
  /// log t2, with t2 = (1 - n1^-NP)^(2 / NP).
  double logT2;
  /// log of the network-error term of bound (5).
  double logNetworkError;
};
TheoremTerms theoremTerms(int64_t stages, int64_t replicas, int64_t period,
                          int64_t largestGroup, int64_t smallestGroup,
                          double learningRate, double lipschitz,
                          double gradientVariance);

} // namespace hetero::sync

#endif // HETERO_SYNCGROUPS_AVERAGING_H
