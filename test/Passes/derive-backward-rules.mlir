// Every differentiation rule of hetero-derive-backward (passes/Autodiff.h),
// as the derived IR: in each case stage 0 applies the rule and stage 1 sums
// stage 0's output; @f_backward is stage 0's derived backward (the
// forward's inputs and the output's gradient -> the input's gradient and
// the parameter's). unittests/Autodiff checks the same rules' numbers
// against finite differences.
// RUN: hetero-opt %s --split-input-file --hetero-derive-backward --mlir-print-local-scope | FileCheck %s

// linalg.matmul: dX = dY W^T and dW = X^T dY, each a contraction over the
// product's loops with the reduction innermost.
// CHECK-LABEL: func.func @f_backward(%arg0: tensor<4x8xf32>, %arg1: tensor<8x16xf32>, %arg2: tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg1, %arg2 : tensor<8x16xf32>, tensor<4x16xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d2, d1)>], iterator_types = ["reduction", "parallel", "parallel"]} ins(%arg0, %arg2 : tensor<4x8xf32>, tensor<4x16xf32>)
memref.global "private" @w : memref<8x16xf32> = dense<0.5>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4x8xf32>, tensor<4x16xf32>) {
  %c = arith.constant 0.5 : f32
  %xe = tensor.empty() : tensor<4x8xf32>
  %x = linalg.fill ins(%c : f32) outs(%xe : tensor<4x8xf32>) -> tensor<4x8xf32>
  %te = tensor.empty() : tensor<4x16xf32>
  %t = linalg.fill ins(%c : f32) outs(%te : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %x, %t : tensor<4x8xf32>, tensor<4x16xf32>
}
func.func @f(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%i : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
func.func @sink(%y: tensor<4x16xf32>, %t: tensor<4x16xf32>) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce ins(%y : tensor<4x16xf32>) outs(%i : tensor<f32>) dimensions = [0, 1]
    (%a: f32, %b: f32) {
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    }
  return %s : tensor<f32>
}
hetero.pipeline @p stages = 2 microbatches = 1 data @data optimizer #hetero.sgd<lr = 1.0e-01> {
  hetero.stage 0 forward @f params [@w]
  hetero.stage 1 forward @sink
}

// -----

// linalg.batch_matmul: the batch loop stays parallel in both adjoints.
// CHECK-LABEL: func.func @f_backward(%arg0: tensor<2x4x8xf32>, %arg1: tensor<2x8x16xf32>, %arg2: tensor<2x4x16xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%arg1, %arg2 : tensor<2x8x16xf32>, tensor<2x4x16xf32>) outs({{.*}} : tensor<2x4x8xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %arg2 : tensor<2x4x8xf32>, tensor<2x4x16xf32>) outs({{.*}} : tensor<2x8x16xf32>)
memref.global "private" @w : memref<2x8x16xf32> = dense<0.5>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<2x4x8xf32>, tensor<2x4x16xf32>) {
  %c = arith.constant 0.5 : f32
  %xe = tensor.empty() : tensor<2x4x8xf32>
  %x = linalg.fill ins(%c : f32) outs(%xe : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %te = tensor.empty() : tensor<2x4x16xf32>
  %t = linalg.fill ins(%c : f32) outs(%te : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %x, %t : tensor<2x4x8xf32>, tensor<2x4x16xf32>
}
func.func @f(%x: tensor<2x4x8xf32>, %w: tensor<2x8x16xf32>) -> tensor<2x4x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x16xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %y = linalg.batch_matmul ins(%x, %w : tensor<2x4x8xf32>, tensor<2x8x16xf32>) outs(%i : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %y : tensor<2x4x16xf32>
}
func.func @sink(%y: tensor<2x4x16xf32>, %t: tensor<2x4x16xf32>) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce ins(%y : tensor<2x4x16xf32>) outs(%i : tensor<f32>) dimensions = [0, 1, 2]
    (%a: f32, %b: f32) {
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    }
  return %s : tensor<f32>
}
hetero.pipeline @p stages = 2 microbatches = 1 data @data optimizer #hetero.sgd<lr = 1.0e-01> {
  hetero.stage 0 forward @f params [@w]
  hetero.stage 1 forward @sink
}

// -----

// A product with a transposed operand (y = x w^T through the maps):
// dW = dY^T X reads dY and X through the same maps.
// CHECK-LABEL: func.func @f_backward(%arg0: tensor<4x8xf32>, %arg1: tensor<16x8xf32>, %arg2: tensor<4x16xf32>)
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg1, %arg2 : tensor<16x8xf32>, tensor<4x16xf32>) outs({{.*}} : tensor<4x8xf32>)
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>], iterator_types = ["reduction", "parallel", "parallel"]} ins(%arg0, %arg2 : tensor<4x8xf32>, tensor<4x16xf32>) outs({{.*}} : tensor<16x8xf32>)
memref.global "private" @w : memref<16x8xf32> = dense<0.5>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4x8xf32>, tensor<4x16xf32>) {
  %c = arith.constant 0.5 : f32
  %xe = tensor.empty() : tensor<4x8xf32>
  %x = linalg.fill ins(%c : f32) outs(%xe : tensor<4x8xf32>) -> tensor<4x8xf32>
  %te = tensor.empty() : tensor<4x16xf32>
  %t = linalg.fill ins(%c : f32) outs(%te : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %x, %t : tensor<4x8xf32>, tensor<4x16xf32>
}
func.func @f(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%x, %w : tensor<4x8xf32>, tensor<16x8xf32>) outs(%i : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
func.func @sink(%y: tensor<4x16xf32>, %t: tensor<4x16xf32>) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce ins(%y : tensor<4x16xf32>) outs(%i : tensor<f32>) dimensions = [0, 1]
    (%a: f32, %b: f32) {
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    }
  return %s : tensor<f32>
}
hetero.pipeline @p stages = 2 microbatches = 1 data @data optimizer #hetero.sgd<lr = 1.0e-01> {
  hetero.stage 0 forward @f params [@w]
  hetero.stage 1 forward @sink
}

// -----

// linalg.transpose and linalg.broadcast: the adjoint of a transpose reads
// dy through the inverse permutation; of a broadcast, sums over the
// broadcast dimension.
// CHECK-LABEL: func.func @f_backward(%arg0: tensor<4x8xf32>, %arg1: tensor<8xf32>, %arg2: tensor<8x4xf32>) -> (tensor<4x8xf32>, tensor<8xf32>)
// CHECK: %[[DX:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1, d0)>], iterator_types = ["parallel", "parallel"]} ins(%arg2 : tensor<8x4xf32>)
// CHECK: %[[DB:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%[[DX]] : tensor<4x8xf32>)
// CHECK: arith.addf %out, %in
// CHECK: return %[[DX]], %[[DB]]
memref.global "private" @b : memref<8xf32> = dense<0.5>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4x8xf32>, tensor<8x4xf32>) {
  %c = arith.constant 0.5 : f32
  %xe = tensor.empty() : tensor<4x8xf32>
  %x = linalg.fill ins(%c : f32) outs(%xe : tensor<4x8xf32>) -> tensor<4x8xf32>
  %te = tensor.empty() : tensor<8x4xf32>
  %t = linalg.fill ins(%c : f32) outs(%te : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %x, %t : tensor<4x8xf32>, tensor<8x4xf32>
}
func.func @f(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %bb = linalg.broadcast ins(%b : tensor<8xf32>) outs(%e : tensor<4x8xf32>) dimensions = [0]
  %s = linalg.add ins(%x, %bb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %te = tensor.empty() : tensor<8x4xf32>
  %t = linalg.transpose ins(%s : tensor<4x8xf32>) outs(%te : tensor<8x4xf32>) permutation = [1, 0]
  return %t : tensor<8x4xf32>
}
func.func @sink(%y: tensor<8x4xf32>, %t: tensor<8x4xf32>) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce ins(%y : tensor<8x4xf32>) outs(%i : tensor<f32>) dimensions = [0, 1]
    (%a: f32, %b: f32) {
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    }
  return %s : tensor<f32>
}
hetero.pipeline @p stages = 2 microbatches = 1 data @data optimizer #hetero.sgd<lr = 1.0e-01> {
  hetero.stage 0 forward @f params [@b]
  hetero.stage 1 forward @sink
}

// -----

// linalg.reduce (a sum over rows) and a maximum written as linalg.generic:
// the sum's adjoint broadcasts dy; the maximum's goes to the elements equal
// to it.
// CHECK-LABEL: func.func @f_backward(%arg0: tensor<4x8xf32>, %arg1: tensor<4x8xf32>, %arg2: tensor<8xf32>)
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%arg1 : tensor<4x8xf32>)
// CHECK: arith.maximumf
// CHECK: %[[DMAX:.*]] = linalg.generic {{.*}} ins(%arg1, %[[MAX]], %arg2 : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
// CHECK: arith.cmpf oeq
// CHECK: arith.select
// CHECK: %[[DSUM:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg2 : tensor<8xf32>)
// CHECK: %[[DX:.*]] = linalg.generic {{.*}} ins(%arg1, %[[DSUM]] :
// CHECK: %[[DP:.*]] = linalg.generic {{.*}} ins(%arg0, %[[DSUM]] :
// CHECK: %[[DW:.*]] = linalg.generic {{.*}} ins(%[[DMAX]], %[[DP]] :
// CHECK: return %[[DX]], %[[DW]]
memref.global "private" @w : memref<4x8xf32> = dense<0.5>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4x8xf32>, tensor<8xf32>) {
  %c = arith.constant 0.5 : f32
  %xe = tensor.empty() : tensor<4x8xf32>
  %x = linalg.fill ins(%c : f32) outs(%xe : tensor<4x8xf32>) -> tensor<4x8xf32>
  %te = tensor.empty() : tensor<8xf32>
  %t = linalg.fill ins(%c : f32) outs(%te : tensor<8xf32>) -> tensor<8xf32>
  return %x, %t : tensor<4x8xf32>, tensor<8xf32>
}
func.func @f(%x: tensor<4x8xf32>, %w: tensor<4x8xf32>) -> tensor<8xf32> {
  %z = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<8xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %p = linalg.mul ins(%x, %w : tensor<4x8xf32>, tensor<4x8xf32>) outs(%x : tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = linalg.reduce ins(%p : tensor<4x8xf32>) outs(%i : tensor<8xf32>) dimensions = [0]
    (%a: f32, %b: f32) {
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    }
  %mi = linalg.fill ins(%ninf : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>], iterator_types = ["reduction", "parallel"]}
    ins(%w : tensor<4x8xf32>) outs(%mi : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maximumf %acc, %in : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %y = linalg.add ins(%s, %m : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}
func.func @sink(%y: tensor<8xf32>, %t: tensor<8xf32>) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce ins(%y : tensor<8xf32>) outs(%i : tensor<f32>) dimensions = [0]
    (%a: f32, %b: f32) {
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    }
  return %s : tensor<f32>
}
hetero.pipeline @p stages = 2 microbatches = 1 data @data optimizer #hetero.sgd<lr = 1.0e-01> {
  hetero.stage 0 forward @f params [@w]
  hetero.stage 1 forward @sink
}

// -----

// Element-wise arith: each operand's adjoint is dy times the body's
// derivative by that operand (forward mode on the scalar ops): mulf,
// divf, subf, negf, maximumf, a comparison with a select, a constant; the
// fill of a constant carries no gradient.
// CHECK-LABEL: func.func @f_backward(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>, %arg2: tensor<8xf32>)
// CHECK: %[[C:.*]] = linalg.fill ins(%{{.*}} : f32)
// CHECK: linalg.generic {{.*}} ins(%arg0, %arg1, %[[C]], %arg2 :
// CHECK: arith.divf %in_3, %in_4
// CHECK: arith.negf
// CHECK: arith.cmpf oge
// CHECK: arith.select
// CHECK: arith.cmpf ogt
// CHECK: arith.select
// CHECK: arith.mulf %in_5,
// CHECK: linalg.generic {{.*}} ins(%arg0, %arg1, %[[C]], %arg2 :
// CHECK: arith.divf %in, %in_4
// CHECK: arith.addf %{{.*}}, %cst
// CHECK: arith.mulf %in_5,
memref.global "private" @w : memref<8xf32> = dense<0.5>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<8xf32>, tensor<8xf32>) {
  %c = arith.constant 0.5 : f32
  %xe = tensor.empty() : tensor<8xf32>
  %x = linalg.fill ins(%c : f32) outs(%xe : tensor<8xf32>) -> tensor<8xf32>
  %te = tensor.empty() : tensor<8xf32>
  %t = linalg.fill ins(%c : f32) outs(%te : tensor<8xf32>) -> tensor<8xf32>
  return %x, %t : tensor<8xf32>, tensor<8xf32>
}
func.func @f(%x: tensor<8xf32>, %w: tensor<8xf32>) -> tensor<8xf32> {
  %two = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %c = linalg.fill ins(%two : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
    ins(%x, %w, %c : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %k: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %d = arith.divf %m, %k : f32
    %s = arith.subf %d, %b : f32
    %n = arith.negf %s : f32
    %x2 = arith.maximumf %n, %a : f32
    %gt = arith.cmpf ogt, %a, %b : f32
    %sel = arith.select %gt, %x2, %m : f32
    linalg.yield %sel : f32
  } -> tensor<8xf32>
  return %y : tensor<8xf32>
}
func.func @sink(%y: tensor<8xf32>, %t: tensor<8xf32>) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce ins(%y : tensor<8xf32>) outs(%i : tensor<f32>) dimensions = [0]
    (%a: f32, %b: f32) {
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    }
  return %s : tensor<f32>
}
hetero.pipeline @p stages = 2 microbatches = 1 data @data optimizer #hetero.sgd<lr = 1.0e-01> {
  hetero.stage 0 forward @f params [@w]
  hetero.stage 1 forward @sink
}

// -----

// math: exp, log, tanh, sqrt, rsqrt, erf and powf with a constant
// exponent, by their derivatives.
// The weight's adjoint, the chain rule through the body:
// CHECK-LABEL: func.func @f_backward(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>, %arg2: tensor<8xf32>)
// CHECK-DAG: %[[ERF:.*]] = arith.constant 1.12837923 : f32
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[THREE:.*]] = arith.constant 3.000000e+00 : f32
// CHECK: linalg.generic
// CHECK: linalg.generic
// exp: the tangent times exp
// CHECK: %[[EXP:.*]] = math.exp %[[P:.*]] : f32
// CHECK: %[[TEXP:.*]] = arith.mulf %in, %[[EXP]]
// log: over its argument
// CHECK: %[[TLOG:.*]] = arith.divf %[[TEXP]], %[[EXP]]
// tanh: 1 - tanh^2
// CHECK: %[[TANH:.*]] = math.tanh
// CHECK: %[[SQUARE:.*]] = arith.mulf %[[TANH]], %[[TANH]]
// CHECK: arith.subf %[[ONE]], %[[SQUARE]]
// sqrt: over twice the root
// CHECK: %[[SQRT:.*]] = math.sqrt %[[EXP]]
// CHECK: %[[TWICE:.*]] = arith.mulf %[[SQRT]], %[[TWO]]
// CHECK: arith.divf %[[TEXP]], %[[TWICE]]
// rsqrt: -rsqrt(y) / (2 y)
// CHECK: %[[RSQRT:.*]] = math.rsqrt %[[SQRT]]
// CHECK: arith.divf %[[RSQRT]],
// CHECK: arith.negf
// erf: 2 / sqrt(pi) exp(-t^2)
// CHECK: arith.negf
// CHECK: math.exp
// CHECK: arith.mulf %{{.*}}, %[[ERF]]
// powf: 3 r^2
// CHECK: math.powf %[[RSQRT]], %[[TWO]]
// CHECK: arith.mulf %{{.*}}, %[[THREE]]
// CHECK: arith.mulf %in_4,
memref.global "private" @w : memref<8xf32> = dense<0.5>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<8xf32>, tensor<8xf32>) {
  %c = arith.constant 0.5 : f32
  %xe = tensor.empty() : tensor<8xf32>
  %x = linalg.fill ins(%c : f32) outs(%xe : tensor<8xf32>) -> tensor<8xf32>
  %te = tensor.empty() : tensor<8xf32>
  %t = linalg.fill ins(%c : f32) outs(%te : tensor<8xf32>) -> tensor<8xf32>
  return %x, %t : tensor<8xf32>, tensor<8xf32>
}
func.func @f(%x: tensor<8xf32>, %w: tensor<8xf32>) -> tensor<8xf32> {
  %three = arith.constant 3.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
    ins(%x, %w : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %ex = math.exp %p : f32
    %lg = math.log %ex : f32
    %th = math.tanh %lg : f32
    %sq = math.sqrt %ex : f32
    %rs = math.rsqrt %sq : f32
    %er = math.erf %th : f32
    %pw = math.powf %rs, %three : f32
    %s1 = arith.addf %er, %pw : f32
    linalg.yield %s1 : f32
  } -> tensor<8xf32>
  return %y : tensor<8xf32>
}
func.func @sink(%y: tensor<8xf32>, %t: tensor<8xf32>) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce ins(%y : tensor<8xf32>) outs(%i : tensor<f32>) dimensions = [0]
    (%a: f32, %b: f32) {
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    }
  return %s : tensor<f32>
}
hetero.pipeline @p stages = 2 microbatches = 1 data @data optimizer #hetero.sgd<lr = 1.0e-01> {
  hetero.stage 0 forward @f params [@w]
  hetero.stage 1 forward @sink
}

// -----

// linalg.softmax is decomposed (maximum, exponential of the difference,
// sum, division) and its parts differentiated.
// CHECK-LABEL: func.func @f_backward(%arg0: tensor<4x8xf32>, %arg1: tensor<4x8xf32>, %arg2: tensor<4x8xf32>)
// The re-computed decomposition: maximum, exponential, sum.
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]}
// CHECK: arith.maxnumf
// CHECK: %[[EXP:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[MAX]] :
// CHECK: math.exp
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[EXP]] :
// The division's adjoints: by the sum, and of the sum (-y / s^2 summed
// over the row), then the exponential's and the maximum's.
// CHECK: linalg.generic {{.*}} ins(%[[SUM]], %arg2 :
// CHECK: arith.divf
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[EXP]], %[[SUM]], %arg2 :
// CHECK: arith.negf
// The exponential's adjoint reads the exponential (exp' = exp) instead of
// calling exp again.
// CHECK-NOT: math.exp
// CHECK: linalg.generic {{.*}} ins(%[[EXP]], %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: linalg.yield
// CHECK-NOT: math.exp
// CHECK: arith.cmpf oeq
// CHECK-NOT: math.exp
// CHECK: return
memref.global "private" @w : memref<4x8xf32> = dense<0.5>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %c = arith.constant 0.5 : f32
  %xe = tensor.empty() : tensor<4x8xf32>
  %x = linalg.fill ins(%c : f32) outs(%xe : tensor<4x8xf32>) -> tensor<4x8xf32>
  %te = tensor.empty() : tensor<4x8xf32>
  %t = linalg.fill ins(%c : f32) outs(%te : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %x, %t : tensor<4x8xf32>, tensor<4x8xf32>
}
func.func @f(%x: tensor<4x8xf32>, %w: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %p = linalg.mul ins(%x, %w : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.softmax dimension(1) ins(%p : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
func.func @sink(%y: tensor<4x8xf32>, %t: tensor<4x8xf32>) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce ins(%y : tensor<4x8xf32>) outs(%i : tensor<f32>) dimensions = [0, 1]
    (%a: f32, %b: f32) {
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    }
  return %s : tensor<f32>
}
hetero.pipeline @p stages = 2 microbatches = 1 data @data optimizer #hetero.sgd<lr = 1.0e-01> {
  hetero.stage 0 forward @f params [@w]
  hetero.stage 1 forward @sink
}

// -----

// Slices and reshapes: an extract_slice's adjoint writes dy into zeros, an
// insert_slice's reads its part of dy and zeros the part it overwrote;
// expand_shape and collapse_shape reshape dy back; concat's pieces read
// their slices of dy.
// CHECK-LABEL: func.func @f_backward(%arg0: tensor<4x8xf32>, %arg1: tensor<4x8xf32>, %arg2: tensor<2x16xf32>)
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %arg2 {{\[\[}}0, 1]] : tensor<2x16xf32> into tensor<32xf32>
// CHECK: %[[DOVER:.*]] = tensor.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [4, 8] : tensor<32xf32> into tensor<4x8xf32>
// The inserted part's gradient, and zeros where it overwrote the concat:
// CHECK: %[[DPART:.*]] = tensor.extract_slice %[[DOVER]][0, 0] [4, 4] [1, 1]
// CHECK: %[[ZEROS:.*]] = linalg.fill
// CHECK: %[[DBOTH:.*]] = tensor.insert_slice %[[ZEROS]] into %[[DOVER]][0, 0] [4, 4] [1, 1]
// concat(right, left): left's gradient is the second half.
// CHECK: %[[DLEFT:.*]] = tensor.extract_slice %[[DBOTH]][0, 4] [4, 4] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[DPART]], %[[DLEFT]] :
// An extract_slice's adjoint writes into zeros: right's into w's columns 4..8.
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 4] [4, 4] [1, 1]
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [4, 4] [1, 1]
// CHECK: return
memref.global "private" @w : memref<4x8xf32> = dense<0.5>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4x8xf32>, tensor<2x16xf32>) {
  %c = arith.constant 0.5 : f32
  %xe = tensor.empty() : tensor<4x8xf32>
  %x = linalg.fill ins(%c : f32) outs(%xe : tensor<4x8xf32>) -> tensor<4x8xf32>
  %te = tensor.empty() : tensor<2x16xf32>
  %t = linalg.fill ins(%c : f32) outs(%te : tensor<2x16xf32>) -> tensor<2x16xf32>
  return %x, %t : tensor<4x8xf32>, tensor<2x16xf32>
}
func.func @f(%x: tensor<4x8xf32>, %w: tensor<4x8xf32>) -> tensor<2x16xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %p = linalg.mul ins(%x, %w : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %left = tensor.extract_slice %p[0, 0] [4, 4] [1, 1] : tensor<4x8xf32> to tensor<4x4xf32>
  %right = tensor.extract_slice %w[0, 4] [4, 4] [1, 1] : tensor<4x8xf32> to tensor<4x4xf32>
  %both = tensor.concat dim(1) %right, %left : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  %over = tensor.insert_slice %left into %both[0, 0] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<4x8xf32>
  %flat = tensor.collapse_shape %over [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  %y = tensor.expand_shape %flat [[0, 1]] output_shape [2, 16] : tensor<32xf32> into tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}
func.func @sink(%y: tensor<2x16xf32>, %t: tensor<2x16xf32>) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce ins(%y : tensor<2x16xf32>) outs(%i : tensor<f32>) dimensions = [0, 1]
    (%a: f32, %b: f32) {
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    }
  return %s : tensor<f32>
}
hetero.pipeline @p stages = 2 microbatches = 1 data @data optimizer #hetero.sgd<lr = 1.0e-01> {
  hetero.stage 0 forward @f params [@w]
  hetero.stage 1 forward @sink
}

// -----

// func.call of a private function: the callee is differentiated once, as
// an augmented forward (results and residuals) and a reverse part, and the
// derived backward calls both.
// The residual is the tanh itself (tanh' = 1 - tanh^2), not its operand.
// CHECK-LABEL: func.func private @scale_augmented(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
// CHECK: %[[M:.*]] = linalg.generic
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%[[M]] :
// CHECK: math.tanh
// CHECK: return %[[T]], %[[T]]
// CHECK-LABEL: func.func private @scale_backward(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>, %arg2: tensor<8xf32>, %arg3: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
// CHECK-NOT: math.tanh
// CHECK: linalg.generic {{.*}} ins(%arg2, %arg3 :
// CHECK-NEXT: ^bb0
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %in, %in
// CHECK-NEXT: arith.subf %{{.*}}, %[[SQ]]
// CHECK-NOT: math.tanh
// CHECK: return
// CHECK-LABEL: func.func @f_backward(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>, %arg2: tensor<8xf32>)
// CHECK: %[[A:.*]]:2 = call @scale_augmented(%arg0, %arg1)
// CHECK: %[[B:.*]]:2 = call @scale_augmented(%[[A]]#0, %arg1)
// CHECK: %[[DB:.*]]:2 = call @scale_backward(%[[A]]#0, %arg1, %[[B]]#1, %arg2)
// CHECK: %[[DA:.*]]:2 = call @scale_backward(%arg0, %arg1, %[[A]]#1, %[[DB]]#0)
// CHECK: %[[DW:.*]] = linalg.generic {{.*}} ins(%[[DB]]#1, %[[DA]]#1 :
// CHECK: return %[[DA]]#0, %[[DW]]
memref.global "private" @w : memref<8xf32> = dense<0.5>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<8xf32>, tensor<8xf32>) {
  %c = arith.constant 0.5 : f32
  %xe = tensor.empty() : tensor<8xf32>
  %x = linalg.fill ins(%c : f32) outs(%xe : tensor<8xf32>) -> tensor<8xf32>
  %te = tensor.empty() : tensor<8xf32>
  %t = linalg.fill ins(%c : f32) outs(%te : tensor<8xf32>) -> tensor<8xf32>
  return %x, %t : tensor<8xf32>, tensor<8xf32>
}
func.func private @scale(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %m = linalg.mul ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
    ins(%m : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.tanh %v : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %t : tensor<8xf32>
}
func.func @f(%x: tensor<8xf32>, %w: tensor<8xf32>) -> tensor<8xf32> {
  %a = func.call @scale(%x, %w) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %b = func.call @scale(%a, %w) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %b : tensor<8xf32>
}
func.func @sink(%y: tensor<8xf32>, %t: tensor<8xf32>) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce ins(%y : tensor<8xf32>) outs(%i : tensor<f32>) dimensions = [0]
    (%a: f32, %b: f32) {
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    }
  return %s : tensor<f32>
}
hetero.pipeline @p stages = 2 microbatches = 1 data @data optimizer #hetero.sgd<lr = 1.0e-01> {
  hetero.stage 0 forward @f params [@w]
  hetero.stage 1 forward @sink
}

// -----

// hetero.prunable_matmul: the input's and the weight's gradients are the
// grad_input and grad_weight products of the same layer, mode and block.
// CHECK-LABEL: func.func @f_backward(%arg0: tensor<4x8xf32>, %arg1: tensor<8x16xf32>, %arg2: tensor<4x16xf32>)
// CHECK: %[[WT:.*]] = linalg.transpose ins(%arg1 : tensor<8x16xf32>)
// CHECK: %[[DX:.*]] = hetero.prunable_matmul col %arg2, %[[WT]] layer "up" tp = 1 product = grad_input
// CHECK: %[[XT:.*]] = linalg.transpose ins(%arg0 : tensor<4x8xf32>)
// CHECK: %[[DW:.*]] = hetero.prunable_matmul col %[[XT]], %arg2 layer "up" tp = 1 product = grad_weight
// CHECK: return %[[DX]], %[[DW]]
memref.global "private" @w : memref<8x16xf32> = dense<0.5>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4x8xf32>, tensor<4x16xf32>) {
  %c = arith.constant 0.5 : f32
  %xe = tensor.empty() : tensor<4x8xf32>
  %x = linalg.fill ins(%c : f32) outs(%xe : tensor<4x8xf32>) -> tensor<4x8xf32>
  %te = tensor.empty() : tensor<4x16xf32>
  %t = linalg.fill ins(%c : f32) outs(%te : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %x, %t : tensor<4x8xf32>, tensor<4x16xf32>
}
func.func @f(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %y = hetero.prunable_matmul col %x, %w layer "up" tp = 1 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
func.func @sink(%y: tensor<4x16xf32>, %t: tensor<4x16xf32>) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce ins(%y : tensor<4x16xf32>) outs(%i : tensor<f32>) dimensions = [0, 1]
    (%a: f32, %b: f32) {
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    }
  return %s : tensor<f32>
}
hetero.pipeline @p stages = 2 microbatches = 1 data @data optimizer #hetero.sgd<lr = 1.0e-01> {
  hetero.stage 0 forward @f params [@w]
  hetero.stage 1 forward @sink
}

// -----

// Integer computations are constants without a gradient: a one-hot of
// index casts through a comparison and a select selects rows of w.
// The one-hot is re-computed, with no adjoint of its own; x does not reach
// the output, so its gradient is zeros.
// CHECK-LABEL: func.func @f_backward(%arg0: tensor<4x8xf32>, %arg1: tensor<8x16xf32>, %arg2: tensor<4x16xf32>)
// CHECK: %[[HOT:.*]] = linalg.generic
// CHECK: arith.cmpi eq
// CHECK: %[[DW:.*]] = linalg.generic {{.*}} ins(%[[HOT]], %arg2 :
// CHECK-NOT: arith.cmpi
// CHECK: return %{{.*}}, %[[DW]]
memref.global "private" @w : memref<8x16xf32> = dense<0.5>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4x8xf32>, tensor<4x16xf32>) {
  %c = arith.constant 0.5 : f32
  %xe = tensor.empty() : tensor<4x8xf32>
  %x = linalg.fill ins(%c : f32) outs(%xe : tensor<4x8xf32>) -> tensor<4x8xf32>
  %te = tensor.empty() : tensor<4x16xf32>
  %t = linalg.fill ins(%c : f32) outs(%te : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %x, %t : tensor<4x8xf32>, tensor<4x16xf32>
}
func.func @f(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %hot = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
    ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %jj = arith.index_cast %j : index to i32
    %eq = arith.cmpi eq, %ii, %jj : i32
    %h = arith.select %eq, %one, %zero : f32
    linalg.yield %h : f32
  } -> tensor<4x8xf32>
  %ye = tensor.empty() : tensor<4x16xf32>
  %i0 = linalg.fill ins(%zero : f32) outs(%ye : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%hot, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%i0 : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
func.func @sink(%y: tensor<4x16xf32>, %t: tensor<4x16xf32>) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce ins(%y : tensor<4x16xf32>) outs(%i : tensor<f32>) dimensions = [0, 1]
    (%a: f32, %b: f32) {
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    }
  return %s : tensor<f32>
}
hetero.pipeline @p stages = 2 microbatches = 1 data @data optimizer #hetero.sgd<lr = 1.0e-01> {
  hetero.stage 0 forward @f params [@w]
  hetero.stage 1 forward @sink
}

