//===- Partition.cpp - checkpoint chunks in idle network spans ------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Checkpoint/Partition.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace hetero::checkpoint {

const char *interleavingName(Interleaving interleaving) {
  switch (interleaving) {
  case Interleaving::Gemini:
    return "gemini";
  case Interleaving::Naive:
    return "naive";
  case Interleaving::Blocking:
    return "blocking";
  }
  return "?";
}

std::string checkPartitionProblem(const PartitionProblem &problem) {
  if (problem.spansNs.empty())
    return "there must be at least one idle span (the one that ends at the "
           "optimizer update)";
  for (size_t i = 0; i < problem.spansNs.size(); ++i)
    if (problem.spansNs[i] < 0)
      return "idle span " + std::to_string(i) + " has a negative length";
  if (problem.checkpointBytes < 0)
    return "the checkpoint bytes must be >= 0";
  if (problem.copies < 0)
    return "the number of copies must be >= 0";
  if (problem.parts < 1)
    return "the buffer must have at least one part";
  if (problem.bufferBytes < problem.parts)
    return "the buffer of " + std::to_string(problem.bufferBytes) +
           " bytes cannot be split into " + std::to_string(problem.parts) +
           " parts of at least one byte";
  if (!(problem.bandwidthBytesPerMs > 0) ||
      !std::isfinite(problem.bandwidthBytesPerMs))
    return "the bandwidth must be a positive number of bytes per ms";
  if (problem.alphaNs < 0)
    return "the start-up time alpha must be >= 0";
  if (!(problem.mu > 0 && problem.mu <= 1))
    return "mu must be in (0, 1]";
  if (!(problem.copyBytesPerMs >= 0) || !std::isfinite(problem.copyBytesPerMs))
    return "the copy bandwidth must be >= 0 bytes per ms";
  return "";
}

namespace {

/// Nanoseconds per byte of a chunk: the network, plus the receiver's copy
/// when it cannot overlap the next transfer (one buffer part).
long double nsPerByte(const PartitionProblem &problem) {
  long double perByte = 1e6L / problem.bandwidthBytesPerMs;
  if (problem.parts == 1 && problem.copyBytesPerMs > 0)
    perByte += 1e6L / problem.copyBytesPerMs;
  return perByte;
}

/// The most bytes whose chunk fits in `spanNs`: max(0, (span - alpha) B).
int64_t bytesThatFit(const PartitionProblem &problem, int64_t spanNs) {
  if (spanNs <= problem.alphaNs)
    return 0;
  long double bytes =
      (long double)(spanNs - problem.alphaNs) / nsPerByte(problem);
  if (bytes >= (long double)std::numeric_limits<int64_t>::max())
    return std::numeric_limits<int64_t>::max();
  int64_t size = int64_t(std::floor(bytes));
  // The rounding of chunkNs must not push the chunk past the span.
  while (size > 0 && chunkNs(problem, size) > spanNs)
    --size;
  while (chunkNs(problem, size + 1) <= spanNs)
    ++size;
  return size;
}

} // namespace

int64_t chunkNs(const PartitionProblem &problem, int64_t bytes) {
  return problem.alphaNs +
         int64_t(std::llround((long double)bytes * nsPerByte(problem)));
}

Partition partition(const PartitionProblem &problem) {
  assert(checkPartitionProblem(problem).empty());
  Partition result;
  if (problem.copies == 0 || problem.checkpointBytes == 0)
    return result;
  const int64_t unbounded = std::numeric_limits<int64_t>::max();
  const int64_t cap = problem.interleaving == Interleaving::Naive
                          ? unbounded
                          : problem.bufferBytes / problem.parts;
  int64_t last = int64_t(problem.spansNs.size()) - 1;
  int64_t copy = 0, remain = problem.checkpointBytes;
  for (int64_t i = 0; i <= last; ++i) {
    // Blocking puts everything into the first span, without a bound; the
    // last span is unbounded in every mode.
    bool open = i == last || problem.interleaving == Interleaving::Blocking;
    int64_t span =
        open
            ? unbounded
            : int64_t(std::floor(problem.mu * (long double)problem.spansNs[i]));
    int64_t used = 0;
    bool placedInSpan = false;
    while (span > 0) {
      // Naive places one chunk per bounded span.
      if (problem.interleaving == Interleaving::Naive && placedInSpan && !open)
        break;
      int64_t size = (span >= chunkNs(problem, std::min(cap, remain)))
                         ? std::min(cap, remain)
                         : std::min(remain, bytesThatFit(problem, span));
      if (size == 0)
        break;
      Chunk chunk;
      chunk.span = i;
      chunk.copy = copy;
      chunk.offset = problem.checkpointBytes - remain;
      chunk.bytes = size;
      chunk.startNs = used;
      chunk.durationNs = chunkNs(problem, size);
      result.chunks.push_back(chunk);
      result.largestChunkBytes = std::max(result.largestChunkBytes, size);
      used += chunk.durationNs;
      if (span != unbounded)
        span -= chunk.durationNs;
      remain -= size;
      placedInSpan = true;
      if (remain > 0)
        continue;
      if (++copy == problem.copies) {
        if (i == last)
          result.overflowNs = std::max<int64_t>(0, used - problem.spansNs[i]);
        else if (problem.interleaving == Interleaving::Blocking)
          result.overflowNs = used;
        return result;
      }
      remain = problem.checkpointBytes;
    }
  }
  assert(false && "the last span is unbounded");
  return result;
}

} // namespace hetero::checkpoint
