//===- Fusion.h - Cupcake's optimal gradient tensor fusion ------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free. Gradients T0..T(N-1), in the order backprop produces them, are
// split into consecutive groups; each group is fused into one buffer,
// compressed once, communicated once, then decompressed and unfused.
//
// Timeline model: one compute stream runs the backprop of T0, T1, ... in
// order; a group's compression runs on the compute stream right after the
// backprop of its last tensor (before the next tensor's), costing h(bytes):
// max(c, alpha_h + beta_h x bytes), flat up to where the line crosses c
// and linear beyond, as the thesis measured it (Fig. 5.2; c = 0 is its
// affine model). One communication stream runs the groups' transfers in
// order, each starting when its compression is done and the previous
// transfer has finished, costing alpha_g + beta_g x bytes. The objective
// is the end of the last transfer.
//
// The exact solver. With C_k the end of group k's compression and g_m the
// transfer of group m, the last transfer ends at max_k (C_k + sum_{m >= k}
// g_m). For groups k..last starting at tensor i, r of them, the transfers
// sum to r alpha_g + beta_g (bytes from i on): that depends on (i, r)
// only, whatever h is. So, backwards over suffixes,
//   psi(i, r) = min over the first group [i, e) of
//               h(i, e) + max(B(e) + r alpha_g + beta_g S(i, N), psi(e, r - 1))
// (B(e): backprop of T0..T(e-1); psi(N, 0) = -inf) is the least
// max_k (C_k + sum_{m >= k} g_m) - H over plans of the suffix, where H is
// the compression time of the groups before i; the optimum is
// min_r psi(0, r). O(N^3) time, O(N^2) memory, exact for any compression
// cost, which a forward program over (tensors, groups) is only for an
// affine one (its compute-stream time then depends on (i, j) alone).
//
// Algorithm 5.1 of the thesis (branch and bound, both prunings) is here
// too, as the baseline the solver's time is measured against.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_FUSION_FUSION_H
#define HETERO_FUSION_FUSION_H

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hetero::fusion {

constexpr double kBytesPerMB = 1024.0 * 1024.0;

struct Tensor {
  std::string name;
  int64_t bytes = 0;
  double backwardMs = 0.0;
};

/// alpha + beta x size, with beta per MB (2^20 bytes).
struct LinearCost {
  double alphaMs = 0.0;
  double betaMsPerMB = 0.0;
  double operator()(int64_t bytes) const {
    return alphaMs + betaMsPerMB * double(bytes) / kBytesPerMB;
  }
};

/// A compression cost flat at `minMs` for small buffers and linear beyond:
/// max(minMs, alpha + beta x size).
struct CompressionCost {
  double alphaMs = 0.0;
  double betaMsPerMB = 0.0;
  double minMs = 0.0;
  double operator()(int64_t bytes) const {
    return std::max(minMs, alphaMs + betaMsPerMB * double(bytes) / kBytesPerMB);
  }
};

struct Problem {
  std::vector<Tensor> tensors;
  CompressionCost compress;
  LinearCost comm;
  /// The transfer of a group sent uncompressed (an FP32 all-reduce); the
  /// baselines that leave tensors uncompressed need it.
  std::optional<LinearCost> dense;
};

/// Tensors first..last, inclusive.
struct Group {
  int64_t first;
  int64_t last;
  bool operator==(const Group &other) const {
    return first == other.first && last == other.last;
  }
};

struct Plan {
  std::vector<Group> groups;
  double iterationMs = 0.0;
  /// Per group, whether it is compressed; empty when all are.
  std::vector<bool> compressed;
  /// The bucket size or size threshold a baseline used (0 for none).
  int64_t thresholdBytes = 0;
};

/// The end of the last transfer when `problem` runs with `groups` (which
/// must cover the tensors in order).
double evaluate(const Problem &problem, const std::vector<Group> &groups);

/// Several sets whose transfers share one link (the gradient all-reduces of
/// a pipeline's stages on one network): set s starts its backprop at
/// `startMs[s]` and runs `groups[s]`. A set's transfers run one at a time
/// in order (a rank's communication thread), each its set's `comm` cost:
/// its latency alpha keeps only its set waiting, while its bytes (beta x)
/// hold the link, which serves them in the order the transfers become
/// ready (ties: the lower set). Returns, per set, the end of its last
/// transfer (its start when it has none).
std::vector<double>
evaluateShared(const std::vector<Problem> &problems,
               const std::vector<std::vector<Group>> &groups,
               const std::vector<double> &startMs);

/// The optimal grouping (the suffix program above, O(N^3)). Ties go to
/// fewer groups.
Plan optimalPlan(const Problem &problem);

/// Algorithm 5.1 of the thesis: depth-first over the first group's end,
/// seeded with the best even split; pruning 1 drops a branch whose
/// optimistic bound (Eq. 5.4) exceeds the best time so far, pruning 2
/// starts the next group no earlier than the last tensor whose backprop
/// and compression still end before the link is free (Eq. 5.5). Its worst
/// case is exponential: it gives up after `maxNodes` calls.
struct BranchAndBound {
  Plan plan;
  int64_t nodes = 0;
  bool complete = true;
};
BranchAndBound branchAndBoundPlan(const Problem &problem,
                                  int64_t maxNodes = int64_t(1) << 40);

/// The optimum by trying all 2^(N-1) groupings; for tests, N <= 20.
Plan bruteForcePlan(const Problem &problem);

/// Baselines.
Plan perTensorPlan(const Problem &problem);
Plan singleGroupPlan(const Problem &problem);
/// Horovod / PyTorch DDP buckets: tensors join the open bucket until it
/// holds at least `thresholdBytes`, which closes it.
Plan thresholdPlan(const Problem &problem, int64_t thresholdBytes);
/// `count` groups of (nearly) equal tensor counts.
Plan evenPlan(const Problem &problem, int64_t count);
/// The best of evenPlan over every count.
Plan bestEvenPlan(const Problem &problem);
/// The best of thresholdPlan over bucket sizes of 2, 4, ..., 64 MB.
Plan bestBucketPlan(const Problem &problem);

/// The end of the last transfer when the groups marked uncompressed skip
/// compression and travel at `problem.dense`'s cost.
double evaluate(const Problem &problem, const std::vector<Group> &groups,
                const std::vector<bool> &compressed);
/// FP32 (Horovod): no compression, buckets of `thresholdBytes`; the best
/// of 2..64 MB. Need `problem.dense`.
Plan fp32Plan(const Problem &problem, int64_t thresholdBytes);
Plan bestFp32Plan(const Problem &problem);
/// HiPress: layer-wise, compressing only the tensors of at least
/// `thresholdBytes`; the best threshold among 4 KiB, 8 KiB, ..., 64 MiB.
/// Need `problem.dense`.
Plan hipressPlan(const Problem &problem, int64_t thresholdBytes);
Plan bestHipressPlan(const Problem &problem);

/// Fusion and the compress-or-not choice of each group together: from the
/// optimal all-compressed grouping, the best FP32 buckets and the best
/// HiPress plan, each group in turn switches between compressed and
/// uncompressed while that shortens the step; the best result wins. Exact
/// for neither (the exact program's transfers-from-here identity needs one
/// link cost for all groups), never worse than any of its three starts.
/// Needs `problem.dense`.
Plan jointPlan(const Problem &problem);

/// "[0-3] [4-9]".
std::string formatGroups(const std::vector<Group> &groups);

} // namespace hetero::fusion

#endif // HETERO_FUSION_FUSION_H
