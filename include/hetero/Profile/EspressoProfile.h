//===- EspressoProfile.h - compression-decision profiles in JSON -*- C++
//-*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free. The profile of hetero-select-compression:
//
//   {"ranks": 4, "wire_fraction": 0.02,
//    "tensors": [{"name": s, "bytes": n, "backward_ms": x}, ...],
//    "link": {"alpha_ms": a, "beta_ms_per_mb": b},
//    "gpu": {"compress": {...}, "decompress": {...}},
//    "cpu": {"compress": {...}, "decompress": {...}}}
//
// Costs are alpha-beta pairs like "link"; MB = 2^20 bytes. "ranks" and
// "wire_fraction" are optional (2 and 0.02); "node_size": m with
// "intra_link": {...} adds the hierarchical options over nodes of m ranks.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_PROFILE_ESPRESSOPROFILE_H
#define HETERO_PROFILE_ESPRESSOPROFILE_H

#include "hetero/Compression/Espresso.h"

#include <string>

namespace hetero::profile {

/// Reads an Espresso profile into `problem`; "" or the problem (JSON path
/// or line and column).
std::string parseEspressoProfile(const std::string &text,
                                 espresso::Problem &problem);

} // namespace hetero::profile

#endif // HETERO_PROFILE_ESPRESSOPROFILE_H
