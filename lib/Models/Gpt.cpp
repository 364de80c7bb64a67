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

/// An SSA value of a rank-2 f32 tensor, or of a rank-1 one when `cols` is 0.
struct Matrix {
  std::string name;
  int64_t rows = 0;
  int64_t cols = 0;
  std::string type() const {
    return cols ? tensorType({rows, cols}) : tensorType({rows});
  }
};

/// An indexing map of a 2-D linalg.generic.
constexpr const char *kIdentity = "affine_map<(i, j) -> (i, j)>";
constexpr const char *kRows = "affine_map<(i, j) -> (i)>";

/// The values of one attention head that its backward needs.
struct HeadValues {
  int64_t row = 0;    // first token of the sequence
  int64_t column = 0; // first column of the head in q, k and v
  Matrix q, k, v, probs;
};

/// The values of one transformer block that its backward needs.
struct LayerValues {
  Matrix x, context, h, up, relu;
  std::vector<HeadValues> heads;
};

/// Emits the IR of one stage. SSA names are unique through `next()`.
///
/// The forward function of stage s takes the activation of stage s-1 (the
/// embedded micro-batch for stage 0) and the stage's parameters, and returns
/// the activation for stage s+1 or, on the last stage, the mean squared
/// error of the head against `%target`.
///
/// The backward function takes the same inputs plus, except on the last
/// stage, the gradient `%dy` of the stage's output. It recomputes the
/// forward pass (activation recomputation), applies the chain rule through
/// every op in reverse, synchronises the parameter gradients over the
/// data-parallel replicas (compressed buckets of up to four tensors), takes
/// an in-memory checkpoint of the parameters and returns the gradient of the
/// input activation (except on stage 0) and the synchronised gradients.
class StageEmitter {
public:
  StageEmitter(const GptConfig &config, int64_t stage, int64_t firstLayer,
               int64_t numLayers)
      : config(config), stage(stage), firstLayer(firstLayer),
        numLayers(numLayers), tokens(config.batch * config.seq) {
    for (const Parameter &param : stageParameters(config, stage))
      params.push_back({"%" + param.name, param.rows, param.cols});
  }

  void emitForward(std::ostream &os);
  void emitBackward(std::ostream &os);

private:
  bool isFirst() const { return stage == 0; }
  bool isLast() const { return stage == config.stages - 1; }
  std::string next() { return "%v" + std::to_string(counter++); }
  Matrix activation(std::string name) const {
    return {std::move(name), tokens, config.hidden};
  }
  std::string symbol(const char *kind) const {
    return "@gpt_stage" + std::to_string(stage) + "_" + kind;
  }

  void emitSignatureInputs(std::ostream &os);
  void emitConstants(std::ostream &os);

  // Building blocks; each returns the value it defines.
  std::string empty(std::ostream &os, const std::string &type);
  Matrix zeros(std::ostream &os, int64_t rows, int64_t cols);
  Matrix matmul(std::ostream &os, const Matrix &lhs, const Matrix &rhs);
  Matrix transpose(std::ostream &os, const Matrix &value);
  Matrix prunable(std::ostream &os, const char *mode, const Matrix &x,
                  const Matrix &weight, const std::string &key);
  Matrix add(std::ostream &os, const Matrix &a, const Matrix &b);
  Matrix slice(std::ostream &os, const Matrix &source, int64_t row,
               int64_t column, int64_t rows, int64_t cols);
  Matrix insert(std::ostream &os, const Matrix &part, const Matrix &into,
                int64_t row, int64_t column);
  /// A 2-D linalg.generic over `inputs` (with `maps`, then the output's map)
  /// whose body binds `arguments` and runs `body`, which yields the element.
  std::string generic(std::ostream &os, const std::vector<Matrix> &inputs,
                      const std::vector<std::string> &maps,
                      const std::string &init, const std::string &initType,
                      const char *iterators, const std::string &arguments,
                      const std::string &body);
  /// An element-wise 2-D linalg.generic producing a rows x cols matrix.
  Matrix elementwise(std::ostream &os, const std::vector<Matrix> &inputs,
                     const std::string &arguments, const std::string &body);
  /// Reduces every row of the inputs into a vector that starts at `init`.
  Matrix rowReduce(std::ostream &os, const std::vector<Matrix> &inputs,
                   const char *init, const std::string &arguments,
                   const std::string &body);
  /// Row-wise softmax, numerically stable (the row maximum is subtracted).
  Matrix softmax(std::ostream &os, const Matrix &logits);

  // The model, forward and backward.
  void attention(std::ostream &os, const Matrix &qkv, LayerValues &layer);
  Matrix layerForward(std::ostream &os, int64_t index, const Matrix &x,
                      LayerValues &values);
  Matrix layerBackward(std::ostream &os, int64_t index,
                       const LayerValues &values, const Matrix &dout,
                       std::vector<Matrix> &grads);
  std::string loss(std::ostream &os, const Matrix &x);
  Matrix lossBackward(std::ostream &os, const Matrix &x, Matrix &headGrad);

  const GptConfig &config;
  int64_t stage, firstLayer, numLayers, tokens;
  std::vector<Matrix> params;
  int64_t counter = 0;
};

std::string StageEmitter::empty(std::ostream &os, const std::string &type) {
  std::string value = next();
  os << "    " << value << " = tensor.empty() : " << type << "\n";
  return value;
}

Matrix StageEmitter::zeros(std::ostream &os, int64_t rows, int64_t cols) {
  Matrix result{next(), rows, cols};
  std::string init = empty(os, result.type());
  os << "    " << result.name << " = linalg.fill ins(%zero : f32) outs("
     << init << " : " << result.type() << ") -> " << result.type() << "\n";
  return result;
}

Matrix StageEmitter::matmul(std::ostream &os, const Matrix &lhs,
                            const Matrix &rhs) {
  Matrix init = zeros(os, lhs.rows, rhs.cols);
  Matrix result{next(), lhs.rows, rhs.cols};
  os << "    " << result.name << " = linalg.matmul ins(" << lhs.name << ", "
     << rhs.name << " : " << lhs.type() << ", " << rhs.type() << ") outs("
     << init.name << " : " << init.type() << ") -> " << result.type() << "\n";
  return result;
}

Matrix StageEmitter::transpose(std::ostream &os, const Matrix &value) {
  Matrix result{next(), value.cols, value.rows};
  std::string init = empty(os, result.type());
  os << "    " << result.name << " = linalg.transpose ins(" << value.name
     << " : " << value.type() << ") outs(" << init << " : " << result.type()
     << ") permutation = [1, 0]\n";
  return result;
}

Matrix StageEmitter::prunable(std::ostream &os, const char *mode,
                              const Matrix &x, const Matrix &weight,
                              const std::string &key) {
  Matrix result{next(), x.rows, weight.cols};
  os << "    " << result.name << " = hetero.prunable_matmul " << mode << " "
     << x.name << ", " << weight.name << " layer \"" << key
     << "\" tp = " << config.tp << " : " << x.type() << ", " << weight.type()
     << " -> " << result.type() << "\n";
  return result;
}

Matrix StageEmitter::add(std::ostream &os, const Matrix &a, const Matrix &b) {
  Matrix result{next(), a.rows, a.cols};
  std::string init = empty(os, result.type());
  os << "    " << result.name << " = linalg.add ins(" << a.name << ", "
     << b.name << " : " << a.type() << ", " << b.type() << ") outs(" << init
     << " : " << result.type() << ") -> " << result.type() << "\n";
  return result;
}

Matrix StageEmitter::slice(std::ostream &os, const Matrix &source,
                           int64_t row, int64_t column, int64_t rows,
                           int64_t cols) {
  Matrix result{next(), rows, cols};
  os << "    " << result.name << " = tensor.extract_slice " << source.name
     << "[" << row << ", " << column << "] [" << rows << ", " << cols
     << "] [1, 1] : " << source.type() << " to " << result.type() << "\n";
  return result;
}

Matrix StageEmitter::insert(std::ostream &os, const Matrix &part,
                            const Matrix &into, int64_t row, int64_t column) {
  Matrix result{next(), into.rows, into.cols};
  os << "    " << result.name << " = tensor.insert_slice " << part.name
     << " into " << into.name << "[" << row << ", " << column << "] ["
     << part.rows << ", " << part.cols << "] [1, 1] : " << part.type()
     << " into " << into.type() << "\n";
  return result;
}

std::string StageEmitter::generic(std::ostream &os,
                                  const std::vector<Matrix> &inputs,
                                  const std::vector<std::string> &maps,
                                  const std::string &init,
                                  const std::string &initType,
                                  const char *iterators,
                                  const std::string &arguments,
                                  const std::string &body) {
  std::string result = next();
  os << "    " << result << " = linalg.generic {indexing_maps = [";
  for (size_t i = 0; i < maps.size(); ++i)
    os << (i ? ", " : "") << maps[i];
  os << "], iterator_types = [" << iterators << "]} ins(";
  for (size_t i = 0; i < inputs.size(); ++i)
    os << (i ? ", " : "") << inputs[i].name;
  os << " : ";
  for (size_t i = 0; i < inputs.size(); ++i)
    os << (i ? ", " : "") << inputs[i].type();
  os << ") outs(" << init << " : " << initType << ") {\n"
     << "    ^bb0(" << arguments << "):\n"
     << body << "    } -> " << initType << "\n";
  return result;
}

Matrix StageEmitter::elementwise(std::ostream &os,
                                 const std::vector<Matrix> &inputs,
                                 const std::string &arguments,
                                 const std::string &body) {
  Matrix shape = inputs.front();
  std::string type = shape.type();
  std::vector<std::string> maps(inputs.size() + 1, kIdentity);
  std::string name = generic(os, inputs, maps, empty(os, type), type,
                             "\"parallel\", \"parallel\"", arguments, body);
  return {name, shape.rows, shape.cols};
}

Matrix StageEmitter::rowReduce(std::ostream &os,
                               const std::vector<Matrix> &inputs,
                               const char *init, const std::string &arguments,
                               const std::string &body) {
  int64_t rows = inputs.front().rows;
  Matrix start{next(), rows, 0};
  std::string initEmpty = empty(os, start.type());
  os << "    " << start.name << " = linalg.fill ins(" << init << " : f32) outs("
     << initEmpty << " : " << start.type() << ") -> " << start.type() << "\n";
  std::vector<std::string> maps(inputs.size(), kIdentity);
  maps.push_back(kRows);
  std::string name =
      generic(os, inputs, maps, start.name, start.type(),
              "\"parallel\", \"reduction\"", arguments, body);
  return {name, rows, 0};
}

Matrix StageEmitter::softmax(std::ostream &os, const Matrix &logits) {
  Matrix maxima = rowReduce(os, {logits}, "%neg_inf", "%e_x: f32, %e_acc: f32",
                            "      %e_m = arith.maximumf %e_x, %e_acc : f32\n"
                            "      linalg.yield %e_m : f32\n");
  std::string type = logits.type();
  std::string exps = generic(
      os, {logits, maxima}, {kIdentity, kRows, kIdentity}, empty(os, type),
      type, "\"parallel\", \"parallel\"", "%e_x: f32, %e_m: f32, %e_out: f32",
      "      %e_d = arith.subf %e_x, %e_m : f32\n"
      "      %e_e = math.exp %e_d : f32\n"
      "      linalg.yield %e_e : f32\n");
  Matrix exponentials{exps, logits.rows, logits.cols};
  Matrix sums = rowReduce(os, {exponentials}, "%zero", "%e_x: f32, %e_acc: f32",
                          "      %e_s = arith.addf %e_x, %e_acc : f32\n"
                          "      linalg.yield %e_s : f32\n");
  std::string probs = generic(
      os, {exponentials, sums}, {kIdentity, kRows, kIdentity}, empty(os, type),
      type, "\"parallel\", \"parallel\"", "%e_x: f32, %e_s: f32, %e_out: f32",
      "      %e_p = arith.divf %e_x, %e_s : f32\n"
      "      linalg.yield %e_p : f32\n");
  return {probs, logits.rows, logits.cols};
}

/// Causal multi-head self-attention over one micro-batch of `batch`
/// sequences: per sequence and head, softmax(q k^T / sqrt(d) + mask) v.
void StageEmitter::attention(std::ostream &os, const Matrix &qkv,
                             LayerValues &layer) {
  int64_t hidden = config.hidden, headDim = hidden / config.heads;
  int64_t seq = config.seq;
  Matrix context = zeros(os, tokens, hidden);
  for (int64_t b = 0; b < config.batch; ++b) {
    for (int64_t h = 0; h < config.heads; ++h) {
      HeadValues head;
      head.row = b * seq;
      head.column = h * headDim;
      head.q = slice(os, qkv, head.row, head.column, seq, headDim);
      head.k = slice(os, qkv, head.row, hidden + head.column, seq, headDim);
      head.v = slice(os, qkv, head.row, 2 * hidden + head.column, seq, headDim);
      Matrix scores = matmul(os, head.q, transpose(os, head.k));
      // Scale by 1/sqrt(d) and mask future positions.
      Matrix masked = elementwise(os, {scores}, "%e_s: f32, %e_out: f32",
                                  "      %e_i = linalg.index 0 : index\n"
                                  "      %e_j = linalg.index 1 : index\n"
                                  "      %e_future = arith.cmpi ult, %e_i, "
                                  "%e_j : index\n"
                                  "      %e_scaled = arith.mulf %e_s, "
                                  "%attn_scale : f32\n"
                                  "      %e_m = arith.select %e_future, "
                                  "%neg_inf, %e_scaled : f32\n"
                                  "      linalg.yield %e_m : f32\n");
      head.probs = softmax(os, masked);
      Matrix headOut = matmul(os, head.probs, head.v);
      context = insert(os, headOut, context, head.row, head.column);
      layer.heads.push_back(head);
    }
  }
  layer.context = context;
}

/// One transformer block without normalisation: h = x + attn(x) W_o, then
/// out = h + relu(h W_1) W_2.
Matrix StageEmitter::layerForward(std::ostream &os, int64_t index,
                                  const Matrix &x, LayerValues &values) {
  const Matrix *weights = &params[(index - firstLayer) * 4];
  std::string key = "l" + std::to_string(index) + ".";
  os << "    // layer " << index << "\n";
  values.x = x;
  Matrix qkv = prunable(os, "col", x, weights[0], key + "qkv");
  attention(os, qkv, values);
  Matrix projected =
      prunable(os, "row", values.context, weights[1], key + "attn_out");
  values.h = add(os, x, projected);
  values.up = prunable(os, "col", values.h, weights[2], key + "mlp_up");
  values.relu = elementwise(os, {values.up}, "%e_a: f32, %e_out: f32",
                            "      %e_r = arith.maximumf %e_a, %zero : f32\n"
                            "      linalg.yield %e_r : f32\n");
  Matrix down =
      prunable(os, "row", values.relu, weights[3], key + "mlp_down");
  return add(os, values.h, down);
}

/// The chain rule through layerForward. Appends the gradients of the
/// layer's four weights to `grads` (in parameter order) and returns the
/// gradient of the layer's input. The activation gradient of a col-mode
/// matmul contracts over the sharded columns, so it is a row-mode matmul with
/// the transposed weight, and the other way round.
Matrix StageEmitter::layerBackward(std::ostream &os, int64_t index,
                                   const LayerValues &values,
                                   const Matrix &dout,
                                   std::vector<Matrix> &grads) {
  const Matrix *weights = &params[(index - firstLayer) * 4];
  std::string key = "l" + std::to_string(index) + ".";
  int64_t hidden = config.hidden, headDim = hidden / config.heads;
  os << "    // layer " << index << " backward\n";
  // out = h + relu(up) W_2, up = h W_1.
  Matrix dW2 = matmul(os, transpose(os, values.relu), dout);
  Matrix drelu =
      prunable(os, "col", dout, transpose(os, weights[3]), key + "mlp_down");
  Matrix dup = elementwise(os, {drelu, values.up},
                           "%e_g: f32, %e_u: f32, %e_out: f32",
                           "      %e_on = arith.cmpf ogt, %e_u, %zero : f32\n"
                           "      %e_d = arith.select %e_on, %e_g, %zero : "
                           "f32\n"
                           "      linalg.yield %e_d : f32\n");
  Matrix dW1 = matmul(os, transpose(os, values.h), dup);
  Matrix dh = add(os, dout, prunable(os, "row", dup, transpose(os, weights[2]),
                                     key + "mlp_up"));
  // h = x + context W_o.
  Matrix dWo = matmul(os, transpose(os, values.context), dh);
  Matrix dcontext =
      prunable(os, "col", dh, transpose(os, weights[1]), key + "attn_out");
  Matrix dqkv = zeros(os, tokens, 3 * hidden);
  for (const HeadValues &head : values.heads) {
    int64_t seq = config.seq;
    Matrix dheadOut = slice(os, dcontext, head.row, head.column, seq, headDim);
    // headOut = probs v.
    Matrix dprobs = matmul(os, dheadOut, transpose(os, head.v));
    Matrix dv = matmul(os, transpose(os, head.probs), dheadOut);
    // Softmax: dmasked = probs * (dprobs - sum_j dprobs * probs).
    Matrix rowSums = rowReduce(os, {dprobs, head.probs}, "%zero",
                               "%e_g: f32, %e_p: f32, %e_acc: f32",
                               "      %e_gp = arith.mulf %e_g, %e_p : f32\n"
                               "      %e_sum = arith.addf %e_gp, %e_acc : f32\n"
                               "      linalg.yield %e_sum : f32\n");
    // Masked positions have probability 0, so their gradient vanishes; the
    // scale of the scores applies to the rest.
    std::string scoresType = tensorType({seq, seq});
    std::string dscoresName = generic(
        os, {dprobs, head.probs, rowSums},
        {kIdentity, kIdentity, kRows, kIdentity}, empty(os, scoresType),
        scoresType, "\"parallel\", \"parallel\"",
        "%e_g: f32, %e_p: f32, %e_sum: f32, %e_out: f32",
        "      %e_diff = arith.subf %e_g, %e_sum : f32\n"
        "      %e_dm = arith.mulf %e_p, %e_diff : f32\n"
        "      %e_ds = arith.mulf %e_dm, %attn_scale : f32\n"
        "      linalg.yield %e_ds : f32\n");
    Matrix dscores{dscoresName, seq, seq};
    // scores = q k^T.
    Matrix dq = matmul(os, dscores, head.k);
    Matrix dk = matmul(os, transpose(os, dscores), head.q);
    dqkv = insert(os, dq, dqkv, head.row, head.column);
    dqkv = insert(os, dk, dqkv, head.row, hidden + head.column);
    dqkv = insert(os, dv, dqkv, head.row, 2 * hidden + head.column);
  }
  // qkv = x W_qkv; x also feeds the residual.
  Matrix dWqkv = matmul(os, transpose(os, values.x), dqkv);
  Matrix dx = add(os, dh, prunable(os, "row", dqkv, transpose(os, weights[0]),
                                   key + "qkv"));
  for (const Matrix &grad : {dWqkv, dWo, dW1, dW2})
    grads.push_back(grad);
  return dx;
}
/// Mean squared error of the head's output against the target.
std::string StageEmitter::loss(std::ostream &os, const Matrix &x) {
  Matrix y = matmul(os, x, params.back());
  Matrix squared = elementwise(os, {y, activation("%target")},
                               "%e_p: f32, %e_t: f32, %e_out: f32",
                               "      %e_d = arith.subf %e_p, %e_t : f32\n"
                               "      %e_d2 = arith.mulf %e_d, %e_d : f32\n"
                               "      linalg.yield %e_d2 : f32\n");
  std::string sumInit = empty(os, "tensor<f32>"), sumZero = next();
  os << "    " << sumZero << " = linalg.fill ins(%zero : f32) outs(" << sumInit
     << " : tensor<f32>) -> tensor<f32>\n";
  std::string sum = next();
  os << "    " << sum << " = linalg.reduce ins(" << squared.name << " : "
     << squared.type() << ") outs(" << sumZero
     << " : tensor<f32>) dimensions = [0, 1]\n"
     << "      (%e_in: f32, %e_acc: f32) {\n"
     << "        %e_s = arith.addf %e_in, %e_acc : f32\n"
     << "        linalg.yield %e_s : f32\n"
     << "      }\n";
  std::string total = next(), mean = next(), result = next();
  os << "    " << total << " = tensor.extract " << sum << "[] : tensor<f32>\n";
  os << "    " << mean << " = arith.divf " << total << ", %count : f32\n";
  os << "    " << result << " = tensor.from_elements " << mean
     << " : tensor<f32>\n";
  return result;
}

/// The chain rule through loss(): d loss / d y = 2 (y - target) / count.
Matrix StageEmitter::lossBackward(std::ostream &os, const Matrix &x,
                                  Matrix &headGrad) {
  const Matrix &head = params.back();
  os << "    // loss backward\n";
  Matrix y = matmul(os, x, head);
  Matrix dy = elementwise(os, {y, activation("%target")},
                          "%e_p: f32, %e_t: f32, %e_out: f32",
                          "      %e_d = arith.subf %e_p, %e_t : f32\n"
                          "      %e_g = arith.mulf %e_d, %grad_scale : f32\n"
                          "      linalg.yield %e_g : f32\n");
  headGrad = matmul(os, transpose(os, x), dy);
  return matmul(os, dy, transpose(os, head));
}

void StageEmitter::emitSignatureInputs(std::ostream &os) {
  os << "%x: " << activation("%x").type();
  for (const Matrix &param : params)
    os << ", " << param.name << ": " << param.type();
  if (isLast())
    os << ", %target: " << activation("%target").type();
}

void StageEmitter::emitConstants(std::ostream &os) {
  double scale = 1.0 / std::sqrt(double(config.hidden / config.heads));
  double count = double(tokens * config.hidden);
  os << "    %zero = arith.constant 0.0 : f32\n";
  os << "    %neg_inf = arith.constant 0xFF800000 : f32\n";
  os << "    %attn_scale = arith.constant " << floatLiteral(scale) << " : f32\n";
  if (isLast()) {
    os << "    %count = arith.constant " << floatLiteral(count) << " : f32\n";
    os << "    %grad_scale = arith.constant " << floatLiteral(2.0 / count)
       << " : f32\n";
  }
}

void StageEmitter::emitForward(std::ostream &os) {
  os << "  // Stage " << stage << " forward: layers " << firstLayer << ".."
     << firstLayer + numLayers - 1 << (isLast() ? ", head and loss" : "")
     << ".\n";
  os << "  func.func " << symbol("forward") << "(";
  emitSignatureInputs(os);
  os << ") -> " << (isLast() ? "tensor<f32>" : activation("").type())
     << " {\n";
  emitConstants(os);
  Matrix x = activation("%x");
  for (int64_t l = firstLayer; l < firstLayer + numLayers; ++l) {
    LayerValues values;
    x = layerForward(os, l, x, values);
  }
  if (isLast()) {
    std::string result = loss(os, x);
    os << "    return " << result << " : tensor<f32>\n";
  } else
    os << "    return " << x.name << " : " << x.type() << "\n";
  os << "  }\n\n";
}

void StageEmitter::emitBackward(std::ostream &os) {
  os << "  // Stage " << stage << " backward: recompute, differentiate, "
     << "synchronise gradients, checkpoint.\n";
  os << "  func.func " << symbol("backward") << "(";
  emitSignatureInputs(os);
  if (!isLast())
    os << ", %dy: " << activation("%dy").type();
  // Results: the input gradient (not on stage 0), then the parameters'.
  std::vector<std::string> resultTypes;
  if (!isFirst())
    resultTypes.push_back(activation("").type());
  for (const Matrix &param : params)
    resultTypes.push_back(param.type());
  auto joined = [](const std::vector<std::string> &items) {
    std::string text;
    for (const std::string &item : items)
      text += (text.empty() ? "" : ", ") + item;
    return text;
  };
  os << ") -> (" << joined(resultTypes) << ") {\n";
  emitConstants(os);

  os << "    // recompute the forward pass\n";
  std::vector<LayerValues> layers(numLayers);
  Matrix x = activation("%x");
  for (int64_t l = 0; l < numLayers; ++l)
    x = layerForward(os, firstLayer + l, x, layers[l]);

  std::vector<Matrix> grads(params.size());
  Matrix dx = activation("%dy");
  if (isLast())
    dx = lossBackward(os, x, grads.back());
  for (int64_t l = numLayers - 1; l >= 0; --l) {
    std::vector<Matrix> layerGrads;
    dx = layerBackward(os, firstLayer + l, layers[l], dx, layerGrads);
    std::copy(layerGrads.begin(), layerGrads.end(), grads.begin() + 4 * l);
  }

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

  os << "    // synchronise gradients over the data-parallel replicas\n";
  std::vector<std::string> results;
  if (!isFirst())
    results.push_back(dx.name);
  constexpr size_t perBucket = 4;
  for (size_t begin = 0; begin < grads.size(); begin += perBucket) {
    size_t end = std::min(grads.size(), begin + perBucket);
    std::vector<std::string> names, types;
    for (size_t i = begin; i < end; ++i) {
      names.push_back(grads[i].name);
      types.push_back(grads[i].type());
    }
    std::string bucket = next();
    os << "    " << bucket;
    if (names.size() > 1)
      os << ":" << names.size();
    os << " = hetero.bucket " << joined(names)
       << " on @gpt_devices axes = [1] reduction = avg" << compress.str()
       << " : " << joined(types) << "\n";
    for (size_t i = 0; i < names.size(); ++i)
      results.push_back(names.size() > 1 ? bucket + "#" + std::to_string(i)
                                         : bucket);
  }
  if (config.checkpointReplicas > 0) {
    std::vector<std::string> names, types;
    for (const Matrix &param : params) {
      names.push_back(param.name);
      types.push_back(param.type());
    }
    int64_t world = config.dataParallel;
    os << "    hetero.checkpoint " << joined(names) << " replicas = "
       << config.checkpointReplicas << " of " << world << " placement = "
       << (world % config.checkpointReplicas == 0 ? "group" : "ring")
       << " : " << joined(types) << "\n";
  }
  os << "    return " << joined(results) << " : " << joined(resultTypes)
     << "\n  }\n\n";
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

std::vector<Parameter> stageParameters(const GptConfig &config,
                                       int64_t stage) {
  StagePartition partition = partitionLayers(config.layers, config.stages);
  int64_t hidden = config.hidden;
  std::vector<Parameter> params;
  int64_t first = partition.first[stage];
  for (int64_t l = first; l < first + partition.count[stage]; ++l) {
    std::string prefix = "l" + std::to_string(l) + "_";
    params.push_back({prefix + "wqkv", hidden, 3 * hidden});
    params.push_back({prefix + "wo", hidden, hidden});
    params.push_back({prefix + "w1", hidden, 4 * hidden});
    params.push_back({prefix + "w2", 4 * hidden, hidden});
  }
  if (stage == config.stages - 1)
    params.push_back({"head", hidden, hidden});
  return params;
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
