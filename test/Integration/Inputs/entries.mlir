// Entry functions for hetero-run-errors.test.
shard.grid @three(shape = 3)

func.func @step() {
  return
}
func.func @takes_float(%x: f32) {
  return
}
func.func @returns_tensor() -> tensor<2xf32> {
  %0 = tensor.empty() : tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func @seeded(%iteration: i64, %seed: i64) -> i64 {
  %0 = arith.addi %iteration, %seed : i64
  return %0 : i64
}
func.func @on_grid() -> f32 {
  %x = arith.constant dense<1.0> : tensor<4xf32>
  %0 = hetero.all_reduce %x on @three : tensor<4xf32>
  %c0 = arith.constant 0 : index
  %1 = tensor.extract %0[%c0] : tensor<4xf32>
  return %1 : f32
}
