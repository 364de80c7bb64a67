// RUN: hetero-opt %s --hetero-resize | FileCheck %s
// RUN: hetero-opt %s --hetero-resize --hetero-columns-to-linalg | FileCheck %s --check-prefix=LOWERED

// Same imputation (shared/seeds/000-zero-resizing.md 2.2): the pruned rows
// of dW (columns of dX) take their values from the previous iteration's
// product. The pruned branch asks the runtime for it; every iteration keeps
// its product, pruned or not, after the GEMM's end mark. The forward
// product imputes nothing and keeps nothing.

// CHECK-LABEL: func.func @layer
// CHECK-SAME:    (%[[X:.*]]: tensor<16x64xf32>, %[[W:.*]]: tensor<64x32xf32>, %[[G:.*]]: tensor<16x32xf32>, %[[XT:.*]]: tensor<64x16xf32>, %[[WT:.*]]: tensor<32x64xf32>)
// CHECK:         %[[KEPT:.*]] = hetero.prune_plan layer "l0.fc" columns = 64
// CHECK:         hetero.gemm_mark begin
// CHECK:         scf.if
// CHECK-NOT:     hetero.previous_product
// CHECK:         hetero.gemm_mark end
// CHECK-NOT:     hetero.keep_product
// CHECK:         hetero.gemm_mark begin
// CHECK-NEXT:    %[[DX:.*]] = scf.if %{{.*}} -> (tensor<16x64xf32>) {
// CHECK-NOT:       hetero.previous_product
// CHECK:         } else {
// CHECK-NEXT:      %[[LASTX:.*]] = hetero.previous_product layer "l0.fc" product = grad_input : tensor<16x64xf32>
// CHECK:           %[[DXP:.*]] = linalg.matmul
// CHECK-NEXT:      %[[DXI:.*]] = hetero.impute_cols same %[[DXP]][%[[KEPT]]] axis = 1 previous %[[LASTX]] : tensor<16x?xf32>, tensor<?xindex> -> tensor<16x64xf32>
// CHECK-NEXT:      scf.yield %[[DXI]]
// CHECK:         }
// CHECK-NEXT:    hetero.gemm_mark end
// CHECK-NEXT:    hetero.keep_product %[[DX]] layer "l0.fc" product = grad_input : tensor<16x64xf32>
// CHECK:         hetero.gemm_mark begin
// CHECK-NEXT:    %[[DW:.*]] = scf.if
// CHECK:         } else {
// CHECK-NEXT:      %[[LASTW:.*]] = hetero.previous_product layer "l0.fc" product = grad_weight : tensor<64x32xf32>
// CHECK:           %[[DWP:.*]] = linalg.matmul
// CHECK-NEXT:      hetero.impute_cols same %[[DWP]][%[[KEPT]]] axis = 0 previous %[[LASTW]] : tensor<?x32xf32>, tensor<?xindex> -> tensor<64x32xf32>
// CHECK:         }
// CHECK-NEXT:    hetero.gemm_mark end
// CHECK-NEXT:    hetero.keep_product %[[DW]] layer "l0.fc" product = grad_weight : tensor<64x32xf32>
// CHECK-NEXT:    return

// The imputation reads the previous value where no computed slice lands.
// LOWERED-LABEL: func.func @layer
// LOWERED:         %[[LAST:.*]] = hetero.previous_product layer "l0.fc" product = grad_input
// LOWERED:         linalg.generic {{.*}} ins(%{{.*}}, %[[LAST]] : tensor<64xi64>, tensor<16x64xf32>)
// LOWERED:         ^bb0(%[[SLOT:.*]]: i64, %[[PREV:.*]]: f32, %{{.*}}: f32):
// LOWERED:           scf.if
// LOWERED:             tensor.extract
// LOWERED:           } else {
// LOWERED-NEXT:        scf.yield %[[PREV]] : f32
// LOWERED-NOT:     hetero.impute_cols
func.func @layer(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>, %g: tensor<16x32xf32>,
                 %xt: tensor<64x16xf32>, %wt: tensor<32x64xf32>)
    -> (tensor<16x32xf32>, tensor<16x64xf32>, tensor<64x32xf32>) {
  %y = hetero.prunable_matmul col %x, %w layer "l0.fc" tp = 1 impute same
      : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  %dx = hetero.prunable_matmul col %g, %wt layer "l0.fc" tp = 1 product = grad_input impute same
      : tensor<16x32xf32>, tensor<32x64xf32> -> tensor<16x64xf32>
  %dw = hetero.prunable_matmul col %xt, %g layer "l0.fc" tp = 1 product = grad_weight impute same
      : tensor<64x16xf32>, tensor<16x32xf32> -> tensor<64x32xf32>
  return %y, %dx, %dw : tensor<16x32xf32>, tensor<16x64xf32>, tensor<64x32xf32>
}
