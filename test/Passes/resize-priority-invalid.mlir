// RUN: hetero-opt %s --hetero-resize=priority=true -split-input-file -verify-diagnostics
// RUN: hetero-opt %s --hetero-resize -o /dev/null

// The priority statistics read f32 weights.
func.func @f16_weight(%x: tensor<16x64xf16>, %w: tensor<64x32xf16>) -> tensor<16x32xf16> {
  // expected-error @+1 {{'hetero.prunable_matmul' op has a forward weight of element type 'f16'; the priority statistics (priority=true) read f32 weights}}
  %y = hetero.prunable_matmul col %x, %w layer "l" tp = 1
      : tensor<16x64xf16>, tensor<64x32xf16> -> tensor<16x32xf16>
  return %y : tensor<16x32xf16>
}

