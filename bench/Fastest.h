//===- Fastest.h - the fastest of a few timed runs --------------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_BENCH_FASTEST_H
#define HETERO_BENCH_FASTEST_H

#include <algorithm>
#include <chrono>

namespace hetero::bench {

/// Seconds of the fastest of `runs` calls of `run`.
template <typename Run> double fastestSeconds(int runs, Run run) {
  double best = 1e30;
  for (int i = 0; i < runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    run();
    std::chrono::duration<double> took =
        std::chrono::steady_clock::now() - start;
    best = std::min(best, took.count());
  }
  return best;
}

} // namespace hetero::bench

#endif // HETERO_BENCH_FASTEST_H
