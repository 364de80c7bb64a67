//===- GptGradientTest.cpp - the GPT's backward against finite differences
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Compiles the generated GPT with the CPU pipeline (hetero-lower-to-cpu),
// JITs it and checks every stage's backward function against central finite
// differences of its forward function. A stage that is not the last is
// checked through the scalar <forward(x, params), R> for a fixed random R,
// whose gradients are the backward's results for the output gradient R; the
// last stage through its loss. Every parameter and every floating-point
// input is checked, at its entries of largest gradient and at random ones.
// Each function is called through a wrapper of memref arguments (built
// with builders, C interface), so the test hands it host buffers.
//
//===----------------------------------------------------------------------===//

#include "hetero/Dialect/Hetero.h"
#include "hetero/InitAll.h"
#include "hetero/Models/Gpt.h"
#include "hetero/Passes/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/Support/TargetSelect.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>

using namespace mlir;
using hetero::models::GptConfig;

namespace {

/// A host tensor with the memref descriptor that compiled code reads:
/// allocated and aligned pointer, offset, then sizes and strides (rank <= 2).
struct HostTensor {
  std::vector<int64_t> shape;
  bool integer = false;
  std::vector<float> floats;
  std::vector<int32_t> ints;
  struct {
    void *allocated, *aligned;
    int64_t offset;
    int64_t sizesAndStrides[4];
  } descriptor;
  void *descriptorPointer = nullptr;

  explicit HostTensor(RankedTensorType type)
      : shape(type.getShape()), integer(type.getElementType().isInteger(32)) {
    size_t count = size_t(type.getNumElements());
    if (integer)
      ints.assign(count, 0);
    else
      floats.assign(count, 0.0f);
    void *data = integer ? static_cast<void *>(ints.data())
                         : static_cast<void *>(floats.data());
    descriptor.allocated = descriptor.aligned = data;
    descriptor.offset = 0;
    int64_t rank = int64_t(shape.size()), stride = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      descriptor.sizesAndStrides[d] = shape[size_t(d)];
      descriptor.sizesAndStrides[rank + d] = stride;
      stride *= shape[size_t(d)];
    }
    descriptorPointer = &descriptor;
  }
  HostTensor(const HostTensor &) = delete;
  HostTensor &operator=(const HostTensor &) = delete;
};

/// Adds `@<name>(memref args..., memref results...)` with the C interface:
/// the callee on tensors of the arguments, its results written into the
/// result buffers.
void addWrapper(ModuleOp module, func::FuncOp callee, StringRef name) {
  OpBuilder builder(module.getContext());
  builder.setInsertionPointToEnd(module.getBody());
  Location loc = module.getLoc();
  FunctionType type = callee.getFunctionType();
  auto memrefOf = [](Type tensor) {
    auto ranked = cast<RankedTensorType>(tensor);
    return MemRefType::get(ranked.getShape(), ranked.getElementType());
  };
  SmallVector<Type> arguments;
  for (Type input : type.getInputs())
    arguments.push_back(memrefOf(input));
  for (Type result : type.getResults())
    arguments.push_back(memrefOf(result));
  auto wrapper = func::FuncOp::create(builder, loc, name,
                                      builder.getFunctionType(arguments, {}));
  wrapper->setAttr("llvm.emit_c_interface", builder.getUnitAttr());
  Block *entry = wrapper.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  SmallVector<Value> tensors;
  for (auto [input, argument] :
       llvm::zip(type.getInputs(), entry->getArguments()))
    tensors.push_back(bufferization::ToTensorOp::create(
        builder, loc, input, argument, /*restrict=*/builder.getUnitAttr(),
        /*writable=*/UnitAttr()));
  auto call = func::CallOp::create(builder, loc, callee, tensors);
  for (auto [result, buffer] :
       llvm::zip(call.getResults(),
                 entry->getArguments().drop_front(type.getNumInputs())))
    bufferization::MaterializeInDestinationOp::create(
        builder, loc, TypeRange{}, result, buffer, /*restrict=*/true,
        /*writable=*/true);
  func::ReturnOp::create(builder, loc);
}

class GptGradientTest : public ::testing::TestWithParam<int64_t> {
protected:
  static void SetUpTestSuite() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    hetero::registerAllPasses();
  }

  GptGradientTest() {
    DialectRegistry registry;
    mlir::registerAllDialects(registry);
    mlir::registerAllExtensions(registry);
    hetero::registerAllDialects(registry);
    registerBuiltinDialectTranslation(registry);
    registerLLVMDialectTranslation(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Calls wrapper `name` on `tensors` (arguments, then results).
  void call(StringRef name, std::vector<HostTensor *> tensors) {
    std::vector<void *> arguments;
    for (HostTensor *tensor : tensors)
      arguments.push_back(&tensor->descriptorPointer);
    llvm::Error error =
        engine->invokePacked(("_mlir_ciface_" + name).str(), arguments);
    ASSERT_FALSE(bool(error)) << llvm::toString(std::move(error));
  }

  MLIRContext context;
  std::unique_ptr<ExecutionEngine> engine;
};

/// Fills `tensor`: token ids below `vocab`, or normal values around `mean`.
void fill(HostTensor &tensor, std::mt19937_64 &random, int64_t vocab,
          float mean, float deviation) {
  if (tensor.integer) {
    for (int32_t &id : tensor.ints)
      id = int32_t(random() % uint64_t(vocab));
    return;
  }
  std::normal_distribution<float> normal(mean, deviation);
  for (float &value : tensor.floats)
    value = normal(random);
}

TEST_P(GptGradientTest, EveryBackwardMatchesFiniteDifferencesOfItsForward) {
  GptConfig config;
  config.vocab = 11;
  config.layers = 2;
  config.hidden = 8;
  config.seq = 4;
  config.batch = 2;
  config.stages = GetParam();
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
  for (int64_t s = 0; s < config.stages; ++s) {
    std::string prefix = "gpt_stage" + std::to_string(s);
    forwards.push_back(module->lookupSymbol<func::FuncOp>(prefix + "_forward"));
    backwards.push_back(
        module->lookupSymbol<func::FuncOp>(prefix + "_backward"));
    ASSERT_TRUE(forwards.back() && backwards.back());
    addWrapper(*module, forwards.back(), "forward" + std::to_string(s));
    addWrapper(*module, backwards.back(), "backward" + std::to_string(s));
  }
  std::vector<FunctionType> forwardTypes, backwardTypes;
  for (int64_t s = 0; s < config.stages; ++s) {
    forwardTypes.push_back(forwards[s].getFunctionType());
    backwardTypes.push_back(backwards[s].getFunctionType());
  }

  PassManager lower(&context);
  hetero::CpuPipelineOptions pipeline;
#ifndef HETERO_RT_LIBRARY
  pipeline.matmul = hetero::CpuMatmul::loops;
#endif
  ASSERT_TRUE(succeeded(hetero::buildLowerToCpuPipeline(lower, pipeline)));
  ASSERT_TRUE(succeeded(lower.run(*module)));
  // options.transformer is a function_ref: the transformer must outlive it.
  std::function<llvm::Error(llvm::Module *)> optimize =
      makeOptimizingTransformer(2, 0, nullptr);
  ExecutionEngineOptions options;
  options.transformer = optimize;
  SmallVector<StringRef> libraries = {HETERO_C_RUNNER_UTILS};
#ifdef HETERO_RT_LIBRARY
  libraries.push_back(HETERO_RT_LIBRARY);
#endif
  options.sharedLibPaths = libraries;
  auto created = ExecutionEngine::create(*module, options);
  ASSERT_TRUE(bool(created)) << llvm::toString(created.takeError());
  engine = std::move(*created);

  std::mt19937_64 random(7);
  int64_t checked = 0;
  double worst = 0.0;
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
      fill(*inputs.back(), random, config.vocab, gain ? 1.0f : 0.0f,
           gain ? 0.2f : 0.5f);
    }
    HostTensor output(cast<RankedTensorType>(forward.getResult(0)));
    // R, the output gradient of a stage that is not the last.
    std::unique_ptr<HostTensor> direction;
    if (!last) {
      direction = std::make_unique<HostTensor>(
          cast<RankedTensorType>(forward.getResult(0)));
      fill(*direction, random, config.vocab, 0.0f, 1.0f);
    }
    auto objective = [&]() -> double {
      std::vector<HostTensor *> arguments;
      for (auto &input : inputs)
        arguments.push_back(input.get());
      arguments.push_back(&output);
      call("forward" + index, arguments);
      if (last)
        return output.floats[0];
      double sum = 0.0;
      for (size_t i = 0; i < output.floats.size(); ++i)
        sum += double(output.floats[i]) * double(direction->floats[i]);
      return sum;
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
    bool inputGradient = !inputs.front()->integer;
    ASSERT_EQ(gradients.size(), params.size() + (inputGradient ? 1 : 0));

    for (size_t g = 0; g < gradients.size(); ++g) {
      size_t which = inputGradient ? g : g + 1;
      HostTensor &value = *inputs[which];
      const std::vector<float> &analytic = gradients[g]->floats;
      ASSERT_EQ(analytic.size(), value.floats.size());
      // The three entries of largest gradient and three random ones.
      std::vector<size_t> order(analytic.size());
      std::iota(order.begin(), order.end(), 0);
      std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return std::fabs(analytic[a]) > std::fabs(analytic[b]);
      });
      double largest = std::fabs(analytic[order[0]]);
      EXPECT_GT(largest, 1e-3) << "stage " << s << ": the gradient of "
                               << names[which] << " vanishes";
      std::vector<size_t> entries(
          order.begin(), order.begin() + std::min<size_t>(3, order.size()));
      for (int r = 0; r < 3; ++r)
        entries.push_back(size_t(random() % analytic.size()));
      for (size_t entry : entries) {
        float saved = value.floats[entry];
        const float epsilon = 1e-2f;
        value.floats[entry] = saved + epsilon;
        double plus = objective();
        value.floats[entry] = saved - epsilon;
        double minus = objective();
        value.floats[entry] = saved;
        double difference = (plus - minus) / (2.0 * double(epsilon));
        // Relative to the entry's magnitude, with a floor at 1% of the
        // tensor's largest gradient (float32 differences of the objective).
        double error =
            std::fabs(difference - double(analytic[entry])) /
            std::max({std::fabs(difference), std::fabs(double(analytic[entry])),
                      1e-2 * largest});
        worst = std::max(worst, error);
        ++checked;
        EXPECT_LT(error, 3e-2) << "stage " << s << ", " << names[which] << "["
                               << entry << "]: finite difference " << difference
                               << ", backward " << analytic[entry];
      }
    }
  }
  std::printf("checked %lld gradient entries: largest relative error %g\n",
              (long long)checked, worst);
}

INSTANTIATE_TEST_SUITE_P(Stages, GptGradientTest, ::testing::Values(1, 2));

} // namespace
