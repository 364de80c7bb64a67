// RUN: hetero-opt %s -canonicalize -split-input-file | FileCheck %s

// A bucket of one gradient is a plain all-reduce.
// CHECK-LABEL: func.func @single_bucket
// CHECK-SAME:    (%[[G:.*]]: tensor<8xf32>)
// CHECK:         %[[R:.*]] = hetero.all_reduce %[[G]] reduction = avg compress <fp16> : tensor<8xf32>
// CHECK-NOT:     hetero.bucket
// CHECK:         return %[[R]]
func.func @single_bucket(%g: tensor<8xf32>) -> tensor<8xf32> {
  %0 = hetero.bucket %g reduction = avg compress <fp16> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// `compress <none>` is dropped.
// CHECK-LABEL: func.func @drop_none
// CHECK-SAME:    (%[[G:[^:]*]]: tensor<8xf32>, %[[H:[^:]*]]: tensor<4xf32>)
// CHECK-NEXT:    hetero.all_reduce %[[G]] : tensor<8xf32>
// CHECK-NEXT:    hetero.bucket %[[G]], %[[H]] : tensor<8xf32>, tensor<4xf32>
func.func @drop_none(%g: tensor<8xf32>, %h: tensor<4xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<4xf32>) {
  %0 = hetero.all_reduce %g compress <none> : tensor<8xf32>
  %1:2 = hetero.bucket %g, %h compress <none> : tensor<8xf32>, tensor<4xf32>
  return %0, %1#0, %1#1 : tensor<8xf32>, tensor<8xf32>, tensor<4xf32>
}

// -----

// Unused collectives disappear on every rank alike (they are pure).
// CHECK-LABEL: func.func @dead_collective
// CHECK-NOT:     hetero.all_reduce
// CHECK:         hetero.send
func.func @dead_collective(%g: tensor<8xf32>) {
  %0 = hetero.all_reduce %g : tensor<8xf32>
  hetero.send %g to 1 : tensor<8xf32>
  return
}

// -----

// Collectives over a group of one rank return their input, unless a
// compressor would change the values.
shard.grid @single(shape = 4x1)
// CHECK-LABEL: func.func @single_rank
// CHECK-SAME:    (%[[G:.*]]: tensor<8xf32>, %[[H:.*]]: tensor<4xf32>)
// CHECK-NOT:     hetero.bucket
// CHECK-NOT:     hetero.broadcast
// CHECK-NOT:     hetero.reduce
// CHECK-NOT:     hetero.all_gather
// CHECK-NOT:     hetero.all_to_all
// CHECK:         %[[LOSSY:.*]] = hetero.all_reduce %[[G]] on @single axes = [1] compress <fp16>
// CHECK:         %[[WIDE:.*]] = hetero.all_reduce %[[G]] on @single axes = [0] :
// CHECK:         return %[[G]], %[[G]], %[[H]], %[[G]], %[[G]], %[[G]], %[[G]], %[[LOSSY]], %[[WIDE]]
func.func @single_rank(%g: tensor<8xf32>, %h: tensor<4xf32>)
    -> (tensor<8xf32>, tensor<8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<8xf32>,
        tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %0 = hetero.all_reduce %g on @single axes = [1] reduction = avg : tensor<8xf32>
  %1:2 = hetero.bucket %g, %h on @single axes = [1] : tensor<8xf32>, tensor<4xf32>
  %2 = hetero.broadcast %g on @single axes = [1] root = 0 : tensor<8xf32>
  %3 = hetero.reduce %g on @single axes = [1] root = 0 : tensor<8xf32>
  %4 = hetero.all_gather %g on @single axes = [1] axis = 0 : tensor<8xf32> -> tensor<8xf32>
  %5 = hetero.all_to_all %g on @single axes = [1] split_axis = 0 concat_axis = 0 : tensor<8xf32> -> tensor<8xf32>
  %6 = hetero.all_reduce %g on @single axes = [1] compress <fp16> : tensor<8xf32>
  %7 = hetero.all_reduce %g on @single axes = [0] : tensor<8xf32>
  return %0, %1#0, %1#1, %2, %3, %4, %5, %6, %7
      : tensor<8xf32>, tensor<8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<8xf32>,
        tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
