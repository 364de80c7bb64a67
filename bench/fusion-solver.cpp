//===- fusion-solver.cpp - Cupcake solver time and plan quality -----------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The exact fusion solver against the thesis's Algorithm 5.1 (branch and
// bound with both prunings), both run here on the same problems, at the
// tensor counts of the models in Cupcake's evaluation (161, 314 and 207
// gradients; the thesis reports 2.8 s, 6.6 s and 4.2 s for Algorithm 5.1
// on its hardware). The profiles are synthetic, seeded so that every run
// solves the same problems: log-uniform gradient sizes from 1 KiB to
// 16 MiB, 0.5 ms of backprop per MiB, 8 ranks on a 10 Gb/s link with
// 0.05 ms a step; compressed groups (top-k 1%: 2% of the bytes) are
// all-gathered, uncompressed ones all-reduced in a ring. Two compression
// costs: affine (the thesis's model, 0.25 ms + 0.05 ms/MB) and flat below
// 4 MB, linear beyond (its measurement, Fig. 5.2). Prints the solver's time
// (fastest of 5), Algorithm 5.1's (one run, or the node budget it stopped
// at) and their ratio, whether both found the same optimum, and the
// iteration time of every baseline divided by the optimum's: per tensor
// (GRACE), one group, DDP's 25 MB buckets, the best bucket size of 2..64 MB
// (powers of 2), the best even split, FP32 without compression in the best
// bucket size (Horovod), HiPress (per tensor, compressing those above
// the best size threshold, the rest FP32), and fusion decided jointly with
// each group's compress-or-not (jointPlan).
//
//   usage: bench-fusion-solver [node budget of Algorithm 5.1, default 2^26]
//
//===----------------------------------------------------------------------===//

#include "hetero/Fusion/Fusion.h"

#include "Fastest.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

using hetero::bench::fastestSeconds;
using namespace hetero::fusion;

namespace {

Problem syntheticProblem(int64_t tensors, unsigned seed, double minMs) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> exponent(10.0, 24.0); // 1 KiB..16 MiB
  Problem problem;
  for (int64_t t = 0; t < tensors; ++t) {
    int64_t bytes = int64_t(std::pow(2.0, exponent(random)));
    problem.tensors.push_back(
        {"t" + std::to_string(t), bytes, 0.5 * double(bytes) / kBytesPerMB});
  }
  // A kernel launch, then 20 GB/s; with minMs, flat up to where the line
  // reaches it.
  problem.compress = {0.25, 0.05, minMs};
  // 8 ranks, 10 Gb/s (0.8 ms/MB), 0.05 ms a step. All-gather of 2% of the
  // bytes: 7 steps, 7 x 0.02 x 0.8 ms/MB. Ring all-reduce: 14 steps,
  // 2 x 7/8 x 0.8 ms/MB.
  problem.comm = {0.35, 0.112};
  problem.dense = LinearCost{0.7, 1.4};
  return problem;
}

} // namespace

int main(int argc, char **argv) {
  int64_t budget = argc > 1 ? std::atoll(argv[1]) : int64_t(1) << 26;
  if (budget < 1) {
    std::fprintf(stderr,
                 "bench-fusion-solver: the node budget must be at "
                 "least 1, got '%s'\n",
                 argv[1]);
    return 1;
  }
  struct Model {
    int64_t tensors;
    double reportedSeconds;
  } models[] = {{161, 2.8}, {314, 6.6}, {207, 4.2}};
  struct Cost {
    const char *name;
    double minMs;
  } costs[] = {{"affine", 0.0}, {"flat<4MB", 0.45}};
  std::printf("%-9s %-7s %9s %10s %9s %8s %6s %7s | iteration time / "
              "optimal: %s\n",
              "cost", "tensors", "exact_ms", "alg5.1_ms", "nodes", "ratio",
              "same", "groups",
              "per_tensor single_group ddp_25MB best_bucket best_even fp32 "
              "hipress joint");
  for (const Cost &cost : costs)
    for (const Model &model : models) {
      Problem problem =
          syntheticProblem(model.tensors, 17 + model.tensors, cost.minMs);
      Plan plan;
      double exact = fastestSeconds(5, [&] { plan = optimalPlan(problem); });
      BranchAndBound search;
      double branch = fastestSeconds(
          1, [&] { search = branchAndBoundPlan(problem, budget); });
      double optimum = plan.iterationMs;
      bool same = std::abs(search.plan.iterationMs - optimum) <=
                  1e-9 * std::max(1.0, optimum);
      std::printf("%-9s %-7lld %9.2f %s%9.1f %9lld %7.0fx %6s %7zu | %.3f "
                  "%.3f %.3f %.3f %.3f %.3f %.3f %.3f (optimal %.1f ms)\n",
                  cost.name, (long long)model.tensors, exact * 1e3,
                  search.complete ? " " : ">", branch * 1e3,
                  (long long)search.nodes, branch / exact, same ? "yes" : "no",
                  plan.groups.size(),
                  perTensorPlan(problem).iterationMs / optimum,
                  singleGroupPlan(problem).iterationMs / optimum,
                  thresholdPlan(problem, 25 << 20).iterationMs / optimum,
                  bestBucketPlan(problem).iterationMs / optimum,
                  bestEvenPlan(problem).iterationMs / optimum,
                  bestFp32Plan(problem).iterationMs / optimum,
                  bestHipressPlan(problem).iterationMs / optimum,
                  jointPlan(problem).iterationMs / optimum, optimum);
    }
  return 0;
}
