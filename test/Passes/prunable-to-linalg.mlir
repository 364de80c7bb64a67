// RUN: hetero-opt %s --hetero-prunable-to-linalg -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @matrix
// CHECK-SAME:    (%[[X:.*]]: tensor<16x64xf32>, %[[W:.*]]: tensor<64x256xf32>)
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[EMPTY:.*]] = tensor.empty() : tensor<16x256xf32>
// CHECK:         %[[FILL:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<16x256xf32>)
// CHECK:         %[[MM:.*]] = linalg.matmul ins(%[[X]], %[[W]] : tensor<16x64xf32>, tensor<64x256xf32>) outs(%[[FILL]] : tensor<16x256xf32>)
// CHECK-NOT:     hetero.prunable_matmul
// CHECK:         return %[[MM]]
func.func @matrix(%x: tensor<16x64xf32>, %w: tensor<64x256xf32>) -> tensor<16x256xf32> {
  %y = hetero.prunable_matmul col %x, %w layer "fc" tp = 4
      : tensor<16x64xf32>, tensor<64x256xf32> -> tensor<16x256xf32>
  return %y : tensor<16x256xf32>
}

// -----

// Leading dimensions are collapsed into rows and expanded again.
// CHECK-LABEL: func.func @batched
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<2x8x32xbf16> into tensor<16x32xbf16>
// CHECK:         %[[MM:.*]] = linalg.matmul ins(%[[FLAT]], %{{.*}} : tensor<16x32xbf16>, tensor<32x96xbf16>) outs(%{{.*}} : tensor<16x96xbf16>)
// CHECK:         %[[OUT:.*]] = tensor.expand_shape %[[MM]] {{\[\[}}0, 1], [2]] output_shape [2, 8, 96] : tensor<16x96xbf16> into tensor<2x8x96xbf16>
// CHECK:         return %[[OUT]]
func.func @batched(%x: tensor<2x8x32xbf16>, %w: tensor<32x96xbf16>) -> tensor<2x8x96xbf16> {
  %y = hetero.prunable_matmul row %x, %w layer "proj" tp = 2
      : tensor<2x8x32xbf16>, tensor<32x96xbf16> -> tensor<2x8x96xbf16>
  return %y : tensor<2x8x96xbf16>
}

// -----

// A dynamically shaped batched lhs is left alone.
// CHECK-LABEL: func.func @dynamic_batched
// CHECK:         hetero.prunable_matmul
func.func @dynamic_batched(%x: tensor<?x8x32xf32>, %w: tensor<32x96xf32>) -> tensor<?x8x96xf32> {
  %y = hetero.prunable_matmul col %x, %w layer "proj" tp = 1
      : tensor<?x8x32xf32>, tensor<32x96xf32> -> tensor<?x8x96xf32>
  return %y : tensor<?x8x96xf32>
}
