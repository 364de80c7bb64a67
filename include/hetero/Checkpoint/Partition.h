//===- Partition.h - checkpoint chunks in idle network spans ----*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free. Gemini's checkpoint partition (Algorithm 6.2, with the
// corrections of the implementation spec: a placed chunk costs f(size), a
// span too short for the start-up time is left, and m - 1 copies are
// partitioned, not m). The checkpoint's m - 1 remote copies are cut into
// chunks of at most R/p bytes (one part of the staging buffer) and placed
// into the iteration's network idle spans, each filled to mu times its
// length with f(s) = alpha + s/B per chunk; the last span, which ends at the
// optimizer update, is unbounded, and what lands there beyond its real
// length delays the update. Bytes and nanoseconds are integers, so a plan
// does not drift with floating-point rounding.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_CHECKPOINT_PARTITION_H
#define HETERO_CHECKPOINT_PARTITION_H

#include <cstdint>
#include <string>
#include <vector>

namespace hetero::checkpoint {

enum class Interleaving {
  /// Algorithm 6.2: as many chunks of at most R/p bytes as fit in a span.
  Gemini,
  /// One chunk per span, as large as the span allows (no buffer cap).
  Naive,
  /// Everything at the start of the iteration, in chunks of R/p bytes.
  Blocking,
};

const char *interleavingName(Interleaving interleaving);

struct PartitionProblem {
  /// The idle spans of one iteration in timeline order, in nanoseconds; the
  /// last one ends at the optimizer update.
  std::vector<int64_t> spansNs;
  /// C: the bytes of one checkpoint shard.
  int64_t checkpointBytes = 0;
  /// m - 1: the copies sent to peers.
  int64_t copies = 1;
  /// R and p: the staging buffer and the parts it is split into.
  int64_t bufferBytes = 128ll << 20;
  int64_t parts = 4;
  /// B, bytes per millisecond.
  double bandwidthBytesPerMs = 0;
  /// alpha, the start-up time of a transfer.
  int64_t alphaNs = 0;
  /// mu in (0, 1]: the share of a profiled span that is used.
  double mu = 0.9;
  /// With one part the receiver cannot copy a chunk out while the next one
  /// arrives, so a chunk also costs s / B_copy (bytes per millisecond; 0
  /// for a copy that costs nothing).
  double copyBytesPerMs = 0;
  Interleaving interleaving = Interleaving::Gemini;
};

struct Chunk {
  /// Index into spansNs.
  int64_t span = 0;
  /// Which of the m - 1 copies.
  int64_t copy = 0;
  /// The byte range [offset, offset + bytes) of the shard.
  int64_t offset = 0;
  int64_t bytes = 0;
  /// When the chunk's transfer starts and how long it takes, from the start
  /// of its span.
  int64_t startNs = 0;
  int64_t durationNs = 0;
};

struct Partition {
  std::vector<Chunk> chunks;
  /// How far the transfers in the last span run past its real length: the
  /// delay of the optimizer update.
  int64_t overflowNs = 0;
  /// The largest chunk: the staging buffer a peer needs.
  int64_t largestChunkBytes = 0;
};

/// "" when the problem can be partitioned, else what is wrong.
std::string checkPartitionProblem(const PartitionProblem &problem);

/// f(s): the time of one chunk of `bytes`.
int64_t chunkNs(const PartitionProblem &problem, int64_t bytes);

/// The chunks of every copy in send order; the problem must pass
/// checkPartitionProblem.
Partition partition(const PartitionProblem &problem);

} // namespace hetero::checkpoint

#endif // HETERO_CHECKPOINT_PARTITION_H
