//===- Placement.cpp - where in-memory checkpoints live (Gemini) ----------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Checkpoint/Placement.h"

#include <algorithm>
#include <cassert>
#include <set>

namespace hetero::checkpoint {

using Count = unsigned __int128;

const char *layoutName(Layout layout) {
  switch (layout) {
  case Layout::Group:
    return "group";
  case Layout::Ring:
    return "ring";
  case Layout::Mixed:
    return "mixed";
  }
  return "?";
}

std::vector<int64_t> Placement::peersOf(int64_t i) const {
  const std::vector<int64_t> &set = replicaSets[i];
  return std::vector<int64_t>(set.begin() + 1, set.end());
}

std::vector<int64_t> Placement::hostedBy(int64_t i) const {
  std::vector<int64_t> hosted;
  for (int64_t j = 0; j < machines; ++j)
    if (j != i && std::count(replicaSets[j].begin(), replicaSets[j].end(), i))
      hosted.push_back(j);
  return hosted;
}

std::string checkPlacement(int64_t machines, int64_t replicas, Layout layout) {
  if (machines < 1)
    return "the number of machines must be at least 1, got " +
           std::to_string(machines);
  if (replicas < 1)
    return "the number of replicas must be at least 1 (the local copy), got " +
           std::to_string(replicas);
  if (replicas > machines)
    return std::to_string(replicas) +
           " replicas need at least as many "
           "machines, but there are " +
           std::to_string(machines);
  if (layout == Layout::Group && machines % replicas != 0)
    return "group placement needs the " + std::to_string(machines) +
           " machines to split into groups of " + std::to_string(replicas) +
           "; use ring or mixed";
  return "";
}

namespace {

/// Ring placement inside `members`: member x holds its own checkpoint and
/// those of the m - 1 members before it, so it sends to the m - 1 after it.
void placeRing(const std::vector<int64_t> &members, int64_t replicas,
               std::vector<std::vector<int64_t>> &replicaSets) {
  int64_t size = int64_t(members.size());
  for (int64_t x = 0; x < size; ++x)
    for (int64_t j = 0; j < replicas; ++j)
      replicaSets[members[x]].push_back(members[(x + j) % size]);
}

} // namespace

Placement place(int64_t machines, int64_t replicas, Layout layout) {
  assert(checkPlacement(machines, replicas, layout).empty());
  Placement placement;
  placement.machines = machines;
  placement.replicas = replicas;
  placement.layout = layout;
  placement.replicaSets.resize(machines);
  if (layout == Layout::Ring) {
    std::vector<int64_t> everyone(machines);
    for (int64_t i = 0; i < machines; ++i)
      everyone[i] = i;
    placement.groups.push_back(everyone);
    placeRing(everyone, replicas, placement.replicaSets);
    return placement;
  }
  // Algorithm 6.1: floor(N/m) groups of m, the rest joins the last one.
  int64_t groups = machines / replicas;
  for (int64_t g = 0; g < groups; ++g) {
    std::vector<int64_t> group;
    for (int64_t j = 0; j < replicas; ++j)
      group.push_back(g * replicas + j);
    placement.groups.push_back(group);
  }
  for (int64_t i = groups * replicas; i < machines; ++i)
    placement.groups.back().push_back(i);
  if (machines % replicas != 0)
    placement.layout = Layout::Mixed;
  else if (layout == Layout::Mixed)
    placement.layout = Layout::Group;
  for (const std::vector<int64_t> &group : placement.groups) {
    if (int64_t(group.size()) > replicas) {
      placeRing(group, replicas, placement.replicaSets);
      continue;
    }
    // Every member holds the whole group, itself first.
    for (int64_t x = 0; x < replicas; ++x)
      for (int64_t j = 0; j < replicas; ++j)
        placement.replicaSets[group[x]].push_back(group[(x + j) % replicas]);
  }
  return placement;
}

bool recoverable(const Placement &placement, const std::vector<bool> &failed) {
  for (const std::vector<int64_t> &set : placement.replicaSets)
    if (std::all_of(set.begin(), set.end(),
                    [&](int64_t holder) { return failed[holder]; }))
      return false;
  return true;
}

//===----------------------------------------------------------------------===//
// Exact counting
//===----------------------------------------------------------------------===//

namespace {

bool add(Count a, Count b, Count &out) {
  return !__builtin_add_overflow(a, b, &out);
}
bool multiply(Count a, Count b, Count &out) {
  return !__builtin_mul_overflow(a, b, &out);
}

/// C(n, k), or false when it does not fit.
bool binomial(int64_t n, int64_t k, Count &out) {
  if (k < 0 || k > n) {
    out = 0;
    return true;
  }
  k = std::min(k, n - k);
  Count value = 1;
  for (int64_t i = 0; i < k; ++i) {
    // value * (n - i) / (i + 1) is C(n, i + 1), an integer; divide by the
    // common factor first so the product overflows as late as possible.
    Count numerator = Count(n - i), denominator = Count(i + 1);
    Count common = std::__gcd(value, denominator);
    value /= common;
    denominator /= common;
    numerator /= denominator; // denominator now divides n - i
    if (!multiply(value, numerator, value))
      return false;
  }
  out = value;
  return true;
}

const char *kTooLarge = "the counts exceed 128 bits; use fewer machines or "
                        "failures";

/// Ways to fail j members of a group of `size` that holds itself: every
/// subset but the whole group, for j = 0..k.
bool groupGoodCounts(int64_t size, int64_t k, std::vector<Count> &good) {
  good.assign(k + 1, 0);
  for (int64_t j = 0; j <= std::min(k, size - 1); ++j)
    if (!binomial(size, j, good[j]))
      return false;
  return true;
}

/// Ways to fail j members of a ring of `size` whose windows of `window`
/// consecutive members are the replica sets, leaving no window fully
/// failed, for j = 0..k: cyclic binary strings with no run of `window` ones.
bool ringGoodCounts(int64_t size, int64_t window, int64_t k,
                    std::vector<Count> &good) {
  good.assign(k + 1, 0);
  good[0] = 1;
  // linear[len][ones]: strings of length len with no run of `window` ones.
  // Filled position by position with the length of the trailing run.
  std::vector<std::vector<Count>> linear(std::max<int64_t>(size - 1, 1),
                                         std::vector<Count>(k + 1, 0));
  std::vector<std::vector<Count>> byRun(k + 1, std::vector<Count>(window, 0));
  byRun[0][0] = 1;
  linear[0][0] = 1;
  for (int64_t len = 1; len < size - 1; ++len) {
    std::vector<std::vector<Count>> next(k + 1, std::vector<Count>(window, 0));
    for (int64_t ones = 0; ones <= k; ++ones)
      for (int64_t run = 0; run < window; ++run) {
        Count ways = byRun[ones][run];
        if (ways == 0)
          continue;
        if (!add(next[ones][0], ways, next[ones][0]))
          return false;
        if (run + 1 < window && ones + 1 <= k &&
            !add(next[ones + 1][run + 1], ways, next[ones + 1][run + 1]))
          return false;
      }
    byRun = std::move(next);
    for (int64_t ones = 0; ones <= k; ++ones)
      for (int64_t run = 0; run < window; ++run)
        if (!add(linear[len][ones], byRun[ones][run], linear[len][ones]))
          return false;
  }
  // At least one member survives (a full ring is a failed window). With a
  // leading ones before the first survivor and b after the last, the wrap
  // run is a + b.
  for (int64_t j = 1; j <= std::min(k, size - 1); ++j) {
    Count total = 0;
    for (int64_t a = 0; a < window && a <= j; ++a)
      for (int64_t b = 0; a + b < window && a + b <= j; ++b) {
        int64_t rest = size - a - b;
        if (rest < 1)
          continue;
        if (rest == 1) {
          // One survivor, everyone else failed.
          if (j == size - 1 && !add(total, 1, total))
            return false;
          continue;
        }
        if (!add(total, linear[rest - 2][j - a - b], total))
          return false;
      }
    good[j] = total;
  }
  return true;
}

} // namespace

bool recoveryProbability(const Placement &placement, int64_t failures,
                         Probability &result, std::string &error) {
  int64_t n = placement.machines, k = failures;
  if (k < 0 || k > n) {
    error = "the number of failures must be between 0 and the " +
            std::to_string(n) + " machines, got " + std::to_string(k);
    return false;
  }
  // The product over the layout's blocks of their good-count polynomials,
  // truncated at degree k.
  std::vector<Count> product(k + 1, 0);
  product[0] = 1;
  for (const std::vector<int64_t> &group : placement.groups) {
    int64_t size = int64_t(group.size());
    std::vector<Count> good;
    bool ring = size > placement.replicas;
    if (!(ring ? ringGoodCounts(size, placement.replicas, k, good)
               : groupGoodCounts(size, k, good))) {
      error = kTooLarge;
      return false;
    }
    std::vector<Count> next(k + 1, 0);
    for (int64_t i = 0; i <= k; ++i)
      for (int64_t j = 0; i + j <= k; ++j) {
        Count term;
        if (!multiply(product[i], good[j], term) ||
            !add(next[i + j], term, next[i + j])) {
          error = kTooLarge;
          return false;
        }
      }
    product = std::move(next);
  }
  if (!binomial(n, k, result.denominator)) {
    error = kTooLarge;
    return false;
  }
  result.numerator = product[k];
  return true;
}

Probability recoveryProbabilityByEnumeration(const Placement &placement,
                                             int64_t failures) {
  int64_t n = placement.machines, k = failures;
  Probability result;
  result.denominator = 0;
  std::vector<int64_t> chosen(k);
  for (int64_t i = 0; i < k; ++i)
    chosen[i] = i;
  std::vector<bool> failed(n);
  while (true) {
    std::fill(failed.begin(), failed.end(), false);
    for (int64_t machine : chosen)
      failed[machine] = true;
    ++result.denominator;
    if (recoverable(placement, failed))
      ++result.numerator;
    // The next k-subset in lexicographic order.
    int64_t i = k - 1;
    while (i >= 0 && chosen[i] == n - k + i)
      --i;
    if (i < 0)
      break;
    ++chosen[i];
    for (int64_t j = i + 1; j < k; ++j)
      chosen[j] = chosen[j - 1] + 1;
  }
  return result;
}

bool groupRecoveryProbability(int64_t machines, int64_t replicas,
                              int64_t failures, Probability &result,
                              std::string &error) {
  int64_t n = machines, m = replicas, k = failures;
  if (!checkPlacement(n, m, Layout::Group).empty() || k < 0 || k > n) {
    error = "inclusion-exclusion needs m | N and 0 <= k <= N";
    return false;
  }
  int64_t groups = n / m;
  // Signed sum of the unrecoverable sets; each term fits when C(N, k) does.
  __int128 bad = 0;
  for (int64_t j = 1; j * m <= k; ++j) {
    Count choose, rest, term;
    if (!binomial(groups, j, choose) || !binomial(n - j * m, k - j * m, rest) ||
        !multiply(choose, rest, term) || term > Count(~Count(0) >> 2)) {
      error = kTooLarge;
      return false;
    }
    bad += (j % 2 ? 1 : -1) * __int128(term);
  }
  if (!binomial(n, k, result.denominator)) {
    error = kTooLarge;
    return false;
  }
  result.numerator = result.denominator - Count(bad);
  return true;
}

double corollaryBound(int64_t machines, int64_t replicas, int64_t failures) {
  int64_t n = machines, m = replicas, k = failures;
  if (k < m)
    return 1.0;
  // N C(N-m, k-m) / (m C(N, k)) as a product of ratios, which stays in
  // range for any N: C(N-m, k-m) / C(N, k) = prod_{i<m} (k-i) / (N-i).
  double ratio = double(n) / double(m);
  for (int64_t i = 0; i < m; ++i)
    ratio *= double(k - i) / double(n - i);
  return std::max(0.0, 1.0 - ratio);
}

int64_t distinctReplicaSets(const Placement &placement) {
  std::set<std::vector<int64_t>> unique;
  for (std::vector<int64_t> set : placement.replicaSets) {
    std::sort(set.begin(), set.end());
    unique.insert(set);
  }
  return int64_t(unique.size());
}

//===----------------------------------------------------------------------===//
// Probability
//===----------------------------------------------------------------------===//

double Probability::value() const {
  return double((long double)numerator / (long double)denominator);
}

std::string Probability::format(int digits) const {
  Count scale = 1;
  for (int i = 0; i < digits; ++i)
    scale *= 10;
  Count scaled;
  Count rounded;
  if (multiply(numerator, 2 * scale, scaled) &&
      add(scaled, denominator, scaled))
    rounded = scaled / (2 * denominator);
  else
    rounded = Count((long double)numerator / (long double)denominator *
                        (long double)scale +
                    0.5L);
  std::string whole = std::to_string(uint64_t(rounded / scale));
  std::string fractionDigits = std::to_string(uint64_t(rounded % scale));
  fractionDigits.insert(0, digits - fractionDigits.size(), '0');
  return digits ? whole + "." + fractionDigits : whole;
}

namespace {
std::string toString(Count value) {
  if (value == 0)
    return "0";
  std::string digits;
  for (; value; value /= 10)
    digits.insert(digits.begin(), char('0' + int(value % 10)));
  return digits;
}
} // namespace

std::string Probability::fraction() const {
  Count common = std::__gcd(numerator, denominator);
  if (common == 0)
    common = 1;
  return toString(numerator / common) + "/" + toString(denominator / common);
}

} // namespace hetero::checkpoint
