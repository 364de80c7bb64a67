// RUN: hetero-opt %s --hetero-columns-to-linalg -split-input-file | FileCheck %s

// select_cols: one generic over the result that reads the slice each index
// names.
// CHECK-LABEL: func.func @select
// CHECK-SAME:    (%[[W:.*]]: tensor<4x8xf32>, %[[K:.*]]: tensor<?xi32>)
// CHECK:         %[[N:.*]] = tensor.dim %[[K]], %{{.*}} : tensor<?xi32>
// CHECK:         %[[E:.*]] = tensor.empty(%[[N]]) : tensor<4x?xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[K]] : tensor<?xi32>) outs(%[[E]] : tensor<4x?xf32>)
// CHECK:         ^bb0(%[[IDX:.*]]: i32, %{{.*}}: f32):
// CHECK:           %[[COL:.*]] = arith.index_cast %[[IDX]] : i32 to index
// CHECK:           %[[ROW:.*]] = linalg.index 0 : index
// CHECK:           %[[V:.*]] = tensor.extract %[[W]][%[[ROW]], %[[COL]]] : tensor<4x8xf32>
// CHECK:           linalg.yield %[[V]] : f32
// CHECK-NOT:     hetero.select_cols
func.func @select(%w: tensor<4x8xf32>, %k: tensor<?xi32>) -> tensor<4x8xf32> {
  %s = hetero.select_cols %w[%k] axis = 1 : tensor<4x8xf32>, tensor<?xi32> -> tensor<4x?xf32>
  %f = hetero.impute_cols zero %s[%k] axis = 1 : tensor<4x?xf32>, tensor<?xi32> -> tensor<4x8xf32>
  return %f : tensor<4x8xf32>
}

// -----

// impute_cols: the inverse map of the indices (-1 where nothing was
// computed), then one generic over the unpruned result; average divides the
// sums over the computed slices by their count.
// CHECK-LABEL: func.func @impute_average
// CHECK:         %[[MINUS:.*]] = arith.constant -1 : i64
// CHECK:         %[[SLOTS0:.*]] = linalg.fill ins(%[[MINUS]] : i64) outs(%{{.*}} : tensor<6xi64>)
// CHECK:         %[[SLOTS:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[SLOTS0]]) -> (tensor<6xi64>)
// CHECK:           tensor.insert
// CHECK:         %[[SUMS:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK:           arith.addf
// CHECK:         linalg.generic {{.*}} ins(%[[SLOTS]], %[[SUMS]] : tensor<6xi64>, tensor<3xf32>)
// CHECK:           arith.cmpi sge
// CHECK:           scf.if
// CHECK:             tensor.extract
// CHECK:           } else {
// CHECK:             arith.divf
// CHECK-NOT:     hetero.impute_cols
func.func @impute_average(%part: tensor<?x3xf32>, %k: tensor<?xindex>) -> tensor<6x3xf32> {
  %f = hetero.impute_cols average %part[%k] axis = 0 : tensor<?x3xf32>, tensor<?xindex> -> tensor<6x3xf32>
  return %f : tensor<6x3xf32>
}
