// RUN: hetero-opt %s | FileCheck %s
// RUN: hetero-opt -mlir-print-op-generic %s | hetero-opt | FileCheck %s

shard.grid @devices(shape = 2x4)

// CHECK-LABEL: func.func @all_reduce
// CHECK-SAME:    (%[[G:.*]]: tensor<64x256xf32>, %[[E:.*]]: tensor<1024x64xf32>)
func.func @all_reduce(%g: tensor<64x256xf32>, %e: tensor<1024x64xf32>) {
  // CHECK: hetero.all_reduce %[[G]] : tensor<64x256xf32>
  %0 = hetero.all_reduce %g : tensor<64x256xf32>
  // CHECK: hetero.all_reduce %[[G]] on @devices axes = [0] reduction = avg compress <topk, ratio = 1.000000e-02, error_feedback, scheme = allgather> : tensor<64x256xf32>
  %1 = hetero.all_reduce %g on @devices axes = [0] reduction = avg
      compress <topk, ratio = 0.01, error_feedback, scheme = allgather>
      : tensor<64x256xf32>
  // CHECK: hetero.all_reduce %[[G]] on @devices compress <fp16> : tensor<64x256xf32>
  %2 = hetero.all_reduce %g on @devices compress <fp16> : tensor<64x256xf32>
  // CHECK: hetero.all_reduce %[[G]] compress <qsgd, levels = 16, placement = cpu, scheme = alltoall> : tensor<64x256xf32>
  %3 = hetero.all_reduce %g compress <qsgd, scheme = alltoall, levels = 16, placement = cpu> : tensor<64x256xf32>
  // Hierarchical: nodes of 8 ranks.
  // CHECK: hetero.all_reduce %[[G]] compress <topk, ratio = 1.000000e-02, scheme = allgather, node_size = 8> : tensor<64x256xf32>
  %h = hetero.all_reduce %g compress <topk, node_size = 8, ratio = 0.01, scheme = allgather> : tensor<64x256xf32>
  // CHECK: hetero.all_reduce %[[E]] sparse = hash_bitmap : tensor<1024x64xf32>
  %4 = hetero.all_reduce %e sparse = hash_bitmap : tensor<1024x64xf32>
  // CHECK: hetero.all_reduce %[[E]] reduction = max : tensor<1024x64xf32>
  %5 = hetero.all_reduce %e reduction = max : tensor<1024x64xf32>
  // CHECK: hetero.all_reduce %[[G]] compress <efsignsgd, error_feedback, scheme = allgather> : tensor<64x256xf32>
  %6 = hetero.all_reduce %g compress <efsignsgd, error_feedback, scheme = allgather> : tensor<64x256xf32>
  // CHECK: hetero.all_reduce %[[G]] compress <onebit, scheme = alltoall> : tensor<64x256xf32>
  %7 = hetero.all_reduce %g compress <onebit, scheme = alltoall> : tensor<64x256xf32>
  // CHECK: hetero.all_reduce %[[G]] compress <dgc, ratio = 1.000000e-03, scheme = allgather> : tensor<64x256xf32>
  %8 = hetero.all_reduce %g compress <dgc, ratio = 0.001, scheme = allgather> : tensor<64x256xf32>
  // CHECK: hetero.all_reduce %[[G]] compress <randomk, ratio = 5.000000e-02, scheme = allgather> : tensor<64x256xf32>
  %9 = hetero.all_reduce %g compress <randomk, ratio = 0.05, scheme = allgather> : tensor<64x256xf32>
  // CHECK: hetero.all_reduce %[[G]] compress <bf16> : tensor<64x256xf32>
  %10 = hetero.all_reduce %g compress <bf16> : tensor<64x256xf32>
  // CHECK: hetero.all_reduce %[[E]] sparse = coo : tensor<1024x64xf32>
  %11 = hetero.all_reduce %e sparse = coo : tensor<1024x64xf32>
  return
}

// CHECK-LABEL: func.func @gather_scatter
func.func @gather_scatter(%x: tensor<4x8xf32>, %g: tensor<16x8xf32>) {
  // CHECK: hetero.all_gather %{{.*}} on @devices axes = [1] axis = 0 : tensor<4x8xf32> -> tensor<16x8xf32>
  %0 = hetero.all_gather %x on @devices axes = [1] axis = 0 : tensor<4x8xf32> -> tensor<16x8xf32>
  // CHECK: hetero.all_gather %{{.*}} axis = 1 compress <fp16> : tensor<4x8xf32> -> tensor<4x24xf32>
  %1 = hetero.all_gather %x axis = 1 compress <fp16> : tensor<4x8xf32> -> tensor<4x24xf32>
  // CHECK: hetero.reduce_scatter %{{.*}} on @devices axes = [1] axis = 0 : tensor<16x8xf32> -> tensor<4x8xf32>
  %2 = hetero.reduce_scatter %g on @devices axes = [1] axis = 0 : tensor<16x8xf32> -> tensor<4x8xf32>
  // CHECK: hetero.reduce_scatter %{{.*}} axis = 0 reduction = avg : tensor<16x8xf32> -> tensor<8x8xf32>
  %3 = hetero.reduce_scatter %g axis = 0 reduction = avg : tensor<16x8xf32> -> tensor<8x8xf32>
  // CHECK: hetero.all_to_all %{{.*}} on @devices axes = [0] split_axis = 0 concat_axis = 1 : tensor<16x8xf32> -> tensor<8x16xf32>
  %4 = hetero.all_to_all %g on @devices axes = [0] split_axis = 0 concat_axis = 1 : tensor<16x8xf32> -> tensor<8x16xf32>
  // CHECK: hetero.all_to_all %{{.*}} split_axis = 0 concat_axis = 0 compress <qsgd, scheme = alltoall> : tensor<16x8xf32> -> tensor<16x8xf32>
  %5 = hetero.all_to_all %g split_axis = 0 concat_axis = 0 compress <qsgd, scheme = alltoall> : tensor<16x8xf32> -> tensor<16x8xf32>
  return
}

// CHECK-LABEL: func.func @rooted_and_p2p
func.func @rooted_and_p2p(%w: tensor<64x64xf32>, %g: tensor<8xf32>) {
  // CHECK: hetero.broadcast %{{.*}} on @devices root = 7 : tensor<64x64xf32>
  %0 = hetero.broadcast %w on @devices root = 7 : tensor<64x64xf32>
  // CHECK: hetero.reduce %{{.*}} root = 0 reduction = max : tensor<8xf32>
  %1 = hetero.reduce %g root = 0 reduction = max : tensor<8xf32>
  // CHECK: hetero.send %{{.*}} to 1 tag = 7 : tensor<8xf32>
  hetero.send %g to 1 tag = 7 : tensor<8xf32>
  // CHECK: hetero.send %{{.*}} to 3 on @devices axes = [1] : tensor<8xf32>
  hetero.send %g to 3 on @devices axes = [1] : tensor<8xf32>
  // CHECK: hetero.recv from 0 tag = 7 : tensor<8xf32>
  %2 = hetero.recv from 0 tag = 7 : tensor<8xf32>
  // CHECK: hetero.recv from 1 on @devices axes = [0] : tensor<8xf32>
  %3 = hetero.recv from 1 on @devices axes = [0] : tensor<8xf32>
  return
}

// CHECK-LABEL: func.func @bucket
func.func @bucket(%a: tensor<64xf32>, %b: tensor<8x8xf32>) -> (tensor<64xf32>, tensor<8x8xf32>) {
  // CHECK: %{{.*}}:2 = hetero.bucket %{{.*}}, %{{.*}} reduction = avg compress <fp16> : tensor<64xf32>, tensor<8x8xf32>
  %r:2 = hetero.bucket %a, %b reduction = avg compress <fp16>
      : tensor<64xf32>, tensor<8x8xf32>
  return %r#0, %r#1 : tensor<64xf32>, tensor<8x8xf32>
}
