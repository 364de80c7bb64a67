// Two stages, four micro-batches: the pipeline the profile tests schedule.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @two stages = 2 microbatches = 4 {
  hetero.stage 0 forward @f backward @f
  hetero.stage 1 forward @f backward @f
}
