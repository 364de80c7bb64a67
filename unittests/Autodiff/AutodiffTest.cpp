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
    %ng = arith.negf %ex : f64
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
    // A forward-only transformer layer written by hand: layer norm,
    // causal softmax attention, GELU (tanh form), the output projection
    // and the mean softmax cross-entropy against integer targets.
    {"transformer", R"mlir(
#sh = affine_map<(s, h) -> (s, h)>
#s = affine_map<(s, h) -> (s)>
#h = affine_map<(s, h) -> (h)>
#qk_q = affine_map<(s, t, h) -> (s, h)>
#qk_k = affine_map<(s, t, h) -> (t, h)>
#qk_o = affine_map<(s, t, h) -> (s, t)>
func.func @f(%x: tensor<4x6xf64>, %g: tensor<6xf64>, %b: tensor<6xf64>, %wq: tensor<6x6xf64>, %wk: tensor<6x6xf64>, %wv: tensor<6x6xf64>, %w1: tensor<6x8xf64>, %w2: tensor<8x6xf64>, %head: tensor<6x5xf64>, %targets: tensor<4xi32>) -> tensor<f64> {
  %z = arith.constant 0.0 : f64
  %n = arith.constant 6.0 : f64
  %eps = arith.constant 1.0e-5 : f64
  %es = tensor.empty() : tensor<4xf64>
  %esh = tensor.empty() : tensor<4x6xf64>
  %zs = linalg.fill ins(%z : f64) outs(%es : tensor<4xf64>) -> tensor<4xf64>
  %sum = linalg.generic {indexing_maps = [#sh, #s], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x6xf64>) outs(%zs : tensor<4xf64>) {
  ^bb0(%a: f64, %acc: f64):
    %r = arith.addf %a, %acc : f64
    linalg.yield %r : f64
  } -> tensor<4xf64>
  %xc = linalg.generic {indexing_maps = [#sh, #s, #sh], iterator_types = ["parallel", "parallel"]} ins(%x, %sum : tensor<4x6xf64>, tensor<4xf64>) outs(%esh : tensor<4x6xf64>) {
  ^bb0(%a: f64, %m: f64, %o: f64):
    %mean = arith.divf %m, %n : f64
    %r = arith.subf %a, %mean : f64
    linalg.yield %r : f64
  } -> tensor<4x6xf64>
  %sq = linalg.generic {indexing_maps = [#sh, #s], iterator_types = ["parallel", "reduction"]} ins(%xc : tensor<4x6xf64>) outs(%zs : tensor<4xf64>) {
  ^bb0(%a: f64, %acc: f64):
    %p = arith.mulf %a, %a : f64
    %r = arith.addf %p, %acc : f64
    linalg.yield %r : f64
  } -> tensor<4xf64>
  %y = linalg.generic {indexing_maps = [#sh, #s, #h, #h, #sh], iterator_types = ["parallel", "parallel"]} ins(%xc, %sq, %g, %b : tensor<4x6xf64>, tensor<4xf64>, tensor<6xf64>, tensor<6xf64>) outs(%esh : tensor<4x6xf64>) {
  ^bb0(%a: f64, %v: f64, %gg: f64, %bb: f64, %o: f64):
    %var = arith.divf %v, %n : f64
    %ve = arith.addf %var, %eps : f64
    %rs = math.rsqrt %ve : f64
    %nrm = arith.mulf %a, %rs : f64
    %sc = arith.mulf %nrm, %gg : f64
    %r = arith.addf %sc, %bb : f64
    linalg.yield %r : f64
  } -> tensor<4x6xf64>
  %zsh = linalg.fill ins(%z : f64) outs(%esh : tensor<4x6xf64>) -> tensor<4x6xf64>
  %q = linalg.matmul ins(%y, %wq : tensor<4x6xf64>, tensor<6x6xf64>) outs(%zsh : tensor<4x6xf64>) -> tensor<4x6xf64>
  %k = linalg.matmul ins(%y, %wk : tensor<4x6xf64>, tensor<6x6xf64>) outs(%zsh : tensor<4x6xf64>) -> tensor<4x6xf64>
  %v = linalg.matmul ins(%y, %wv : tensor<4x6xf64>, tensor<6x6xf64>) outs(%zsh : tensor<4x6xf64>) -> tensor<4x6xf64>
  %ess = tensor.empty() : tensor<4x4xf64>
  %zss = linalg.fill ins(%z : f64) outs(%ess : tensor<4x4xf64>) -> tensor<4x4xf64>
  %scores = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_o], iterator_types = ["parallel", "parallel", "reduction"]} ins(%q, %k : tensor<4x6xf64>, tensor<4x6xf64>) outs(%zss : tensor<4x4xf64>) {
  ^bb0(%a: f64, %c: f64, %acc: f64):
    %p = arith.mulf %a, %c : f64
    %r = arith.addf %acc, %p : f64
    linalg.yield %r : f64
  } -> tensor<4x4xf64>
  %masked = linalg.generic {indexing_maps = [#sh, #sh], iterator_types = ["parallel", "parallel"]} ins(%scores : tensor<4x4xf64>) outs(%ess : tensor<4x4xf64>) {
  ^bb0(%a: f64, %o: f64):
    %scale = arith.constant 0.40824829046386302 : f64
    %ninf = arith.constant 0xFFF0000000000000 : f64
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %future = arith.cmpi ult, %i, %j : index
    %sc = arith.mulf %a, %scale : f64
    %r = arith.select %future, %ninf, %sc : f64
    linalg.yield %r : f64
  } -> tensor<4x4xf64>
  %p = linalg.softmax dimension(1) ins(%masked : tensor<4x4xf64>) outs(%ess : tensor<4x4xf64>) -> tensor<4x4xf64>
  %ctx = linalg.matmul ins(%p, %v : tensor<4x4xf64>, tensor<4x6xf64>) outs(%zsh : tensor<4x6xf64>) -> tensor<4x6xf64>
  %hres = linalg.add ins(%y, %ctx : tensor<4x6xf64>, tensor<4x6xf64>) outs(%esh : tensor<4x6xf64>) -> tensor<4x6xf64>
  %e48 = tensor.empty() : tensor<4x8xf64>
  %z48 = linalg.fill ins(%z : f64) outs(%e48 : tensor<4x8xf64>) -> tensor<4x8xf64>
  %u = linalg.matmul ins(%hres, %w1 : tensor<4x6xf64>, tensor<6x8xf64>) outs(%z48 : tensor<4x8xf64>) -> tensor<4x8xf64>
  %gelu = linalg.generic {indexing_maps = [#sh, #sh], iterator_types = ["parallel", "parallel"]} ins(%u : tensor<4x8xf64>) outs(%e48 : tensor<4x8xf64>) {
  ^bb0(%a: f64, %o: f64):
    %half = arith.constant 0.5 : f64
    %one = arith.constant 1.0 : f64
    %c = arith.constant 0.79788456080286541 : f64
    %k3 = arith.constant 0.044715 : f64
    %a2 = arith.mulf %a, %a : f64
    %a3 = arith.mulf %a2, %a : f64
    %t3 = arith.mulf %a3, %k3 : f64
    %in = arith.addf %a, %t3 : f64
    %arg = arith.mulf %in, %c : f64
    %th = math.tanh %arg : f64
    %onep = arith.addf %one, %th : f64
    %ha = arith.mulf %a, %half : f64
    %r = arith.mulf %ha, %onep : f64
    linalg.yield %r : f64
  } -> tensor<4x8xf64>
  %m = linalg.matmul ins(%gelu, %w2 : tensor<4x8xf64>, tensor<8x6xf64>) outs(%zsh : tensor<4x6xf64>) -> tensor<4x6xf64>
  %out = linalg.add ins(%hres, %m : tensor<4x6xf64>, tensor<4x6xf64>) outs(%esh : tensor<4x6xf64>) -> tensor<4x6xf64>
  %e45 = tensor.empty() : tensor<4x5xf64>
  %z45 = linalg.fill ins(%z : f64) outs(%e45 : tensor<4x5xf64>) -> tensor<4x5xf64>
  %logits = linalg.matmul ins(%out, %head : tensor<4x6xf64>, tensor<6x5xf64>) outs(%z45 : tensor<4x5xf64>) -> tensor<4x5xf64>
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %ms = linalg.fill ins(%ninf : f64) outs(%es : tensor<4xf64>) -> tensor<4xf64>
  %max = linalg.reduce ins(%logits : tensor<4x5xf64>) outs(%ms : tensor<4xf64>) dimensions = [1]
    (%a: f64, %acc: f64) {
      %r = arith.maximumf %a, %acc : f64
      linalg.yield %r : f64
    }
  %se = linalg.generic {indexing_maps = [#sh, #s, #s], iterator_types = ["parallel", "reduction"]} ins(%logits, %max : tensor<4x5xf64>, tensor<4xf64>) outs(%zs : tensor<4xf64>) {
  ^bb0(%a: f64, %mx: f64, %acc: f64):
    %d = arith.subf %a, %mx : f64
    %e = math.exp %d : f64
    %r = arith.addf %e, %acc : f64
    linalg.yield %r : f64
  } -> tensor<4xf64>
  %picked = linalg.generic {indexing_maps = [#sh, #s, #s], iterator_types = ["parallel", "reduction"]} ins(%logits, %targets : tensor<4x5xf64>, tensor<4xi32>) outs(%zs : tensor<4xf64>) {
  ^bb0(%a: f64, %t: i32, %acc: f64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %eq = arith.cmpi eq, %t, %ji : i32
    %s1 = arith.addf %acc, %a : f64
    %r = arith.select %eq, %s1, %acc : f64
    linalg.yield %r : f64
  } -> tensor<4xf64>
  %el = tensor.empty() : tensor<f64>
  %zl = linalg.fill ins(%z : f64) outs(%el : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [affine_map<(s) -> (s)>, affine_map<(s) -> (s)>, affine_map<(s) -> (s)>, affine_map<(s) -> ()>], iterator_types = ["reduction"]} ins(%max, %se, %picked : tensor<4xf64>, tensor<4xf64>, tensor<4xf64>) outs(%zl : tensor<f64>) {
  ^bb0(%mx: f64, %sm: f64, %pk: f64, %acc: f64):
    %quarter = arith.constant 0.25 : f64
    %lg = math.log %sm : f64
    %lse = arith.addf %mx, %lg : f64
    %nll = arith.subf %lse, %pk : f64
    %w = arith.mulf %nll, %quarter : f64
    %r = arith.addf %acc, %w : f64
    linalg.yield %r : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
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
