//===- Placement.h - where in-memory checkpoints live (Gemini) --*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free. Gemini's checkpoint placement (Algorithm 6.1): every machine
// keeps its own checkpoint and sends m - 1 copies to peers chosen by the
// group, ring or mixed layout, and the probability that a simultaneous loss
// of k machines still leaves a copy of every checkpoint in CPU memory:
// exactly by enumeration, by inclusion-exclusion over the groups, and by a
// counting polynomial for any layout; Corollary 6.1 as the thesis's bound.
// Machines are numbered from 0 (the thesis counts from 1).
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_CHECKPOINT_PLACEMENT_H
#define HETERO_CHECKPOINT_PLACEMENT_H

#include <cstdint>
#include <string>
#include <vector>

namespace hetero::checkpoint {

enum class Layout {
  /// Groups of m machines that hold each other's checkpoints (m | N).
  Group,
  /// Machine i's copies go to the next m - 1 machines around a ring.
  Ring,
  /// Algorithm 6.1: groups of m, the remainder joins the last group, and
  /// that group is a ring of its own. Equals Group when m | N.
  Mixed,
};

const char *layoutName(Layout layout);

struct Placement {
  int64_t machines = 0;
  int64_t replicas = 0;
  Layout layout = Layout::Mixed;
  /// Algorithm 6.1's group list; a ring layout is one group of everyone.
  std::vector<std::vector<int64_t>> groups;
  /// s_i: the machines that hold machine i's checkpoint, i first, then the
  /// peers it sends to in send order.
  std::vector<std::vector<int64_t>> replicaSets;

  /// The m - 1 machines that machine `i` sends its checkpoint to.
  std::vector<int64_t> peersOf(int64_t i) const;
  /// The machines whose checkpoints machine `i` holds (itself excluded).
  std::vector<int64_t> hostedBy(int64_t i) const;
};

/// "" when N machines can hold m replicas in `layout`, else what is wrong.
std::string checkPlacement(int64_t machines, int64_t replicas, Layout layout);

/// The placement of `replicas` copies over `machines` machines; the
/// arguments must pass checkPlacement.
Placement place(int64_t machines, int64_t replicas, Layout layout);

/// Whether every machine's checkpoint survives somewhere when the machines
/// marked in `failed` lose their memory.
bool recoverable(const Placement &placement, const std::vector<bool> &failed);

/// An exact probability: numerator / denominator, not reduced.
struct Probability {
  unsigned __int128 numerator = 0;
  unsigned __int128 denominator = 1;
  double value() const;
  /// The value rounded half up to `digits` decimals, as text ("0.933333").
  std::string format(int digits = 6) const;
  /// numerator / denominator in lowest terms, as "14/15".
  std::string fraction() const;
};

/// The probability that k machines failing at once, uniformly over the
/// C(N, k) sets, leave every checkpoint in CPU memory. Counted with a
/// polynomial over the layout's blocks (groups and the ring), so it is exact
/// and fast for any N. Fails (returns false and says why) when the counts
/// do not fit in 128 bits or k is outside 0..N.
bool recoveryProbability(const Placement &placement, int64_t failures,
                         Probability &result, std::string &error);

/// The same probability by enumerating every failure set (for small N).
Probability recoveryProbabilityByEnumeration(const Placement &placement,
                                             int64_t failures);

/// Inclusion-exclusion over the N/m disjoint groups of a group layout:
/// 1 - sum_j (-1)^(j+1) C(g, j) C(N - jm, k - jm) / C(N, k).
bool groupRecoveryProbability(int64_t machines, int64_t replicas,
                              int64_t failures, Probability &result,
                              std::string &error);

/// Corollary 6.1's value: 1 for k < m, else
/// max(0, 1 - N C(N-m, k-m) / (m C(N, k))). Exact for m <= k < 2m and a
/// lower bound beyond.
double corollaryBound(int64_t machines, int64_t replicas, int64_t failures);

/// The number of distinct replica sets, n of Theorem 6.1: a failure of
/// exactly m machines is unrecoverable with probability n / C(N, m).
int64_t distinctReplicaSets(const Placement &placement);

} // namespace hetero::checkpoint

#endif // HETERO_CHECKPOINT_PLACEMENT_H
