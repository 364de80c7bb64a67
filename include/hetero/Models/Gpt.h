//===- Gpt.h - a GPT-like training step written in the hetero dialect -----===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free: emits the textual IR of a GPT-like model split into pipeline
// stages, so that hetero-gen, the tests and the benchmarks share one model.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_MODELS_GPT_H
#define HETERO_MODELS_GPT_H

#include <cstdint>
#include <string>
#include <vector>

namespace hetero::models {

/// Shape and distribution of a GPT-like model.
struct GptConfig {
  int64_t layers = 2;
  int64_t hidden = 32;
  int64_t heads = 2;
  /// Tokens per sequence; one micro-batch holds `batch` sequences.
  int64_t seq = 16;
  int64_t batch = 1;
  int64_t stages = 2;
  int64_t microbatches = 4;
  /// Tensor-parallel degree of the prunable linears.
  int64_t tp = 1;
  /// Data-parallel replicas (gradient all-reduce group and checkpoint world).
  int64_t dataParallel = 2;
  /// Compressor of the gradient all-reduces: none, fp16, bf16, topk, ...
  std::string compressor = "fp16";
  /// Kept fraction for sparsifying compressors.
  double ratio = 0.01;
  /// In-memory checkpoint replicas (Gemini); 0 disables the checkpoint.
  int64_t checkpointReplicas = 2;
};

/// Returns a list of problems with `config` (empty when it is valid), each a
/// sentence naming the option and the expected values.
std::vector<std::string> validate(const GptConfig &config);

/// The layers each stage holds: stage s gets layers
/// [first[s], first[s] + count[s]), with the remainder spread over the first
/// stages so that counts differ by at most one.
struct StagePartition {
  std::vector<int64_t> first;
  std::vector<int64_t> count;
};
StagePartition partitionLayers(int64_t layers, int64_t stages);

/// A weight matrix of a stage: its name (an SSA-friendly identifier such as
/// "l3_wqkv" or "head") and shape.
struct Parameter {
  std::string name;
  int64_t rows;
  int64_t cols;
};

/// The parameters of `stage`, in the order the stage functions take them:
/// per layer wqkv [H, 3H], wo [H, H], w1 [H, 4H], w2 [4H, H]; on the last
/// stage, then the head [H, H].
std::vector<Parameter> stageParameters(const GptConfig &config, int64_t stage);

/// Emits the module: a shard.grid, the hetero.pipeline, and the forward and
/// backward functions of every stage. `config` must be valid.
std::string emitGpt(const GptConfig &config);

/// How the generated training step trains.
struct TrainingOptions {
  /// k of the kFkB schedule each stage follows (1: 1F1B).
  int64_t groupSize = 1;
  /// SGD step size; gradients are averaged over the micro-batches.
  double learningRate = 0.05;
  /// Candidate k of an adaptive run: each gets @train_step_k<k>, whose
  /// stage programs report their task times to the runtime
  /// (hrt_mlir_task_mark) so that hetero-run --adaptive can re-plan.
  std::vector<int64_t> adaptiveGroupSizes;
};

/// validate() plus what the training entry points need.
std::vector<std::string> validateTraining(const GptConfig &config,
                                          const TrainingOptions &options);

/// emitGpt plus the SGD training entry points (see GptTraining.cpp):
/// @train_step, @train_step_reference, @weights_digest and
/// @weights_digest_reference.
std::string emitGptTraining(const GptConfig &config,
                            const TrainingOptions &options);

} // namespace hetero::models

#endif // HETERO_MODELS_GPT_H
