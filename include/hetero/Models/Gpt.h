//===- Gpt.h - a GPT language model in the stage ABI ------------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Builds a GPT language model as a frontend would hand it to hetero:
// parameter globals with initial values, a data function, the forward
// function of every pipeline stage, and the hetero.pipeline that binds them
// (the stage ABI, docs/execution.md). No backward, schedule, communication,
// training loop or technique: hetero-derive-backward differentiates the
// stages, and the rest are the passes' decisions. hetero-gen, the tests and
// the benchmarks share it.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_MODELS_GPT_H
#define HETERO_MODELS_GPT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace hetero::models {

/// Shape and distribution of a decoder-only transformer language model.
struct GptConfig {
  /// Character-level token ids (hetero.corpus_batch): 2..256.
  int64_t vocab = 80;
  int64_t layers = 2;
  int64_t hidden = 32;
  int64_t heads = 2;
  /// Tokens per sequence (the context length); one micro-batch holds
  /// `batch` sequences.
  int64_t seq = 16;
  int64_t batch = 1;
  /// Larger micro-batches (in sequences, multiples of `batch` above it)
  /// that the stages also get functions for: hetero.stage_variant, which
  /// candidate plans of those sizes run as one task per micro-batch.
  std::vector<int64_t> microbatchSizes;
  int64_t stages = 2;
  /// The pipeline's ranks (axis 0 of the grid): 0 for one per stage; fewer
  /// than the stages places several on a rank as `placement` says.
  int64_t pipelineRanks = 0;
  /// "loop" (stage s on rank s mod R) or "v" (rank r holds r and 2R-1-r).
  std::string placement = "loop";
  int64_t microbatches = 4;
  /// Tensor-parallel degree stated on the prunable linears.
  int64_t tp = 1;
  /// Data-parallel replicas: axis 1 of the device grid.
  int64_t dataParallel = 1;
  /// What ZERO-resizing writes into the pruned columns of the linears'
  /// gradients (their `impute` policy): "zero", "average" or "same".
  std::string imputation = "zero";
  /// The optimizer: "sgd" or "adam", with its learning rate.
  std::string optimizer = "adam";
  double learningRate = 0.003;
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

/// A parameter of a stage: its name (the global's, such as "l3_wqkv",
/// "l3_ln1_g" or "head") and shape.
struct Parameter {
  std::string name;
  std::vector<int64_t> shape;
};

/// The parameters of transformer block `layer`, in the order the block
/// functions take them: ln1_g [H], ln1_b [H], wqkv [H, 3H], wo [H, H],
/// ln2_g [H], ln2_b [H], w1 [H, 4H], w2 [4H, H].
std::vector<Parameter> blockParameters(const GptConfig &config, int64_t layer);

/// The parameters of `stage`, in the order the stage functions take them:
/// on stage 0 first the token embedding wte [V, H] and the position
/// embedding wpe [S, H]; per layer ln1_g [H], ln1_b [H], wqkv [H, 3H],
/// wo [H, H], ln2_g [H], ln2_b [H], w1 [H, 4H], w2 [4H, H]; on the last
/// stage then the final layer norm lnf_g [H], lnf_b [H] and the output
/// projection head [H, V].
std::vector<Parameter> stageParameters(const GptConfig &config, int64_t stage);

/// Builds the module with builders: the grid `@gpt_devices` (stages x
/// replicas), one `memref.global` per parameter, `@gpt_data` (micro-batches
/// of the runtime's corpus), the block function `@gpt_block_forward` that
/// every layer calls, the stage forward functions `@gpt_stage<s>_forward`
/// (and `_forward_b<n>` with its block function `_b<n>` for each of
/// `microbatchSizes`, bound by `hetero.stage_variant`),
/// `@gpt_stage<last>_logits` (the last stage's forward up to the next-token
/// logits), `@gpt_generate` (one character per text stream from the trained
/// parameters) and `hetero.pipeline @gpt`, whose stages and variants have
/// no backward. `config` must be valid; the result verifies.
mlir::OwningOpRef<mlir::ModuleOp> buildGpt(mlir::MLIRContext *context,
                                           const GptConfig &config);

} // namespace hetero::models

#endif // HETERO_MODELS_GPT_H
