//===- espresso-selection.cpp - Espresso's selection time and plans -------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Espresso's decision (Alg 4.1 over the GPU options, then Alg 4.2, then each
// divisible scheme's best number of parts) over the whole decision tree (4,341
// options a tensor with nodes) at the tensor counts of the thesis's Table 4.5
// (LSTM 10, VGG16 32, UGATIT and GPT2 148, BERT-base 207, ResNet101 314; it
// reports 1 to 179 ms there), on 64 ranks in nodes of 8. The profiles are
// synthetic and seeded: a model's tensors take a dozen sizes between 4 KiB and
// 64 MiB, as layers of one shape repeat; backprop 1 ms per 4 MiB; a 100 Gb/s
// network and NVLink inside the nodes; a GPU compressor at tens of GB/s, a CPU
// one at 1-2 GB/s with 4 workers.
//
// Prints, per count: the selection time (fastest of 3), the timelines it
// evaluated and the time of one; brute force's |C|^N timelines at that
// rate, as a power of ten of seconds; and the iteration time of the plan
// against the baselines run on the same profile: all dense (FP32), every
// tensor compressed with one flat all-gather on the GPU (compression
// everywhere, as BytePS-Compress), and the project's search over the
// runtime's options; the plan's gain from partial division (Alg 4.1
// and 4.2 alone against the plan) with the division's share of the
// selection time; and Alg 4.1's evaluations of every GPU option of every
// tensor on the all-dense plan, each timeline simulated whole (the
// baseline) against simulateOptions, which simulates the events before
// the tensor's backward once for all its options (whole/shared: the
// speedup).
//
//   usage: bench-espresso-selection [largest tensor count, default 314]
//
//===----------------------------------------------------------------------===//

#include "hetero/Compression/Espresso.h"

#include "Fastest.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

using namespace hetero;
using hetero::bench::fastestSeconds;
using namespace hetero::espresso;

namespace {

Problem syntheticProblem(int64_t tensors, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> exponent(12.0, 26.0);
  std::vector<int64_t> shapes;
  for (int i = 0; i < 12; ++i)
    shapes.push_back(int64_t(std::pow(2.0, exponent(random))));
  std::uniform_int_distribution<size_t> shape(0, shapes.size() - 1);
  Problem problem;
  problem.ranks = 64;
  problem.nodeSize = 8;
  for (int64_t t = 0; t < tensors; ++t) {
    int64_t bytes = shapes[shape(random)];
    problem.tensors.push_back({"t" + std::to_string(t), bytes,
                               0.25 * double(bytes) / fusion::kBytesPerMB});
  }
  problem.link = {0.15, 0.08};       // 100 Gb/s
  problem.intraLink = {0.01, 0.008}; // NVLink
  problem.gpu = {{0.05, 0.02}, {0.05, 0.01}};
  problem.cpu = {{0.2, 0.8}, {0.2, 0.4}};
  problem.cpuWorkers = 4;
  problem.wireFraction = 0.02;
  return problem;
}

} // namespace

int main(int argc, char **argv) {
  int64_t largest = argc > 1 ? std::atoll(argv[1]) : 314;
  const int64_t counts[] = {10, 32, 148, 207, 314};
  std::printf("%8s %12s %10s %10s %14s %10s %10s %10s %10s %10s %8s %13s\n",
              "tensors", "select(ms)", "timelines", "us/each", "brute(log10s)",
              "dense/it", "allgat/it", "search/it", "plan(ms)", "undiv/it",
              "div(%)", "whole/shared");
  for (int64_t n : counts) {
    if (n > largest)
      break;
    Problem problem = syntheticProblem(n, unsigned(n));
    Plan plan;
    double seconds = fastestSeconds(3, [&] { plan = espressoPlan(problem); });
    double perTimeline = seconds / double(plan.evaluations);
    double brute = double(n) * std::log10(double(options(problem).size())) +
                   std::log10(perTimeline);
    double dense = simulate(problem, std::vector<Decision>(n));
    double allGather = simulate(
        problem,
        std::vector<Decision>(n, decision({Scheme::AllGather, Device::Gpu})));
    Plan search = searchPlan(problem, lowerableOptions(problem));
    Plan undivided = espressoPlan(problem, options(problem));
    double dividing =
        fastestSeconds(3, [&] { (void)divisionPlan(problem, undivided); });
    std::vector<Decision> gpu = gpuOptions(problem), all(n);
    double sum = 0.0; // keeps both loops' results alive
    double whole = fastestSeconds(1, [&] {
      for (int64_t t = 0; t < n; ++t)
        for (const Decision &option : gpu) {
          std::vector<Decision> decisions = all;
          decisions[size_t(t)] = option;
          sum += simulate(problem, decisions);
        }
    });
    double shared = fastestSeconds(1, [&] {
      for (int64_t t = 0; t < n; ++t)
        for (double end : simulateOptions(problem, all, size_t(t), gpu))
          sum -= end;
    });
    if (std::fabs(sum) > 1e-6 * double(n) * double(gpu.size()))
      std::fprintf(stderr, "shared and whole simulations differ\n");
    std::printf("%8lld %12.1f %10lld %10.1f %14.1f %10.3f %10.3f %10.3f "
                "%10.2f %10.4f %8.1f %13.2f\n",
                (long long)n, seconds * 1e3, (long long)plan.evaluations,
                perTimeline * 1e6, brute, dense / plan.iterationMs,
                allGather / plan.iterationMs,
                search.iterationMs / plan.iterationMs, plan.iterationMs,
                undivided.iterationMs / plan.iterationMs,
                100.0 * dividing / seconds, whole / shared);
  }
  return 0;
}
