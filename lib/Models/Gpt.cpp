//===- Gpt.cpp - a GPT-like training step written in the hetero dialect ---===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Models/Gpt.h"

#include "hetero/Support/WireSize.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace hetero::models {
namespace {

/// Formats "tensor<AxBxf32>".
std::string tensorType(std::initializer_list<int64_t> shape) {
  std::ostringstream os;
  os << "tensor<";
  for (int64_t dim : shape)
    os << dim << "x";
  os << "f32>";
  return os.str();
}

/// A floating-point literal that MLIR parses as a float: "5.120000000e+02".
std::string floatLiteral(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.9e", value);
  return buffer;
}

/// One parameter of a stage: its SSA name and shape.
struct Param {
  std::string name;
  int64_t rows;
  int64_t cols;
  std::string type() const { return tensorType({rows, cols}); }
};

/// Emits the IR of one stage. SSA names are unique through `next()`.
class StageEmitter {
public:
  StageEmitter(const GptConfig &config, int64_t stage, int64_t firstLayer,
               int64_t numLayers)
      : config(config), stage(stage), firstLayer(firstLayer),
        numLayers(numLayers), tokens(config.batch * config.seq) {
    for (int64_t l = firstLayer; l < firstLayer + numLayers; ++l) {
      std::string prefix = "%l" + std::to_string(l) + "_";
      params.push_back({prefix + "wqkv", config.hidden, 3 * config.hidden});
      params.push_back({prefix + "wo", config.hidden, config.hidden});
      params.push_back({prefix + "w1", config.hidden, 4 * config.hidden});
      params.push_back({prefix + "w2", 4 * config.hidden, config.hidden});
    }
    if (isLast())
      params.push_back({"%head", config.hidden, config.hidden});
  }

  void emitForward(std::ostream &os);
  void emitBackward(std::ostream &os);

private:
  bool isFirst() const { return stage == 0; }
  bool isLast() const { return stage == config.stages - 1; }
  std::string next() { return "%v" + std::to_string(counter++); }
  std::string activationType() const {
    return tensorType({tokens, config.hidden});
  }
  std::string symbol(const char *kind) const {
    return "@gpt_stage" + std::to_string(stage) + "_" + kind;
  }

  /// `init` = a zero-filled tensor of `type`.
  std::string zeros(std::ostream &os, const std::string &type);
  std::string matmul(std::ostream &os, const std::string &lhs,
                     const std::string &lhsType, const std::string &rhs,
                     const std::string &rhsType, int64_t m, int64_t n);
  std::string prunable(std::ostream &os, const char *mode,
                       const std::string &x, int64_t rows, int64_t k,
                       const Param &weight, const std::string &key);
  std::string add(std::ostream &os, const std::string &a,
                  const std::string &b, const std::string &type);
  std::string attention(std::ostream &os, const std::string &qkv);
  std::string layer(std::ostream &os, int64_t index, const std::string &x);
  std::string loss(std::ostream &os, const std::string &x);

  const GptConfig &config;
  int64_t stage, firstLayer, numLayers, tokens;
  std::vector<Param> params;
  int64_t counter = 0;
};

std::string StageEmitter::zeros(std::ostream &os, const std::string &type) {
  std::string empty = next(), filled = next();
  os << "    " << empty << " = tensor.empty() : " << type << "\n";
  os << "    " << filled << " = linalg.fill ins(%zero : f32) outs(" << empty
     << " : " << type << ") -> " << type << "\n";
  return filled;
}

std::string StageEmitter::matmul(std::ostream &os, const std::string &lhs,
                                 const std::string &lhsType,
                                 const std::string &rhs,
                                 const std::string &rhsType, int64_t m,
                                 int64_t n) {
  std::string type = tensorType({m, n});
  std::string init = zeros(os, type), result = next();
  os << "    " << result << " = linalg.matmul ins(" << lhs << ", " << rhs
     << " : " << lhsType << ", " << rhsType << ") outs(" << init << " : "
     << type << ") -> " << type << "\n";
  return result;
}

std::string StageEmitter::prunable(std::ostream &os, const char *mode,
                                   const std::string &x, int64_t rows,
                                   int64_t k, const Param &weight,
                                   const std::string &key) {
  std::string result = next();
  os << "    " << result << " = hetero.prunable_matmul " << mode << " " << x
     << ", " << weight.name << " layer \"" << key << "\" tp = " << config.tp
     << " : " << tensorType({rows, k}) << ", " << weight.type() << " -> "
     << tensorType({rows, weight.cols}) << "\n";
  return result;
}

std::string StageEmitter::add(std::ostream &os, const std::string &a,
                              const std::string &b, const std::string &type) {
  std::string empty = next(), result = next();
  os << "    " << empty << " = tensor.empty() : " << type << "\n";
  os << "    " << result << " = linalg.add ins(" << a << ", " << b << " : "
     << type << ", " << type << ") outs(" << empty << " : " << type
     << ") -> " << type << "\n";
  return result;
}

/// Causal multi-head self-attention over one micro-batch of `batch`
/// sequences: per sequence and head, softmax(q k^T / sqrt(d) + mask) v.
std::string StageEmitter::attention(std::ostream &os, const std::string &qkv) {
  int64_t hidden = config.hidden, heads = config.heads;
  int64_t headDim = hidden / heads, seq = config.seq;
  std::string qkvType = tensorType({tokens, 3 * hidden});
  std::string sliceType = tensorType({seq, headDim});
  std::string scoresType = tensorType({seq, seq});
  std::string context = zeros(os, activationType());
  for (int64_t b = 0; b < config.batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      int64_t row = b * seq;
      auto slice = [&](int64_t column) {
        std::string value = next();
        os << "    " << value << " = tensor.extract_slice " << qkv << "["
           << row << ", " << column << "] [" << seq << ", " << headDim
           << "] [1, 1] : " << qkvType << " to " << sliceType << "\n";
        return value;
      };
      std::string q = slice(h * headDim);
      std::string k = slice(hidden + h * headDim);
      std::string v = slice(2 * hidden + h * headDim);
      std::string transposedType = tensorType({headDim, seq});
      std::string transposedInit = next(), transposed = next();
      os << "    " << transposedInit << " = tensor.empty() : "
         << transposedType << "\n";
      os << "    " << transposed << " = linalg.transpose ins(" << k << " : "
         << sliceType << ") outs(" << transposedInit << " : "
         << transposedType << ") permutation = [1, 0]\n";
      std::string scores =
          matmul(os, q, sliceType, transposed, transposedType, seq, seq);
      // Scale by 1/sqrt(d) and mask future positions.
      std::string maskedInit = next(), masked = next();
      os << "    " << maskedInit << " = tensor.empty() : " << scoresType
         << "\n";
      os << "    " << masked << " = linalg.generic {indexing_maps = "
         << "[affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], "
         << "iterator_types = [\"parallel\", \"parallel\"]} ins(" << scores
         << " : " << scoresType << ") outs(" << maskedInit << " : "
         << scoresType << ") {\n"
         << "    ^bb0(%s: f32, %out: f32):\n"
         << "      %i = linalg.index 0 : index\n"
         << "      %j = linalg.index 1 : index\n"
         << "      %future = arith.cmpi ult, %i, %j : index\n"
         << "      %scaled = arith.mulf %s, %attn_scale : f32\n"
         << "      %m = arith.select %future, %neg_inf, %scaled : f32\n"
         << "      linalg.yield %m : f32\n"
         << "    } -> " << scoresType << "\n";
      std::string probsInit = next(), probs = next();
      os << "    " << probsInit << " = tensor.empty() : " << scoresType
         << "\n";
      os << "    " << probs << " = linalg.softmax dimension(1) ins(" << masked
         << " : " << scoresType << ") outs(" << probsInit << " : "
         << scoresType << ") -> " << scoresType << "\n";
      std::string headOut = matmul(os, probs, scoresType, v, sliceType, seq,
                                   headDim);
      std::string updated = next();
      os << "    " << updated << " = tensor.insert_slice " << headOut
         << " into " << context << "[" << row << ", " << h * headDim << "] ["
         << seq << ", " << headDim << "] [1, 1] : " << sliceType << " into "
         << activationType() << "\n";
      context = updated;
    }
  }
  return context;
}

/// One pre-norm-free transformer block: x + attn(x), then h + mlp(h).
std::string StageEmitter::layer(std::ostream &os, int64_t index,
                                const std::string &x) {
  int64_t hidden = config.hidden;
  const Param *weights = &params[(index - firstLayer) * 4];
  std::string key = "l" + std::to_string(index) + ".";
  os << "    // layer " << index << "\n";
  std::string qkv =
      prunable(os, "col", x, tokens, hidden, weights[0], key + "qkv");
  std::string context = attention(os, qkv);
  std::string projected =
      prunable(os, "row", context, tokens, hidden, weights[1], key + "attn_out");
  std::string h = add(os, x, projected, activationType());
  std::string up =
      prunable(os, "col", h, tokens, hidden, weights[2], key + "mlp_up");
  std::string upType = tensorType({tokens, 4 * hidden});
  std::string reluInit = next(), relu = next();
  os << "    " << reluInit << " = tensor.empty() : " << upType << "\n";
  os << "    " << relu << " = linalg.generic {indexing_maps = "
     << "[affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], "
     << "iterator_types = [\"parallel\", \"parallel\"]} ins(" << up << " : "
     << upType << ") outs(" << reluInit << " : " << upType << ") {\n"
     << "    ^bb0(%a: f32, %out: f32):\n"
     << "      %r = arith.maximumf %a, %zero : f32\n"
     << "      linalg.yield %r : f32\n"
     << "    } -> " << upType << "\n";
  std::string down =
      prunable(os, "row", relu, tokens, 4 * hidden, weights[3], key + "mlp_down");
  return add(os, h, down, activationType());
}

/// Mean squared error of the head's output against the target.
std::string StageEmitter::loss(std::ostream &os, const std::string &x) {
  std::string type = activationType();
  std::string y =
      matmul(os, x, type, "%head", params.back().type(), tokens, config.hidden);
  std::string squaredInit = next(), squared = next();
  os << "    " << squaredInit << " = tensor.empty() : " << type << "\n";
  os << "    " << squared << " = linalg.generic {indexing_maps = "
     << "[affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, "
     << "affine_map<(i, j) -> (i, j)>], iterator_types = [\"parallel\", "
     << "\"parallel\"]} ins(" << y << ", %target : " << type << ", " << type
     << ") outs(" << squaredInit << " : " << type << ") {\n"
     << "    ^bb0(%p: f32, %t: f32, %out: f32):\n"
     << "      %d = arith.subf %p, %t : f32\n"
     << "      %d2 = arith.mulf %d, %d : f32\n"
     << "      linalg.yield %d2 : f32\n"
     << "    } -> " << type << "\n";
  std::string sumInit = next(), sumZero = next(), sum = next();
  os << "    " << sumInit << " = tensor.empty() : tensor<f32>\n";
  os << "    " << sumZero << " = linalg.fill ins(%zero : f32) outs(" << sumInit
     << " : tensor<f32>) -> tensor<f32>\n";
  os << "    " << sum << " = linalg.reduce ins(" << squared << " : " << type
     << ") outs(" << sumZero << " : tensor<f32>) dimensions = [0, 1]\n"
     << "      (%in: f32, %acc: f32) {\n"
     << "        %s = arith.addf %in, %acc : f32\n"
     << "        linalg.yield %s : f32\n"
     << "      }\n";
  std::string total = next(), mean = next(), result = next();
  os << "    " << total << " = tensor.extract " << sum << "[] : tensor<f32>\n";
  os << "    " << mean << " = arith.divf " << total << ", %count : f32\n";
  os << "    " << result << " = tensor.from_elements " << mean
     << " : tensor<f32>\n";
  return result;
}

void StageEmitter::emitForward(std::ostream &os) {
  os << "  // Stage " << stage << " forward: layers " << firstLayer << ".."
     << firstLayer + numLayers - 1 << (isLast() ? ", head and loss" : "")
     << ".\n";
  os << "  func.func " << symbol("forward") << "(%x: " << activationType();
  for (const Param &param : params)
    os << ", " << param.name << ": " << param.type();
  if (isLast())
    os << ", %target: " << activationType();
  os << ") -> " << (isLast() ? "tensor<f32>" : activationType()) << " {\n";
  double scale = 1.0 / std::sqrt(double(config.hidden / config.heads));
  os << "    %zero = arith.constant 0.0 : f32\n";
  os << "    %neg_inf = arith.constant 0xFF800000 : f32\n";
  os << "    %attn_scale = arith.constant " << floatLiteral(scale)
     << " : f32\n";
  if (isLast())
    os << "    %count = arith.constant "
       << floatLiteral(double(tokens * config.hidden))
       << " : f32\n";
  std::string x = "%x";
  for (int64_t l = firstLayer; l < firstLayer + numLayers; ++l)
    x = layer(os, l, x);
  if (isLast()) {
    std::string result = loss(os, x);
    os << "    return " << result << " : tensor<f32>\n";
  } else {
    os << "    return " << x << " : " << activationType() << "\n";
  }
  os << "  }\n\n";
}

/// The backward function receives the gradient of the stage's input
/// activation and of its parameters, synchronises the parameter gradients over
/// the data-parallel replicas (one compressed bucket per layer), takes an
/// in-memory checkpoint of the parameters, and passes the activation gradient
/// on to the previous stage.
void StageEmitter::emitBackward(std::ostream &os) {
  os << "  // Stage " << stage
     << " backward: gradient synchronisation and checkpoint.\n";
  os << "  func.func " << symbol("backward") << "(";
  bool first = true;
  auto separator = [&]() -> const char * {
    const char *text = first ? "" : ", ";
    first = false;
    return text;
  };
  if (!isFirst())
    os << separator() << "%dx: " << activationType();
  for (const Param &param : params)
    os << separator() << param.name << ": " << param.type();
  for (const Param &param : params)
    os << separator() << "%d" << param.name.substr(1) << ": " << param.type();
  os << ") -> (";
  first = true;
  if (!isFirst())
    os << separator() << activationType();
  for (const Param &param : params)
    os << separator() << param.type();
  os << ") {\n";

  std::ostringstream compress;
  if (config.compressor != "none") {
    compress << " compress <" << config.compressor;
    wire::Compressor kind = *wire::parseCompressor(config.compressor);
    if (wire::isSparsifier(kind))
      compress << ", ratio = " << floatLiteral(config.ratio)
               << ", error_feedback";
    if (!wire::isLinear(kind))
      compress << ", scheme = allgather";
    compress << ">";
  }

  std::vector<std::string> synced;
  size_t perBucket = 4;
  for (size_t begin = 0; begin < params.size(); begin += perBucket) {
    size_t end = std::min(params.size(), begin + perBucket);
    std::string result = next();
    os << "    " << result;
    if (end - begin > 1)
      os << ":" << end - begin;
    os << " = hetero.bucket ";
    for (size_t i = begin; i < end; ++i)
      os << (i == begin ? "" : ", ") << "%d" << params[i].name.substr(1);
    os << " on @gpt_devices axes = [1] reduction = avg" << compress.str()
       << " : ";
    for (size_t i = begin; i < end; ++i)
      os << (i == begin ? "" : ", ") << params[i].type();
    os << "\n";
    for (size_t i = begin; i < end; ++i)
      synced.push_back(end - begin > 1
                           ? result + "#" + std::to_string(i - begin)
                           : result);
  }
  if (config.checkpointReplicas > 0) {
    os << "    hetero.checkpoint ";
    for (size_t i = 0; i < params.size(); ++i)
      os << (i ? ", " : "") << params[i].name;
    int64_t world = config.dataParallel;
    os << " replicas = " << config.checkpointReplicas << " of " << world
       << " placement = "
       << (world % config.checkpointReplicas == 0 ? "group" : "ring")
       << " : ";
    for (size_t i = 0; i < params.size(); ++i)
      os << (i ? ", " : "") << params[i].type();
    os << "\n";
  }
  os << "    return ";
  first = true;
  if (!isFirst())
    os << separator() << "%dx";
  for (const std::string &value : synced)
    os << separator() << value;
  os << " : ";
  first = true;
  if (!isFirst())
    os << separator() << activationType();
  for (const Param &param : params)
    os << separator() << param.type();
  os << "\n  }\n\n";
}

} // namespace

std::vector<std::string> validate(const GptConfig &config) {
  std::vector<std::string> problems;
  auto require = [&](bool ok, const std::string &message) {
    if (!ok)
      problems.push_back(message);
  };
  require(config.layers >= 1, "--layers must be at least 1");
  require(config.hidden >= 1, "--hidden must be at least 1");
  require(config.heads >= 1, "--heads must be at least 1");
  require(config.seq >= 1, "--seq must be at least 1");
  require(config.batch >= 1, "--batch must be at least 1");
  require(config.microbatches >= 1, "--microbatches must be at least 1");
  require(config.dataParallel >= 1, "--dp must be at least 1");
  require(config.tp >= 1, "--tp must be at least 1");
  require(config.stages >= 1, "--stages must be at least 1");
  if (!problems.empty())
    return problems;
  require(config.stages <= config.layers,
          "--stages (" + std::to_string(config.stages) +
              ") must not exceed --layers (" + std::to_string(config.layers) +
              "): every stage needs a layer");
  require(config.hidden % config.heads == 0,
          "--hidden (" + std::to_string(config.hidden) +
              ") must be divisible by --heads (" +
              std::to_string(config.heads) + ")");
  require(config.hidden % config.tp == 0,
          "--hidden (" + std::to_string(config.hidden) +
              ") must be divisible by --tp (" + std::to_string(config.tp) +
              ")");
  require(wire::parseCompressor(config.compressor).has_value(),
          "--compress must be one of none, fp16, bf16, topk, dgc, randomk, "
          "efsignsgd, onebit, qsgd; got '" +
              config.compressor + "'");
  require(config.ratio > 0.0 && config.ratio <= 1.0,
          "--ratio must be in (0, 1]");
  require(config.checkpointReplicas >= 0 &&
              config.checkpointReplicas <= config.dataParallel,
          "--checkpoint-replicas must be between 0 and --dp (" +
              std::to_string(config.dataParallel) + ")");
  return problems;
}

StagePartition partitionLayers(int64_t layers, int64_t stages) {
  StagePartition partition;
  int64_t base = layers / stages, extra = layers % stages, next = 0;
  for (int64_t s = 0; s < stages; ++s) {
    int64_t count = base + (s < extra ? 1 : 0);
    partition.first.push_back(next);
    partition.count.push_back(count);
    next += count;
  }
  return partition;
}

std::string emitGpt(const GptConfig &config) {
  std::ostringstream os;
  os << "// GPT-like training step: " << config.layers << " layers, hidden "
     << config.hidden << ", " << config.heads << " heads, " << config.batch
     << "x" << config.seq << " tokens per micro-batch, " << config.stages
     << " stages, " << config.microbatches << " micro-batches, tp "
     << config.tp << ", dp " << config.dataParallel << ".\n";
  os << "module {\n";
  os << "  // Axes: pipeline stage, data-parallel replica, tensor-parallel "
        "rank.\n";
  os << "  shard.grid @gpt_devices(shape = " << config.stages << "x"
     << config.dataParallel << "x" << config.tp << ")\n\n";
  os << "  hetero.pipeline @gpt stages = " << config.stages
     << " microbatches = " << config.microbatches << " on @gpt_devices {\n";
  for (int64_t s = 0; s < config.stages; ++s)
    os << "    hetero.stage " << s << " forward @gpt_stage" << s
       << "_forward backward @gpt_stage" << s << "_backward\n";
  os << "  }\n\n";
  StagePartition partition = partitionLayers(config.layers, config.stages);
  for (int64_t s = 0; s < config.stages; ++s) {
    StageEmitter emitter(config, s, partition.first[s], partition.count[s]);
    emitter.emitForward(os);
    emitter.emitBackward(os);
  }
  os << "}\n";
  return os.str();
}

} // namespace hetero::models
