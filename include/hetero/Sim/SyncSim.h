//===- SyncSim.h - data-parallel sync of pipeline replicas ------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free. A discrete-event model of an M-stage x N-pipeline mesh whose
// stages synchronise their replicas after every local optimizer step
// (SDPipe's Algorithm 1). Each worker runs asynchronous 1F1B in order:
// stage j (0-based) runs min(M - j, K) warm-up forwards, then B(b), a sync
// after every `syncEvery`-th backward and after the last, and F(b + M - j).
// F(j, i, m) needs F(j - 1, i, m) plus a point-to-point latency; B(j, i, m)
// needs B(j + 1, i, m) likewise. Stragglers sleep h before a forward or a
// backward with probability p, from one seeded generator per worker.
//
// Syncs: All-Reduce is a per-stage barrier over all N replicas; AD-PSGD pairs
// replicas by a random perfect matching per round, drawn from a seed every
// replica shares, and waits for the partner; SDPipe asks the sync-group
// scheduler (hetero/SyncGroups/Scheduler.h) after a scheduler round trip.
// Averaging g replicas of S bytes costs the ring all-reduce's
// 2 (g - 1) / g x S / bandwidth + 2 (g - 1) x latency; a singleton costs 0.
//
// A run in which every remaining worker waits on another is reported as
// stalled, with what each waits for.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_SIM_SYNCSIM_H
#define HETERO_SIM_SYNCSIM_H

#include "hetero/SyncGroups/Scheduler.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hetero::sim {

enum class SyncPolicy { SDPipe, AllReduce, AdPsgd };

struct SyncConfig {
  int64_t stages = 1;
  int64_t pipelines = 1;
  /// K: micro-batches per pipeline.
  int64_t microbatches = 100;
  double forwardMs = 10.0;
  double backwardMs = 20.0;
  SyncPolicy policy = SyncPolicy::SDPipe;
  /// h and p of the straggler injection.
  double sleepMs = 0.0;
  double sleepProbability = 0.1;
  uint64_t seed = 1;
  /// A sync after every this many backwards (and after the last).
  int64_t syncEvery = 1;
  /// The compiled step (hetero-lower-pipeline): steps of this many
  /// micro-batches, each a 1F1B of its own with a sync after every
  /// `syncEvery`-th backward of the step and after its last, ending in a
  /// barrier over the pipeline's stages (the step's loss reduction, one
  /// p2pMs). 0: one stream of all micro-batches (PipeDream's order).
  int64_t stepMicrobatches = 0;

  /// The network: activations and gradients between stages, and the
  /// averaging all-reduce of a stage's parameters.
  double p2pMs = 0.5;
  double stageBytes = 100e6;
  /// Per stage, where given: overrides stageBytes.
  std::vector<double> stageBytesPerStage;
  double bandwidthBytesPerMs = 1e6;
  double latencyMs = 0.1;
  /// SDPipe's READY/GROUP round trip to the scheduler.
  double rpcMs = 0.2;

  /// SDPipe's scheduler; its stages and replicas come from the mesh.
  sync::Options scheduler;
};

struct SyncResult {
  double makespanMs = 0.0;
  /// Micro-batches whose backward completed on stage 0, per second.
  double throughput = 0.0;
  double meanGroupSize = 0.0;
  bool stalled = false;
  /// Per stalled worker, what it waits for.
  std::vector<std::string> blocked;
  /// Every sync group, in dispatch order (All-Reduce and AD-PSGD groups as
  /// well, in Normal mode).
  std::vector<sync::Group> table;
  sync::Counters counters;
};

SyncResult simulateSync(const SyncConfig &config);

/// The averaging cost of a group of `size` replicas of `stage`.
double averagingMs(const SyncConfig &config, int64_t stage, int64_t size);

/// The mesh's iteration time without stragglers under All-Reduce: the
/// makespan over K, the reference that hete-A and hete-B scale h by.
double homogeneousIterationMs(const SyncConfig &config);

/// SDPipe's settings relative to the homogeneous iteration time t: the
/// straggler sleep h = `sleepIterations` x t (hete-A: 0.75, hete-B: 2.3) and
/// the scheduler's T_max = t / N.
void calibrate(SyncConfig &config, double sleepIterations);

} // namespace hetero::sim

#endif // HETERO_SIM_SYNCSIM_H
