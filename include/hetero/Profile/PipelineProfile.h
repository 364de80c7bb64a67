//===- PipelineProfile.h - measured pipeline costs in JSON ------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free. A pipeline profile gives the simulator measured costs:
//
//   {
//     "forward_ms":  1.5 | [per stage],
//     "backward_ms": 3.0 | [per stage],
//     "comm_ms":     0.5 | {"0->1": 0.5, "1->0": 0.4},
//     "stage_slowdown": [per stage],                              (optional)
//     "link_windows": [{"from": 0, "to": 1, "start_ms": 10,
//                       "end_ms": 30, "slowdown": 4}],            (optional)
//     "microbatch_size": 4,                                       (optional)
//     "latency_ms": 0.05                                          (optional)
//   }
//
// Times are per micro-batch (forward, backward) and per message (comm), of
// micro-batches of `microbatch_size` samples when the profile says. Of a
// message's time, `latency_ms` (default 0) does not grow with its size.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_PROFILE_PIPELINEPROFILE_H
#define HETERO_PROFILE_PIPELINEPROFILE_H

#include "hetero/Sim/PipelineSim.h"

#include <string>

namespace hetero::profile {

/// Reads a pipeline profile for `stages` stages into `costs`, and into
/// `microbatchSize` the micro-batch size its times were measured at (0
/// when the profile does not say). Returns "" on success, else "line L:
/// <problem>" for malformed JSON or "<json path>: <problem>" (such as
/// "$.forward_ms[2]: expected a number >= 0") for a wrong value.
std::string parsePipelineProfile(const std::string &text, int64_t stages,
                                 sim::Costs &costs,
                                 int64_t *microbatchSize = nullptr);

} // namespace hetero::profile

#endif // HETERO_PROFILE_PIPELINEPROFILE_H
