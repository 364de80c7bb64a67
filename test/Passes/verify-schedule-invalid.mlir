// RUN: hetero-opt %s --hetero-verify-schedule -split-input-file -verify-diagnostics

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 2 {
  hetero.stage 0 forward @f backward @f
}
hetero.schedule @s for @p group_size = 1 {
  // expected-error @+1 {{schedule 's': stage 0 never runs B1}}
  hetero.stage_program 0 {
    hetero.fwd 0
    hetero.fwd 1
    hetero.bwd 0
  }
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 1 {
  hetero.stage 0 forward @f backward @f
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    hetero.fwd 0
    // expected-error @+1 {{schedule 's': stage 0 runs F0 twice}}
    hetero.fwd 0
    hetero.bwd 0
  }
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 1 {
  hetero.stage 0 forward @f backward @f
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    // expected-error @+1 {{schedule 's': stage 0 runs B0 before F0}}
    hetero.bwd 0
    hetero.fwd 0
  }
}

// -----

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
    // expected-error @+1 {{schedule 's': stage 1 runs F0 before receiving its activation from stage 0}}
    hetero.fwd 0
    hetero.recv_task activation 0 from 0
    hetero.bwd 0
    hetero.send_task gradient 0 to 0
  }
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 2 microbatches = 1 {
  hetero.stage 0 forward @f backward @f
  hetero.stage 1 forward @f backward @f
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    hetero.fwd 0
    hetero.send_task activation 0 to 1
    // expected-error @+1 {{schedule 's': stage 0 runs B0 before receiving its gradient from stage 1}}
    hetero.bwd 0
    hetero.recv_task gradient 0 from 1
  }
  hetero.stage_program 1 {
    hetero.recv_task activation 0 from 0
    hetero.fwd 0
    hetero.bwd 0
    hetero.send_task gradient 0 to 0
  }
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 2 microbatches = 1 {
  hetero.stage 0 forward @f backward @f
  hetero.stage 1 forward @f backward @f
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    // expected-error @+1 {{schedule 's': stage 0: the send of activation 0 to stage 1 comes before F0 produces it}}
    hetero.send_task activation 0 to 1
    hetero.fwd 0
    hetero.recv_task gradient 0 from 1
    hetero.bwd 0
  }
  hetero.stage_program 1 {
    hetero.recv_task activation 0 from 0
    hetero.fwd 0
    hetero.bwd 0
    hetero.send_task gradient 0 to 0
  }
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 2 microbatches = 2 {
  hetero.stage 0 forward @f backward @f
  hetero.stage 1 forward @f backward @f
}
hetero.schedule @s for @p group_size = 2 {
  hetero.stage_program 0 {
    hetero.fwd 0
    hetero.send_task activation 0 to 1
    hetero.fwd 1
    hetero.send_task activation 1 to 1
    hetero.recv_task gradient 0 from 1
    hetero.bwd 0
    hetero.recv_task gradient 1 from 1
    hetero.bwd 1
  }
  hetero.stage_program 1 {
    // expected-error @+1 {{schedule 's': link 0 -> 1: message 0 is activation 0, but stage 1 receives activation 1 there}}
    hetero.recv_task activation 1 from 0
    hetero.recv_task activation 0 from 0
    hetero.fwd 0
    hetero.fwd 1
    hetero.bwd 0
    hetero.send_task gradient 0 to 0
    hetero.bwd 1
    hetero.send_task gradient 1 to 0
  }
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 2 microbatches = 1 {
  hetero.stage 0 forward @f backward @f
  hetero.stage 1 forward @f backward @f
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    hetero.fwd 0
    // expected-error @+1 {{schedule 's': deadlock: stage 0 waits at the receive of gradient 0 from stage 1; stage 1 waits at the receive of activation 0 from stage 0}}
    hetero.recv_task gradient 0 from 1
    hetero.send_task activation 0 to 1
    hetero.bwd 0
  }
  hetero.stage_program 1 {
    hetero.recv_task activation 0 from 0
    hetero.fwd 0
    hetero.bwd 0
    hetero.send_task gradient 0 to 0
  }
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 2 microbatches = 1 {
  hetero.stage 0 forward @f backward @f
  hetero.stage 1 forward @f backward @f
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    hetero.fwd 0
    hetero.send_task activation 0 to 1
    // expected-error @+1 {{schedule 's': link 1 -> 0: message 0 is never sent, but stage 0 receives gradient 0 there}}
    hetero.recv_task gradient 0 from 1
    hetero.bwd 0
  }
  hetero.stage_program 1 {
    hetero.recv_task activation 0 from 0
    hetero.fwd 0
    hetero.bwd 0
  }
}

// -----

// Many problems of one kind: the first three of each and a count.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 8 {
  hetero.stage 0 forward @f backward @f
}
hetero.schedule @s for @p group_size = 1 {
  // expected-error @+8 {{schedule 's': stage 0 never runs B1}}
  // expected-error @+7 {{schedule 's': stage 0 never runs F2}}
  // expected-error @+6 {{schedule 's': stage 0 never runs B2}}
  // expected-error @+5 {{schedule 's': stage 0 never runs F3}}
  // expected-error @+4 {{schedule 's': stage 0 never runs B3}}
  // expected-error @+3 {{schedule 's': stage 0 never runs F4}}
  // expected-note @+2 {{3 more problems of this kind not shown}}
  // expected-note @+1 {{4 more problems of this kind not shown}}
  hetero.stage_program 0 {
    hetero.fwd 0
    hetero.bwd 0
    hetero.fwd 1
  }
}
