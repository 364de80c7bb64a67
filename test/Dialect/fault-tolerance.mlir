// RUN: hetero-opt %s | FileCheck %s
// RUN: hetero-opt -mlir-print-op-generic %s | hetero-opt | FileCheck %s

// CHECK-LABEL: func.func @checkpoint
func.func @checkpoint(%w0: tensor<64x64xf32>, %w1: tensor<64xf32>) {
  // CHECK: hetero.checkpoint %{{.*}}, %{{.*}} replicas = 2 of 8 placement = group : tensor<64x64xf32>, tensor<64xf32>
  hetero.checkpoint %w0, %w1 replicas = 2 of 8 placement = group every = 1
      : tensor<64x64xf32>, tensor<64xf32>
  // CHECK: hetero.checkpoint %{{.*}} replicas = 3 of 8 placement = ring every = 10 : tensor<64xf32>
  hetero.checkpoint %w1 replicas = 3 of 8 placement = ring every = 10 : tensor<64xf32>
  // CHECK: hetero.checkpoint %{{.*}} replicas = 3 of 7 placement = mixed : tensor<64xf32>
  hetero.checkpoint %w1 replicas = 3 of 7 placement = mixed : tensor<64xf32>
  // CHECK: hetero.ckpt_chunk %{{.*}} chunk 3 of 4 to 5 : tensor<64x64xf32>
  hetero.ckpt_chunk %w0 chunk 3 of 4 to 5 : tensor<64x64xf32>
  return
}

