// RUN: hetero-opt %s --hetero-resize -split-input-file -verify-diagnostics

func.func @sharded(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>) -> tensor<16x32xf32> {
  // expected-error @+1 {{'hetero.prunable_matmul' op is sharded over tp = 2 ranks; hetero-resize prunes a rank's own shard, so the tensor parallelism must be partitioned first (tp = 1: run hetero-partition-tp before it)}}
  %y = hetero.prunable_matmul col %x, %w layer "l" tp = 2
      : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}

// -----

func.func @widths_differ(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>, %g: tensor<16x32xf32>, %wt: tensor<32x48xf32>) -> (tensor<16x32xf32>, tensor<16x48xf32>) {
  // expected-note @+1 {{the other product}}
  %y = hetero.prunable_matmul col %x, %w layer "l" tp = 1
      : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  // expected-error @+1 {{'hetero.prunable_matmul' op prunes 48 columns of layer 'l', but another product of the layer prunes 64; the three products of a layer share its contraction}}
  %dx = hetero.prunable_matmul col %g, %wt layer "l" tp = 1 product = grad_input
      : tensor<16x32xf32>, tensor<32x48xf32> -> tensor<16x48xf32>
  return %y, %dx : tensor<16x32xf32>, tensor<16x48xf32>
}

// -----

func.func @dynamic_width(%x: tensor<16x?xf32>, %w: tensor<?x32xf32>) -> tensor<16x32xf32> {
  // expected-error @+1 {{'hetero.prunable_matmul' op has a dynamic contraction width; hetero-resize needs it static to plan the layer's columns}}
  %y = hetero.prunable_matmul col %x, %w layer "l" tp = 1
      : tensor<16x?xf32>, tensor<?x32xf32> -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}

// -----

func.func @dynamic_batch(%x: tensor<?x4x64xf32>, %w: tensor<64x32xf32>) -> tensor<?x4x32xf32> {
  // expected-error @+1 {{'hetero.prunable_matmul' op cannot be resized: collapsing a batched lhs with dynamic leading dimensions is not supported}}
  %y = hetero.prunable_matmul col %x, %w layer "l" tp = 1
      : tensor<?x4x64xf32>, tensor<64x32xf32> -> tensor<?x4x32xf32>
  return %y : tensor<?x4x32xf32>
}

// -----

func.func @same_dynamic(%xt: tensor<64x16xf32>, %g: tensor<16x?xf32>) -> tensor<64x?xf32> {
  // expected-error @+1 {{'hetero.prunable_matmul' op imputes the previous iteration's values (same) into a result of dynamic shape 'tensor<64x?xf32>'; the runtime keeps products of static shape}}
  %dw = hetero.prunable_matmul col %xt, %g layer "l" tp = 1 product = grad_weight impute same
      : tensor<64x16xf32>, tensor<16x?xf32> -> tensor<64x?xf32>
  return %dw : tensor<64x?xf32>
}

// -----

func.func @block_computed_inside(%b: index, %x: tensor<16x64xf32>, %w: tensor<64x32xf32>) -> tensor<16x32xf32> {
  %c1 = arith.constant 1 : index
  %next = arith.addi %b, %c1 : index
  // expected-error @+1 {{'hetero.prunable_matmul' op takes its block index from a value computed in the function; hetero-resize reads the layer's plan at the function's entry, so the index must be an argument of the function or a constant}}
  %y = hetero.prunable_matmul col %x, %w layer "l" block %next tp = 1
      : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}
