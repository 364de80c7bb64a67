// RUN: hetero-opt %s --hetero-partition-tp=migration=true --hetero-prunable-to-linalg -split-input-file -verify-diagnostics

shard.grid @g(shape = 1x1x2)

func.func @migrated_average(%g: tensor<4x16xf32>, %wt: tensor<16x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'hetero.prunable_matmul' op imputes average, but with migration a straggler's migrated gradient columns are the sum of what the other ranks computed; expected impute zero}}
  %dx = hetero.prunable_matmul col %g, %wt layer "fc" tp = 2 product = grad_input impute average : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

// -----

// Partitioned with migration but not resized: the straggler would compute
// the columns it migrated as well.
shard.grid @g(shape = 1x1x2)

func.func @not_resized(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'hetero.prunable_matmul' op of layer 'fc' would compute every column, but the layer migrates columns (hetero.migration_plan); expected hetero-resize to expand it first}}
  %y = hetero.prunable_matmul row %x, %w layer "fc" tp = 2 : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
