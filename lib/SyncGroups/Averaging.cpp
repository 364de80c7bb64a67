//===- Averaging.cpp - sync groups as averaging matrices ------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/SyncGroups/Averaging.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace hetero::sync {

UnionFind::UnionFind(int64_t n) : parent(n), size(n, 1), count(n) {
  std::iota(parent.begin(), parent.end(), 0);
}

int64_t UnionFind::find(int64_t x) {
  while (parent[x] != x) {
    parent[x] = parent[parent[x]];
    x = parent[x];
  }
  return x;
}

bool UnionFind::unite(int64_t x, int64_t y) {
  x = find(x);
  y = find(y);
  if (x == y)
    return false;
  if (size[x] < size[y])
    std::swap(x, y);
  parent[y] = x;
  size[x] += size[y];
  --count;
  return true;
}

bool connects(int64_t nodes, const std::vector<std::vector<int64_t>> &groups,
              const std::vector<bool> *excluded) {
  UnionFind sets(nodes);
  int64_t left = 0;
  if (excluded)
    left = std::count(excluded->begin(), excluded->end(), true);
  for (const std::vector<int64_t> &group : groups)
    for (size_t i = 1; i < group.size(); ++i)
      sets.unite(group[0], group[i]);
  // Each excluded replica counts as a component of its own unless a group
  // joined it to the others.
  if (!excluded || left == 0)
    return sets.components() <= 1;
  int64_t root = -1;
  for (int64_t node = 0; node < nodes; ++node) {
    if ((*excluded)[node])
      continue;
    if (root < 0)
      root = sets.find(node);
    else if (sets.find(node) != root)
      return false;
  }
  return true;
}

std::vector<double>
averagingMatrix(int64_t replicas,
                const std::vector<std::vector<int64_t>> &groups) {
  std::vector<double> matrix(replicas * replicas, 0.0);
  for (int64_t i = 0; i < replicas; ++i)
    matrix[i * replicas + i] = 1.0;
  for (const std::vector<int64_t> &group : groups) {
    double share = 1.0 / double(group.size());
    for (int64_t u : group)
      for (int64_t v : group)
        matrix[u * replicas + v] = share;
  }
  return matrix;
}

double rescaledSecondMoment(double m2, double v, int64_t replicas) {
  double mean = m2 * m2;
  return mean + std::max(v - mean, 0.0) / double(replicas);
}

TheoremTerms theoremTerms(int64_t stages, int64_t replicas, int64_t period,
                          int64_t largestGroup, int64_t smallestGroup,
                          double learningRate, double lipschitz,
                          double gradientVariance) {
  double n = double(replicas);
  double np = n * double(period);
  double logN1 = std::log(double(largestGroup));
  // n1^-NP underflows to 0 quickly; log1p keeps 1 - n1^-NP exact enough.
  double inverse = std::exp(-np * logN1);
  TheoremTerms terms;
  // t1 = 4N ((1 + n1^NP) / (1 - n1^-NP))^2, with 1 + n1^NP written as
  // n1^NP (1 + n1^-NP).
  terms.logT1 = std::log(4.0 * n) +
                2.0 * (np * logN1 + std::log1p(inverse) - std::log1p(-inverse));
  terms.logT2 = 2.0 / np * std::log1p(-inverse);
  // 1 - t2 and 1 - sqrt(t2) from expm1 so they keep their digits; when
  // n1^-NP underflows entirely, 1 - t2 ~ (2 / NP) n1^-NP in log space.
  auto logOneMinus = [&](double logValue, double scale) {
    double gap = -std::expm1(scale * logValue);
    if (gap > 0.0)
      return std::log(gap);
    return std::log(scale * 2.0 / np) - np * logN1;
  };
  double logGap = logOneMinus(terms.logT2, 1.0);
  double logSqrtGap = logOneMinus(terms.logT2, 0.5);
  // 1 / (1 - t2) + 2 / (1 - sqrt t2)^2, summed in log space.
  double a = -logGap;
  double b = std::log(2.0) - 2.0 * logSqrtGap;
  double logSum = std::max(a, b) + std::log1p(std::exp(-std::fabs(a - b)));
  double eta = double(smallestGroup) * learningRate / n;
  terms.logNetworkError =
      std::log(2.0 * double(stages) * eta * eta * lipschitz * lipschitz *
               gradientVariance * n * n * n * double(largestGroup)) +
      terms.logT1 - 3.0 * std::log(double(smallestGroup)) + logSum;
  return terms;
}

} // namespace hetero::sync
