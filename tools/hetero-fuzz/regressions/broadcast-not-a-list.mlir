
func.func @f(%a: tensor<4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = linalg.broadcast ins(%a : tensor<4xf32>) outs(%b : tensor<4x4xf32>) dimensions = x
  return %r : tensor<4x4xf32>
}
