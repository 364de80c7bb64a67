// hetero-gpu-fuse-elementwise: a chain of element-wise ops becomes one op
// (one kernel); products keep their producers apart, so that they stay
// linalg.matmul for cuBLAS.
// RUN: hetero-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(hetero-gpu-fuse-elementwise))' | FileCheck %s

#map = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>

// gelu-like tanh(x + b) * 0.5: one generic computing both.
// CHECK-LABEL: func.func @chain
// CHECK:       %[[R:.*]] = linalg.generic
// CHECK-SAME:    ins(%arg0, %arg1 : tensor<8x16xf32>, tensor<16xf32>)
// CHECK:         arith.addf
// CHECK-NEXT:    math.tanh
// CHECK-NEXT:    arith.mulf
// CHECK-NOT:   linalg.generic
// CHECK:       return %[[R]]
func.func @chain(%x: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<8x16xf32> {
  %half = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %biased = linalg.generic {indexing_maps = [#map, #row, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %b : tensor<8x16xf32>, tensor<16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%xv: f32, %bv: f32, %o: f32):
    %s = arith.addf %xv, %bv : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %act = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%biased : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.tanh %v : f32
    %h = arith.mulf %t, %half : f32
    linalg.yield %h : f32
  } -> tensor<8x16xf32>
  return %act : tensor<8x16xf32>
}

// -----

#map = affine_map<(i, j) -> (i, j)>
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>

// The scaled input of a product, as a named matmul and as a generic
// contraction, stays its own op; the product's element-wise consumer does
// not take the product in either.
// CHECK-LABEL: func.func @products
// CHECK:       %[[S:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<8x16xf32>)
// CHECK:       %[[P:.*]] = linalg.matmul ins(%[[S]], %arg1 : tensor<8x16xf32>, tensor<16x4xf32>)
// CHECK:       %[[Q:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%[[S]], %arg1 :
// CHECK:       linalg.generic {{.*}} ins(%[[P]], %[[Q]] :
func.func @products(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %two = arith.constant 2.0 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %scaled = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.mulf %v, %two : f32
    linalg.yield %m : f32
  } -> tensor<8x16xf32>
  %pe = tensor.empty() : tensor<8x4xf32>
  %pf = linalg.fill ins(%zero : f32) outs(%pe : tensor<8x4xf32>) -> tensor<8x4xf32>
  %p = linalg.matmul ins(%scaled, %w : tensor<8x16xf32>, tensor<16x4xf32>) outs(%pf : tensor<8x4xf32>) -> tensor<8x4xf32>
  %q = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%scaled, %w : tensor<8x16xf32>, tensor<16x4xf32>) outs(%pf : tensor<8x4xf32>) {
  ^bb0(%av: f32, %bv: f32, %acc: f32):
    %m = arith.mulf %av, %bv : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  %sum = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%p, %q : tensor<8x4xf32>, tensor<8x4xf32>) outs(%pe : tensor<8x4xf32>) {
  ^bb0(%pv: f32, %qv: f32, %o: f32):
    %s = arith.addf %pv, %qv : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  return %sum : tensor<8x4xf32>
}

// -----

#col = affine_map<(i, j) -> (i)>
#map = affine_map<(i, j) -> (i, j)>

// An embedding as a product of a one-hot matrix (built from collapsed
// token ids) with the table: the product stays a linalg.matmul, not a
// generic contraction with the one-hot computed inside.
// CHECK-LABEL: func.func @embedding
// CHECK:       %[[HOT:.*]] = linalg.generic
// CHECK:       linalg.matmul ins(%[[HOT]], %arg1 : tensor<16x80xf32>, tensor<80x32xf32>)
func.func @embedding(%tokens: tensor<1x16xi32>, %table: tensor<80x32xf32>) -> tensor<16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ids = tensor.collapse_shape %tokens [[0, 1]] : tensor<1x16xi32> into tensor<16xi32>
  %e = tensor.empty() : tensor<16x80xf32>
  %hot = linalg.generic {indexing_maps = [#col, #map], iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<16xi32>) outs(%e : tensor<16x80xf32>) {
  ^bb0(%id: i32, %o: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %is = arith.cmpi eq, %id, %ji : i32
    %v = arith.select %is, %one, %zero : f32
    linalg.yield %v : f32
  } -> tensor<16x80xf32>
  %pe = tensor.empty() : tensor<16x32xf32>
  %pf = linalg.fill ins(%zero : f32) outs(%pe : tensor<16x32xf32>) -> tensor<16x32xf32>
  %p = linalg.matmul ins(%hot, %table : tensor<16x80xf32>, tensor<80x32xf32>) outs(%pf : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %p : tensor<16x32xf32>
}
