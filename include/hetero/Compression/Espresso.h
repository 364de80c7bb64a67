//===- Espresso.h - compression decisions per tensor ------------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free. Espresso decides, for each gradient of a training step, whether
// to compress it, on which device (GPU or CPU) to compress and decompress
// it, and how to aggregate it (a dense all-reduce; all-gather of the
// compressed tensors, indivisible; or all-to-all, aggregate, re-compress and
// all-gather, divisible), with a timeline simulator as the oracle:
//
//  - the GPU runs the backprop of T0, T1, ... in order; a GPU compression
//    runs right after its tensor's backprop, delaying the next;
//  - the CPU runs the compressions offloaded to it in ready order, each
//    after its tensor's backprop, and its decompressions;
//  - one link runs the collectives in gradient-ready order, each when its
//    tensor is ready (compressed or produced) and the link is free:
//      dense all-reduce (ring)   2 (P-1) (a + b S / P)
//      all-gather                (P-1) (a + b W)
//      all-to-all + all-gather   2 (P-1) (a + b W / P), plus a
//                                re-compression of S / P in between;
//    S the tensor's bytes, W its compressed bytes;
//  - decompression runs after the collective on the tensor's device: P
//    payloads for all-gather, 2 for the divisible scheme (the aggregate of
//    P chunks of S / P and the final all-gather). GPU decompressions queue
//    on their own stream;
//  - hierarchical (nodes of m ranks on a faster intra-node link): a dense
//    reduce inside each node, (m-1)(a' + b' S / m), the compressed
//    collective among the P / m nodes, and a broadcast inside each node,
//    (m-1)(a' + b' S / m).
// The iteration ends when the last stream does.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_COMPRESSION_ESPRESSO_H
#define HETERO_COMPRESSION_ESPRESSO_H

#include "hetero/Fusion/Fusion.h"

#include <cstdint>
#include <string>
#include <vector>

namespace hetero::espresso {

enum class Device { Gpu, Cpu };
enum class Scheme { Dense, AllGather, AllToAll };

struct Decision {
  Scheme scheme = Scheme::Dense; // Dense: not compressed
  Device device = Device::Gpu;
  bool hierarchical = false;
  bool operator==(const Decision &other) const {
    return scheme == other.scheme &&
           (scheme == Scheme::Dense ||
            (device == other.device && hierarchical == other.hierarchical));
  }
};

struct DeviceCosts {
  fusion::LinearCost compress;   // per tensor, on its uncompressed bytes
  fusion::LinearCost decompress; // per payload, on its uncompressed bytes
};

struct Problem {
  std::vector<fusion::Tensor> tensors; // gradient-ready order
  int64_t ranks = 2;
  /// Compressed bytes per uncompressed byte (top-k 1%: indices and values,
  /// 0.02).
  double wireFraction = 0.02;
  fusion::LinearCost link;
  DeviceCosts gpu, cpu;
  /// Ranks per node and the intra-node link: hierarchical options exist
  /// when 1 < nodeSize < ranks and nodeSize divides ranks.
  int64_t nodeSize = 1;
  fusion::LinearCost intraLink;
};

/// The options of one tensor: dense, and each compressed scheme on each
/// device, flat or (where the problem has nodes) hierarchical.
std::vector<Decision> options(const Problem &problem);

/// The timeline's end for `decisions` (one per tensor).
double simulate(const Problem &problem, const std::vector<Decision> &decisions);

struct Plan {
  std::vector<Decision> decisions;
  double iterationMs = 0.0;
};

/// Alg 4.1: tensors by decreasing size; a tensor whose collective already
/// ends before the backprop does (hidden in the bubble) is left alone;
/// otherwise it takes the option that shortens the timeline most. Passes
/// repeat until one changes nothing (later passes revisit every tensor);
/// the same passes also start from each option applied to all tensors, and
/// the best end wins.
Plan greedyPlan(const Problem &problem);

/// Alg 4.2: among the GPU-compressed tensors of `plan`, groups of equal
/// size, and for each group how many of its last-ready tensors move their
/// compression to the CPU: every combination of counts is simulated.
Plan offloadPlan(const Problem &problem, const Plan &plan);

/// Alg 4.1 then 4.2.
Plan espressoPlan(const Problem &problem);

/// Every combination of the options per tensor; small N only.
Plan exhaustivePlan(const Problem &problem);

/// "dense", "gpu allgather", "cpu alltoall hierarchical", ...
std::string describe(const Decision &decision);

} // namespace hetero::espresso

#endif // HETERO_COMPRESSION_ESPRESSO_H
