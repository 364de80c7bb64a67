//===- Candidates.h - Pareto candidates over group and batch size -*- C++
//-*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free. Ada-Grouper's candidate plans under a memory cap. On stage s a
// kFkB schedule holds min(k (S - s), M) micro-batches of activations at its
// peak, so stage 0 holds the most: min(k S, M) x b samples for micro-batch
// size b and M = batch / b micro-batches. For each k from 1 the candidate is
// the largest b dividing the batch whose peak fits the cap; generation stops
// at the first k for which no b fits, or once k covers every micro-batch
// (larger k would repeat GPipe).
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_SCHEDULE_CANDIDATES_H
#define HETERO_SCHEDULE_CANDIDATES_H

#include <cstdint>
#include <vector>

namespace hetero::schedule {

struct Candidate {
  int64_t groupSize;
  int64_t microbatchSize;
  int64_t microbatches;
  /// Activation bytes stage 0 holds at its peak.
  int64_t peakBytes;
};

/// Peak activation bytes of stage `stage` under kFkB.
int64_t peakActivationBytes(int64_t stages, int64_t stage, int64_t groupSize,
                            int64_t microbatchSize, int64_t microbatches,
                            int64_t bytesPerSample);

/// The candidates for a step of `batch` samples on `stages` stages, each
/// sample's activations taking `bytesPerSample` bytes, under a per-stage cap
/// of `memoryCapBytes`. Ordered by k; empty when even 1F1B with one sample
/// per micro-batch does not fit.
std::vector<Candidate> paretoCandidates(int64_t stages, int64_t batch,
                                        int64_t bytesPerSample,
                                        int64_t memoryCapBytes);

} // namespace hetero::schedule

#endif // HETERO_SCHEDULE_CANDIDATES_H
