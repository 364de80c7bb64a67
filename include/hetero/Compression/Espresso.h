//===- Espresso.h - compression decisions per tensor ------------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free. Espresso decides, for each gradient of a training step, how it
// travels: compressed or not, on which device each compression and each
// decompression runs, flat or hierarchical, indivisible or divisible, and
// which collective routine each phase uses (the thesis's Table 4.3).
//
// An option is a path through that decision tree: one to four
// communication steps, each with a payload that is dense (U) or compressed
// (C), and between them the transforms that change the state:
//
//   flat             [AllReduce | AllGather]
//                    [ReduceScatter | AllToAll] -> AllGather
//                    [Reduce | Gather] -> Broadcast
//   hierarchical     an intra-node divisible step 1, an inter-node phase
//                    (indivisible or divisible), an intra-node step 2
//
// A dense step 1 reduces (ReduceScatter, Reduce); a compressed one
// exchanges payloads (AllToAll, Gather). Step 2 spreads the result
// (AllGather, Broadcast), dense or compressed. Between two compressed steps
// the payloads either pass through, or are decompressed, summed and
// recompressed; entering C compresses, leaving C decompresses, each on the
// GPU or the CPU. With nodes that count is 4,341 options a tensor, the
// thesis's |C| (nine of them dense); without nodes, 63.
//
// A divisible scheme splits the tensor into n parts, 1 <= n <= g: the scatter
// family is n = g, the root family n = 1, and partial division (a step's
// `parts`) anything between. Its n roots each reduce or collect one part
// and spread it again; the thesis counts n = g and n = 1 in |C| and leaves
// the n between as a parameter of the scheme, which `divisions` varies.
//
// The timeline oracle is a list scheduler over five resources: the GPU
// (backprop in order, and the GPU's compression kernels), the CPU (its
// workers), the intra-node link and the inter-node link. Each serves the
// tasks that are ready in the order they became ready (ties: the earlier
// tensor). Collective costs follow NCCL's bus-bandwidth model with group
// size g, B the bytes a rank holds and n the scheme's parts (g for an
// indivisible AllGather):
//
//   AllReduce                2(g-1)a + 2(g-1)/g bB
//   ReduceScatter, Reduce    (g-1)a + min(1, (g-1)/n) bB
//   AllToAll, Gather         (g-1)a + (g-1)/n bB
//   AllGather, Broadcast     (g-1)a + min(n, g-1) bB
//
// A dense split of n < g parts is n reduce chains pipelined through the
// ring: some link carries all of them, B in all, as one Reduce does.
// Compressed payloads cannot be summed on the way: each root receives g-1
// of them. The join is n pipelined broadcasts of what each root holds.
// These are the usual formulas at n = g and n = 1.
//
// In an inter-node phase after an intra-node ReduceScatter or AllToAll,
// the node's ranks run it at once and share the node's link: their bytes
// add up.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_COMPRESSION_ESPRESSO_H
#define HETERO_COMPRESSION_ESPRESSO_H

#include "hetero/Fusion/Fusion.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hetero::espresso {

enum class Device { Gpu, Cpu };
enum class Routine {
  AllReduce,
  ReduceScatter,
  AllGather,
  Reduce,
  Broadcast,
  AllToAll,
  Gather
};
/// Flat steps span every rank; the others run inside a node or among the
/// nodes.
enum class Scope { Flat, Intra, Inter };

/// What happens to the payload before a step, or after the last: a
/// decompression (and sum) and a compression, each on its own device.
struct Transform {
  bool decompress = false;
  Device decompressOn = Device::Gpu;
  bool compress = false;
  Device compressOn = Device::Gpu;
  bool operator==(const Transform &other) const;
};

struct Step {
  Routine routine = Routine::AllReduce;
  Scope scope = Scope::Flat;
  bool compressed = false;
  Transform before;
  /// On the first step of a divisible scheme of the scatter family
  /// (ReduceScatter, AllToAll): its parts n, 1 < n < g (partial division).
  /// 0: the routine's own, g for the scatter family and 1 for the root
  /// family. The scheme's second step takes its split's n.
  int64_t parts = 0;
  bool operator==(const Step &other) const {
    return routine == other.routine && scope == other.scope &&
           compressed == other.compressed && before == other.before &&
           parts == other.parts;
  }
};

struct Decision {
  std::vector<Step> steps = {Step{}};
  Transform after;

  bool compressed() const;
  /// Every transform of the decision on `device`.
  bool onlyOn(Device device) const;
  /// The same path with every transform moved to `device`.
  Decision movedTo(Device device) const;
  bool operator==(const Decision &other) const {
    return steps == other.steps && after == other.after;
  }
  bool operator!=(const Decision &other) const { return !(*this == other); }
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
  /// The link between ranks; between nodes when there are nodes.
  fusion::LinearCost link;
  DeviceCosts gpu, cpu;
  /// CPU workers that compress at once.
  int64_t cpuWorkers = 1;
  /// Ranks per node and the intra-node link: hierarchical options exist
  /// when 1 < nodeSize < ranks and nodeSize divides ranks.
  int64_t nodeSize = 1;
  fusion::LinearCost intraLink;
};

bool hasNodes(const Problem &problem);

/// Every option of one tensor, the dense all-reduce first.
std::vector<Decision> options(const Problem &problem);
/// The options whose every transform runs on the GPU (Alg 4.1's C_gpu,
/// with the dense paths).
std::vector<Decision> gpuOptions(const Problem &problem);

/// The ranks a step of `scope` spans.
int64_t groupSize(const Problem &problem, Scope scope);

/// `decision` with each of its divisible schemes over every n of 1..g parts
/// (n = 1 the root family, n = g the scatter family, partial division
/// between), `decision` itself among them; just `decision` when it has no
/// divisible scheme.
std::vector<Decision> divisions(const Problem &problem,
                                const Decision &decision);

/// The runtime's compressed all-reduce runs these: dense; a flat
/// all-gather, or all-to-all, re-compression and all-gather, on one
/// device; and, with nodes, the same among the nodes between a dense
/// intra-node reduce and broadcast.
enum class Scheme { Dense, AllGather, AllToAll };
struct Lowered {
  Scheme scheme = Scheme::Dense;
  Device device = Device::Gpu;
  bool hierarchical = false;
};
Decision decision(const Lowered &lowered);
std::optional<Lowered> lowered(const Decision &decision);
std::vector<Decision> lowerableOptions(const Problem &problem);

struct Timeline {
  double endMs = 0.0;
  double backpropEndMs = 0.0;
  /// Per tensor, when its last communication step ends.
  std::vector<double> communicationEndMs;
  /// The start of the last gap between the communications of two tensors
  /// (0 if none): the union of the tensors' spans from their first
  /// communication's start to their last one's end has a hole there.
  double lastBubbleMs = 0.0;
};

Timeline timeline(const Problem &problem,
                  const std::vector<Decision> &decisions);
/// The timeline's end for `decisions` (one per tensor).
double simulate(const Problem &problem, const std::vector<Decision> &decisions);
/// simulate() with tensor t's decision replaced by each of `options` in
/// turn, the others as in `decisions`: the same values, with the events
/// before t's backward ends simulated once for all the options.
std::vector<double> simulateOptions(const Problem &problem,
                                    const std::vector<Decision> &decisions,
                                    size_t t,
                                    const std::vector<Decision> &options);

struct Plan {
  std::vector<Decision> decisions;
  double iterationMs = 0.0;
  /// Timelines the search evaluated.
  int64_t evaluations = 0;
};

/// Alg 4.1 as the thesis gives it: from all dense, tensors in groups of
/// decreasing size, the latest-ready first within a group; before and
/// after every decision, the dense tensors communicated before a bubble
/// leave the candidates; each remaining tensor once takes the best of its
/// option and the GPU options.
Plan gpuGreedyPlan(const Problem &problem);

/// Alg 4.2: the compressed tensors of `plan` in groups of equal size and
/// equal option; for every vector of counts, the earliest-ready that many
/// of each group move their transforms to the CPU (Lemma 4.1). The best
/// vector wins. Beyond 2^16 vectors (Theorem 4.1's count is exponential
/// in the groups), one group's count at a time takes its best given the
/// others, until none changes.
Plan offloadPlan(const Problem &problem, const Plan &plan);

/// Partial division: each tensor (largest first) takes the best of the
/// `divisions` of its decision given the others, until none changes.
Plan divisionPlan(const Problem &problem, const Plan &plan);

/// Alg 4.1 then Alg 4.2: the thesis's Espresso, over `space` (its GPU
/// options for Alg 4.1; Alg 4.2 moves a group only to a CPU option of it).
Plan espressoPlan(const Problem &problem, const std::vector<Decision> &space);
/// Over the whole tree, then `divisionPlan`: the thesis fixes no rule for
/// a divisible scheme's n, so each tensor takes its best.
Plan espressoPlan(const Problem &problem);

/// The project's search over `space`: from the thesis's plan (restricted
/// to `space`), all dense and, for small spaces, each option on every
/// tensor, passes that give each tensor (largest first) its best option
/// until a pass changes nothing or `maxEvaluations` timelines ran.
Plan searchPlan(const Problem &problem, const std::vector<Decision> &space,
                int64_t maxEvaluations = 2'000'000);

/// The all-compressed baseline: the one compressed option of `space` that,
/// given to every tensor, ends soonest (its plan's decisions all equal).
/// All dense when `space` has no compressed option.
Plan allCompressedPlan(const Problem &problem,
                       const std::vector<Decision> &space);

/// Every combination of `space` per tensor; small N only.
Plan exhaustivePlan(const Problem &problem, const std::vector<Decision> &space);

/// "dense", "gpu allgather", "cpu alltoall hierarchical" for the lowered
/// options; the steps otherwise, e.g.
/// "intra reduce_scatter | gpu compress | inter allgather* | ..."; a
/// partial division names its parts, "flat alltoall*/3 | ... |
/// flat allgather*/3".
std::string describe(const Decision &decision);

} // namespace hetero::espresso

#endif // HETERO_COMPRESSION_ESPRESSO_H
