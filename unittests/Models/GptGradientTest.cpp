//===- GptGradientTest.cpp - the GPT's backward against finite differences
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Compiles the generated GPT with the CPU pipeline (hetero-lower-to-cpu), JITs it and
// compares the gradients computed by the backward functions with central
// finite differences of the loss computed by the forward functions. The
// driver is written in MLIR and appended to the generated module; the shapes
// it uses are read off the generated function signatures.
//
//===----------------------------------------------------------------------===//

#include "hetero/Dialect/Hetero.h"
#include "hetero/InitAll.h"
#include "hetero/Models/Gpt.h"
#include "hetero/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/Support/TargetSelect.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <set>
#include <sstream>

using namespace mlir;
using hetero::models::GptConfig;

namespace {

/// The stage functions' input types, read off the generated module.
struct StageSignature {
  std::vector<std::pair<int64_t, int64_t>> params; // rows, cols
  bool hasTarget = false;
};

std::string matrixType(std::pair<int64_t, int64_t> shape) {
  return "tensor<" + std::to_string(shape.first) + "x" +
         std::to_string(shape.second) + "xf32>";
}

/// Writes the driver: @loss(x, target, params...) -> f32 runs the forward
/// chain; @check() -> f32 returns the largest relative difference between
/// analytic and finite-difference gradients over one entry of every
/// parameter; @gradient_size() -> f32 the sum of those entries' |gradient|.
std::string emitDriver(const std::vector<StageSignature> &stages,
                       std::pair<int64_t, int64_t> activation) {
  std::ostringstream os;
  std::string act = matrixType(activation);
  // Deterministic pseudo-random tensors: 0.5 sin(0.37 i + 0.91 j + seed).
  os << "func.func private @fill_matrix(%seed: f32, %init: tensor<?x?xf32>) -> tensor<?x?xf32> {\n"
     << "  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], "
        "iterator_types = [\"parallel\", \"parallel\"]} outs(%init : tensor<?x?xf32>) {\n"
     << "  ^bb0(%out: f32):\n"
     << "    %i = linalg.index 0 : index\n    %j = linalg.index 1 : index\n"
     << "    %ii = arith.index_cast %i : index to i64\n"
     << "    %ji = arith.index_cast %j : index to i64\n"
     << "    %fi = arith.sitofp %ii : i64 to f32\n    %fj = arith.sitofp %ji : i64 to f32\n"
     << "    %a = arith.constant 0.37 : f32\n    %b = arith.constant 0.91 : f32\n"
     << "    %half = arith.constant 0.5 : f32\n"
     << "    %t0 = arith.mulf %fi, %a : f32\n    %t1 = arith.mulf %fj, %b : f32\n"
     << "    %t2 = arith.addf %t0, %t1 : f32\n    %t3 = arith.addf %t2, %seed : f32\n"
     << "    %s = math.sin %t3 : f32\n    %v = arith.mulf %s, %half : f32\n"
     << "    linalg.yield %v : f32\n  } -> tensor<?x?xf32>\n"
     << "  return %r : tensor<?x?xf32>\n}\n\n";

  // Names of every parameter, stage by stage.
  std::vector<std::vector<std::string>> names(stages.size());
  std::vector<std::string> allParams, allTypes;
  for (size_t s = 0; s < stages.size(); ++s)
    for (size_t p = 0; p < stages[s].params.size(); ++p) {
      names[s].push_back("%p" + std::to_string(s) + "_" + std::to_string(p));
      allParams.push_back(names[s].back());
      allTypes.push_back(matrixType(stages[s].params[p]));
    }
  auto join = [](const std::vector<std::string> &items) {
    std::string text;
    for (const std::string &item : items)
      text += (text.empty() ? "" : ", ") + item;
    return text;
  };
  auto stageArgs = [&](size_t s, const std::string &x,
                       const std::vector<std::string> &params) {
    std::vector<std::string> values = {x}, types = {act};
    for (size_t p = 0; p < params.size(); ++p) {
      values.push_back(params[p]);
      types.push_back(matrixType(stages[s].params[p]));
    }
    if (stages[s].hasTarget) {
      values.push_back("%target");
      types.push_back(act);
    }
    return std::make_pair(values, types);
  };

  // @loss: the forward chain.
  os << "func.func @loss(%x: " << act << ", %target: " << act;
  for (size_t i = 0; i < allParams.size(); ++i)
    os << ", " << allParams[i] << ": " << allTypes[i];
  os << ") -> f32 {\n";
  std::string x = "%x";
  for (size_t s = 0; s < stages.size(); ++s) {
    auto [values, types] = stageArgs(s, x, names[s]);
    bool last = s + 1 == stages.size();
    std::string out = "%a" + std::to_string(s);
    os << "  " << out << " = func.call @gpt_stage" << s << "_forward("
       << join(values) << ") : (" << join(types) << ") -> "
       << (last ? "tensor<f32>" : act) << "\n";
    x = out;
  }
  os << "  %l = tensor.extract " << x << "[] : tensor<f32>\n  return %l : f32\n}\n\n";

  // The inputs every driver function builds.
  auto emitInputs = [&](std::ostream &out) {
    int seed = 0;
    auto fill = [&](const std::string &name, std::pair<int64_t, int64_t> shape) {
      std::string t = matrixType(shape);
      out << "  %seed_" << seed << " = arith.constant " << seed << ".5 : f32\n"
          << "  %e_" << seed << " = tensor.empty(%c" << shape.first << "_, %c"
          << shape.second << "_) : tensor<?x?xf32>\n"
          << "  %d_" << seed << " = func.call @fill_matrix(%seed_" << seed
          << ", %e_" << seed << ") : (f32, tensor<?x?xf32>) -> tensor<?x?xf32>\n"
          << "  " << name << " = tensor.cast %d_" << seed
          << " : tensor<?x?xf32> to " << t << "\n";
      ++seed;
    };
    std::set<int64_t> sizes = {activation.first, activation.second};
    for (const StageSignature &stage : stages)
      for (auto shape : stage.params)
        sizes.insert({shape.first, shape.second});
    for (int64_t size : sizes)
      out << "  %c" << size << "_ = arith.constant " << size << " : index\n";
    fill("%x", activation);
    fill("%target", activation);
    for (size_t s = 0; s < stages.size(); ++s)
      for (size_t p = 0; p < names[s].size(); ++p)
        fill(names[s][p], stages[s].params[p]);
  };
  std::string lossTypes = act + ", " + act + ", " + join(allTypes);

  // Analytic gradients: forward to every stage's input, then backward from
  // the last stage to the first, feeding each stage's input gradient on.
  auto emitGradients = [&](std::ostream &out) {
    std::vector<std::string> inputs = {"%x"};
    for (size_t s = 0; s + 1 < stages.size(); ++s) {
      auto [values, types] = stageArgs(s, inputs.back(), names[s]);
      std::string next = "%in" + std::to_string(s + 1);
      out << "  " << next << " = func.call @gpt_stage" << s << "_forward("
          << join(values) << ") : (" << join(types) << ") -> " << act << "\n";
      inputs.push_back(next);
    }
    std::string dy;
    for (size_t s = stages.size(); s-- > 0;) {
      auto [values, types] = stageArgs(s, inputs[s], names[s]);
      if (!dy.empty()) {
        values.push_back(dy);
        types.push_back(act);
      }
      // The input gradient first (stage 0's too), then the parameters'.
      std::vector<std::string> resultTypes = {act};
      for (auto shape : stages[s].params)
        resultTypes.push_back(matrixType(shape));
      std::string result = "%g" + std::to_string(s);
      out << "  " << result << ":" << resultTypes.size() << " = func.call @gpt_stage"
          << s << "_backward(" << join(values) << ") : (" << join(types)
          << ") -> (" << join(resultTypes) << ")\n";
      dy = s > 0 ? result + "#0" : "";
    }
  };

  // @check, and @gradient_size: the smallest |gradient| of the entries
  // @check compares.
  for (const char *function : {"check", "gradient_size"}) {
    bool check = std::string(function) == "check";
    os << "func.func @" << function << "() -> f32 attributes {llvm.emit_c_interface} {\n";
    emitInputs(os);
    emitGradients(os);
    os << "  %eps = arith.constant 1.0e-2 : f32\n  %two = arith.constant 2.0 : f32\n"
       << "  %floor = arith.constant 1.0e-3 : f32\n  %acc0 = arith.constant "
       << (check ? "0.0" : "0x7F800000") << " : f32\n";
    std::string acc = "%acc0";
    int entry = 0;
    for (size_t s = 0; s < stages.size(); ++s) {
      for (size_t p = 0; p < names[s].size(); ++p, ++entry) {
        auto shape = stages[s].params[p];
        int64_t i = (p * 7 + 3 + s) % shape.first, j = (p * 5 + 1) % shape.second;
        std::string e = std::to_string(entry), t = matrixType(shape);
        std::string grad = "%g" + std::to_string(s) + "#" + std::to_string(p + 1);
        os << "  %i" << e << " = arith.constant " << i << " : index\n"
           << "  %j" << e << " = arith.constant " << j << " : index\n"
           << "  %an" << e << " = tensor.extract " << grad << "[%i" << e << ", %j" << e << "] : " << t << "\n";
        if (!check) {
          os << "  %abs" << e << " = math.absf %an" << e << " : f32\n"
             << "  %acc" << entry + 1 << " = arith.minimumf " << acc << ", %abs" << e << " : f32\n";
          acc = "%acc" + std::to_string(entry + 1);
          continue;
        }
        os << "  %w" << e << " = tensor.extract " << names[s][p] << "[%i" << e << ", %j" << e << "] : " << t << "\n"
           << "  %wp" << e << " = arith.addf %w" << e << ", %eps : f32\n"
           << "  %wm" << e << " = arith.subf %w" << e << ", %eps : f32\n";
        for (const char *sign : {"p", "m"}) {
          std::string tensorName = "%t" + std::string(sign) + e;
          // Position of this parameter in the flat list.
          size_t flat = p;
          for (size_t q = 0; q < s; ++q)
            flat += names[q].size();
          std::vector<std::string> perturbed = allParams;
          perturbed[flat] = tensorName;
          os << "  " << tensorName << " = tensor.insert %w" << sign << e << " into "
             << names[s][p] << "[%i" << e << ", %j" << e << "] : " << t << "\n"
             << "  %l" << sign << e << " = func.call @loss(%x, %target, " << join(perturbed)
             << ") : (" << lossTypes << ") -> f32\n";
        }
        os << "  %diff" << e << " = arith.subf %lp" << e << ", %lm" << e << " : f32\n"
           << "  %den" << e << " = arith.mulf %two, %eps : f32\n"
           << "  %fd" << e << " = arith.divf %diff" << e << ", %den" << e << " : f32\n"
           << "  %err" << e << " = arith.subf %fd" << e << ", %an" << e << " : f32\n"
           << "  %aerr" << e << " = math.absf %err" << e << " : f32\n"
           << "  %afd" << e << " = math.absf %fd" << e << " : f32\n"
           << "  %aan" << e << " = math.absf %an" << e << " : f32\n"
           << "  %mag" << e << " = arith.addf %afd" << e << ", %aan" << e << " : f32\n"
           << "  %scale" << e << " = arith.maximumf %mag" << e << ", %floor : f32\n"
           << "  %rel" << e << " = arith.divf %aerr" << e << ", %scale" << e << " : f32\n"
           << "  %acc" << entry + 1 << " = arith.maximumf " << acc << ", %rel" << e << " : f32\n";
        acc = "%acc" + std::to_string(entry + 1);
      }
    }
    os << "  return " << acc << " : f32\n}\n\n";
  }
  return os.str();
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

  MLIRContext context;
};

TEST_P(GptGradientTest, BackwardMatchesFiniteDifferences) {
  GptConfig config;
  config.layers = 2;
  config.hidden = 8;
  config.heads = 2;
  config.seq = 4;
  config.batch = 2;
  config.stages = GetParam();
  config.tp = 1;
  config.dataParallel = 1;
  ASSERT_TRUE(hetero::models::validate(config).empty());
  OwningOpRef<ModuleOp> parsed = hetero::models::buildGpt(&context, config);
  ASSERT_TRUE(parsed);
  std::string model;
  llvm::raw_string_ostream modelStream(model);
  parsed->print(modelStream);

  // Read the stage signatures off the generated module.
  std::vector<StageSignature> stages(config.stages);
  for (int64_t s = 0; s < config.stages; ++s) {
    auto forward = parsed->lookupSymbol<func::FuncOp>(
        "gpt_stage" + std::to_string(s) + "_forward");
    ASSERT_TRUE(forward);
    stages[s].hasTarget = s + 1 == config.stages;
    ArrayRef<Type> inputs = forward.getFunctionType().getInputs();
    size_t params = inputs.size() - 1 - (stages[s].hasTarget ? 1 : 0);
    for (size_t p = 1; p <= params; ++p) {
      auto type = cast<RankedTensorType>(inputs[p]);
      stages[s].params.push_back({type.getDimSize(0), type.getDimSize(1)});
    }
  }
  std::pair<int64_t, int64_t> activation = {config.batch * config.seq,
                                            config.hidden};
  std::string source = model.substr(0, model.rfind('}')) +
                       emitDriver(stages, activation) + "}\n";

  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context);
  ASSERT_TRUE(module) << "the driver does not parse";

  // The CPU pipeline: the stage functions communicate nothing, so the model
  // needs no runtime.
  PassManager lower(&context);
  ASSERT_TRUE(succeeded(hetero::buildLowerToCpuPipeline(lower)));
  ASSERT_TRUE(succeeded(lower.run(*module)));
  if (getenv("HETERO_DUMP_LOWERED"))
    module->print(llvm::errs());
  bool runtimeCalled = false;
  module->walk([&](LLVM::CallOp call) {
    runtimeCalled |= call.getCallee() &&
                     call.getCallee()->starts_with("hrt_");
  });
  ASSERT_FALSE(runtimeCalled) << "a one-replica model still communicates";

  // options.transformer is a function_ref: the transformer must outlive it.
  std::function<llvm::Error(llvm::Module *)> optimize =
      makeOptimizingTransformer(2, 0, nullptr);
  ExecutionEngineOptions options;
  options.transformer = optimize;
  // memrefCopy and friends of the bufferized code.
  SmallVector<StringRef> libraries = {HETERO_C_RUNNER_UTILS};
  options.sharedLibPaths = libraries;
  auto engine = ExecutionEngine::create(*module, options);
  ASSERT_TRUE(bool(engine)) << llvm::toString(engine.takeError());

  float smallestGradient = 0.0f, maxRelativeError = 1.0f;
  ASSERT_FALSE(bool((*engine)->invoke(
      "gradient_size", ExecutionEngine::result(smallestGradient))));
  ASSERT_FALSE(bool(
      (*engine)->invoke("check", ExecutionEngine::result(maxRelativeError))));
  // Every checked entry carries real gradient (the smallest is 1.2e-3, so
  // a backward that returned 0 for it would be off by 100% of its finite
  // difference), and every one agrees with the finite difference of the
  // loss to 2% (float32, eps = 1e-2).
  RecordProperty("smallest_gradient", std::to_string(smallestGradient));
  RecordProperty("max_relative_error", std::to_string(maxRelativeError));
  std::printf("checked gradients: smallest |g| = %g, max relative error = %g\n",
              smallestGradient, maxRelativeError);
  EXPECT_GT(smallestGradient, 5e-4f);
  EXPECT_LT(maxRelativeError, 2e-2f);
}

INSTANTIATE_TEST_SUITE_P(Stages, GptGradientTest, ::testing::Values(1, 2));

} // namespace
