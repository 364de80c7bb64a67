//===- CompiledFunctions.h - calling JIT-compiled tensor functions -*- C++
//-*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The gradient tests compile functions on tensors with the CPU pipeline
// (hetero-lower-to-cpu), JIT them and call them on host buffers: each
// function gets a wrapper of memref arguments with the C interface, built
// with builders, and the test hands it HostTensors. checkGradient compares
// a derivative with central finite differences of an objective.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_UNITTESTS_COMMON_COMPILEDFUNCTIONS_H
#define HETERO_UNITTESTS_COMMON_COMPILEDFUNCTIONS_H

#include "hetero/InitAll.h"
#include "hetero/Passes/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/Support/TargetSelect.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace hetero::testing {

/// A host tensor of f32, f64 or i32 elements with the memref descriptor
/// that compiled code reads: allocated and aligned pointer, offset, then
/// sizes and strides (rank <= 4).
struct HostTensor {
  std::vector<int64_t> shape;
  mlir::Type element;
  std::vector<char> storage;
  struct {
    void *allocated, *aligned;
    int64_t offset;
    int64_t sizesAndStrides[8];
  } descriptor;
  void *descriptorPointer = nullptr;

  explicit HostTensor(mlir::RankedTensorType type)
      : shape(type.getShape()), element(type.getElementType()) {
    storage.assign(size_t(type.getNumElements()) * elementBytes(), 0);
    descriptor.allocated = descriptor.aligned = storage.data();
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

  bool isInteger() const { return element.isInteger(32); }
  size_t elementBytes() const { return element.isF64() ? 8 : 4; }
  size_t size() const { return storage.size() / elementBytes(); }
  double at(size_t index) const {
    if (element.isF64()) {
      double value;
      std::memcpy(&value, storage.data() + 8 * index, 8);
      return value;
    }
    if (isInteger()) {
      int32_t value;
      std::memcpy(&value, storage.data() + 4 * index, 4);
      return value;
    }
    float value;
    std::memcpy(&value, storage.data() + 4 * index, 4);
    return value;
  }
  void set(size_t index, double value) {
    if (element.isF64()) {
      std::memcpy(storage.data() + 8 * index, &value, 8);
    } else if (isInteger()) {
      int32_t narrow = int32_t(value);
      std::memcpy(storage.data() + 4 * index, &narrow, 4);
    } else {
      float narrow = float(value);
      std::memcpy(storage.data() + 4 * index, &narrow, 4);
    }
  }
};

/// Fills `tensor`: integers below `vocab`, or normal values around `mean`.
inline void fill(HostTensor &tensor, std::mt19937_64 &random, int64_t vocab,
                 double mean, double deviation) {
  std::normal_distribution<double> normal(mean, deviation);
  for (size_t i = 0; i < tensor.size(); ++i)
    tensor.set(i, tensor.isInteger() ? double(random() % uint64_t(vocab))
                                     : normal(random));
}

/// The dot product of two tensors of the same shape.
inline double dot(const HostTensor &a, const HostTensor &b) {
  double sum = 0.0;
  for (size_t i = 0; i < a.size(); ++i)
    sum += a.at(i) * b.at(i);
  return sum;
}

/// Adds `@<name>(memref args..., memref results...)` with the C interface:
/// the callee on tensors of the arguments, its results written into the
/// result buffers.
inline void addWrapper(mlir::ModuleOp module, mlir::func::FuncOp callee,
                       llvm::StringRef name) {
  using namespace mlir;
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

/// A test fixture with a context of every dialect, that lowers a module
/// with hetero-lower-to-cpu, JITs it and calls its wrappers.
class CompiledFunctionsTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    hetero::registerAllPasses();
  }

  CompiledFunctionsTest() {
    mlir::DialectRegistry registry;
    mlir::registerAllDialects(registry);
    mlir::registerAllExtensions(registry);
    hetero::registerAllDialects(registry);
    mlir::registerBuiltinDialectTranslation(registry);
    mlir::registerLLVMDialectTranslation(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Lowers `module` to the LLVM dialect and JITs it; the products run
  /// through the runtime's hrt_cpu_sgemm when `runtime` names its library,
  /// else as loops.
  void compile(mlir::ModuleOp module, const char *runtime = nullptr) {
    mlir::PassManager lower(&context);
    hetero::CpuPipelineOptions pipeline;
    if (!runtime) {
      pipeline.matmul = hetero::CpuMatmul::loops;
      pipeline.runtimeAllocator = false;
    }
    ASSERT_TRUE(succeeded(hetero::buildLowerToCpuPipeline(lower, pipeline)));
    ASSERT_TRUE(succeeded(lower.run(module)));
    mlir::ExecutionEngineOptions options;
    options.transformer = optimize;
    llvm::SmallVector<llvm::StringRef> libraries = {HETERO_C_RUNNER_UTILS};
    if (runtime)
      libraries.push_back(runtime);
    options.sharedLibPaths = libraries;
    auto created = mlir::ExecutionEngine::create(module, options);
    ASSERT_TRUE(bool(created)) << llvm::toString(created.takeError());
    engine = std::move(*created);
  }

  /// Calls wrapper `name` on `tensors` (arguments, then results).
  void call(llvm::StringRef name, const std::vector<HostTensor *> &tensors) {
    std::vector<void *> arguments;
    for (HostTensor *tensor : tensors)
      arguments.push_back(&tensor->descriptorPointer);
    llvm::Error error =
        engine->invokePacked(("_mlir_ciface_" + name).str(), arguments);
    ASSERT_FALSE(bool(error)) << llvm::toString(std::move(error));
  }

  mlir::MLIRContext context;
  // options.transformer is a function_ref: the transformer outlives it.
  std::function<llvm::Error(llvm::Module *)> optimize =
      mlir::makeOptimizingTransformer(2, 0, nullptr);
  std::unique_ptr<mlir::ExecutionEngine> engine;
};

/// The largest relative difference found and the entries compared.
struct GradientErrors {
  double worst = 0.0;
  int64_t checked = 0;
};

/// Compares `analytic`, the derivative of `objective` with respect to
/// `value`, with central differences of step `epsilon` at the `count`
/// entries of largest derivative and `count` random ones. The error is
/// relative to the entry's magnitude, with a floor at 1% of the largest
/// derivative; each must be below `tolerance`. A derivative that vanishes
/// everywhere fails (it would check nothing).
inline void checkGradient(HostTensor &value, const HostTensor &analytic,
                          const std::function<double()> &objective,
                          double epsilon, double tolerance,
                          std::mt19937_64 &random, const std::string &what,
                          GradientErrors &errors, size_t count = 3) {
  ASSERT_EQ(analytic.size(), value.size()) << what;
  std::vector<size_t> order(analytic.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::fabs(analytic.at(a)) > std::fabs(analytic.at(b));
  });
  double largest = std::fabs(analytic.at(order[0]));
  EXPECT_GT(largest, 1e-3) << what << ": the derivative vanishes";
  std::vector<size_t> entries(order.begin(),
                              order.begin() + std::min(count, order.size()));
  for (size_t r = 0; r < count; ++r)
    entries.push_back(size_t(random() % analytic.size()));
  for (size_t entry : entries) {
    double saved = value.at(entry);
    value.set(entry, saved + epsilon);
    double plus = objective();
    value.set(entry, saved - epsilon);
    double minus = objective();
    value.set(entry, saved);
    double difference = (plus - minus) / (2.0 * epsilon);
    double error = std::fabs(difference - analytic.at(entry)) /
                   std::max({std::fabs(difference),
                             std::fabs(analytic.at(entry)), 1e-2 * largest});
    errors.worst = std::max(errors.worst, error);
    ++errors.checked;
    EXPECT_LT(error, tolerance)
        << what << "[" << entry << "]: finite difference " << difference
        << ", derivative " << analytic.at(entry);
  }
}

} // namespace hetero::testing

#endif // HETERO_UNITTESTS_COMMON_COMPILEDFUNCTIONS_H
