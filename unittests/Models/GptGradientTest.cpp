//===- GptGradientTest.cpp - derived GPT gradients, finite differences ---===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Compiles the generated GPT with the CPU pipeline (hetero-lower-to-cpu),
// JITs it and checks every stage's derived backward function against
// central finite differences of its forward function. A stage that is not the
// last is checked through the scalar <forward(x, params), R> for a fixed random
// R, whose gradients are the backward's results for the output gradient R; the
// last stage through its loss. Every parameter and every floating-point
// input is checked, at its entries of largest gradient and at random ones.
// Each function is called through a wrapper of memref arguments (built
// with builders, C interface), so the test hands it host buffers.
//
//===----------------------------------------------------------------------===//

#include "../Common/CompiledFunctions.h"
#include "Autodiff.h"

#include "hetero/Dialect/Hetero.h"
#include "hetero/Models/Gpt.h"

#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace hetero::testing;
using hetero::models::GptConfig;

namespace {

/// Which backward functions are checked: those hetero-derive-backward's
/// differentiation derives from the stage forwards, or the derived ones
/// with saved residuals and split into their input and weight parts,
/// composed (augmented forward, input part, weight part) into the
/// backward's ABI.
enum class Backward { Derived, SavedSplit };

const char *backwardName(Backward backward) {
  switch (backward) {
  case Backward::Derived:
    return "Derived";
  case Backward::SavedSplit:
    return "SavedSplit";
  }
  return "";
}

/// (stages, backward).
class GptGradientTest
    : public CompiledFunctionsTest,
      public ::testing::WithParamInterface<std::tuple<int64_t, Backward>> {};

/// `@name(inputs..., [output gradient]) -> (gradients...)`: the augmented
/// forward, then the input part with its residuals, then the weight part
/// with what the input part saved; the input part's gradient (when it has
/// one) and the weight part's, as the unsplit backward returns them.
func::FuncOp composeSavedSplit(ModuleOp module, StringRef name,
                               func::FuncOp forward, func::FuncOp augmented,
                               func::FuncOp backwardInput,
                               func::FuncOp backwardWeight, bool last) {
  OpBuilder builder(module.getBodyRegion());
  builder.setInsertionPointToEnd(module.getBody());
  Location loc = module.getLoc();
  SmallVector<Type> inputs(forward.getArgumentTypes());
  if (!last)
    inputs.push_back(forward.getResultTypes().front());
  unsigned saved = backwardWeight.getNumArguments() - forward.getNumArguments();
  bool inputGradient = backwardInput.getNumResults() > saved;
  SmallVector<Type> results;
  if (inputGradient)
    results.push_back(backwardInput.getResultTypes().front());
  llvm::append_range(results, backwardWeight.getResultTypes());
  auto composed = func::FuncOp::create(
      builder, loc, name, builder.getFunctionType(inputs, results));
  builder.setInsertionPointToStart(composed.addEntryBlock());
  ValueRange arguments = composed.getArguments();
  ValueRange forwardArguments = arguments.take_front(forward.getNumArguments());
  auto kept = func::CallOp::create(builder, loc, augmented, forwardArguments);
  SmallVector<Value> inputArguments(forwardArguments);
  llvm::append_range(inputArguments, kept.getResults().drop_front());
  if (!last)
    inputArguments.push_back(arguments.back());
  auto input =
      func::CallOp::create(builder, loc, backwardInput, inputArguments);
  SmallVector<Value> weightArguments(forwardArguments);
  llvm::append_range(weightArguments, input.getResults().take_back(saved));
  auto weight =
      func::CallOp::create(builder, loc, backwardWeight, weightArguments);
  SmallVector<Value> returned;
  if (inputGradient)
    returned.push_back(input.getResult(0));
  llvm::append_range(returned, weight.getResults());
  func::ReturnOp::create(builder, loc, returned);
  return composed;
}

TEST_P(GptGradientTest, EveryBackwardMatchesFiniteDifferencesOfItsForward) {
  GptConfig config;
  config.vocab = 11;
  config.layers = 2;
  config.hidden = 8;
  config.seq = 4;
  config.batch = 2;
  config.stages = std::get<0>(GetParam());
  Backward mode = std::get<1>(GetParam());
  // One head on one stage, two on two: the head split covers both.
  config.heads = config.stages;
  ASSERT_TRUE(hetero::models::validate(config).empty());
  OwningOpRef<ModuleOp> module = hetero::models::buildGpt(&context, config);
  ASSERT_TRUE(module);
  // The stage functions only: the pipeline, the data and the generation
  // need the runtime.
  for (Operation &op : llvm::make_early_inc_range(module->getOps()))
    if (isa<hetero::PipelineOp>(op) ||
        (isa<func::FuncOp>(op) &&
         (cast<func::FuncOp>(op).getSymName() == "gpt_data" ||
          cast<func::FuncOp>(op).getSymName() == "gpt_generate")))
      op.erase();
  std::vector<func::FuncOp> forwards, backwards;
  hetero::Differentiator differentiator(*module, mode == Backward::SavedSplit);
  hetero::BackwardSplitter splitter(*module, differentiator.symbolTable());
  for (int64_t s = 0; s < config.stages; ++s) {
    std::string prefix = "gpt_stage" + std::to_string(s);
    forwards.push_back(module->lookupSymbol<func::FuncOp>(prefix + "_forward"));
    bool last = s + 1 == config.stages;
    // The stage ABI: the input's gradient when it is floating-point (not
    // stage 0's token ids), then every parameter's.
    FunctionType type = forwards.back().getFunctionType();
    hetero::GradientRequest request;
    request.loss = last;
    size_t params = hetero::models::stageParameters(config, s).size();
    for (unsigned i = 0; i < type.getNumInputs(); ++i)
      request.wrt.push_back(i == 0 ? s > 0 : i <= params);
    if (mode == Backward::Derived) {
      backwards.push_back(differentiator.derive(
          forwards.back(), prefix + "_derived_backward", request));
    } else {
      auto parts = differentiator.deriveAugmented(
          forwards.back(), prefix + "_derived_backward",
          prefix + "_derived_augmented", request);
      ASSERT_TRUE(parts);
      SmallVector<bool> first(parts->reverse.getNumResults(), false);
      first[0] = s > 0;
      auto split = splitter.split(
          parts->reverse, first, prefix + "_derived_backward_input",
          prefix + "_derived_backward_weight", type.getNumInputs());
      ASSERT_TRUE(succeeded(split));
      backwards.push_back(composeSavedSplit(
          *module, prefix + "_composed_backward", forwards.back(),
          parts->augmented, split->first, split->second, last));
    }
    ASSERT_TRUE(forwards.back() && backwards.back());
    addWrapper(*module, forwards.back(), "forward" + std::to_string(s));
    addWrapper(*module, backwards.back(), "backward" + std::to_string(s));
  }
  std::vector<FunctionType> forwardTypes, backwardTypes;
  for (int64_t s = 0; s < config.stages; ++s) {
    forwardTypes.push_back(forwards[s].getFunctionType());
    backwardTypes.push_back(backwards[s].getFunctionType());
  }

  // The products run through the runtime's hrt_cpu_sgemm, as in
  // hetero-run, when the runtime was built.
#ifdef HETERO_RT_LIBRARY
  compile(*module, HETERO_RT_LIBRARY);
#else
  compile(*module);
#endif
  if (HasFatalFailure())
    return;

  std::mt19937_64 random(7);
  GradientErrors errors;
  for (int64_t s = 0; s < config.stages; ++s) {
    bool last = s + 1 == config.stages;
    std::string index = std::to_string(s);
    FunctionType forward = forwardTypes[size_t(s)];
    // The forward's inputs: the input, the parameters, the target.
    std::vector<std::unique_ptr<HostTensor>> inputs;
    std::vector<std::string> names = {"input"};
    std::vector<hetero::models::Parameter> params =
        hetero::models::stageParameters(config, s);
    for (const auto &param : params)
      names.push_back(param.name);
    if (last)
      names.push_back("target");
    ASSERT_EQ(names.size(), forward.getNumInputs());
    for (auto [type, name] : llvm::zip(forward.getInputs(), names)) {
      inputs.push_back(
          std::make_unique<HostTensor>(cast<RankedTensorType>(type)));
      bool gain = StringRef(name).ends_with("_g");
      fill(*inputs.back(), random, config.vocab, gain ? 1.0 : 0.0,
           gain ? 0.2 : 0.5);
    }
    HostTensor output(cast<RankedTensorType>(forward.getResult(0)));
    // R, the output gradient of a stage that is not the last.
    std::unique_ptr<HostTensor> direction;
    if (!last) {
      direction = std::make_unique<HostTensor>(
          cast<RankedTensorType>(forward.getResult(0)));
      fill(*direction, random, config.vocab, 0.0, 1.0);
    }
    auto objective = [&]() -> double {
      std::vector<HostTensor *> arguments;
      for (auto &input : inputs)
        arguments.push_back(input.get());
      arguments.push_back(&output);
      call("forward" + index, arguments);
      return last ? output.at(0) : dot(output, *direction);
    };

    // Analytic gradients.
    FunctionType backward = backwardTypes[size_t(s)];
    std::vector<std::unique_ptr<HostTensor>> gradients;
    for (Type type : backward.getResults())
      gradients.push_back(
          std::make_unique<HostTensor>(cast<RankedTensorType>(type)));
    std::vector<HostTensor *> arguments;
    for (auto &input : inputs)
      arguments.push_back(input.get());
    if (direction)
      arguments.push_back(direction.get());
    for (auto &gradient : gradients)
      arguments.push_back(gradient.get());
    call("backward" + index, arguments);
    // Which forward input each gradient belongs to: the input's, when it
    // has one (floating-point), then the parameters'.
    bool inputGradient = !inputs.front()->isInteger();
    ASSERT_EQ(gradients.size(), params.size() + (inputGradient ? 1 : 0));

    for (size_t g = 0; g < gradients.size(); ++g) {
      size_t which = inputGradient ? g : g + 1;
      // Float32 differences of the objective: a 1e-2 step, 3% tolerance.
      checkGradient(*inputs[which], *gradients[g], objective, 1e-2, 3e-2,
                    random, "stage " + index + ", " + names[which], errors);
    }

    // Large activations: with the MLP's up projections 1000 times larger,
    // GELU's argument reaches where exp(2u) overflows f32; the derivative
    // there is 0, and every gradient stays finite (an inf / inf in GELU's
    // chain rule would make it NaN).
    for (size_t i = 0; i < names.size(); ++i)
      if (StringRef(names[i]).ends_with("_w1"))
        for (size_t e = 0; e < inputs[i]->size(); ++e)
          inputs[i]->set(e, 1000.0 * inputs[i]->at(e));
    call("backward" + index, arguments);
    for (size_t g = 0; g < gradients.size(); ++g) {
      size_t bad = 0;
      for (size_t e = 0; e < gradients[g]->size(); ++e)
        bad += !std::isfinite(gradients[g]->at(e));
      EXPECT_EQ(bad, 0u) << "stage " << s << ": gradient " << g
                         << " has entries that are not finite";
    }
  }
  std::printf("checked %lld gradient entries: largest relative error %g\n",
              (long long)errors.checked, errors.worst);
}

INSTANTIATE_TEST_SUITE_P(
    Stages, GptGradientTest,
    ::testing::Combine(::testing::Values(1, 2),
                       ::testing::Values(Backward::Derived,
                                         Backward::SavedSplit)),
    [](const ::testing::TestParamInfo<std::tuple<int64_t, Backward>> &info) {
      return std::to_string(std::get<0>(info.param)) + "Stages" +
             backwardName(std::get<1>(info.param));
    });

} // namespace
