//===- AutodiffTest.cpp - derived gradients against finite differences ----===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Each case is a function @f on tensors that exercises differentiation
// rules (passes/Autodiff.h). The test derives @f_backward with respect to
// every floating-point argument, compiles both with the CPU pipeline and
// compares each derived gradient with central finite differences of the
// scalar <f(x), R> for a random R, at the entries of largest gradient and
// at random ones. The cases compute in f64, so that a difference above
// 1e-5 relative is a wrong rule, not rounding (they agree to 1e-7).
//
//===----------------------------------------------------------------------===//

#include "Autodiff.h"
#include "../Common/CompiledFunctions.h"

#include "hetero/Dialect/Hetero.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

using namespace mlir;
using namespace hetero::testing;

namespace {

struct Case {
  const char *name;
  const char *source;
};

class AutodiffTest : public CompiledFunctionsTest,
                     public ::testing::WithParamInterface<Case> {};

TEST_P(AutodiffTest, DerivedGradientsMatchFiniteDifferences) {
  const Case &param = GetParam();
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(param.source, &context);
  ASSERT_TRUE(module) << param.name << " does not parse";
  auto forward = module->lookupSymbol<func::FuncOp>("f");
  ASSERT_TRUE(forward);
  FunctionType type = forward.getFunctionType();
  hetero::GradientRequest request;
  for (Type input : type.getInputs())
    request.wrt.push_back(
        isa<FloatType>(cast<RankedTensorType>(input).getElementType()));
  hetero::Differentiator differentiator(*module);
  func::FuncOp backward = differentiator.derive(forward, "f_backward", request);
  ASSERT_TRUE(backward) << param.name << ": no derivative";
  ASSERT_TRUE(succeeded(verify(*module)));
  FunctionType backwardType = backward.getFunctionType();
  addWrapper(*module, forward, "forward");
  addWrapper(*module, backward, "backward");
  compile(*module);
  if (HasFatalFailure())
    return;

  std::mt19937_64 random(11);
  std::vector<std::unique_ptr<HostTensor>> inputs;
  for (Type input : type.getInputs()) {
    inputs.push_back(
        std::make_unique<HostTensor>(cast<RankedTensorType>(input)));
    fill(*inputs.back(), random, 4, 0.5, 0.5);
  }
  HostTensor output(cast<RankedTensorType>(type.getResult(0)));
  HostTensor direction(cast<RankedTensorType>(type.getResult(0)));
  fill(direction, random, 4, 0.0, 1.0);
  auto objective = [&]() -> double {
    std::vector<HostTensor *> arguments;
    for (auto &input : inputs)
      arguments.push_back(input.get());
    arguments.push_back(&output);
    call("forward", arguments);
    return dot(output, direction);
  };

  std::vector<std::unique_ptr<HostTensor>> gradients;
  for (Type result : backwardType.getResults())
    gradients.push_back(
        std::make_unique<HostTensor>(cast<RankedTensorType>(result)));
  std::vector<HostTensor *> arguments;
  for (auto &input : inputs)
    arguments.push_back(input.get());
  arguments.push_back(&direction);
  for (auto &gradient : gradients)
    arguments.push_back(gradient.get());
  call("backward", arguments);

  GradientErrors errors;
  size_t next = 0;
  for (size_t index = 0; index < inputs.size(); ++index) {
    if (!request.wrt[index])
      continue;
    checkGradient(
        *inputs[index], *gradients[next++], objective, 1e-6, 1e-5, random,
        std::string(param.name) + ": argument " + std::to_string(index),
        errors);
  }
  std::printf("%s: %lld entries, largest relative error %g\n", param.name,
              (long long)errors.checked, errors.worst);
}

const Case kCases[] = {
    {"elementwise", R"mlir(
#id = affine_map<(i, j) -> (i, j)>
func.func @f(%a: tensor<3x4xf64>, %b: tensor<3x4xf64>) -> tensor<3x4xf64> {
  %e = tensor.empty() : tensor<3x4xf64>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<3x4xf64>, tensor<3x4xf64>) outs(%e : tensor<3x4xf64>) {
  ^bb0(%x: f64, %y: f64, %o: f64):
    %c2 = arith.constant 2.0 : f64
    %c15 = arith.constant 1.5 : f64
    %sq = arith.mulf %x, %x : f64
    %pos = arith.addf %sq, %c2 : f64
    %ex = math.exp %x : f64
    %lg = math.log %pos : f64
    %th = math.tanh %y : f64
    %rt = math.sqrt %pos : f64
    %rs = math.rsqrt %pos : f64
    %er = math.erf %y : f64
    %pw = math.powf %pos, %c15 : f64
    %dv = arith.divf %ex, %pos : f64
    %ng = arith.negf %th : f64
    %mx = arith.maximumf %x, %y : f64
    %mn = arith.minnumf %x, %y : f64
    %ab = math.absf %y : f64
    %gt = arith.cmpf ogt, %x, %y : f64
    %sl = arith.select %gt, %sq, %er : f64
    %s1 = arith.addf %lg, %th : f64
    %s2 = arith.subf %s1, %rt : f64
    %s3 = arith.addf %s2, %rs : f64
    %s4 = arith.addf %s3, %pw : f64
    %s5 = arith.addf %s4, %dv : f64
    %s6 = arith.addf %s5, %ng : f64
    %s7 = arith.mulf %s6, %mx : f64
    %s8 = arith.addf %s7, %mn : f64
    %s9 = arith.addf %s8, %ab : f64
    %s10 = arith.addf %s9, %sl : f64
    linalg.yield %s10 : f64
  } -> tensor<3x4xf64>
  return %r : tensor<3x4xf64>
}
)mlir"},
    {"products", R"mlir(
func.func @f(%a: tensor<3x4xf64>, %b: tensor<4x5xf64>, %c: tensor<2x3x4xf64>, %d: tensor<2x4x5xf64>, %t: tensor<5x4xf64>) -> tensor<2x3x5xf64> {
  %z = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<3x5xf64>
  %f0 = linalg.fill ins(%z : f64) outs(%e : tensor<3x5xf64>) -> tensor<3x5xf64>
  %m = linalg.matmul ins(%a, %b : tensor<3x4xf64>, tensor<4x5xf64>) outs(%f0 : tensor<3x5xf64>) -> tensor<3x5xf64>
  %mt = linalg.matmul indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (j, k)>, affine_map<(i, j, k) -> (i, j)>] ins(%a, %t : tensor<3x4xf64>, tensor<5x4xf64>) outs(%m : tensor<3x5xf64>) -> tensor<3x5xf64>
  %eb = tensor.empty() : tensor<2x3x5xf64>
  %fb = linalg.fill ins(%z : f64) outs(%eb : tensor<2x3x5xf64>) -> tensor<2x3x5xf64>
  %bm = linalg.batch_matmul ins(%c, %d : tensor<2x3x4xf64>, tensor<2x4x5xf64>) outs(%fb : tensor<2x3x5xf64>) -> tensor<2x3x5xf64>
  %br = linalg.broadcast ins(%mt : tensor<3x5xf64>) outs(%eb : tensor<2x3x5xf64>) dimensions = [0]
  %sum = linalg.add ins(%bm, %br : tensor<2x3x5xf64>, tensor<2x3x5xf64>) outs(%eb : tensor<2x3x5xf64>) -> tensor<2x3x5xf64>
  %et = tensor.empty() : tensor<2x5x3xf64>
  %tr = linalg.transpose ins(%sum : tensor<2x3x5xf64>) outs(%et : tensor<2x5x3xf64>) permutation = [0, 2, 1]
  %back = linalg.transpose ins(%tr : tensor<2x5x3xf64>) outs(%eb : tensor<2x3x5xf64>) permutation = [0, 2, 1]
  %sq = linalg.mul ins(%back, %sum : tensor<2x3x5xf64>, tensor<2x3x5xf64>) outs(%eb : tensor<2x3x5xf64>) -> tensor<2x3x5xf64>
  return %sq : tensor<2x3x5xf64>
}
)mlir"},
    {"reductions", R"mlir(
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @f(%a: tensor<4x6xf64>, %b: tensor<4xf64>) -> tensor<4x6xf64> {
  %z = arith.constant 0.0 : f64
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %e = tensor.empty() : tensor<4xf64>
  %sum0 = linalg.fill ins(%z : f64) outs(%e : tensor<4xf64>) -> tensor<4xf64>
  %sum = linalg.reduce ins(%a : tensor<4x6xf64>) outs(%sum0 : tensor<4xf64>) dimensions = [1]
    (%x: f64, %acc: f64) {
      %s = arith.addf %x, %acc : f64
      linalg.yield %s : f64
    }
  %max0 = linalg.fill ins(%ninf : f64) outs(%e : tensor<4xf64>) -> tensor<4xf64>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<4x6xf64>) outs(%max0 : tensor<4xf64>) {
  ^bb0(%x: f64, %acc: f64):
    %m = arith.maximumf %acc, %x : f64
    linalg.yield %m : f64
  } -> tensor<4xf64>
  %e2 = tensor.empty() : tensor<4x6xf64>
  %r = linalg.generic {indexing_maps = [#id, #row, #row, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %sum, %max, %b : tensor<4x6xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>) outs(%e2 : tensor<4x6xf64>) {
  ^bb0(%x: f64, %s: f64, %m: f64, %y: f64, %o: f64):
    %p = arith.mulf %x, %s : f64
    %q = arith.subf %p, %m : f64
    %w = arith.mulf %q, %y : f64
    linalg.yield %w : f64
  } -> tensor<4x6xf64>
  return %r : tensor<4x6xf64>
}
)mlir"},
    {"softmax", R"mlir(
func.func @f(%a: tensor<3x5xf64>) -> tensor<3x5xf64> {
  %e = tensor.empty() : tensor<3x5xf64>
  %s = linalg.softmax dimension(1) ins(%a : tensor<3x5xf64>) outs(%e : tensor<3x5xf64>) -> tensor<3x5xf64>
  return %s : tensor<3x5xf64>
}
)mlir"},
    {"tensor-ops", R"mlir(
func.func @f(%a: tensor<4x6xf64>, %b: tensor<2x3xf64>, %c: tensor<4x2xf64>) -> tensor<4x6xf64> {
  %s = tensor.extract_slice %a[1, 2] [2, 3] [1, 1] : tensor<4x6xf64> to tensor<2x3xf64>
  %m = linalg.mul ins(%s, %b : tensor<2x3xf64>, tensor<2x3xf64>) outs(%s : tensor<2x3xf64>) -> tensor<2x3xf64>
  %i = tensor.insert_slice %m into %a[0, 3] [2, 3] [1, 1] : tensor<2x3xf64> into tensor<4x6xf64>
  %x = tensor.expand_shape %i [[0], [1, 2]] output_shape [4, 2, 3] : tensor<4x6xf64> into tensor<4x2x3xf64>
  %ex = tensor.empty() : tensor<4x2x3xf64>
  %sq = linalg.mul ins(%x, %x : tensor<4x2x3xf64>, tensor<4x2x3xf64>) outs(%ex : tensor<4x2x3xf64>) -> tensor<4x2x3xf64>
  %col = tensor.collapse_shape %sq [[0], [1, 2]] : tensor<4x2x3xf64> into tensor<4x6xf64>
  %left = tensor.extract_slice %col[0, 0] [4, 4] [1, 1] : tensor<4x6xf64> to tensor<4x4xf64>
  %cat = tensor.concat dim(1) %left, %c : (tensor<4x4xf64>, tensor<4x2xf64>) -> tensor<4x6xf64>
  return %cat : tensor<4x6xf64>
}
)mlir"},
    {"calls", R"mlir(
#id = affine_map<(i) -> (i)>
func.func private @g(%x: tensor<5xf64>, %w: tensor<5xf64>) -> (tensor<5xf64>, tensor<5xf64>) {
  %e = tensor.empty() : tensor<5xf64>
  %p = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%x, %w : tensor<5xf64>, tensor<5xf64>) outs(%e : tensor<5xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %m = arith.mulf %a, %b : f64
    %t = math.tanh %m : f64
    linalg.yield %t : f64
  } -> tensor<5xf64>
  %q = linalg.exp ins(%x : tensor<5xf64>) outs(%e : tensor<5xf64>) -> tensor<5xf64>
  return %p, %q : tensor<5xf64>, tensor<5xf64>
}
func.func @f(%x: tensor<5xf64>, %w1: tensor<5xf64>, %w2: tensor<5xf64>) -> tensor<5xf64> {
  %h:2 = func.call @g(%x, %w1) : (tensor<5xf64>, tensor<5xf64>) -> (tensor<5xf64>, tensor<5xf64>)
  %o:2 = func.call @g(%h#0, %w2) : (tensor<5xf64>, tensor<5xf64>) -> (tensor<5xf64>, tensor<5xf64>)
  %e = tensor.empty() : tensor<5xf64>
  %r = linalg.add ins(%o#0, %h#1 : tensor<5xf64>, tensor<5xf64>) outs(%e : tensor<5xf64>) -> tensor<5xf64>
  return %r : tensor<5xf64>
}
)mlir"},
    {"integers", R"mlir(
#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
func.func @f(%ids: tensor<3xi32>, %w: tensor<4x5xf64>) -> tensor<3x5xf64> {
  %z = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %e = tensor.empty() : tensor<3x4xf64>
  %onehot = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, #id], iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<3xi32>) outs(%e : tensor<3x4xf64>) {
  ^bb0(%id: i32, %o: f64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %eq = arith.cmpi eq, %id, %ji : i32
    %v = arith.select %eq, %one, %z : f64
    linalg.yield %v : f64
  } -> tensor<3x4xf64>
  %er = tensor.empty() : tensor<3x5xf64>
  %f0 = linalg.fill ins(%z : f64) outs(%er : tensor<3x5xf64>) -> tensor<3x5xf64>
  %r = linalg.matmul ins(%onehot, %w : tensor<3x4xf64>, tensor<4x5xf64>) outs(%f0 : tensor<3x5xf64>) -> tensor<3x5xf64>
  return %r : tensor<3x5xf64>
}
)mlir"},
    {"masked-sum-and-scalars", R"mlir(
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @f(%logits: tensor<4x5xf64>, %targets: tensor<4xi32>) -> tensor<f64> {
  %z = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<4xf64>
  %f0 = linalg.fill ins(%z : f64) outs(%e : tensor<4xf64>) -> tensor<4xf64>
  %picked = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%logits, %targets : tensor<4x5xf64>, tensor<4xi32>) outs(%f0 : tensor<4xf64>) {
  ^bb0(%x: f64, %t: i32, %acc: f64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %eq = arith.cmpi eq, %t, %ji : i32
    %sq = arith.mulf %x, %x : f64
    %s = arith.addf %acc, %sq : f64
    %r = arith.select %eq, %s, %acc : f64
    linalg.yield %r : f64
  } -> tensor<4xf64>
  %se = tensor.empty() : tensor<f64>
  %s0 = linalg.fill ins(%z : f64) outs(%se : tensor<f64>) -> tensor<f64>
  %sum = linalg.reduce ins(%picked : tensor<4xf64>) outs(%s0 : tensor<f64>) dimensions = [0]
    (%a: f64, %acc: f64) {
      %r = arith.addf %a, %acc : f64
      linalg.yield %r : f64
    }
  %v = tensor.extract %sum[] : tensor<f64>
  %c = arith.constant 4.0 : f64
  %m = arith.divf %v, %c : f64
  %sq = arith.mulf %m, %m : f64
  %out = tensor.from_elements %sq : tensor<f64>
  return %out : tensor<f64>
}
)mlir"},
    {"layout-maps", R"mlir(
#split = affine_map<(h, s, d) -> ((h floordiv 2) * 3 + s, (h mod 2) * 4 + d)>
#id3 = affine_map<(h, s, d) -> (h, s, d)>
#pos = affine_map<(r, c) -> (r mod 3, c)>
#id = affine_map<(r, c) -> (r, c)>
func.func @f(%x: tensor<6x8xf64>, %p: tensor<3x8xf64>) -> tensor<4x3x4xf64> {
  %e = tensor.empty() : tensor<6x8xf64>
  %withp = linalg.generic {indexing_maps = [#id, #pos, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %p : tensor<6x8xf64>, tensor<3x8xf64>) outs(%e : tensor<6x8xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %m = arith.mulf %a, %b : f64
    linalg.yield %m : f64
  } -> tensor<6x8xf64>
  %eh = tensor.empty() : tensor<4x3x4xf64>
  %heads = linalg.generic {indexing_maps = [#split, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%withp : tensor<6x8xf64>) outs(%eh : tensor<4x3x4xf64>) {
  ^bb0(%a: f64, %o: f64):
    %t = math.tanh %a : f64
    linalg.yield %t : f64
  } -> tensor<4x3x4xf64>
  return %heads : tensor<4x3x4xf64>
}
)mlir"},
};

INSTANTIATE_TEST_SUITE_P(Rules, AutodiffTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case> &info) {
                           std::string name = info.param.name;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

} // namespace
