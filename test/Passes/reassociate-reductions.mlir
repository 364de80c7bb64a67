// hetero-reassociate-reductions: the ops that carry a reduction's
// accumulator may be reordered (reassoc); the element-wise ops of its body
// and element-wise generics keep their order.
// RUN: hetero-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(hetero-reassociate-reductions))' | FileCheck %s
// The CPU pipeline runs it unless told not to.
// RUN: hetero-opt %s --split-input-file --hetero-lower-to-cpu | FileCheck %s --check-prefix=CPU
// RUN: hetero-opt %s --split-input-file --hetero-lower-to-cpu=reassociate-reductions=false | FileCheck %s --check-prefix=INORDER

#id = affine_map<(i, j) -> (i, j)>
#rows = affine_map<(i, j) -> (i)>

// A row sum of squares: the sum's addf is reassociated, the square is not.
// CHECK-LABEL: func.func @sum_of_squares
// CHECK:         %[[SQ:.*]] = arith.mulf %[[A:[a-z_0-9]+]], %[[A]] : f32
// CHECK-NEXT:    arith.addf %[[SQ]], %[[ACC:[a-z_0-9]+]] fastmath<reassoc> : f32
// CPU-LABEL:   llvm.func @sum_of_squares
// CPU:           llvm.fmul %{{.*}}, %{{.*}} : f32
// CPU:           llvm.fadd %{{.*}}, %{{.*}} {fastmathFlags = #llvm.fastmath<reassoc>} : f32
// INORDER-LABEL: llvm.func @sum_of_squares
// INORDER-NOT:   fastmath
// INORDER:       llvm.return
func.func @sum_of_squares(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #rows],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#rows = affine_map<(i, j) -> (i)>

// A row maximum with flags of its own: they stay, reassoc joins them.
// CHECK-LABEL: func.func @row_max
// CHECK:         arith.maximumf %{{.*}}, %{{.*}} fastmath<reassoc,nnan> : f32
func.func @row_max(%x: tensor<4x8xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [#id, #rows],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.maximumf %a, %acc fastmath<nnan> : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// linalg.reduce's combiner, and a chain through two ops (acc * 2 + x):
// both ops on the accumulator's path are marked.
// CHECK-LABEL: func.func @reduce_chain
// CHECK:         linalg.reduce
// CHECK:           arith.addf %{{.*}}, %{{.*}} fastmath<reassoc> : f32
// CHECK:         linalg.generic
// CHECK:           %[[T:.*]] = arith.mulf %{{.*}}, %{{.*}} fastmath<reassoc> : f32
// CHECK-NEXT:      arith.addf %{{.*}}, %[[T]] fastmath<reassoc> : f32
func.func @reduce_chain(%x: tensor<4x8xf32>, %init: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>) {
  %r = linalg.reduce ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf32>)
      dimensions = [1]
      (%a: f32, %acc: f32) {
        %s = arith.addf %a, %acc : f32
        linalg.yield %s : f32
      }
  %two = arith.constant 2.0 : f32
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                        affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.mulf %acc, %two : f32
    %s = arith.addf %a, %t : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r, %g : tensor<4xf32>, tensor<4xf32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>

// Element-wise generics, and one whose body reads its output without a
// reduction loop (an in-place update), keep their order.
// CHECK-LABEL: func.func @elementwise
// CHECK-NOT:     fastmath
// CHECK:         return
func.func @elementwise(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %u = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%r : tensor<4x8xf32>) outs(%y : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %u : tensor<4x8xf32>
}
