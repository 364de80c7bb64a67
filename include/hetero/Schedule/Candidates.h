//===- Candidates.h - Pareto candidates over group and batch size -*- C++
//-*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free. Ada-Grouper's candidate plans under a memory cap. On stage s a
// kFkB schedule holds min(k (S - s), M) micro-batches of activations at its
// peak, so with alike stages stage 0 holds the most: min(k S, M) x b samples
// for micro-batch size b and M = batch / b micro-batches. Stages that differ
// (activation sizes, parameters, optimizer state) are each checked. For each k
// from 1 the candidate is the largest b dividing the batch whose peak fits the
// cap; generation stops at the first k for which no b fits, or once k covers
// every micro-batch (larger k would repeat GPipe).
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
  /// The most bytes any stage holds at its peak (stage 0's activations
  /// when every stage is alike and holds nothing else).
  int64_t peakBytes;
};

/// What a stage's device holds: per sample of each micro-batch in flight,
/// the activations the stage keeps until its backward (its stashed
/// input); and for good, its parameters, their gradient sums and the
/// optimizer's state.
struct StageMemory {
  int64_t stashBytesPerSample = 0;
  int64_t staticBytes = 0;
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

/// The same over stages that differ: every stage s must fit
/// min(k (S - s), M) x b x stash_s + static_s in the cap. Micro-batch
/// sizes are the multiples of `sizeStep` that divide the batch (stage
/// functions compiled for sizeStep samples run larger micro-batches as
/// several tasks). Empty when even 1F1B at sizeStep does not fit.
std::vector<Candidate> paretoCandidates(const std::vector<StageMemory> &stages,
                                        int64_t batch, int64_t memoryCapBytes,
                                        int64_t sizeStep = 1);

/// The most bytes any of `stages` holds under (k, b, M).
int64_t peakStageBytes(const std::vector<StageMemory> &stages,
                       int64_t groupSize, int64_t microbatchSize,
                       int64_t microbatches);

} // namespace hetero::schedule

#endif // HETERO_SCHEDULE_CANDIDATES_H
