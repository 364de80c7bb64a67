// RUN: hetero-opt %s --hetero-resize=priority=true -split-input-file | FileCheck %s
// RUN: hetero-opt %s --hetero-resize -split-input-file | FileCheck %s --check-prefix=PLAIN

// ZERO-Pri's statistics: the layer's first forward product in each function
// shows its weight (K x N, a row per contraction column) to the runtime,
// after the plans and right before the product; a second forward product
// of the layer, the backward products and another function's products of
// the layer only read the plan.

// CHECK-LABEL: func.func @forward
// CHECK-SAME:    (%[[X:.*]]: tensor<16x64xf32>, %[[W:.*]]: tensor<64x32xf32>, %[[V:.*]]: tensor<32x8xf32>)
// CHECK:         hetero.prune_plan layer "l0.fc" columns = 64
// CHECK:         hetero.prune_plan layer "l0.proj" columns = 32
// CHECK-NOT:     hetero.observe_weight
// CHECK:         hetero.observe_weight %[[W]] layer "l0.fc" : tensor<64x32xf32>
// CHECK-NEXT:    hetero.gemm_mark begin
// CHECK-NOT:     hetero.observe_weight {{.*}} "l0.fc"
// CHECK:         hetero.observe_weight %[[V]] layer "l0.proj" : tensor<32x8xf32>
// CHECK-NEXT:    hetero.gemm_mark begin
// CHECK-NOT:     hetero.observe_weight
// CHECK:         return
// PLAIN-NOT:     hetero.observe_weight
func.func @forward(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>, %v: tensor<32x8xf32>)
    -> (tensor<16x8xf32>, tensor<16x32xf32>) {
  %y = hetero.prunable_matmul col %x, %w layer "l0.fc" tp = 1
      : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  %z = hetero.prunable_matmul row %y, %v layer "l0.proj" tp = 1
      : tensor<16x32xf32>, tensor<32x8xf32> -> tensor<16x8xf32>
  %y2 = hetero.prunable_matmul col %x, %w layer "l0.fc" tp = 1
      : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  return %z, %y2 : tensor<16x8xf32>, tensor<16x32xf32>
}

// CHECK-LABEL: func.func @backward
// CHECK-NOT:     hetero.observe_weight
// CHECK:         return
func.func @backward(%g: tensor<16x32xf32>, %wt: tensor<32x64xf32>) -> tensor<16x64xf32> {
  %dx = hetero.prunable_matmul col %g, %wt layer "l0.fc" tp = 1 product = grad_input
      : tensor<16x32xf32>, tensor<32x64xf32> -> tensor<16x64xf32>
  return %dx : tensor<16x64xf32>
}

// A weight computed in the function is shown where the product reads it.
// CHECK-LABEL: func.func @sliced
// CHECK:         %[[S:.*]] = tensor.extract_slice
// CHECK:         hetero.observe_weight %[[S]] layer "l1.fc" : tensor<64x16xf32>
func.func @sliced(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>) -> tensor<16x16xf32> {
  %s = tensor.extract_slice %w[0, 16] [64, 16] [1, 1] : tensor<64x32xf32> to tensor<64x16xf32>
  %y = hetero.prunable_matmul col %x, %s layer "l1.fc" tp = 1
      : tensor<16x64xf32>, tensor<64x16xf32> -> tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}

// -----

// Each block shows its own weight: one observation per (layer, block).
// CHECK-LABEL: func.func @blocks
// CHECK-SAME:    (%[[B:.*]]: index, %[[X:.*]]: tensor<16x64xf32>, %[[W:.*]]: tensor<64x32xf32>)
// CHECK:         hetero.observe_weight %[[W]] layer "block.fc" block %[[B]] : tensor<64x32xf32>
// CHECK:         hetero.observe_weight %[[W]] layer "block.fc" block %{{.*}} : tensor<64x32xf32>
// CHECK-NOT:     hetero.observe_weight
func.func @blocks(%b: index, %x: tensor<16x64xf32>, %w: tensor<64x32xf32>)
    -> (tensor<16x32xf32>, tensor<16x32xf32>) {
  %y = hetero.prunable_matmul col %x, %w layer "block.fc" block %b tp = 1
      : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  %c1 = arith.constant 1 : index
  %y1 = hetero.prunable_matmul col %x, %w layer "block.fc" block %c1 tp = 1
      : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  return %y, %y1 : tensor<16x32xf32>, tensor<16x32xf32>
}
