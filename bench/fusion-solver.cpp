//===- fusion-solver.cpp - Cupcake solver time and plan quality -----------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The exact fusion solver at the tensor counts of the models in Cupcake's
// evaluation (161, 314 and 207 gradients), whose solver the paper reports
// taking 2.8 s, 6.6 s and 4.2 s. The profiles are synthetic (log-uniform
// gradient sizes from 1 KiB to 16 MiB, backprop time proportional to size,
// a 10 Gb/s link, a GPU compressor), seeded so that every run solves the
// same problems. Prints the solve time (fastest of 5), its ratio to the
// reported time, and the iteration time of every baseline divided by the
// optimum's.
//
//   usage: bench-fusion-solver
//
//===----------------------------------------------------------------------===//

#include "hetero/Fusion/Fusion.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

using namespace hetero::fusion;

namespace {

Problem syntheticProblem(int64_t tensors, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> exponent(10.0, 24.0); // 1 KiB..16 MiB
  Problem problem;
  for (int64_t t = 0; t < tensors; ++t) {
    int64_t bytes = int64_t(std::pow(2.0, exponent(random)));
    // About 2 ms of backprop per MiB of gradient.
    problem.tensors.push_back(
        {"t" + std::to_string(t), bytes, 2.0 * double(bytes) / kBytesPerMB});
  }
  problem.compress = {0.1, 0.05}; // a kernel launch, then 20 GB/s
  problem.comm = {0.5, 0.8};      // 10 Gb/s with 0.5 ms of latency
  return problem;
}

double solveSeconds(const Problem &problem, Plan &plan) {
  double best = 1e30;
  for (int run = 0; run < 5; ++run) {
    auto start = std::chrono::steady_clock::now();
    plan = optimalPlan(problem);
    std::chrono::duration<double> took =
        std::chrono::steady_clock::now() - start;
    best = std::min(best, took.count());
  }
  return best;
}

} // namespace

int main() {
  struct Model {
    int64_t tensors;
    double reportedSeconds;
  } models[] = {{161, 2.8}, {314, 6.6}, {207, 4.2}};
  std::printf("%-8s %10s %12s %10s %7s | iteration time / optimal: %s\n",
              "tensors", "solve_ms", "reported_ms", "speedup", "groups",
              "per_tensor single_group threshold_25MB best_even");
  for (const Model &model : models) {
    Problem problem = syntheticProblem(model.tensors, 17 + model.tensors);
    Plan plan;
    double seconds = solveSeconds(problem, plan);
    double optimum = plan.iterationMs;
    std::printf("%-8lld %10.2f %12.0f %9.0fx %7zu | %.3f %.3f %.3f %.3f "
                "(optimal %.1f ms)\n",
                (long long)model.tensors, seconds * 1e3,
                model.reportedSeconds * 1e3, model.reportedSeconds / seconds,
                plan.groups.size(),
                perTensorPlan(problem).iterationMs / optimum,
                singleGroupPlan(problem).iterationMs / optimum,
                thresholdPlan(problem, 25 << 20).iterationMs / optimum,
                bestEvenPlan(problem).iterationMs / optimum, optimum);
  }
  return 0;
}
