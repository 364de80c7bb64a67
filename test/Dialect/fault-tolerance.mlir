// RUN: hetero-opt %s | FileCheck %s
// RUN: hetero-opt -mlir-print-op-generic %s | hetero-opt | FileCheck %s

// CHECK-LABEL: func.func @checkpoint
func.func @checkpoint(%w0: tensor<64x64xf32>, %w1: tensor<64xf32>, %step: i64) {
  // CHECK: hetero.checkpoint %{{.*}}, %{{.*}} at %{{.*}} replicas = 2 of 8 placement = group : tensor<64x64xf32>, tensor<64xf32>
  hetero.checkpoint %w0, %w1 at %step replicas = 2 of 8 placement = group every = 1
      : tensor<64x64xf32>, tensor<64xf32>
  // CHECK: hetero.ckpt_chunk %{{.*}} offset 0 bytes 16384 copy 0 span 0 : tensor<64x64xf32>
  hetero.ckpt_chunk %w0 offset 0 bytes 16384 copy 0 span 0 : tensor<64x64xf32>
  // CHECK: hetero.ckpt_chunk %{{.*}} offset 16128 bytes 256 copy 0 span 3 : tensor<64x64xf32>
  hetero.ckpt_chunk %w0 offset 16128 bytes 256 copy 0 span 3 : tensor<64x64xf32>
  // CHECK: hetero.ckpt_chunk %{{.*}} offset 0 bytes 256 copy 0 span 3 : tensor<64xf32>
  hetero.ckpt_chunk %w1 offset 0 bytes 256 copy 0 span 3 : tensor<64xf32>
  // CHECK: hetero.ckpt_commit
  hetero.ckpt_commit
  // CHECK: hetero.checkpoint %{{.*}} at %{{.*}} replicas = 3 of 8 placement = ring every = 10 : tensor<64xf32>
  hetero.checkpoint %w1 at %step replicas = 3 of 8 placement = ring every = 10 : tensor<64xf32>
  // CHECK: hetero.checkpoint %{{.*}} at %{{.*}} replicas = 3 of 7 placement = mixed : tensor<64xf32>
  hetero.checkpoint %w1 at %step replicas = 3 of 7 placement = mixed : tensor<64xf32>
  // CHECK: hetero.ckpt_chunk %{{.*}} offset 4 bytes 8 copy 1 span 0 : tensor<64xf32>
  hetero.ckpt_chunk %w1 offset 4 bytes 8 copy 1 span 0 : tensor<64xf32>
  hetero.ckpt_commit
  return
}

