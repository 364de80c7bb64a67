// RUN: hetero-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect

func.func @schedule_group_size_zero(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 2 microbatches = 2 {
  hetero.stage 0 forward @schedule_group_size_zero backward @schedule_group_size_zero
  hetero.stage 1 forward @schedule_group_size_zero backward @schedule_group_size_zero
}
// expected-error @+1 {{'hetero.schedule' op attribute 'group_size' failed to satisfy constraint: 64-bit integer attribute whose value is positive}}
hetero.schedule @s for @p group_size = 0 {
}

// -----

func.func @schedule_microbatch_size_zero(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 2 {
  hetero.stage 0 forward @schedule_microbatch_size_zero backward @schedule_microbatch_size_zero
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

func.func @stage_program_missing(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 2 microbatches = 2 {
  hetero.stage 0 forward @stage_program_missing backward @stage_program_missing
  hetero.stage 1 forward @stage_program_missing backward @stage_program_missing
}
// expected-error @+1 {{'hetero.schedule' op stage 1 of 2 has no 'hetero.stage_program'}}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    hetero.fwd 0
  }
}

// -----

func.func @stage_program_repeated(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 2 {
  hetero.stage 0 forward @stage_program_repeated backward @stage_program_repeated
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
  }
  // expected-error @+1 {{'hetero.stage_program' op stage 0 already has a 'hetero.stage_program' in this hetero.schedule}}
  hetero.stage_program 0 {
  }
}

// -----

func.func @stage_program_out_of_range(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 2 {
  hetero.stage 0 forward @stage_program_out_of_range backward @stage_program_out_of_range
}
hetero.schedule @s for @p group_size = 1 {
  // expected-error @+1 {{'hetero.stage_program' op stage 3 is outside the pipeline (stages 0..0)}}
  hetero.stage_program 3 {
  }
}

// -----

func.func @fwd_microbatch_out_of_range(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 2 {
  hetero.stage 0 forward @fwd_microbatch_out_of_range backward @fwd_microbatch_out_of_range
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    // expected-error @+1 {{'hetero.fwd' op names micro-batch 2, but pipeline 'p' has 2 micro-batches}}
    hetero.fwd 2
  }
}

// -----

func.func @send_task_peer_out_of_range(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 2 microbatches = 2 {
  hetero.stage 0 forward @send_task_peer_out_of_range backward @send_task_peer_out_of_range
  hetero.stage 1 forward @send_task_peer_out_of_range backward @send_task_peer_out_of_range
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

func.func @send_task_wrong_direction(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 2 microbatches = 2 {
  hetero.stage 0 forward @send_task_wrong_direction backward @send_task_wrong_direction
  hetero.stage 1 forward @send_task_wrong_direction backward @send_task_wrong_direction
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

func.func @recv_task_wrong_direction(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 2 microbatches = 2 {
  hetero.stage 0 forward @recv_task_wrong_direction backward @recv_task_wrong_direction
  hetero.stage 1 forward @recv_task_wrong_direction backward @recv_task_wrong_direction
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

func.func @bwd_microbatch_negative(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 2 {
  hetero.stage 0 forward @bwd_microbatch_negative backward @bwd_microbatch_negative
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    // expected-error @+1 {{'hetero.bwd' op attribute 'microbatch' failed to satisfy constraint: 64-bit integer attribute whose value is non-negative}}
    hetero.bwd -1
  }
}

// -----

hetero.schedule @s for @p group_size = 1 {
  // expected-error @+1 {{'hetero.stage_program' op may only contain tasks (ops of the task interface: 'hetero.fwd', 'hetero.bwd', 'hetero.bwd_input', 'hetero.bwd_weight', 'hetero.send_task', 'hetero.recv_task'), found 'test.op'}}
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

func.func @fwd_outside_stage_program() {
  // expected-error @+1 {{'hetero.fwd' op expects parent op 'hetero.stage_program'}}
  hetero.fwd 0
  return
}

// -----

func.func @plan_set_needs_a_plan(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 2 {
  hetero.stage 0 forward @plan_set_needs_a_plan backward @plan_set_needs_a_plan
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

func.func @plan_schedules_other_pipeline(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 2 {
  hetero.stage 0 forward @plan_schedules_other_pipeline backward @plan_schedules_other_pipeline
}
hetero.pipeline @q stages = 1 microbatches = 2 {
  hetero.stage 0 forward @plan_schedules_other_pipeline backward @plan_schedules_other_pipeline
}
hetero.schedule @sq for @q group_size = 1 {
  hetero.stage_program 0 {
  }
}
// expected-error @+1 {{'hetero.plan_set' op plan 'sq' schedules pipeline 'q', not 'p'}}
hetero.plan_set @plans for @p [@sq] default @sq

// -----

func.func @schedule_microbatches_zero(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 2 {
  hetero.stage 0 forward @schedule_microbatches_zero backward @schedule_microbatches_zero
}
// expected-error @+1 {{'hetero.schedule' op attribute 'microbatches' failed to satisfy constraint: 64-bit integer attribute whose value is positive}}
hetero.schedule @s for @p group_size = 1 microbatches = 0 {
  hetero.stage_program 0 {
  }
}

// -----

func.func @fwd_microbatch_beyond_schedule(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 2 {
  hetero.stage 0 forward @fwd_microbatch_beyond_schedule backward @fwd_microbatch_beyond_schedule
}
hetero.schedule @s for @p group_size = 1 microbatches = 1 {
  hetero.stage_program 0 {
    // expected-error @+1 {{'hetero.fwd' op names micro-batch 1, but the schedule runs 1 micro-batches}}
    hetero.fwd 1
  }
}

// -----

func.func @plans_cover_different_batches(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 2 {
  hetero.stage 0 forward @plans_cover_different_batches backward @plans_cover_different_batches
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

func.func @schedule_microbatch_limit(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 2 {
  hetero.stage 0 forward @schedule_microbatch_limit backward @schedule_microbatch_limit
}
// expected-error @+1 {{'hetero.schedule' op has 65537 micro-batches, above the limit of 65536 per iteration}}
hetero.schedule @s for @p group_size = 1 microbatches = 65537 {
  hetero.stage_program 0 {
  }
}
