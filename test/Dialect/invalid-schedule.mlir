// RUN: hetero-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 2 microbatches = 2 {
  hetero.stage 0 forward @f backward @f
  hetero.stage 1 forward @f backward @f
}
// expected-error @+1 {{'hetero.schedule' op attribute 'group_size' failed to satisfy constraint: 64-bit integer attribute whose value is positive}}
hetero.schedule @s for @p group_size = 0 {
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 2 {
  hetero.stage 0 forward @f backward @f
}
// expected-error @+1 {{'hetero.schedule' op attribute 'microbatch_size' failed to satisfy constraint: 64-bit integer attribute whose value is positive}}
hetero.schedule @s for @p group_size = 1 microbatch_size = 0 {
  hetero.stage_program 0 {
  }
}

// -----

// expected-error @+1 {{'hetero.schedule' op 'nothing' does not name a hetero.pipeline}}
hetero.schedule @s for @nothing group_size = 1 {
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 2 microbatches = 2 {
  hetero.stage 0 forward @f backward @f
  hetero.stage 1 forward @f backward @f
}
// expected-error @+1 {{'hetero.schedule' op stage 1 of 2 has no 'hetero.stage_program'}}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    hetero.fwd 0
  }
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 2 {
  hetero.stage 0 forward @f backward @f
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
  }
  // expected-error @+1 {{'hetero.stage_program' op stage 0 already has a 'hetero.stage_program' in this hetero.schedule}}
  hetero.stage_program 0 {
  }
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 2 {
  hetero.stage 0 forward @f backward @f
}
hetero.schedule @s for @p group_size = 1 {
  // expected-error @+1 {{'hetero.stage_program' op stage 3 is outside the pipeline (stages 0..0)}}
  hetero.stage_program 3 {
  }
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 2 {
  hetero.stage 0 forward @f backward @f
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    // expected-error @+1 {{'hetero.fwd' op names micro-batch 2, but pipeline 'p' has 2 micro-batches}}
    hetero.fwd 2
  }
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 2 microbatches = 2 {
  hetero.stage 0 forward @f backward @f
  hetero.stage 1 forward @f backward @f
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    // expected-error @+1 {{'hetero.send_task' op peer stage 5 is outside the pipeline (stages 0..1)}}
    hetero.send_task activation 0 to 5
  }
  hetero.stage_program 1 {
  }
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 2 microbatches = 2 {
  hetero.stage 0 forward @f backward @f
  hetero.stage 1 forward @f backward @f
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
  }
  hetero.stage_program 1 {
    // expected-error @+1 {{'hetero.send_task' op stage 1 sends activations to stage 2, not stage 0}}
    hetero.send_task activation 0 to 0
  }
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 2 microbatches = 2 {
  hetero.stage 0 forward @f backward @f
  hetero.stage 1 forward @f backward @f
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    // expected-error @+1 {{'hetero.recv_task' op stage 0 receives gradients from stage 1, not stage 0}}
    hetero.recv_task gradient 0 from 0
  }
  hetero.stage_program 1 {
  }
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 2 {
  hetero.stage 0 forward @f backward @f
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    // expected-error @+1 {{'hetero.bwd' op attribute 'microbatch' failed to satisfy constraint: 64-bit integer attribute whose value is non-negative}}
    hetero.bwd -1
  }
}

// -----

hetero.schedule @s for @p group_size = 1 {
  // expected-error @+1 {{'hetero.stage_program' op may only contain tasks (ops of the task interface: 'hetero.fwd', 'hetero.bwd', 'hetero.send_task', 'hetero.recv_task'), found 'test.op'}}
  hetero.stage_program 0 {
    "test.op"() : () -> ()
  }
}

// -----

// expected-error @+1 {{'hetero.schedule' op may only contain 'hetero.stage_program', found 'test.op'}}
hetero.schedule @s for @p group_size = 1 {
  "test.op"() : () -> ()
}

// -----

func.func @f() {
  // expected-error @+1 {{'hetero.fwd' op expects parent op 'hetero.stage_program'}}
  hetero.fwd 0
  return
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 2 {
  hetero.stage 0 forward @f backward @f
}
// expected-error @+1 {{'hetero.plan_set' op needs at least one plan}}
hetero.plan_set @plans for @p [] default @s

// -----

// expected-error @+1 {{'hetero.plan_set' op lists plan @a twice}}
hetero.plan_set @plans for @p [@a, @a] default @a

// -----

// expected-error @+1 {{'hetero.plan_set' op default plan @c is not one of its plans}}
hetero.plan_set @plans for @p [@a, @b] default @c

// -----

// expected-error @+1 {{'hetero.plan_set' op 'p' does not name a hetero.pipeline}}
hetero.plan_set @plans for @p [@a] default @a

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 2 {
  hetero.stage 0 forward @f backward @f
}
// expected-error @+1 {{'hetero.plan_set' op plan 'f' does not name a hetero.schedule}}
hetero.plan_set @plans for @p [@f] default @f

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 2 {
  hetero.stage 0 forward @f backward @f
}
hetero.pipeline @q stages = 1 microbatches = 2 {
  hetero.stage 0 forward @f backward @f
}
hetero.schedule @sq for @q group_size = 1 {
  hetero.stage_program 0 {
  }
}
// expected-error @+1 {{'hetero.plan_set' op plan 'sq' schedules pipeline 'q', not 'p'}}
hetero.plan_set @plans for @p [@sq] default @sq

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 2 {
  hetero.stage 0 forward @f backward @f
}
// expected-error @+1 {{'hetero.schedule' op attribute 'microbatches' failed to satisfy constraint: 64-bit integer attribute whose value is positive}}
hetero.schedule @s for @p group_size = 1 microbatches = 0 {
  hetero.stage_program 0 {
  }
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 2 {
  hetero.stage 0 forward @f backward @f
}
hetero.schedule @s for @p group_size = 1 microbatches = 1 {
  hetero.stage_program 0 {
    // expected-error @+1 {{'hetero.fwd' op names micro-batch 1, but the schedule runs 1 micro-batches}}
    hetero.fwd 1
  }
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 2 {
  hetero.stage 0 forward @f backward @f
}
hetero.schedule @a for @p group_size = 1 microbatch_size = 4 {
  hetero.stage_program 0 {
  }
}
hetero.schedule @b for @p group_size = 1 microbatch_size = 2 microbatches = 2 {
  hetero.stage_program 0 {
  }
}
// expected-error @+1 {{'hetero.plan_set' op plan 'b' covers 4 samples per step, but plan 'a' covers 8}}
hetero.plan_set @plans for @p [@a, @b] default @a

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 2 {
  hetero.stage 0 forward @f backward @f
}
// expected-error @+1 {{'hetero.schedule' op has 65537 micro-batches, above the limit of 65536 per iteration}}
hetero.schedule @s for @p group_size = 1 microbatches = 65537 {
  hetero.stage_program 0 {
  }
}
