//===- Parallel.h - contiguous chunks of a range on threads -----*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Header-only and MLIR-free: the runtime's host kernels and the algorithm
// libraries split a range over threads the same way.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_SUPPORT_PARALLEL_H
#define HETERO_SUPPORT_PARALLEL_H

#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

namespace hetero {

/// Runs body(begin, end) over [0, n) in at most `threads` contiguous chunks
/// of equal size, the first on the calling thread, and returns when all
/// are done. One thread (or n <= 1) runs body(0, n) inline.
template <typename Body>
void parallelChunks(unsigned threads, size_t n, Body &&body) {
  threads = unsigned(std::clamp<size_t>(n, 1, std::max(threads, 1u)));
  if (threads == 1) {
    body(size_t(0), n);
    return;
  }
  std::vector<std::thread> workers;
  size_t chunk = (n + threads - 1) / threads;
  for (unsigned t = 1; t < threads && t * chunk < n; ++t)
    workers.emplace_back([&body, t, chunk, n] {
      body(t * chunk, std::min(n, (t + 1) * chunk));
    });
  body(size_t(0), std::min(n, chunk));
  for (std::thread &worker : workers)
    worker.join();
}

} // namespace hetero

#endif // HETERO_SUPPORT_PARALLEL_H
