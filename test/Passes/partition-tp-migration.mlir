// RUN: hetero-opt %s --hetero-partition-tp=migration=true --canonicalize | FileCheck %s

// With migration each product also computes, for every shard s of the
// group, the columns of s that the runtime hands this rank
// (hetero.migration_plan), from the replicated operands and s's slices, and
// returns them with the product's own collective.

shard.grid @g(shape = 1x1x2)

// A summed product (row forward) adds them into the rank's partial: the
// all-reduce it had is its only collective.
// CHECK-LABEL: func.func @row_forward(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: tensor<6x8xf32>, %[[W:[a-z0-9]+]]: tensor<8x4xf32>
// CHECK:         %[[OWN:.*]] = hetero.prunable_matmul row %{{.*}}, %{{.*}} layer "fc" tp = 1 : tensor<6x4xf32>, tensor<4x4xf32> -> tensor<6x4xf32>
// CHECK:         %[[SUM:.*]] = scf.for %[[S:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[OWN]]) -> (tensor<6x4xf32>)
// CHECK:           %[[COLS:.*]], %{{.*}} = hetero.migration_plan layer "fc" columns = 4 from %[[S]] : tensor<?xindex>
// CHECK:           scf.if
// CHECK:             %[[OFF:.*]] = arith.muli %[[S]], %{{.*}} : index
// CHECK:             %[[XS:.*]] = tensor.extract_slice %[[X]][0, %[[OFF]]] [6, 4] [1, 1]
// CHECK:             %[[WS:.*]] = tensor.extract_slice %[[W]][%{{.*}}, 0] [4, 4] [1, 1]
// CHECK:             hetero.gemm_mark begin_migrated
// CHECK:             %[[XP:.*]] = hetero.select_cols %[[XS]][%[[COLS]]] axis = 1
// CHECK:             %[[WP:.*]] = hetero.select_cols %[[WS]][%[[COLS]]] axis = 0
// CHECK:             %[[PART:.*]] = linalg.matmul ins(%[[XP]], %[[WP]] : tensor<6x?xf32>, tensor<?x4xf32>)
// CHECK:             hetero.gemm_mark end_migrated
// CHECK:             linalg.generic {{.*}} ins(%[[PART]] : tensor<6x4xf32>) outs(%[[ACC]] : tensor<6x4xf32>)
// CHECK:               arith.addf
// CHECK:           } else {
// CHECK-NEXT:        scf.yield %[[ACC]]
// CHECK-NOT:     hetero.all_gather
// CHECK:         %[[Y:.*]] = hetero.all_reduce %[[SUM]] on @g axes = [2] : tensor<6x4xf32>
// CHECK-NOT:     hetero.all_
// CHECK:         return %[[Y]]
func.func @row_forward(%x: tensor<6x8xf32>, %w: tensor<8x4xf32>) -> tensor<6x4xf32> {
  %y = hetero.prunable_matmul row %x, %w layer "fc" tp = 2 : tensor<6x8xf32>, tensor<8x4xf32> -> tensor<6x4xf32>
  return %y : tensor<6x4xf32>
}

// A gathered product (row grad_input) gathers while no rank of the group
// migrates columns of the layer; otherwise it sums zero-padded global
// values that hold the rank's slice and its parts of the others' slices.
// CHECK-LABEL: func.func @row_grad_input(
// CHECK-SAME:    %[[G:[a-z0-9]+]]: tensor<6x4xf32>, %[[WT:[a-z0-9]+]]: tensor<4x8xf32>
// CHECK:         %[[T:.*]] = shard.process_multi_index on @g axes = [2] : index
// CHECK:         %[[OWN:.*]] = hetero.prunable_matmul row %[[G]], %{{.*}} layer "fc" tp = 1 product = grad_input : tensor<6x4xf32>, tensor<4x4xf32> -> tensor<6x4xf32>
// CHECK:         %[[ANY:.*]] = scf.for %{{.*}} iter_args(%[[SEEN:.*]] = %false) -> (i1)
// CHECK:           %{{.*}}, %[[MIG:.*]] = hetero.migration_plan layer "fc" columns = 4 from
// CHECK:           arith.ori %[[SEEN]], %[[MIG]] : i1
// CHECK:         %[[DX:.*]] = scf.if %[[ANY]] -> (tensor<6x8xf32>)
// CHECK:           %[[ZEROS:.*]] = linalg.fill
// CHECK:           %[[AT:.*]] = arith.muli %[[T]], %{{.*}} : index
// CHECK:           %[[MINE:.*]] = tensor.insert_slice %[[OWN]] into %[[ZEROS]][0, %[[AT]]] [6, 4] [1, 1]
// CHECK:           %[[PADDED:.*]] = scf.for %[[S:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %[[MINE]]) -> (tensor<6x8xf32>)
// CHECK:             %[[COLS:.*]], %{{.*}} = hetero.migration_plan layer "fc" columns = 4 from %[[S]]
// CHECK:             hetero.gemm_mark begin_migrated
// CHECK:             %[[PART:.*]] = hetero.impute_cols zero %{{.*}}[%[[COLS]]] axis = 1 : tensor<6x?xf32>, tensor<?xindex> -> tensor<6x4xf32>
// CHECK:             hetero.gemm_mark end_migrated
// CHECK:             %[[WINDOW:.*]] = tensor.extract_slice %[[ACC]][0, %{{.*}}] [6, 4] [1, 1]
// CHECK:             %[[ADDED:.*]] = linalg.generic {{.*}} ins(%[[PART]] : tensor<6x4xf32>) outs(%[[WINDOW]] : tensor<6x4xf32>)
// CHECK:             tensor.insert_slice %[[ADDED]] into %[[ACC]]
// CHECK:           %[[REDUCED:.*]] = hetero.all_reduce %[[PADDED]] on @g axes = [2] : tensor<6x8xf32>
// CHECK:           scf.yield %[[REDUCED]]
// CHECK:         } else {
// CHECK:           hetero.all_gather %{{.*}} on @g axes = [2] axis = 0 : tensor<1x6x4xf32> -> tensor<2x6x4xf32>
// CHECK:         return %[[DX]]
func.func @row_grad_input(%g: tensor<6x4xf32>, %wt: tensor<4x8xf32>) -> tensor<6x8xf32> {
  %dx = hetero.prunable_matmul row %g, %wt layer "fc" tp = 2 product = grad_input : tensor<6x4xf32>, tensor<4x8xf32> -> tensor<6x8xf32>
  return %dx : tensor<6x8xf32>
}

// Without migration (the default) nothing asks the planner.
// RUN: hetero-opt %s --hetero-partition-tp | FileCheck %s --check-prefix=PLAIN
// PLAIN-NOT: hetero.migration_plan
// PLAIN-NOT: hetero.gemm_mark
