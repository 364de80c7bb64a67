// RUN: hetero-opt %s | FileCheck %s
// RUN: hetero-opt -mlir-print-op-generic %s | hetero-opt | FileCheck %s

shard.grid @grid(shape = 2x4)

// CHECK-LABEL: func.func @group_sync
func.func @group_sync(%w0: tensor<64x64xf32>, %w1: tensor<64xf32>, %d: tensor<8xf64>)
    -> (tensor<64x64xf32>, tensor<64xf32>) {
  // Defaults are not printed; every other parameter is.
  // CHECK: %{{.*}}:2 = hetero.group_sync %{{.*}}, %{{.*}} on @grid <policy = dynamic, window = 5.000000e-01, period = 8, semantics = periodic, lock = false, sync_every_microbatches = 2> : tensor<64x64xf32>, tensor<64xf32>
  %r:2 = hetero.group_sync %w0, %w1 on @grid
      <policy = dynamic, semantics = periodic, window = 0.5, lock = false,
       sync_every_microbatches = 2, period = 8> : tensor<64x64xf32>, tensor<64xf32>
  // CHECK: hetero.group_sync %{{.*}} on @grid <policy = dynamic> : tensor<64xf32>
  %s = hetero.group_sync %w1 on @grid <policy = dynamic, period = 10, lock = true,
       semantics = sliding, adam_var_rescale = false> : tensor<64xf32>
  // CHECK: hetero.group_sync %{{.*}} on @grid <policy = allreduce> : tensor<8xf64>
  %t = hetero.group_sync %d on @grid <policy = allreduce> : tensor<8xf64>
  return %r#0, %r#1 : tensor<64x64xf32>, tensor<64xf32>
}

// CHECK-LABEL: func.func @attributes
// CHECK-SAME: sync.a = #hetero.sync<policy = dynamic, adam_var_rescale = true>
// CHECK-SAME: sync.b = #hetero.sync<policy = dynamic, window = 0.000000e+00>
func.func @attributes() attributes {
    sync.a = #hetero.sync<adam_var_rescale = true, policy = dynamic>,
    sync.b = #hetero.sync<policy = dynamic, window = 0.0>} {
  return
}
