// hetero-gpu-split-reductions: a long innermost reduction with few outputs
// becomes r parallel partials per output (element j * r + p to partial p),
// reduced innermost, then a combine over the r partials. Short, dynamic
// and many-output reductions stay whole. An op whose reduction loop is
// outside a parallel one has its loops interchanged first, reductions
// innermost (and is then split like the others).
// RUN: hetero-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(hetero-gpu-split-reductions))' | FileCheck %s
// RUN: hetero-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(hetero-gpu-split-reductions{threads=8192}))' | FileCheck %s --check-prefix=FEW
// RUN: not hetero-opt %s --pass-pipeline='builtin.module(func.func(hetero-gpu-split-reductions{min-reduced=8}))' 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: hetero-gpu-split-reductions: threads must be positive and min-reduced at least 64; got threads = 131072, min-reduced = 8

#rows = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#cols = affine_map<(i, j) -> (j)>

// 8192 outputs aim at 131072 partials: r = 16, each thread 512 elements.
// CHECK-LABEL: func.func @sums
// CHECK: %[[X:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1, 2]] output_shape [8192, 512, 16]
// CHECK: %[[Z:.*]] = linalg.fill {{.*}} -> tensor<8192x16xf32>
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[IN:.*]], #[[OUT:.*]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]] : tensor<8192x512x16xf32>) outs(%[[Z]] : tensor<8192x16xf32>)
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[P]] : tensor<8192x16xf32>)
// With only 8192 partials wanted, 8192 outputs are enough as they are.
// FEW-LABEL: func.func @sums
// FEW-NOT: tensor.expand_shape
// FEW: return
func.func @sums(%x: tensor<8192x8192xf32>) -> tensor<8192xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8192xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8192xf32>) -> tensor<8192xf32>
  %s = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8192x8192xf32>) outs(%init : tensor<8192xf32>) {
  ^bb0(%v: f32, %a: f32):
    %t = arith.addf %v, %a : f32
    linalg.yield %t : f32
  } -> tensor<8192xf32>
  return %s : tensor<8192xf32>
}

// CHECK-LABEL: func.func @whole
// CHECK-NOT: tensor.expand_shape
// CHECK: return
func.func @whole(%short: tensor<64x512xf32>, %many: tensor<262144x2048xf32>, %dynamic: tensor<?x4096xf32>) -> (tensor<64xf32>, tensor<262144xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<64xf32>
  %a = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%short : tensor<64x512xf32>) outs(%e0 : tensor<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %t = arith.addf %v, %acc : f32
    linalg.yield %t : f32
  } -> tensor<64xf32>
  %e1 = tensor.empty() : tensor<262144xf32>
  %b = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%many : tensor<262144x2048xf32>) outs(%e1 : tensor<262144xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %t = arith.addf %v, %acc : f32
    linalg.yield %t : f32
  } -> tensor<262144xf32>
  %n = tensor.dim %dynamic, %c0 : tensor<?x4096xf32>
  %e2 = tensor.empty(%n) : tensor<?xf32>
  %c = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%dynamic : tensor<?x4096xf32>) outs(%e2 : tensor<?xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %t = arith.addf %v, %acc : f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  return %a, %b, %c : tensor<64xf32>, tensor<262144xf32>, tensor<?xf32>
}

// A column sum written over rows: the columns become the outer loop, the
// 4096 rows the inner reduction, which then splits (64 outputs, r = 128,
// each thread 32 rows). A short one is interchanged and stays whole.
// CHECK-LABEL: func.func @columns
// CHECK: tensor.expand_shape %arg0 {{\[\[}}0, 1], [2]] output_shape [32, 128, 64]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]}
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%arg1 : tensor<16x64xf32>)
// CHECK-NOT: "reduction", "parallel"
// CHECK: return
func.func @columns(%outer: tensor<4096x64xf32>, %short: tensor<16x64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e0 : tensor<64xf32>) -> tensor<64xf32>
  %d = linalg.generic {indexing_maps = [#rows, #cols], iterator_types = ["reduction", "parallel"]}
      ins(%outer : tensor<4096x64xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %t = arith.addf %v, %acc : f32
    linalg.yield %t : f32
  } -> tensor<64xf32>
  %s = linalg.generic {indexing_maps = [#rows, #cols], iterator_types = ["reduction", "parallel"]}
      ins(%short : tensor<16x64xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %t = arith.addf %v, %acc : f32
    linalg.yield %t : f32
  } -> tensor<64xf32>
  return %d, %s : tensor<64xf32>, tensor<64xf32>
}

// A maximum splits too (its neutral element is -inf).
// CHECK-LABEL: func.func @maxima
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.maximumf
func.func @maxima(%x: tensor<16x65536xf32>, %init: tensor<16xf32>) -> tensor<16xf32> {
  %m = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x65536xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %t = arith.maximumf %v, %acc : f32
    linalg.yield %t : f32
  } -> tensor<16xf32>
  return %m : tensor<16xf32>
}
