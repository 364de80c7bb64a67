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
// backprop of its last tensor (before the next tensor's), costing
// alpha_h + beta_h x bytes. One communication stream runs the groups'
// transfers in order, each starting when its compression is done and the
// previous transfer has finished, costing alpha_g + beta_g x bytes. The
// objective is the end of the last transfer.
//
// The compute-stream time after a prefix of i tensors cut into j groups
// depends only on (i, j), so a dynamic program over (i, j) finds the
// optimum exactly in O(N^3).
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_FUSION_FUSION_H
#define HETERO_FUSION_FUSION_H

#include <cstdint>
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

struct Problem {
  std::vector<Tensor> tensors;
  LinearCost compress;
  LinearCost comm;
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
};

/// The end of the last transfer when `problem` runs with `groups` (which
/// must cover the tensors in order).
double evaluate(const Problem &problem, const std::vector<Group> &groups);

/// The optimal grouping (dynamic program, O(N^3)). Ties go to fewer groups.
Plan optimalPlan(const Problem &problem);

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

/// "[0-3] [4-9]".
std::string formatGroups(const std::vector<Group> &groups);

} // namespace hetero::fusion

#endif // HETERO_FUSION_FUSION_H
