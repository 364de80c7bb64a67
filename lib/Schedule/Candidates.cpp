//===- Candidates.cpp - Pareto candidates over group and batch size -------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Schedule/Candidates.h"

#include <algorithm>
#include <optional>

namespace hetero::schedule {

int64_t peakActivationBytes(int64_t stages, int64_t stage, int64_t groupSize,
                            int64_t microbatchSize, int64_t microbatches,
                            int64_t bytesPerSample) {
  int64_t inflight = std::min(groupSize * (stages - stage), microbatches);
  return inflight * microbatchSize * bytesPerSample;
}

int64_t peakStageBytes(const std::vector<StageMemory> &stages,
                       int64_t groupSize, int64_t microbatchSize,
                       int64_t microbatches) {
  int64_t count = int64_t(stages.size()), peak = 0;
  for (int64_t s = 0; s < count; ++s)
    peak = std::max(peak, peakActivationBytes(
                              count, s, groupSize, microbatchSize, microbatches,
                              stages[size_t(s)].stashBytesPerSample) +
                              stages[size_t(s)].staticBytes);
  return peak;
}

std::vector<Candidate> paretoCandidates(const std::vector<StageMemory> &stages,
                                        int64_t batch, int64_t memoryCapBytes,
                                        int64_t sizeStep) {
  std::vector<int64_t> sizes; // multiples of the step dividing the batch,
                              // largest first
  for (int64_t b = batch; b >= 1; --b)
    if (batch % b == 0 && b % std::max<int64_t>(1, sizeStep) == 0)
      sizes.push_back(b);
  std::vector<Candidate> candidates;
  for (int64_t k = 1; k <= batch; ++k) {
    std::optional<Candidate> fit;
    for (int64_t b : sizes) {
      int64_t microbatches = batch / b;
      int64_t peak = peakStageBytes(stages, k, b, microbatches);
      if (peak <= memoryCapBytes) {
        fit = Candidate{k, b, microbatches, peak};
        break;
      }
    }
    if (!fit)
      break;
    // Past k = M the schedule is GPipe again, and b can only stay.
    if (!candidates.empty() &&
        candidates.back().microbatchSize == fit->microbatchSize &&
        candidates.back().groupSize >= fit->microbatches)
      break;
    candidates.push_back(*fit);
  }
  return candidates;
}

std::vector<Candidate> paretoCandidates(int64_t stages, int64_t batch,
                                        int64_t bytesPerSample,
                                        int64_t memoryCapBytes) {
  return paretoCandidates(
      std::vector<StageMemory>(size_t(stages), StageMemory{bytesPerSample, 0}),
      batch, memoryCapBytes);
}

} // namespace hetero::schedule
