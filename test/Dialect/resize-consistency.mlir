// RUN: hetero-opt %s | hetero-opt | FileCheck %s

// Pruned values that are contracted away or restored satisfy ZERO-resizing's
// consistency constraint (invalid-resize.mlir has those that do not).

// CHECK-LABEL: func.func @forward
// CHECK: hetero.select_cols
// CHECK: linalg.matmul
func.func @forward(%x: tensor<2x8x256xf32>, %w: tensor<256x64xf32>, %k: tensor<?xindex>) -> tensor<2x8x64xf32> {
  %xs = hetero.select_cols %x[%k] axis = 2 : tensor<2x8x256xf32>, tensor<?xindex> -> tensor<2x8x?xf32>
  %ws = hetero.select_cols %w[%k] axis = 0 : tensor<256x64xf32>, tensor<?xindex> -> tensor<?x64xf32>
  %flat = tensor.collapse_shape %xs [[0, 1], [2]] : tensor<2x8x?xf32> into tensor<16x?xf32>
  %c2 = arith.constant 2 : index
  %d = tensor.dim %xs, %c2 : tensor<2x8x?xf32>
  %e = tensor.empty() : tensor<16x64xf32>
  %y = linalg.matmul ins(%flat, %ws : tensor<16x?xf32>, tensor<?x64xf32>) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %r = tensor.expand_shape %y [[0, 1], [2]] output_shape [2, 8, 64] : tensor<16x64xf32> into tensor<2x8x64xf32>
  return %r : tensor<2x8x64xf32>
}

// CHECK-LABEL: func.func @grad_weight
// CHECK: hetero.impute_cols average
func.func @grad_weight(%xt: tensor<256x16xf32>, %g: tensor<16x64xf32>, %k: tensor<?xindex>) -> tensor<256x64xf32> {
  %xs = hetero.select_cols %xt[%k] axis = 0 : tensor<256x16xf32>, tensor<?xindex> -> tensor<?x16xf32>
  %part = hetero.prunable_matmul col %xs, %g layer "l" tp = 1 : tensor<?x16xf32>, tensor<16x64xf32> -> tensor<?x64xf32>
  %full = hetero.impute_cols average %part[%k] axis = 0 : tensor<?x64xf32>, tensor<?xindex> -> tensor<256x64xf32>
  return %full : tensor<256x64xf32>
}
