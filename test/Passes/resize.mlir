// RUN: hetero-opt %s --hetero-resize -split-input-file | FileCheck %s
// RUN: hetero-opt %s --hetero-resize --hetero-prunable-to-linalg -split-input-file | FileCheck %s --check-prefix=LOWERED

// The three products of a linear layer Y = X W (W: 64 x 32, contraction
// K = 64) under ZERO-resizing: one plan per layer and function; the
// unpruned path is the plain product; the pruned path gathers the kept K
// columns and imputes what stays pruned.

// CHECK-LABEL: func.func @layer
// CHECK-SAME:    (%[[X:.*]]: tensor<16x64xf32>, %[[W:.*]]: tensor<64x32xf32>, %[[G:.*]]: tensor<16x32xf32>, %[[XT:.*]]: tensor<64x16xf32>, %[[WT:.*]]: tensor<32x64xf32>)
// CHECK-NEXT:    %[[KEPT:.*]] = hetero.prune_plan layer "l0.fc" columns = 64 : tensor<?xindex>
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[N:.*]] = tensor.dim %[[KEPT]], %[[ZERO]] : tensor<?xindex>
// CHECK-NEXT:    %[[K:.*]] = arith.constant 64 : index
// CHECK-NEXT:    %[[ALL:.*]] = arith.cmpi eq, %[[N]], %[[K]] : index
// CHECK-NOT:     hetero.prune_plan
// Forward: Y = X[:, P] W[P, :], full size; the runtime times the GEMM
// the rank ran between the marks.
// CHECK:         hetero.gemm_mark begin
// CHECK-NEXT:    %[[Y:.*]] = scf.if %[[ALL]] -> (tensor<16x32xf32>) {
// CHECK:           %[[FULL:.*]] = linalg.matmul ins(%[[X]], %[[W]] : tensor<16x64xf32>, tensor<64x32xf32>)
// CHECK:           scf.yield %[[FULL]]
// CHECK:         } else {
// CHECK:           %[[XS:.*]] = hetero.select_cols %[[X]][%[[KEPT]]] axis = 1 : tensor<16x64xf32>, tensor<?xindex> -> tensor<16x?xf32>
// CHECK:           %[[WS:.*]] = hetero.select_cols %[[W]][%[[KEPT]]] axis = 0 : tensor<64x32xf32>, tensor<?xindex> -> tensor<?x32xf32>
// CHECK:           %[[PART:.*]] = linalg.matmul ins(%[[XS]], %[[WS]] : tensor<16x?xf32>, tensor<?x32xf32>)
// CHECK:           scf.yield %[[PART]] : tensor<16x32xf32>
// CHECK:         }
// CHECK-NEXT:    hetero.gemm_mark end
// grad_input: dX[:, P] = G W^T[:, P], the rest imputed (zero).
// CHECK:         scf.if %[[ALL]]
// CHECK:           linalg.matmul ins(%[[G]], %[[WT]] : tensor<16x32xf32>, tensor<32x64xf32>)
// CHECK:         } else {
// CHECK:           %[[WTS:.*]] = hetero.select_cols %[[WT]][%[[KEPT]]] axis = 1 : tensor<32x64xf32>, tensor<?xindex> -> tensor<32x?xf32>
// CHECK:           %[[DXP:.*]] = linalg.matmul ins(%[[G]], %[[WTS]] : tensor<16x32xf32>, tensor<32x?xf32>)
// CHECK:           %[[DX:.*]] = hetero.impute_cols zero %[[DXP]][%[[KEPT]]] axis = 1 : tensor<16x?xf32>, tensor<?xindex> -> tensor<16x64xf32>
// CHECK:           scf.yield %[[DX]]
// grad_weight: dW[P, :] = X^T[P, :] G, the rest imputed (average).
// CHECK:         scf.if %[[ALL]]
// CHECK:         } else {
// CHECK:           %[[XTS:.*]] = hetero.select_cols %[[XT]][%[[KEPT]]] axis = 0 : tensor<64x16xf32>, tensor<?xindex> -> tensor<?x16xf32>
// CHECK:           %[[DWP:.*]] = linalg.matmul ins(%[[XTS]], %[[G]] : tensor<?x16xf32>, tensor<16x32xf32>)
// CHECK:           %[[DW:.*]] = hetero.impute_cols average %[[DWP]][%[[KEPT]]] axis = 0 : tensor<?x32xf32>, tensor<?xindex> -> tensor<64x32xf32>
// CHECK:           scf.yield %[[DW]]
// CHECK-NOT:     hetero.prunable_matmul
// LOWERED-NOT:   hetero.prunable_matmul
func.func @layer(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>, %g: tensor<16x32xf32>,
                 %xt: tensor<64x16xf32>, %wt: tensor<32x64xf32>)
    -> (tensor<16x32xf32>, tensor<16x64xf32>, tensor<64x32xf32>) {
  %y = hetero.prunable_matmul col %x, %w layer "l0.fc" tp = 1
      : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  %dx = hetero.prunable_matmul col %g, %wt layer "l0.fc" tp = 1 product = grad_input
      : tensor<16x32xf32>, tensor<32x64xf32> -> tensor<16x64xf32>
  %dw = hetero.prunable_matmul col %xt, %g layer "l0.fc" tp = 1 product = grad_weight impute average
      : tensor<64x16xf32>, tensor<16x32xf32> -> tensor<64x32xf32>
  return %y, %dx, %dw : tensor<16x32xf32>, tensor<16x64xf32>, tensor<64x32xf32>
}

// -----

// Batched activations collapse into the rows of the matmul on both paths;
// each layer gets its own plan.
// CHECK-LABEL: func.func @batched
// CHECK:         hetero.prune_plan layer "a" columns = 32
// CHECK:         hetero.prune_plan layer "b" columns = 96
// CHECK:         hetero.select_cols %{{.*}} axis = 2 : tensor<2x8x32xf32>, tensor<?xindex> -> tensor<2x8x?xf32>
// CHECK:         tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<2x8x?xf32> into tensor<16x?xf32>
// CHECK:         tensor.expand_shape
func.func @batched(%x: tensor<2x8x32xf32>, %w: tensor<32x96xf32>, %v: tensor<96x32xf32>) -> tensor<2x8x32xf32> {
  %h = hetero.prunable_matmul col %x, %w layer "a" tp = 1
      : tensor<2x8x32xf32>, tensor<32x96xf32> -> tensor<2x8x96xf32>
  %y = hetero.prunable_matmul row %h, %v layer "b" tp = 1
      : tensor<2x8x96xf32>, tensor<96x32xf32> -> tensor<2x8x32xf32>
  return %y : tensor<2x8x32xf32>
}

// -----

// A function that several blocks call takes the block index: its layers
// get one plan per (layer, block), read at the entry. A constant index is
// cloned there; an argument is read as it is.
// CHECK-LABEL: func.func @blocks
// CHECK-SAME:    (%[[B:.*]]: index,
// CHECK-NEXT:    %[[PLAN:.*]] = hetero.prune_plan layer "block.fc" block %[[B]] columns = 64 : tensor<?xindex>
// CHECK:         %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[OTHER:.*]] = hetero.prune_plan layer "block.fc" block %[[TWO]] columns = 64 : tensor<?xindex>
// CHECK-NOT:     hetero.prune_plan
// CHECK:         hetero.select_cols %{{.*}}[%[[PLAN]]]
// CHECK:         hetero.select_cols %{{.*}}[%[[OTHER]]]
func.func @blocks(%b: index, %x: tensor<16x64xf32>, %w: tensor<64x32xf32>, %wt: tensor<32x64xf32>, %g: tensor<16x32xf32>)
    -> (tensor<16x32xf32>, tensor<16x64xf32>, tensor<16x32xf32>) {
  %y = hetero.prunable_matmul col %x, %w layer "block.fc" block %b tp = 1
      : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  %dx = hetero.prunable_matmul col %g, %wt layer "block.fc" block %b tp = 1 product = grad_input
      : tensor<16x32xf32>, tensor<32x64xf32> -> tensor<16x64xf32>
  %c2 = arith.constant 2 : index
  %y2 = hetero.prunable_matmul col %x, %w layer "block.fc" block %c2 tp = 1
      : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  return %y, %dx, %y2 : tensor<16x32xf32>, tensor<16x64xf32>, tensor<16x32xf32>
}
