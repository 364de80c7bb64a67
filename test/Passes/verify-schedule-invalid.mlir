// RUN: hetero-opt %s --hetero-verify-schedule -split-input-file -verify-diagnostics

func.func @backward_never_runs(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 2 {
  hetero.stage 0 forward @backward_never_runs backward @backward_never_runs
}
hetero.schedule @s for @p group_size = 1 {
  // expected-error @+1 {{schedule 's': rank 0 never runs B1 of stage 0 (nor I and W)}}
  hetero.stage_program 0 {
    hetero.fwd 0
    hetero.fwd 1
    hetero.bwd 0
  }
}

// -----

func.func @forward_runs_twice(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 1 {
  hetero.stage 0 forward @forward_runs_twice backward @forward_runs_twice
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    hetero.fwd 0
    // expected-error @+1 {{schedule 's': rank 0 runs F0 of stage 0 twice}}
    hetero.fwd 0
    hetero.bwd 0
  }
}

// -----

func.func @backward_before_forward(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 1 {
  hetero.stage 0 forward @backward_before_forward backward @backward_before_forward
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    // expected-error @+1 {{schedule 's': rank 0 runs B0 of stage 0 before F0}}
    hetero.bwd 0
    hetero.fwd 0
  }
}

// -----

func.func @forward_before_activation_arrives(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 2 microbatches = 1 {
  hetero.stage 0 forward @forward_before_activation_arrives backward @forward_before_activation_arrives
  hetero.stage 1 forward @forward_before_activation_arrives backward @forward_before_activation_arrives
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    hetero.fwd 0
    hetero.send_task activation 0 to 1
    hetero.recv_task gradient 0 from 1
    hetero.bwd 0
  }
  hetero.stage_program 1 {
    // expected-error @+1 {{schedule 's': rank 1 runs F0 of stage 1 before receiving its activation from stage 0}}
    hetero.fwd 0
    hetero.recv_task activation 0 from 0
    hetero.bwd 0
    hetero.send_task gradient 0 to 0
  }
}

// -----

func.func @backward_before_gradient_arrives(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 2 microbatches = 1 {
  hetero.stage 0 forward @backward_before_gradient_arrives backward @backward_before_gradient_arrives
  hetero.stage 1 forward @backward_before_gradient_arrives backward @backward_before_gradient_arrives
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    hetero.fwd 0
    hetero.send_task activation 0 to 1
    // expected-error @+1 {{schedule 's': rank 0 runs B0 of stage 0 before receiving its gradient from stage 1}}
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

func.func @send_before_forward(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 2 microbatches = 1 {
  hetero.stage 0 forward @send_before_forward backward @send_before_forward
  hetero.stage 1 forward @send_before_forward backward @send_before_forward
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    // expected-error @+1 {{schedule 's': rank 0: stage 0's send of activation 0 to stage 1 comes before F0 produces it}}
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

func.func @activation_sent_twice(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 2 microbatches = 1 {
  hetero.stage 0 forward @activation_sent_twice backward @activation_sent_twice
  hetero.stage 1 forward @activation_sent_twice backward @activation_sent_twice
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    hetero.fwd 0
    hetero.send_task activation 0 to 1
    // expected-error @+1 {{schedule 's': rank 0 repeats stage 0's send of activation 0 to stage 1}}
    hetero.send_task activation 0 to 1
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

func.func @send_recv_deadlock(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 2 microbatches = 1 {
  hetero.stage 0 forward @send_recv_deadlock backward @send_recv_deadlock
  hetero.stage 1 forward @send_recv_deadlock backward @send_recv_deadlock
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    hetero.fwd 0
    // expected-error @+1 {{schedule 's': deadlock with blocking receives: rank 0 waits at stage 0's receive of gradient 0 from stage 1 (from rank 1); rank 1 waits at stage 1's receive of activation 0 from stage 0 (from rank 0) (it runs when receives are only posted there and waited for by the task that needs them: move each receive to right before that task)}}
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

// A cycle whatever the receives: stage 0's backward needs the gradient that
// follows the activation it sends only after it.
func.func @cycle(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 2 microbatches = 1 {
  hetero.stage 0 forward @cycle backward @cycle
  hetero.stage 1 forward @cycle backward @cycle
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    hetero.fwd 0
    hetero.recv_task gradient 0 from 1
    // expected-error @+1 {{schedule 's': deadlock: rank 0 waits at stage 0's receive of gradient 0 from stage 1 (from rank 1); rank 1 waits at stage 1's receive of activation 0 from stage 0 (from rank 0)}}
    hetero.bwd 0
    hetero.send_task activation 0 to 1
  }
  hetero.stage_program 1 {
    hetero.recv_task activation 0 from 0
    hetero.fwd 0
    hetero.bwd 0
    hetero.send_task gradient 0 to 0
  }
}

// -----

func.func @gradient_never_sent(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 2 microbatches = 1 {
  hetero.stage 0 forward @gradient_never_sent backward @gradient_never_sent
  hetero.stage 1 forward @gradient_never_sent backward @gradient_never_sent
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    hetero.fwd 0
    hetero.send_task activation 0 to 1
    // expected-error @+1 {{schedule 's': unpaired receive: rank 0 runs stage 0's receive of gradient 0 from stage 1, but rank 1 never sends it}}
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
func.func @problems_truncated_per_kind(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 8 {
  hetero.stage 0 forward @problems_truncated_per_kind backward @problems_truncated_per_kind
}
hetero.schedule @s for @p group_size = 1 {
  // expected-error @+8 {{schedule 's': rank 0 never runs B1 of stage 0 (nor I and W)}}
  // expected-error @+7 {{schedule 's': rank 0 never runs F2 of stage 0}}
  // expected-error @+6 {{schedule 's': rank 0 never runs B2 of stage 0 (nor I and W)}}
  // expected-error @+5 {{schedule 's': rank 0 never runs F3 of stage 0}}
  // expected-error @+4 {{schedule 's': rank 0 never runs B3 of stage 0 (nor I and W)}}
  // expected-error @+3 {{schedule 's': rank 0 never runs F4 of stage 0}}
  // expected-note @+2 {{3 more problems of this kind not shown}}
  // expected-note @+1 {{4 more problems of this kind not shown}}
  hetero.stage_program 0 {
    hetero.fwd 0
    hetero.bwd 0
    hetero.fwd 1
  }
}

// -----

func.func @weight_before_input(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 1 {
  hetero.stage 0 forward @weight_before_input backward_input @weight_before_input backward_weight @weight_before_input
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    hetero.fwd 0
    // expected-error @+1 {{schedule 's': rank 0 runs W0 of stage 0 before I0}}
    hetero.bwd_weight 0
    hetero.bwd_input 0
  }
}

// -----

func.func @input_without_weight(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 1 {
  hetero.stage 0 forward @input_without_weight backward_input @input_without_weight backward_weight @input_without_weight
}
hetero.schedule @s for @p group_size = 1 {
  // expected-error @+1 {{schedule 's': rank 0 never runs W0 of stage 0}}
  hetero.stage_program 0 {
    hetero.fwd 0
    hetero.bwd_input 0
  }
}

// -----

func.func @activation_never_received(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 2 microbatches = 1 {
  hetero.stage 0 forward @activation_never_received backward @activation_never_received
  hetero.stage 1 forward @activation_never_received backward @activation_never_received
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    hetero.fwd 0
    // expected-error @+1 {{schedule 's': unpaired send: rank 0 runs stage 0's send of activation 0 to stage 1, but rank 1 never receives it}}
    hetero.send_task activation 0 to 1
    hetero.recv_task gradient 0 from 1
    hetero.bwd 0
  }
  hetero.stage_program 1 {
    // expected-error @+1 {{schedule 's': rank 1 runs F0 of stage 1 before receiving its activation from stage 0}}
    hetero.fwd 0
    hetero.bwd 0
    hetero.send_task gradient 0 to 0
  }
}
