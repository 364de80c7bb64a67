// One prunable layer whose weight row k is 2^k (1 + 0.001 i) at iteration
// i: row k changes by 2^k / 1000 per iteration. The input is all ones, so
// the product divided by (1 + 0.001 i) is the bit mask of the kept rows
// (contraction columns), which @check returns.
func.func @check(%i: i64) -> f32 {
  %f = arith.sitofp %i : i64 to f32
  %milli = arith.constant 1.0e-3 : f32
  %one = arith.constant 1.0 : f32
  %t = arith.mulf %f, %milli : f32
  %s = arith.addf %one, %t : f32
  %powers = arith.constant dense<[[1.0], [2.0], [4.0], [8.0]]> : tensor<4x1xf32>
  %empty = tensor.empty() : tensor<4x1xf32>
  %scale = linalg.fill ins(%s : f32) outs(%empty : tensor<4x1xf32>) -> tensor<4x1xf32>
  %w = linalg.mul ins(%powers, %scale : tensor<4x1xf32>, tensor<4x1xf32>) outs(%empty : tensor<4x1xf32>) -> tensor<4x1xf32>
  %x = arith.constant dense<1.0> : tensor<1x4xf32>
  %y = hetero.prunable_matmul col %x, %w layer "l" tp = 1 : tensor<1x4xf32>, tensor<4x1xf32> -> tensor<1x1xf32>
  %c0 = arith.constant 0 : index
  %r = tensor.extract %y[%c0, %c0] : tensor<1x1xf32>
  %mask = arith.divf %r, %s : f32
  return %mask : f32
}
