// RUN: hetero-opt %s --hetero-partition-tp -split-input-file -verify-diagnostics

shard.grid @g(shape = 2x2)

func.func @no_axis(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'hetero.prunable_matmul' op is sharded over tp = 4, but no shard.grid has 4 ranks on axis 2 (stage, replica, shard); expected one (hetero-gen --tp 4 gives the pipeline's grid one)}}
  %y = hetero.prunable_matmul col %x, %w layer "fc" tp = 4 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

shard.grid @a(shape = 2x1x2)
shard.grid @b(shape = 1x1x2)

func.func @ambiguous(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'hetero.prunable_matmul' op is sharded over tp = 2, and shard.grids @a and @b both have 2 ranks on axis 2; expected one}}
  %y = hetero.prunable_matmul col %x, %w layer "fc" tp = 2 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

shard.grid @g(shape = 1x1x2)

func.func @dynamic(%x: tensor<?x8xf32>, %w: tensor<8x16xf32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{'hetero.prunable_matmul' op cannot be partitioned over tp = 2: 'tensor<?x8xf32>' must have a static shape}}
  %y = hetero.prunable_matmul row %x, %w layer "fc" tp = 2 : tensor<?x8xf32>, tensor<8x16xf32> -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

shard.grid @g(shape = 1x1x2)
%x = arith.constant dense<1.0> : tensor<4x8xf32>
%w = arith.constant dense<1.0> : tensor<8x16xf32>
// expected-error @+1 {{'hetero.prunable_matmul' op is sharded over tp = 2 outside a function; expected it in one}}
%y = hetero.prunable_matmul col %x, %w layer "fc" tp = 2 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
