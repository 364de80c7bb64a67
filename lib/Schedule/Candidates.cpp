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

std::vector<Candidate> paretoCandidates(int64_t stages, int64_t batch,
                                        int64_t bytesPerSample,
                                        int64_t memoryCapBytes) {
  std::vector<int64_t> sizes; // divisors of the batch, largest first
  for (int64_t b = batch; b >= 1; --b)
    if (batch % b == 0)
      sizes.push_back(b);
  std::vector<Candidate> candidates;
  for (int64_t k = 1; k <= batch; ++k) {
    std::optional<Candidate> fit;
    for (int64_t b : sizes) {
      int64_t microbatches = batch / b;
      int64_t peak =
          peakActivationBytes(stages, 0, k, b, microbatches, bytesPerSample);
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

} // namespace hetero::schedule
