// hetero-fuse-elementwise: a chain of element-wise ops becomes one op
// (one loop nest, one kernel); products keep their producers apart, so that
// they stay GEMMs for BLAS and cuBLAS.
// RUN: hetero-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(hetero-fuse-elementwise))' | FileCheck %s
// RUN: hetero-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(hetero-fuse-elementwise{fold-transposes=true}))' --mlir-print-local-scope | FileCheck %s --check-prefix=FOLD
// RUN: hetero-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(hetero-fuse-elementwise{duplicate-transcendentals=false}))' | FileCheck %s --check-prefix=ONCE

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

// -----

// A transposed weight and a transposed activation read by products (the
// backward of a linear: dX = dY W^T, dW = X^T dY). With fold-transposes the
// products read the sources through permuted maps and the copies go; the
// transposes' other reader keeps its copy. Without it, nothing changes.
// CHECK-LABEL: func.func @transposed_operands
// CHECK-COUNT-2: linalg.transpose
// CHECK:         linalg.matmul ins(%{{.*}}, %transposed : tensor<8x4xf32>, tensor<4x16xf32>)
// CHECK:         linalg.matmul ins(%transposed_{{.*}}, %arg2 : tensor<16x8xf32>, tensor<8x4xf32>)
// FOLD-LABEL:   func.func @transposed_operands
// FOLD:         %[[KEPT:.*]] = linalg.transpose ins(%arg0 : tensor<8x16xf32>)
// FOLD-NOT:     linalg.transpose
// FOLD:         %[[DX:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg2, %arg1 : tensor<8x4xf32>, tensor<16x4xf32>)
// FOLD:           arith.mulf
// FOLD:           arith.addf
// FOLD:         %[[DW:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg2 : tensor<8x16xf32>, tensor<8x4xf32>)
// FOLD:         return %[[DX]], %[[DW]], %[[KEPT]]
func.func @transposed_operands(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %dy: tensor<8x4xf32>) -> (tensor<8x16xf32>, tensor<16x4xf32>, tensor<16x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %wte = tensor.empty() : tensor<4x16xf32>
  %wt = linalg.transpose ins(%w : tensor<16x4xf32>) outs(%wte : tensor<4x16xf32>) permutation = [1, 0]
  %xte = tensor.empty() : tensor<16x8xf32>
  %xt = linalg.transpose ins(%x : tensor<8x16xf32>) outs(%xte : tensor<16x8xf32>) permutation = [1, 0]
  %dxe = tensor.empty() : tensor<8x16xf32>
  %dxf = linalg.fill ins(%zero : f32) outs(%dxe : tensor<8x16xf32>) -> tensor<8x16xf32>
  %dx = linalg.matmul ins(%dy, %wt : tensor<8x4xf32>, tensor<4x16xf32>) outs(%dxf : tensor<8x16xf32>) -> tensor<8x16xf32>
  %dwe = tensor.empty() : tensor<16x4xf32>
  %dwf = linalg.fill ins(%zero : f32) outs(%dwe : tensor<16x4xf32>) -> tensor<16x4xf32>
  %dw = linalg.matmul ins(%xt, %dy : tensor<16x8xf32>, tensor<8x4xf32>) outs(%dwf : tensor<16x4xf32>) -> tensor<16x4xf32>
  return %dx, %dw, %xt : tensor<8x16xf32>, tensor<16x4xf32>, tensor<16x8xf32>
}

// -----

// Attention's scores of heads laid out [batch * heads, tokens, width]: the
// keys transposed per head ([bh, d, s]) fold into the batched product.
// FOLD-LABEL:  func.func @batched_keys
// FOLD-NOT:    linalg.transpose
// FOLD:        linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %arg1 :
func.func @batched_keys(%q: tensor<4x8x16xf32>, %k: tensor<4x8x16xf32>) -> tensor<4x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %kte = tensor.empty() : tensor<4x16x8xf32>
  %kt = linalg.transpose ins(%k : tensor<4x8x16xf32>) outs(%kte : tensor<4x16x8xf32>) permutation = [0, 2, 1]
  %se = tensor.empty() : tensor<4x8x8xf32>
  %sf = linalg.fill ins(%zero : f32) outs(%se : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<4x8x16xf32>, tensor<4x16x8xf32>) outs(%sf : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  return %s : tensor<4x8x8xf32>
}

// -----

// A producer whose body reads its output's initial value (`out + x`) stays
// apart: fused into a consumer with one more loop and kept as a result, it
// would add x once per iteration of that loop.
// CHECK-LABEL: func.func @reads_init
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT:     linalg.generic
func.func @reads_init(%x: tensor<4xf32>, %m: tensor<4x5xf32>) -> (tensor<4xf32>, tensor<4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x5xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%m, %b : tensor<4x5xf32>, tensor<4xf32>) outs(%e2 : tensor<4x5xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %p = arith.mulf %a, %c : f32
    linalg.yield %p : f32
  } -> tensor<4x5xf32>
  return %b, %r : tensor<4xf32>, tensor<4x5xf32>
}

// -----

#map = affine_map<(i, j) -> (i, j)>
#rows = affine_map<(i, j) -> (i)>

// A softmax's exponentials (of a scale, fused into them), read by the row
// sum and by the division. By default they are fused into each reader (exp
// computed twice, no buffer between them); with
// duplicate-transcendentals=false they are computed once and read by both.
// CHECK-LABEL: func.func @shared_exponentials
// CHECK:       linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK:         math.exp
// CHECK:       linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK:         math.exp
// CHECK:         arith.divf
// CHECK-NOT:   math.exp
// CHECK:       return
// ONCE-LABEL:  func.func @shared_exponentials
// ONCE:        %[[E:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%arg0 :
// ONCE:          arith.mulf
// ONCE-NEXT:     math.exp
// ONCE:        %[[S:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[E]] :
// ONCE-NOT:      math.exp
// ONCE:        linalg.generic {{.*}} ins(%[[E]], %[[S]] :
// ONCE-NOT:      math.exp
// ONCE:          arith.divf
// ONCE:        return
func.func @shared_exponentials(%x: tensor<4x8xf32>, %init: tensor<4xf32>) -> tensor<4x8xf32> {
  %half = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %scaled = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.mulf %v, %half : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %exp = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%scaled : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %x2 = math.exp %v : f32
    linalg.yield %x2 : f32
  } -> tensor<4x8xf32>
  %sum = linalg.generic {indexing_maps = [#map, #rows], iterator_types = ["parallel", "reduction"]} ins(%exp : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.addf %v, %acc : f32
    linalg.yield %a : f32
  } -> tensor<4xf32>
  %p = linalg.generic {indexing_maps = [#map, #rows, #map], iterator_types = ["parallel", "parallel"]} ins(%exp, %sum : tensor<4x8xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %s: f32, %o: f32):
    %d = arith.divf %v, %s : f32
    linalg.yield %d : f32
  } -> tensor<4x8xf32>
  return %p : tensor<4x8xf32>
}
