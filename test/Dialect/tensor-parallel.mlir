// RUN: hetero-opt %s | FileCheck %s
// RUN: hetero-opt -mlir-print-op-generic %s | hetero-opt | FileCheck %s

// CHECK-LABEL: func.func @zero_resizing
// CHECK-SAME:    (%[[X:.*]]: tensor<16x64xf32>, %[[W:.*]]: tensor<64x256xf32>, %[[W2:.*]]: tensor<256x64xf32>)
func.func @zero_resizing(%x: tensor<16x64xf32>, %w: tensor<64x256xf32>,
                         %w2: tensor<256x64xf32>) -> tensor<16x64xf32> {
  // CHECK: %[[Y:.*]] = hetero.prunable_matmul col %[[X]], %[[W]] layer "l0.fc1" tp = 4 : tensor<16x64xf32>, tensor<64x256xf32> -> tensor<16x256xf32>
  %y = hetero.prunable_matmul col %x, %w layer "l0.fc1" tp = 4
      : tensor<16x64xf32>, tensor<64x256xf32> -> tensor<16x256xf32>
  // CHECK: %[[Z:.*]] = hetero.prunable_matmul row %[[Y]], %[[W2]] layer "l0.fc2" tp = 4 impute average : tensor<16x256xf32>, tensor<256x64xf32> -> tensor<16x64xf32>
  %z = hetero.prunable_matmul row %y, %w2 layer "l0.fc2" tp = 4 impute average
      : tensor<16x256xf32>, tensor<256x64xf32> -> tensor<16x64xf32>
  // CHECK: %[[KEPT:.*]] = hetero.prune_plan layer "l0.fc1" columns = 256 : tensor<?xindex>
  %kept = hetero.prune_plan layer "l0.fc1" columns = 256 : tensor<?xindex>
  // CHECK: %[[WS:.*]] = hetero.select_cols %[[W]][%[[KEPT]]] axis = 1 : tensor<64x256xf32>, tensor<?xindex> -> tensor<64x?xf32>
  %ws = hetero.select_cols %w[%kept] axis = 1
      : tensor<64x256xf32>, tensor<?xindex> -> tensor<64x?xf32>
  // CHECK: %[[P:.*]] = hetero.select_cols %[[Y]][%[[KEPT]]] axis = 1 : tensor<16x256xf32>, tensor<?xindex> -> tensor<16x?xf32>
  %part = hetero.select_cols %y[%kept] axis = 1
      : tensor<16x256xf32>, tensor<?xindex> -> tensor<16x?xf32>
  // CHECK: hetero.impute_cols zero %[[P]][%[[KEPT]]] axis = 1 : tensor<16x?xf32>, tensor<?xindex> -> tensor<16x256xf32>
  %full = hetero.impute_cols zero %part[%kept] axis = 1
      : tensor<16x?xf32>, tensor<?xindex> -> tensor<16x256xf32>
  return %z : tensor<16x64xf32>
}

// Batched activations: the lhs may have leading dimensions.
// CHECK-LABEL: func.func @batched
// CHECK: hetero.prunable_matmul col %{{.*}}, %{{.*}} layer "attn.qkv" tp = 2 : tensor<2x8x32xbf16>, tensor<32x96xbf16> -> tensor<2x8x96xbf16>
func.func @batched(%x: tensor<2x8x32xbf16>, %w: tensor<32x96xbf16>) -> tensor<2x8x96xbf16> {
  %y = hetero.prunable_matmul col %x, %w layer "attn.qkv" tp = 2
      : tensor<2x8x32xbf16>, tensor<32x96xbf16> -> tensor<2x8x96xbf16>
  return %y : tensor<2x8x96xbf16>
}

// CHECK-LABEL: func.func @plan_indices_i32
// CHECK: hetero.prune_plan layer "l1" columns = 8 : tensor<6xi32>
func.func @plan_indices_i32() -> tensor<6xi32> {
  %kept = hetero.prune_plan layer "l1" columns = 8 : tensor<6xi32>
  return %kept : tensor<6xi32>
}
