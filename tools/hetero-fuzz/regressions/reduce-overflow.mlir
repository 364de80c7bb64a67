
func.func @f(%a: tensor<4x4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.reduce ins(%a : tensor<4x4xf32>) outs(%b : tensor<4xf32>) dimensions = [99999999999999999999]
    (%x: f32, %y: f32) {
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    }
  return %r : tensor<4xf32>
}
