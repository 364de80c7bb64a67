//===- Checkpointing.h - hetero-run --checkpoint ----------------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// hetero-run's side of Gemini's checkpoints (docs/checkpointing.md): the
// pipeline's checkpoint clause and the placement of its chunks before the
// step is compiled, the agents that hold the in-memory checkpoints,
// recovery before the first step (CPU memory first, then the newest
// complete checkpoint on disk), and the disk tier, written every N steps in
// --save's format.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_TOOLS_HETERO_RUN_CHECKPOINTING_H
#define HETERO_TOOLS_HETERO_RUN_CHECKPOINTING_H

#include "MeasuredTimeline.h"

#include "hetero-rt/hrt.h"
#include "hetero/Dialect/Hetero.h"
#include "hetero/Support/Npy.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <string>
#include <vector>

namespace hetero {

/// --checkpoint replicas=m,every=n[,placement=group|ring|mixed]
///              [,costs=F|profile=F][,interleaving=gemini|naive|blocking]
///              [,bandwidth_mbps=B][,alpha_ms=a][,mu=u][,buffer_mb=R]
///              [,parts=p][,agents=DIR|none][,disk=DIR,disk_every=K]
struct CheckpointConfig {
  bool enabled = false;
  /// 0: the module's clause decides.
  int64_t replicas = 0;
  int64_t every = 0;
  std::string placement;
  /// Where the chunks' idle spans come from (hetero-interleave-checkpoints).
  std::string costs, profile, interleaving = "gemini";
  /// Algorithm 6.2's B (MiB/s), alpha (ms), mu, R (MiB) and p; 0: the
  /// pass's defaults.
  double bandwidthMbps = 0, alphaMs = -1, mu = 0, bufferMb = 0;
  int64_t parts = 0;
  /// The directory of the agents' sockets; "none" keeps the checkpoints in
  /// the processes.
  std::string agents;
  std::string disk;
  int64_t diskEvery = 0;
};

/// Parses --checkpoint's value; returns "" or what is wrong with it.
std::string parseCheckpointConfig(const std::string &text,
                                  CheckpointConfig &config);

/// Before hetero-lower-pipeline: gives `pipeline` the checkpoint clause of
/// `config`, or checks that the clause it has agrees. Fails after a message.
mlir::LogicalResult applyCheckpointClause(PipelineOp pipeline,
                                          const CheckpointConfig &config);

/// After hetero-lower-pipeline: places the chunks of the checkpoints that
/// have none yet. Fails after a message.
mlir::LogicalResult placeCheckpointChunks(mlir::ModuleOp module,
                                          const CheckpointConfig &config);

/// A global of a stage's checkpoint, in shard order.
struct StateGlobal {
  std::string name;
  /// The rank's: a slice of the whole when the global is sharded.
  std::vector<int64_t> shape;
  npy::Dtype dtype;
  /// The dimension tensor-parallel ranks split (hetero.shard_dim), or -1.
  int64_t shardDim = -1;
};

/// The run's checkpoints, once the step is compiled.
class Checkpointing {
public:
  /// `stageGlobals[s]`: what stage s checkpoints (its globals are made
  /// visible to the JIT); `fingerprint` identifies the program. The ranks
  /// form the pipeline's grid `layout`: (stage, replica, shard), row-major;
  /// `shardGroup` holds the shards of this rank's replica of its stage, in
  /// shard order (null without tensor parallelism).
  /// `copyState`, when the state lives on a device as well (a GPU run):
  /// copies a global's device copy to its host buffer (`toDevice` 0) or
  /// back (hrt_ckpt_options::copy_state).
  Checkpointing(const CheckpointConfig &config, hrt_comm world, int rank,
                RankLayout layout, hrt_comm shardGroup, bool dynamicSync,
                std::vector<std::vector<StateGlobal>> stageGlobals,
                uint64_t fingerprint, std::string agentProgram,
                void (*copyState)(void *host, long long bytes,
                                  int toDevice) = nullptr);

  /// The globals of every stage's hetero.checkpoint, made public so that
  /// the JIT finds them.
  static std::vector<std::vector<StateGlobal>>
  collectStateGlobals(mlir::ModuleOp module, int64_t stages);

  /// Connects to (or starts) the agents and recovers: the step to run first
  /// (0 without a checkpoint). Rank 0 says where it resumes. Collective.
  bool start(mlir::ExecutionEngine &engine, bool printer, int64_t &firstStep);
  /// After step `step`: writes the state before step + 1 to disk when due.
  /// Collective.
  bool afterStep(mlir::ExecutionEngine &engine, int64_t step);
  /// After the last step: rank 0 prints what was checkpointed, and the
  /// agents let go of the run's memory. Collective.
  bool finish(bool printer);

private:
  std::string stepDirectory(int64_t step) const;
  /// The newest step on disk marked complete, below `below`; -1 if none.
  int64_t newestOnDisk(int64_t below) const;
  /// Every rank reads its stage's state of `step` from disk (its slice of
  /// a sharded global); false when a file is missing or its checksum is
  /// wrong (after a message).
  bool loadFromDisk(mlir::ExecutionEngine &engine, int64_t step,
                    std::string &problem);
  bool writeToDisk(mlir::ExecutionEngine &engine, int64_t step);

  CheckpointConfig config;
  hrt_comm world;
  int rank;
  RankLayout layout;
  hrt_comm shardGroup;
  bool dynamicSync;
  std::vector<std::vector<StateGlobal>> stageGlobals;
  uint64_t fingerprint;
  std::string agentProgram;
  void (*copyState)(void *host, long long bytes, int toDevice);
  int64_t diskWrites = 0;
};

} // namespace hetero

#endif // HETERO_TOOLS_HETERO_RUN_CHECKPOINTING_H
