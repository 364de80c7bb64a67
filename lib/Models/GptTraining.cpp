//===- GptTraining.cpp - SPMD training steps for the GPT-like model -------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Emits, next to the stage functions of emitGpt, the entry points that train
// the model with SGD:
//
//  * @train_step(i64 iteration) -> f32 runs on every rank of the pipeline;
//    rank s executes stage s's kFkB program: forward and backward tasks on
//    the stage functions, activations and gradients sent to and received
//    from the neighbouring stages with hetero.send/recv, the parameter
//    gradients summed over the micro-batches and applied. It returns the
//    mean loss of the step on every rank.
//  * @train_step_reference(i64 iteration) -> f32 runs the same step on one
//    process: every micro-batch through all stages in order.
//  * @weights_digest() / @weights_digest_reference() -> f64: a weighted sum
//    of every parameter, to compare the two runs' weights.
//
// Parameters live in memref.globals, initialised at iteration 0 with
// deterministic values; a step copies them in, and SGD updates them in place
// at its end. Micro-batch inputs and targets are deterministic functions of
// the micro-batch index: a fixed regression data set.
//
//===----------------------------------------------------------------------===//

#include "hetero/Models/Gpt.h"

#include "hetero/Schedule/Kfkb.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace hetero::models {
namespace {

std::string literal(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.9e", value);
  return buffer;
}

std::string matrixType(int64_t rows, int64_t cols) {
  return "tensor<" + std::to_string(rows) + "x" + std::to_string(cols) +
         "xf32>";
}

std::string memrefType(int64_t rows, int64_t cols) {
  return "memref<" + std::to_string(rows) + "x" + std::to_string(cols) +
         "xf32>";
}

std::string join(const std::vector<std::string> &items) {
  std::string text;
  for (const std::string &item : items)
    text += (text.empty() ? "" : ", ") + item;
  return text;
}

constexpr const char *kIdentity2 =
    "indexing_maps = [affine_map<(i, j) -> (i, j)>], "
    "iterator_types = [\"parallel\", \"parallel\"]";

class TrainingEmitter {
public:
  TrainingEmitter(const GptConfig &config, const TrainingOptions &options,
                  std::ostream &os)
      : config(config), options(options), os(os),
        tokens(config.batch * config.seq) {
    int64_t ordinal = 0;
    for (int64_t s = 0; s < config.stages; ++s) {
      stages.push_back(stageParameters(config, s));
      for (const Parameter &param : stages.back())
        ordinals[global(s, param)] = ordinal++;
    }
  }

  void emit() {
    emitGlobals();
    emitFill();
    emitInitialisation();
    emitData("input", "math.sin", 0.37, 0.91, 1.3);
    emitData("target", "math.cos", 0.23, 0.61, 0.7);
    for (int64_t s = 0; s < config.stages; ++s) {
      emitStageStep(s, options.groupSize, "", false);
      emitStageDigest(s);
    }
    emitTrainStep(options.groupSize, "");
    if (!options.adaptiveGroupSizes.empty())
      os << "  func.func private @hrt_mlir_task_mark(i32)\n\n";
    for (int64_t k : options.adaptiveGroupSizes) {
      std::string suffix = "_k" + std::to_string(k);
      for (int64_t s = 0; s < config.stages; ++s)
        emitStageStep(s, k, suffix, true);
      emitTrainStep(k, suffix);
    }
    emitReferenceStep();
    emitDigests();
  }

private:
  std::string act() const { return matrixType(tokens, config.hidden); }
  std::string global(int64_t stage, const Parameter &param) const {
    return "@param_s" + std::to_string(stage) + "_" + param.name;
  }
  std::string next(const char *prefix = "%t") {
    return prefix + std::to_string(counter++);
  }
  bool isLast(int64_t stage) const { return stage == config.stages - 1; }

  void emitGlobals() {
    for (int64_t s = 0; s < config.stages; ++s)
      for (const Parameter &param : stages[s])
        os << "  memref.global \"private\" " << global(s, param) << " : "
           << memrefType(param.rows, param.cols) << " = uninitialized\n";
    os << "\n";
  }

  /// value(i, j) = scale * sin(0.37 i + 0.91 j + seed), in place.
  void emitFill() {
    os << "  func.func private @fill_param(%m: memref<?x?xf32>, %seed: f32, "
          "%scale: f32) {\n"
       << "    linalg.generic {" << kIdentity2
       << "} outs(%m : memref<?x?xf32>) {\n"
       << "    ^bb0(%out: f32):\n"
       << "      %i = linalg.index 0 : index\n"
       << "      %j = linalg.index 1 : index\n"
       << "      %ii = arith.index_cast %i : index to i64\n"
       << "      %ji = arith.index_cast %j : index to i64\n"
       << "      %fi = arith.sitofp %ii : i64 to f32\n"
       << "      %fj = arith.sitofp %ji : i64 to f32\n"
       << "      %a = arith.constant 0.37 : f32\n"
       << "      %b = arith.constant 0.91 : f32\n"
       << "      %x0 = arith.mulf %fi, %a : f32\n"
       << "      %x1 = arith.mulf %fj, %b : f32\n"
       << "      %x2 = arith.addf %x0, %x1 : f32\n"
       << "      %x3 = arith.addf %x2, %seed : f32\n"
       << "      %s = math.sin %x3 : f32\n"
       << "      %v = arith.mulf %s, %scale : f32\n"
       << "      linalg.yield %v : f32\n"
       << "    }\n    return\n  }\n\n";
  }

  void emitInitialisation() {
    os << "  func.func private @init_params() {\n";
    for (int64_t s = 0; s < config.stages; ++s)
      for (const Parameter &param : stages[s]) {
        std::string g = next("%g"), d = next("%d");
        std::string seed = next("%seed"), scale = next("%scale");
        os << "    " << g << " = memref.get_global " << global(s, param)
           << " : " << memrefType(param.rows, param.cols) << "\n"
           << "    " << d << " = memref.cast " << g << " : "
           << memrefType(param.rows, param.cols) << " to memref<?x?xf32>\n"
           << "    " << seed << " = arith.constant "
           << literal(1.7 * double(ordinals[global(s, param)]) + 0.5)
           << " : f32\n"
           << "    " << scale << " = arith.constant "
           << literal(1.0 / std::sqrt(double(param.rows))) << " : f32\n"
           << "    func.call @fill_param(" << d << ", " << seed << ", "
           << scale << ") : (memref<?x?xf32>, f32, f32) -> ()\n";
      }
    os << "    return\n  }\n\n";
  }

  /// @<name>(%mb: index) -> activation: 0.5 <fn>(a t + b h + c mb).
  void emitData(const char *name, const char *function, double a, double b,
                double c) {
    os << "  func.func private @" << name << "(%mb: index) -> " << act()
       << " {\n"
       << "    %empty = tensor.empty() : " << act() << "\n"
       << "    %r = linalg.generic {" << kIdentity2 << "} outs(%empty : "
       << act() << ") {\n"
       << "    ^bb0(%out: f32):\n"
       << "      %t = linalg.index 0 : index\n"
       << "      %h = linalg.index 1 : index\n"
       << "      %ti = arith.index_cast %t : index to i64\n"
       << "      %hi = arith.index_cast %h : index to i64\n"
       << "      %mi = arith.index_cast %mb : index to i64\n"
       << "      %ft = arith.sitofp %ti : i64 to f32\n"
       << "      %fh = arith.sitofp %hi : i64 to f32\n"
       << "      %fm = arith.sitofp %mi : i64 to f32\n"
       << "      %a = arith.constant " << literal(a) << " : f32\n"
       << "      %b = arith.constant " << literal(b) << " : f32\n"
       << "      %c = arith.constant " << literal(c) << " : f32\n"
       << "      %half = arith.constant 0.5 : f32\n"
       << "      %x0 = arith.mulf %ft, %a : f32\n"
       << "      %x1 = arith.mulf %fh, %b : f32\n"
       << "      %x2 = arith.mulf %fm, %c : f32\n"
       << "      %x3 = arith.addf %x0, %x1 : f32\n"
       << "      %x4 = arith.addf %x3, %x2 : f32\n"
       << "      %s = " << function << " %x4 : f32\n"
       << "      %v = arith.mulf %s, %half : f32\n"
       << "      linalg.yield %v : f32\n"
       << "    } -> " << act() << "\n"
       << "    return %r : " << act() << "\n  }\n\n";
  }

  /// Copies the parameters of `stage` into fresh tensors.
  std::vector<std::string> loadParams(int64_t stage) {
    std::vector<std::string> values;
    for (const Parameter &param : stages[stage]) {
      std::string g = next("%g"), copy = next("%copy"), value = next("%w");
      std::string type = memrefType(param.rows, param.cols);
      os << "    " << g << " = memref.get_global " << global(stage, param)
         << " : " << type << "\n"
         << "    " << copy << " = memref.alloc() : " << type << "\n"
         << "    memref.copy " << g << ", " << copy << " : " << type << " to "
         << type << "\n"
         << "    " << value << " = bufferization.to_tensor " << copy
         << " restrict writable : " << type << " to "
         << matrixType(param.rows, param.cols) << "\n";
      values.push_back(value);
    }
    return values;
  }

  std::vector<std::string> zeroGrads(int64_t stage) {
    std::vector<std::string> values;
    for (const Parameter &param : stages[stage]) {
      std::string type = matrixType(param.rows, param.cols);
      std::string empty = next("%e"), zero = next("%z");
      os << "    " << empty << " = tensor.empty() : " << type << "\n"
         << "    " << zero << " = linalg.fill ins(%zero : f32) outs(" << empty
         << " : " << type << ") -> " << type << "\n";
      values.push_back(zero);
    }
    return values;
  }

  void accumulate(int64_t stage, std::vector<std::string> &sums,
                  const std::string &results, size_t first) {
    for (size_t k = 0; k < sums.size(); ++k) {
      const Parameter &param = stages[stage][k];
      std::string type = matrixType(param.rows, param.cols);
      std::string empty = next("%e"), sum = next("%acc");
      os << "    " << empty << " = tensor.empty() : " << type << "\n"
         << "    " << sum << " = linalg.add ins(" << sums[k] << ", "
         << results << "#" << first + k << " : " << type << ", " << type
         << ") outs(" << empty << " : " << type << ") -> " << type << "\n";
      sums[k] = sum;
    }
  }

  /// w -= lr / M * gradient, in place on the global.
  void applySgd(int64_t stage, const std::vector<std::string> &grads) {
    std::string stepSize = next("%step");
    os << "    " << stepSize << " = arith.constant "
       << literal(options.learningRate / double(config.microbatches))
       << " : f32\n";
    sgdWith(stage, grads, stepSize);
  }

  std::string stageCall(int64_t stage, const char *kind,
                        const std::vector<std::string> &arguments,
                        const std::vector<std::string> &argumentTypes,
                        const std::vector<std::string> &results) {
    std::string value = next("%r");
    os << "    " << value;
    if (results.size() > 1)
      os << ":" << results.size();
    os << " = func.call @gpt_stage" << stage << "_" << kind << "("
       << join(arguments) << ") : (" << join(argumentTypes) << ") -> ("
       << join(results) << ")\n";
    return value;
  }

  std::vector<std::string> paramTypes(int64_t stage) const {
    std::vector<std::string> types;
    for (const Parameter &param : stages[stage])
      types.push_back(matrixType(param.rows, param.cols));
    return types;
  }

  /// Calls the forward function of `stage` on `x` (and the target on the
  /// last stage); returns the activation or the loss tensor.
  std::string forward(int64_t stage, const std::string &x,
                      const std::vector<std::string> &params,
                      const std::string &target) {
    std::vector<std::string> arguments = {x}, types = {act()};
    arguments.insert(arguments.end(), params.begin(), params.end());
    for (const std::string &type : paramTypes(stage))
      types.push_back(type);
    if (isLast(stage)) {
      arguments.push_back(target);
      types.push_back(act());
    }
    return stageCall(stage, "forward", arguments, types,
                     {isLast(stage) ? "tensor<f32>" : act()});
  }

  /// Calls the backward function; results are (dx except on stage 0,
  /// parameter gradients...).
  std::string backward(int64_t stage, const std::string &x,
                       const std::vector<std::string> &params,
                       const std::string &target, const std::string &dy) {
    std::vector<std::string> arguments = {x}, types = {act()};
    arguments.insert(arguments.end(), params.begin(), params.end());
    std::vector<std::string> grads = paramTypes(stage);
    types.insert(types.end(), grads.begin(), grads.end());
    if (isLast(stage)) {
      arguments.push_back(target);
      types.push_back(act());
    } else {
      arguments.push_back(dy);
      types.push_back(act());
    }
    std::vector<std::string> results;
    if (stage > 0)
      results.push_back(act());
    results.insert(results.end(), grads.begin(), grads.end());
    return stageCall(stage, "backward", arguments, types, results);
  }

  std::string microbatch(int64_t index) {
    std::string value = next("%mb");
    os << "    " << value << " = arith.constant " << index << " : index\n";
    return value;
  }

  std::string data(const char *name, int64_t index) {
    std::string mb = microbatch(index), value = next("%data");
    os << "    " << value << " = func.call @" << name << "(" << mb
       << ") : (index) -> " << act() << "\n";
    return value;
  }

  std::string addLoss(const std::string &sum, const std::string &loss) {
    std::string scalar = next("%l"), total = next("%lsum");
    os << "    " << scalar << " = tensor.extract " << loss
       << "[] : tensor<f32>\n"
       << "    " << total << " = arith.addf " << sum << ", " << scalar
       << " : f32\n";
    return total;
  }

  void send(const std::string &value, int64_t peer, int64_t tag) {
    os << "    hetero.send " << value << " to " << peer
       << " on @gpt_devices axes = [0] tag = " << tag << " : " << act()
       << "\n";
  }

  std::string receive(int64_t peer, int64_t tag) {
    std::string value = next("%recv");
    os << "    " << value << " = hetero.recv from " << peer
       << " on @gpt_devices axes = [0] tag = " << tag << " : " << act()
       << "\n";
    return value;
  }

  void emitPrologue() {
    os << "    %zero = arith.constant 0.0 : f32\n";
  }

  /// Reports a finished task to the runtime: 0 forward, 1 backward.
  void markTask(int kind) {
    std::string value = next("%kind");
    os << "    " << value << " = arith.constant " << kind << " : i32\n"
       << "    func.call @hrt_mlir_task_mark(" << value << ") : (i32) -> ()\n";
  }

  /// @train_stage<s><suffix>() -> f32: stage s's kFkB program of one step
  /// with group size k; `timed` reports each task's end.
  void emitStageStep(int64_t stage, int64_t groupSize,
                     const std::string &suffix, bool timed) {
    // The kFkB order is kept on the function for people and tests.
    os << "  func.func private @train_stage" << stage << suffix
       << "() -> f32 attributes {hetero.group_size = " << groupSize
       << " : i64, hetero.program = \""
       << schedule::formatProgram(schedule::kfkbProgram(
              config.stages, config.microbatches, groupSize, stage))
       << "\"} {\n";
    emitPrologue();
    std::vector<std::string> params = loadParams(stage);
    std::vector<std::string> grads = zeroGrads(stage);
    std::string loss = "%zero";
    std::map<int64_t, std::string> inputs, targets;
    int64_t gradientTag = config.microbatches;
    for (const schedule::Task &task : schedule::kfkbProgram(
             config.stages, config.microbatches, groupSize, stage)) {
      int64_t i = task.microbatch;
      if (task.kind == schedule::Task::Forward) {
        inputs[i] = stage == 0 ? data("input", i) : receive(stage - 1, i);
        if (isLast(stage)) {
          targets[i] = data("target", i);
          loss = addLoss(loss, forward(stage, inputs[i], params, targets[i]));
          if (timed)
            markTask(0);
        } else {
          std::string y = forward(stage, inputs[i], params, "");
          if (timed)
            markTask(0);
          send(y, stage + 1, i);
        }
        continue;
      }
      std::string dy =
          isLast(stage) ? "" : receive(stage + 1, gradientTag + i);
      std::string results =
          backward(stage, inputs[i], params, targets[i], dy);
      if (timed)
        markTask(1);
      if (stage > 0)
        send(results + "#0", stage - 1, gradientTag + i);
      accumulate(stage, grads, results, stage > 0 ? 1 : 0);
    }
    applySgd(stage, grads);
    std::string mean = next("%mean"), count = next("%count");
    os << "    " << count << " = arith.constant "
       << literal(double(config.microbatches)) << " : f32\n"
       << "    " << mean << " = arith.divf " << loss << ", " << count
       << " : f32\n"
       << "    return " << mean << " : f32\n  }\n\n";
  }

  /// Sum over the parameters of `stage` of w(i, j) sin(0.37 i + 0.91 j + k).
  void emitStageDigest(int64_t stage) {
    os << "  func.func private @digest_stage" << stage << "() -> f64 {\n"
       << "    %zero64 = arith.constant 0.0 : f64\n";
    std::string total = "%zero64";
    for (const Parameter &param : stages[stage]) {
      std::string type = memrefType(param.rows, param.cols);
      std::string g = next("%g"), init = next("%i"), sum = next("%s");
      std::string scalar = next("%v"), accumulated = next("%total");
      std::string weights = next("%w");
      os << "    " << g << " = memref.get_global " << global(stage, param)
         << " : " << type << "\n"
         << "    " << weights << " = bufferization.to_tensor " << g
         << " restrict : " << type << " to "
         << matrixType(param.rows, param.cols) << "\n"
         << "    " << init << " = tensor.from_elements %zero64 : tensor<f64>\n"
         << "    " << sum
         << " = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, "
            "j)>, affine_map<(i, j) -> ()>], iterator_types = "
            "[\"reduction\", \"reduction\"]} ins("
         << weights << " : " << matrixType(param.rows, param.cols)
         << ") outs(" << init << " : tensor<f64>) {\n"
         << "    ^bb0(%w: f32, %acc: f64):\n"
         << "      %i = linalg.index 0 : index\n"
         << "      %j = linalg.index 1 : index\n"
         << "      %ii = arith.index_cast %i : index to i64\n"
         << "      %ji = arith.index_cast %j : index to i64\n"
         << "      %fi = arith.sitofp %ii : i64 to f64\n"
         << "      %fj = arith.sitofp %ji : i64 to f64\n"
         << "      %a = arith.constant 0.37 : f64\n"
         << "      %b = arith.constant 0.91 : f64\n"
         << "      %k = arith.constant "
         << literal(double(ordinals[global(stage, param)])) << " : f64\n"
         << "      %x0 = arith.mulf %fi, %a : f64\n"
         << "      %x1 = arith.mulf %fj, %b : f64\n"
         << "      %x2 = arith.addf %x0, %x1 : f64\n"
         << "      %x3 = arith.addf %x2, %k : f64\n"
         << "      %c = math.sin %x3 : f64\n"
         << "      %w64 = arith.extf %w : f32 to f64\n"
         << "      %p = arith.mulf %w64, %c : f64\n"
         << "      %n = arith.addf %acc, %p : f64\n"
         << "      linalg.yield %n : f64\n"
         << "    } -> tensor<f64>\n"
         << "    " << scalar << " = tensor.extract " << sum
         << "[] : tensor<f64>\n"
         << "    " << accumulated << " = arith.addf " << total << ", "
         << scalar << " : f64\n";
      total = accumulated;
    }
    os << "    return " << total << " : f64\n  }\n\n";
  }

  void initialiseOnFirstIteration() {
    os << "    %first_iteration = arith.constant 0 : i64\n"
       << "    %is_first = arith.cmpi eq, %iteration, %first_iteration : i64\n"
       << "    scf.if %is_first {\n"
       << "      func.call @init_params() : () -> ()\n"
       << "    }\n";
  }

  /// `value` (f32 or f64, on stage ranks) summed over the pipeline.
  void returnPipelineSum(const std::string &value, const char *type) {
    std::string tensor = std::string("tensor<1x") + type + ">";
    os << "    %as_tensor = tensor.from_elements " << value << " : " << tensor
       << "\n"
       << "    %summed = hetero.all_reduce %as_tensor on @gpt_devices axes = "
          "[0] : "
       << tensor << "\n"
       << "    %c0 = arith.constant 0 : index\n"
       << "    %result = tensor.extract %summed[%c0] : " << tensor << "\n"
       << "    return %result : " << type << "\n  }\n\n";
  }

  /// Dispatches on the rank's stage to `prefix<s><suffix>`.
  void dispatchOnStage(const char *prefix, const char *type,
                       const char *zero, const std::string &suffix = "") {
    os << "    %stage = shard.process_linear_index on @gpt_devices : index\n"
       << "    %value = scf.index_switch %stage -> " << type << "\n";
    for (int64_t s = 0; s < config.stages; ++s)
      os << "    case " << s << " {\n"
         << "      %v = func.call @" << prefix << s << suffix << "() : () -> "
         << type
         << "\n"
         << "      scf.yield %v : " << type << "\n"
         << "    }\n";
    os << "    default {\n"
       << "      %none = arith.constant " << zero << " : " << type << "\n"
       << "      scf.yield %none : " << type << "\n"
       << "    }\n";
  }

  /// @train_step<suffix>: one step on every rank of the pipeline with
  /// group size k; returns the mean loss.
  void emitTrainStep(int64_t groupSize, const std::string &suffix) {
    os << "  // One training step on every rank of the pipeline; returns the "
          "mean loss.\n"
       << "  func.func @train_step" << suffix
       << "(%iteration: i64) -> f32 attributes {hetero.group_size = "
       << groupSize << " : i64, hetero.stages = " << config.stages
       << " : i64, hetero.microbatches = " << config.microbatches
       << " : i64} {\n";
    initialiseOnFirstIteration();
    dispatchOnStage("train_stage", "f32", "0.0", suffix);
    returnPipelineSum("%value", "f32");
  }

  /// The same step on one process: each micro-batch through all stages.
  void emitReferenceStep() {
    os << "  // The same step on a single process.\n"
       << "  func.func @train_step_reference(%iteration: i64) -> f32 {\n";
    initialiseOnFirstIteration();
    emitPrologue();
    std::vector<std::vector<std::string>> params, grads;
    for (int64_t s = 0; s < config.stages; ++s) {
      params.push_back(loadParams(s));
      grads.push_back(zeroGrads(s));
    }
    std::string loss = "%zero";
    for (int64_t i = 0; i < config.microbatches; ++i) {
      std::vector<std::string> inputs = {data("input", i)};
      std::string target = data("target", i);
      for (int64_t s = 0; s + 1 < config.stages; ++s)
        inputs.push_back(forward(s, inputs[s], params[s], ""));
      int64_t last = config.stages - 1;
      loss = addLoss(loss, forward(last, inputs[last], params[last], target));
      std::string dy;
      for (int64_t s = last; s >= 0; --s) {
        std::string results = backward(s, inputs[s], params[s], target, dy);
        accumulate(s, grads[s], results, s > 0 ? 1 : 0);
        dy = results + "#0";
      }
    }
    for (int64_t s = 0; s < config.stages; ++s)
      applySgd(s, grads[s]);
    os << "    %count = arith.constant "
       << literal(double(config.microbatches)) << " : f32\n"
       << "    %mean = arith.divf " << loss << ", %count : f32\n"
       << "    return %mean : f32\n  }\n\n";
  }

  void sgdWith(int64_t stage, const std::vector<std::string> &grads,
               const std::string &stepSize) {
    for (size_t k = 0; k < grads.size(); ++k) {
      const Parameter &param = stages[stage][k];
      std::string type = memrefType(param.rows, param.cols);
      std::string g = next("%g"), buffer = next("%grad");
      os << "    " << g << " = memref.get_global " << global(stage, param)
         << " : " << type << "\n"
         << "    " << buffer << " = bufferization.to_buffer " << grads[k]
         << " read_only : " << matrixType(param.rows, param.cols) << " to "
         << type << "\n"
         << "    linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, "
            "j)>, affine_map<(i, j) -> (i, j)>], iterator_types = "
            "[\"parallel\", \"parallel\"]} ins("
         << buffer << " : " << type << ") outs(" << g << " : " << type
         << ") {\n"
         << "    ^bb0(%gr: f32, %w: f32):\n"
         << "      %delta = arith.mulf %gr, " << stepSize << " : f32\n"
         << "      %updated = arith.subf %w, %delta : f32\n"
         << "      linalg.yield %updated : f32\n"
         << "    }\n";
    }
  }

  void emitDigests() {
    os << "  // A weighted sum of every parameter, over the pipeline.\n"
       << "  func.func @weights_digest() -> f64 {\n";
    dispatchOnStage("digest_stage", "f64", "0.0");
    returnPipelineSum("%value", "f64");
    os << "  func.func @weights_digest_reference() -> f64 {\n"
       << "    %zero64 = arith.constant 0.0 : f64\n";
    std::string total = "%zero64";
    for (int64_t s = 0; s < config.stages; ++s) {
      std::string value = next("%d"), sum = next("%sum");
      os << "    " << value << " = func.call @digest_stage" << s
         << "() : () -> f64\n"
         << "    " << sum << " = arith.addf " << total << ", " << value
         << " : f64\n";
      total = sum;
    }
    os << "    return " << total << " : f64\n  }\n\n";
  }

  const GptConfig &config;
  const TrainingOptions &options;
  std::ostream &os;
  int64_t tokens;
  std::vector<std::vector<Parameter>> stages;
  std::map<std::string, int64_t> ordinals;
  int64_t counter = 0;
};

} // namespace

std::vector<std::string> validateTraining(const GptConfig &config,
                                          const TrainingOptions &options) {
  std::vector<std::string> problems = validate(config);
  auto require = [&](bool ok, const std::string &message) {
    if (!ok)
      problems.push_back(message);
  };
  require(config.dataParallel == 1 && config.tp == 1,
          "--train runs one replica of a pipeline: it needs --dp 1 and "
          "--tp 1");
  require(config.compressor == "none",
          "--train needs --compress none: compressed collectives are not "
          "lowered to the runtime yet");
  require(config.checkpointReplicas == 0,
          "--train needs --checkpoint-replicas 0: checkpoints are not "
          "lowered to the runtime yet");
  require(options.groupSize >= 1, "--group-size must be at least 1");
  for (int64_t k : options.adaptiveGroupSizes)
    require(k >= 1, "--adaptive-group-sizes must list group sizes of at "
                    "least 1");
  require(options.learningRate > 0.0, "--lr must be positive");
  return problems;
}

std::string emitGptTraining(const GptConfig &config,
                            const TrainingOptions &options) {
  std::string model = emitGpt(config);
  std::ostringstream os;
  os << model.substr(0, model.rfind('}'));
  TrainingEmitter(config, options, os).emit();
  os << "}\n";
  return os.str();
}

} // namespace hetero::models
