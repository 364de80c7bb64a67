//===- FusionProfile.h - gradient-fusion profiles in JSON -------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free. The profile of hetero-sim fusion and hetero-fuse-gradients:
//
//   {"tensors": [{"name": s, "bytes": n, "backward_ms": x}, ...],
//    "compress": {"alpha_ms": a, "beta_ms_per_mb": b, "min_ms": c},
//    "comm": {"alpha_ms": a, "beta_ms_per_mb": b}}
//
// Tensors are listed in gradient-ready order; MB = 2^20 bytes. Compressing
// x bytes costs max(c, a + b x): flat for small buffers, as measured
// (thesis Fig. 5.2); "min_ms" is optional (0: affine). Without "compress"
// the gradients travel uncompressed and cost nothing to compress.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_PROFILE_FUSIONPROFILE_H
#define HETERO_PROFILE_FUSIONPROFILE_H

#include "hetero/Fusion/Fusion.h"

#include <string>

namespace hetero::profile {

/// Reads a fusion profile into `problem`. Returns "" on success, else
/// "line L: <problem>" for malformed JSON or "<json path>: <problem>".
std::string parseFusionProfile(const std::string &text,
                               fusion::Problem &problem);

} // namespace hetero::profile

#endif // HETERO_PROFILE_FUSIONPROFILE_H
