//===- zen-hashing.cpp - Alg 3.2 on threads against partition-and-sort ----===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The push side of Zen's sparse all-reduce: from a gradient of `elements`
// float32 with a given density of non-zeros (rows chosen at random), find
// the non-zero indices and split them into `partitions` hash partitions.
// Three ways, on the same gradient in the same run:
//
//  - baseline: one pass collects the non-zeros, h0 routes them, and each
//    partition is sorted (the exact result without a hash table);
//  - Alg 3.2 (hierarchicalHash) on one thread;
//  - Alg 3.2 on every core: each thread scans a range of the gradient and
//    inserts into the shared memory by compare-and-swap.
//
// Prints the fastest of `runs` for each, the ratios, and the share of
// indices that took serial memory (the thesis: under 1% with four probe
// hashes; hetero uses three).
//
//   usage: bench-zen-hashing [elements] [partitions] [runs]
//
//===----------------------------------------------------------------------===//

#include "Fastest.h"
#include "hetero/Sparse/Zen.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

using namespace hetero;
using namespace hetero::sparse;

namespace {

std::vector<std::vector<uint32_t>>
partitionAndSort(const std::vector<float> &gradient, int64_t partitions,
                 const HashSeeds &seeds) {
  std::vector<std::vector<uint32_t>> parts(partitions);
  for (size_t i = 0; i < gradient.size(); ++i)
    if (gradient[i] != 0.0f)
      parts[partitionOf(uint32_t(i), seeds, partitions)].push_back(uint32_t(i));
  for (std::vector<uint32_t> &part : parts)
    std::sort(part.begin(), part.end());
  return parts;
}

bool sameSets(std::vector<std::vector<uint32_t>> a,
              const std::vector<std::vector<uint32_t>> &b) {
  for (size_t p = 0; p < a.size(); ++p)
    std::sort(a[p].begin(), a[p].end());
  return a == b;
}

} // namespace

int main(int argc, char **argv) {
  size_t elements = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1 << 24;
  int64_t partitions = argc > 2 ? std::atoll(argv[2]) : 8;
  int runs = argc > 3 ? std::atoi(argv[3]) : 5;
  int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  HashSeeds seeds;
  std::printf("%zu elements, %lld partitions, %d cores, fastest of %d\n",
              elements, (long long)partitions, cores, runs);
  std::printf("density  nonzeros | baseline ms  alg32 1t ms  alg32 %dt ms | "
              "baseline/1t  baseline/%dt  1t/%dt | serial %% | same\n",
              cores, cores, cores);
  for (double density : {0.001, 0.01, 0.1}) {
    std::vector<float> gradient(elements, 0.0f);
    std::mt19937_64 random(7);
    std::bernoulli_distribution nonZero(density);
    size_t count = 0;
    for (float &value : gradient)
      if (nonZero(random)) {
        value = 1.0f;
        ++count;
      }
    std::vector<std::vector<uint32_t>> expected;
    double baseline = bench::fastestSeconds(runs, [&] {
      expected = partitionAndSort(gradient, partitions, seeds);
    });
    std::vector<std::vector<uint32_t>> one, many;
    double single = bench::fastestSeconds(runs, [&] {
      one = hierarchicalHash(gradient.data(), elements, partitions, seeds, 1);
    });
    double parallel = bench::fastestSeconds(runs, [&] {
      many =
          hierarchicalHash(gradient.data(), elements, partitions, seeds, cores);
    });
    // The collision rate at the default memory size, on one thread.
    HashMemory memory(partitions, defaultProbedSlots(count, partitions),
                      defaultProbedSlots(count, partitions) / 10, seeds);
    for (size_t i = 0; i < elements; ++i)
      if (gradient[i] != 0.0f)
        memory.insert(uint32_t(i));
    bool same = sameSets(one, expected) && sameSets(many, expected);
    std::printf("%7.3f %9zu | %11.2f %12.2f %12.2f | %11.2f %13.2f %6.2f | "
                "%8.2f | %s\n",
                density, count, 1e3 * baseline, 1e3 * single, 1e3 * parallel,
                baseline / single, baseline / parallel, single / parallel,
                100.0 * double(memory.serialUsed()) / double(count),
                same ? "yes" : "NO");
    if (!same)
      return 1;
  }
  return 0;
}
