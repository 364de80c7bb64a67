//===- PartitionProfile.h - measured op costs for stage cuts ----*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free. The profile of hetero-partition-stages:
//
//   {"ops": [{"index": i, "ms": x}, ...],
//    "calls": [{"callee": s, "ms": x}, ...],
//    "link": {"alpha_ms": a, "beta_ms_per_mb": b}}
//
// Every member is optional. "ops" gives the forward and backward time of
// the body's op i (numbered from 0, constants not counted), "calls" that of
// one call of function s wherever the body calls it; a listed op takes its
// own time before its callee's, and an op listed in neither keeps the
// built-in model's. "link" replaces the link model's options.
//
// Or the Chrome trace `hetero-run --profile-timeline` writes of the
// one-stage pipeline: its tasks (stage 0's first replica) give the mean
// forward and backward time of a micro-batch, to which the model's op
// times are scaled.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_PROFILE_PARTITIONPROFILE_H
#define HETERO_PROFILE_PARTITIONPROFILE_H

#include "hetero/Fusion/Fusion.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace hetero::profile {

struct PartitionProfile {
  std::map<int64_t, double> opMs;
  std::map<std::string, double> callMs;
  std::optional<fusion::LinearCost> link;
  /// From a trace: the measured forward and backward milliseconds of one
  /// micro-batch.
  std::optional<double> microbatchMs;
};

/// Reads `text` into `profile`; "" or the problem (JSON path or line and
/// column).
std::string parsePartitionProfile(const std::string &text,
                                  PartitionProfile &profile);

} // namespace hetero::profile

#endif // HETERO_PROFILE_PARTITIONPROFILE_H
