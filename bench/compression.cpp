//===- compression.cpp - compression kernels against memcpy ---------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Throughput of each host compression kernel on a float32 gradient, and its
// time over a memcpy of the same buffer measured in the same run (the
// fastest of 5 runs each). GB/s counts the gradient's bytes.
//
//   usage: bench-compression [elements ...]   (default 1M and 16M)
//
//===----------------------------------------------------------------------===//

#include "Fastest.h"
#include "hetero-rt/compress.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

namespace {

double fastest(const std::function<void()> &run) {
  return hetero::bench::fastestSeconds(5, run);
}

} // namespace

int main(int argc, char **argv) {
  std::vector<size_t> sizes;
  for (int i = 1; i < argc; ++i)
    sizes.push_back(std::strtoull(argv[i], nullptr, 10));
  if (sizes.empty())
    sizes = {size_t(1) << 20, size_t(1) << 24};
  std::printf("%-10s %-10s %10s %10s %12s\n", "elements", "kernel", "ms",
              "GB/s", "vs_memcpy");
  for (size_t n : sizes) {
    std::vector<float> g(n), copy(n), out(n);
    for (size_t i = 0; i < n; ++i)
      g[i] = std::sin(0.001f * float(i)) * (1.0f + float(i % 7));
    size_t k = n / 100;
    std::vector<uint32_t> indices(2 * k + 1), words((n + 31) / 32);
    std::vector<float> values(2 * k + 1);
    std::vector<uint16_t> halves(n);
    std::vector<int8_t> steps(n);
    double memcpySeconds =
        fastest([&] { std::memcpy(copy.data(), g.data(), n * sizeof(float)); });
    struct Kernel {
      const char *name;
      std::function<void()> run;
    } kernels[] = {
        {"memcpy", [&] { std::memcpy(copy.data(), g.data(), n * 4); }},
        {"fp16", [&] { hrt_to_fp16(g.data(), n, halves.data()); }},
        {"bf16", [&] { hrt_to_bf16(g.data(), n, halves.data()); }},
        {"efsignsgd", [&] { hrt_efsignsgd(g.data(), n, words.data()); }},
        {"unpack",
         [&] { hrt_unpack_signs(words.data(), n, 0.5f, out.data()); }},
        {"qsgd", [&] { hrt_qsgd(g.data(), n, 16, 7, steps.data()); }},
        {"topk_1%",
         [&] { hrt_topk(g.data(), n, k, indices.data(), values.data()); }},
        {"dgc_1%",
         [&] {
           hrt_dgc(g.data(), n, 0.01, n / 100, 7, 2 * k, indices.data(),
                   values.data());
         }},
        {"randomk_1%",
         [&] {
           hrt_randomk(g.data(), n, k, 7, indices.data(), values.data());
         }},
        {"scatter_add",
         [&] {
           hrt_scatter_add(indices.data(), values.data(), k, out.data());
         }},
    };
    for (const Kernel &kernel : kernels) {
      double seconds = fastest(kernel.run);
      std::printf("%-10zu %-10s %10.3f %10.2f %12.2f\n", n, kernel.name,
                  seconds * 1e3, double(n) * 4 / seconds / 1e9,
                  seconds / memcpySeconds);
    }
  }
  return 0;
}
