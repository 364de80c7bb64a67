//===- Semi.cpp - SEMI-migration: prune, migrate, or both -----------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Resize/Semi.h"

#include <algorithm>
#include <cmath>
#include <set>

using namespace hetero::resize;

std::string CostFit::check(const std::vector<double> &x,
                           const std::vector<double> &y, int degree) {
  if (degree < 1 || degree > 2)
    return "a cost fit has degree 1 or 2, got " + std::to_string(degree);
  if (x.size() != y.size())
    return std::to_string(x.size()) + " sample points but " +
           std::to_string(y.size()) + " costs";
  std::set<double> distinct;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i]) || !std::isfinite(y[i]))
      return "sample " + std::to_string(i) + " is not finite";
    distinct.insert(x[i]);
  }
  if (int64_t(distinct.size()) < degree + 1)
    return "a fit of degree " + std::to_string(degree) + " needs " +
           std::to_string(degree + 1) + " distinct sample points, got " +
           std::to_string(distinct.size());
  return "";
}

CostFit CostFit::fit(const std::vector<double> &x, const std::vector<double> &y,
                     int degree) {
  // The normal equations (A^T A) c = A^T y of the Vandermonde matrix A,
  // solved by Gaussian elimination with partial pivoting.
  int size = degree + 1;
  double matrix[3][4] = {};
  for (size_t i = 0; i < x.size(); ++i) {
    double powers[3] = {1, x[i], x[i] * x[i]};
    for (int r = 0; r < size; ++r) {
      for (int c = 0; c < size; ++c)
        matrix[r][c] += powers[r] * powers[c];
      matrix[r][size] += powers[r] * y[i];
    }
  }
  for (int col = 0; col < size; ++col) {
    int pivot = col;
    for (int r = col + 1; r < size; ++r)
      if (std::fabs(matrix[r][col]) > std::fabs(matrix[pivot][col]))
        pivot = r;
    std::swap(matrix[col], matrix[pivot]);
    for (int r = 0; r < size; ++r) {
      if (r == col || matrix[col][col] == 0)
        continue;
      double factor = matrix[r][col] / matrix[col][col];
      for (int c = col; c <= size; ++c)
        matrix[r][c] -= factor * matrix[col][c];
    }
  }
  CostFit result;
  for (int r = 0; r < size; ++r)
    result.coefficient.push_back(
        matrix[r][r] == 0 ? 0 : matrix[r][size] / matrix[r][r]);
  result.start = x.empty() ? 0 : *std::min_element(x.begin(), x.end());
  return result;
}

double CostFit::polynomial(double x) const {
  double value = 0, power = 1;
  for (double c : coefficient) {
    value += c * power;
    power *= x;
  }
  return value;
}

double CostFit::operator()(double x) const {
  // The polynomial's extremes on [lo, hi] lie at the ends or its vertex.
  auto extremes = [&](double lo, double hi) {
    std::vector<double> values = {polynomial(lo), polynomial(hi)};
    if (coefficient.size() == 3 && coefficient[2] != 0) {
      double vertex = -coefficient[1] / (2 * coefficient[2]);
      if (vertex > lo && vertex < hi)
        values.push_back(polynomial(vertex));
    }
    return std::make_pair(*std::min_element(values.begin(), values.end()),
                          *std::max_element(values.begin(), values.end()));
  };
  // Above the samples: the running maximum; below: the running minimum
  // up to the first sample. Both never fall as x grows.
  double value =
      x >= start ? extremes(start, x).second : extremes(x, start).first;
  return std::max(value, 0.0);
}

CostFunction hetero::resize::communicationCost(
    const std::vector<std::pair<double, double>> &migrating,
    const std::vector<double> &still) {
  if (migrating.empty() || still.empty())
    return [](double) { return 0.0; };
  double base = 0;
  for (double ms : still)
    base += ms;
  base /= double(still.size());
  std::vector<double> x, y;
  for (const auto &[share, ms] : migrating) {
    x.push_back(share);
    y.push_back(ms - base);
  }
  if (CostFit::check(x, y, 1).empty()) {
    CostFit fit = CostFit::fit(x, y, 1);
    return [fit](double share) { return share > 0 ? fit(share) : 0.0; };
  }
  double mean = 0;
  for (double extra : y)
    mean += extra;
  mean = std::max(0.0, mean / double(y.size()));
  return [mean](double share) { return share > 0 ? mean : 0.0; };
}

double hetero::resize::splitShare(double ratio, const SplitModel &model) {
  auto excess = [&](double share) {
    double pruned = share * ratio, migrated = (1 - share) * ratio;
    return model.staticMs + model.extract(pruned) -
           (model.communicate(migrated) + model.compute(migrated));
  };
  if (excess(1.0) <= 0)
    return 1.0;
  if (excess(0.0) >= 0)
    return 0.0;
  double lo = 0, hi = 1;
  for (int step = 0; step < 64; ++step) {
    double mid = (lo + hi) / 2;
    (excess(mid) < 0 ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

static double minimumBusy(const std::vector<RankLoad> &loads) {
  double least = loads.empty() ? 0 : loads.front().busyMs;
  for (const RankLoad &load : loads)
    least = std::min(least, load.busyMs);
  return least;
}

std::vector<int64_t>
hetero::resize::stragglersOf(const std::vector<RankLoad> &loads,
                             double noiseGuard) {
  double least = minimumBusy(loads);
  std::vector<int64_t> stragglers;
  for (size_t i = 0; i < loads.size(); ++i)
    if (loads[i].busyMs > (1 + noiseGuard) * least)
      stragglers.push_back(int64_t(i));
  std::stable_sort(stragglers.begin(), stragglers.end(),
                   [&](int64_t a, int64_t b) {
                     return loads[size_t(a)].busyMs > loads[size_t(b)].busyMs;
                   });
  return stragglers;
}

/// Eq. 1 against T_min for rank `rank`.
static double ratioAgainstMin(const std::vector<RankLoad> &loads, int64_t rank,
                              double maxRatio) {
  const RankLoad &load = loads[size_t(rank)];
  return pruningRatio(load.busyMs, minimumBusy(loads), load.gemmMs, maxRatio);
}

/// The time rank `rank` needs for `work` units at its measured speed.
static double timeFor(const RankLoad &load, double work) {
  if (!(load.work > 0) || !(load.gemmMs > 0))
    return 0;
  return work * load.gemmMs / load.work;
}

MigrationChoice hetero::resize::chooseMigrating(
    const std::vector<RankLoad> &loads, const CostFunction &communicate,
    Receivers receivers, double noiseGuard, double maxRatio) {
  MigrationChoice choice;
  choice.stragglers = stragglersOf(loads, noiseGuard);
  double least = minimumBusy(loads);
  std::vector<bool> straggling(loads.size(), false);
  for (int64_t s : choice.stragglers)
    straggling[size_t(s)] = true;
  double volume = 0;
  for (size_t k = 0; k < choice.stragglers.size(); ++k) {
    int64_t rank = choice.stragglers[k];
    volume += ratioAgainstMin(loads, rank, maxRatio) * loads[size_t(rank)].work;
    std::vector<size_t> receiving;
    for (size_t j = 0; j < loads.size(); ++j) {
      bool migrates =
          std::find(choice.stragglers.begin(),
                    choice.stragglers.begin() + k + 1,
                    int64_t(j)) != choice.stragglers.begin() + k + 1;
      if (receivers == Receivers::Others ? !migrates : !straggling[j])
        receiving.push_back(j);
    }
    if (receiving.empty())
      break;
    double share = volume / double(receiving.size()), slowest = 0;
    for (size_t j : receiving)
      slowest = std::max(slowest, timeFor(loads[j], share));
    double cost = communicate(volume) + slowest;
    double gain = loads[size_t(rank)].busyMs - least;
    choice.costs.push_back(cost);
    choice.gains.push_back(gain);
    if (!(gain > cost))
      break;
    choice.migrating = int64_t(k + 1);
  }
  return choice;
}

std::vector<RankPlan>
hetero::resize::semiPlan(const std::vector<RankLoad> &loads,
                         const SemiCosts &costs, const SemiOptions &options) {
  std::vector<RankPlan> plan(loads.size());
  std::vector<int64_t> stragglers = stragglersOf(loads, options.noiseGuard);
  if (stragglers.empty())
    return plan;
  if (stragglers.size() == 1) {
    int64_t s = stragglers.front();
    double ratio = ratioAgainstMin(loads, s, options.maxRatio);
    if (ratio <= options.tolerableRatio) {
      plan[size_t(s)].prune = ratio;
      return plan;
    }
    const RankLoad &straggler = loads[size_t(s)];
    // Comp: the slowest receiver's time for its 1 / (n - 1) of the work.
    double receivers = double(loads.size() - 1), slowest = 0;
    for (size_t j = 0; j < loads.size(); ++j)
      if (int64_t(j) != s)
        slowest = std::max(slowest, timeFor(loads[j], straggler.work));
    SplitModel model;
    model.staticMs = costs.staticMs;
    model.extract = costs.extract;
    model.communicate = [&](double share) {
      return costs.communicate(share * straggler.work);
    };
    model.compute = [&](double share) {
      return receivers > 0 ? share * slowest / receivers : 0.0;
    };
    double beta = splitShare(ratio, model);
    plan[size_t(s)] = {beta * ratio, (1 - beta) * ratio};
    return plan;
  }
  MigrationChoice choice =
      chooseMigrating(loads, costs.communicate, options.receivers,
                      options.noiseGuard, options.maxRatio);
  for (size_t k = 0; k < stragglers.size(); ++k) {
    int64_t s = stragglers[k];
    double ratio = ratioAgainstMin(loads, s, options.maxRatio);
    if (int64_t(k) < choice.migrating)
      plan[size_t(s)].migrate = ratio;
    else
      plan[size_t(s)].prune = ratio;
  }
  return plan;
}

std::vector<RankPlan>
hetero::resize::migrationPlan(const std::vector<RankLoad> &loads,
                              double noiseGuard, double maxRatio) {
  std::vector<RankPlan> plan(loads.size());
  for (int64_t s : stragglersOf(loads, noiseGuard))
    plan[size_t(s)].migrate = ratioAgainstMin(loads, s, maxRatio);
  return plan;
}
