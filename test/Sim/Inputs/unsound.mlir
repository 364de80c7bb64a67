// A hand-written schedule whose stage 1 runs F0 before its activation came.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 2 microbatches = 1 {
  hetero.stage 0 forward @f backward @f
  hetero.stage 1 forward @f backward @f
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    hetero.fwd 0
    hetero.send_task activation 0 to 1
    hetero.recv_task gradient 0 from 1
    hetero.bwd 0
  }
  hetero.stage_program 1 {
    hetero.fwd 0
    hetero.recv_task activation 0 from 0
    hetero.bwd 0
    hetero.send_task gradient 0 to 0
  }
}
