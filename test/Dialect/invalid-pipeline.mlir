// RUN: hetero-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect

func.func @pipeline_needs_a_stage(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
// expected-error @+1 {{'hetero.pipeline' op attribute 'num_stages' failed to satisfy constraint: 64-bit integer attribute whose value is positive}}
hetero.pipeline @p stages = 0 microbatches = 4 {
}

// -----

func.func @pipeline_needs_a_microbatch(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
// expected-error @+1 {{'hetero.pipeline' op attribute 'num_microbatches' failed to satisfy constraint: 64-bit integer attribute whose value is positive}}
hetero.pipeline @p stages = 1 microbatches = 0 {
  hetero.stage 0 forward @pipeline_needs_a_microbatch backward @pipeline_needs_a_microbatch
}

// -----

func.func @pipeline_stage_limit(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
// expected-error @+1 {{'hetero.pipeline' op has 4097 stages, above the limit of 4096}}
hetero.pipeline @p stages = 4097 microbatches = 4 {
}

// -----

func.func @pipeline_microbatch_limit(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
// expected-error @+1 {{'hetero.pipeline' op has 1000000 micro-batches, above the limit of 65536 per iteration}}
hetero.pipeline @p stages = 1 microbatches = 1000000 {
  hetero.stage 0 forward @pipeline_microbatch_limit backward @pipeline_microbatch_limit
}

// -----

func.func @stage_index_out_of_range(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 2 microbatches = 4 {
  hetero.stage 0 forward @stage_index_out_of_range backward @stage_index_out_of_range
  // expected-error @+1 {{'hetero.stage' op stage 2 is outside the pipeline (stages 0..1)}}
  hetero.stage 2 forward @stage_index_out_of_range backward @stage_index_out_of_range
}

// -----

func.func @stage_index_repeated(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 2 microbatches = 4 {
  hetero.stage 0 forward @stage_index_repeated backward @stage_index_repeated
  // expected-error @+1 {{'hetero.stage' op stage 0 already has a 'hetero.stage' in this hetero.pipeline}}
  hetero.stage 0 forward @stage_index_repeated backward @stage_index_repeated
}

// -----

func.func @pipeline_stage_missing(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
// expected-error @+1 {{'hetero.pipeline' op stage 1 of 2 has no 'hetero.stage'}}
hetero.pipeline @p stages = 2 microbatches = 4 {
  hetero.stage 0 forward @pipeline_stage_missing backward @pipeline_stage_missing
}

// -----

func.func @stage_outside_pipeline(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'hetero.stage' op expects parent op 'hetero.pipeline'}}
  hetero.stage 0 forward @stage_outside_pipeline backward @stage_outside_pipeline
  return %x : tensor<4xf32>
}

// -----

func.func @pipeline_holds_only_stages(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
// expected-error @+1 {{'hetero.pipeline' op may only contain 'hetero.stage' and 'hetero.stage_variant', found 'test.op'}}
hetero.pipeline @p stages = 1 microbatches = 4 {
  hetero.stage 0 forward @pipeline_holds_only_stages backward @pipeline_holds_only_stages
  "test.op"() : () -> ()
}

// -----

func.func @undefined_backward_function(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 1 microbatches = 4 {
  // expected-error @+1 {{'hetero.stage' op backward function 'missing' is not defined}}
  hetero.stage 0 forward @undefined_backward_function backward @missing
}

// -----

func.func @forward_not_a_function(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
shard.grid @g(shape = 2)
hetero.pipeline @p stages = 1 microbatches = 4 {
  // expected-error @+1 {{'hetero.stage' op forward function 'g' is not a func.func}}
  hetero.stage 0 forward @g backward @forward_not_a_function
}

// -----

func.func @pipeline_unknown_grid(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
// expected-error @+1 {{'hetero.pipeline' op 'nowhere' does not name a shard.grid}}
hetero.pipeline @p stages = 1 microbatches = 4 on @nowhere {
  hetero.stage 0 forward @pipeline_unknown_grid backward @pipeline_unknown_grid
}

// -----

func.func @activation_type_mismatch(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
func.func @mismatched_next_stage(%x: tensor<8xf32>) -> tensor<8xf32> { return %x : tensor<8xf32> }
hetero.pipeline @p stages = 2 microbatches = 4 {
  hetero.stage 0 forward @activation_type_mismatch backward @activation_type_mismatch
  // expected-error @+1 {{'hetero.stage' op takes an activation of type 'tensor<8xf32>', but stage 0 produces 'tensor<4xf32>'}}
  hetero.stage 1 forward @mismatched_next_stage backward @mismatched_next_stage
}

// -----

func.func @forward_returns_nothing(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
func.func @sink(%x: tensor<4xf32>) { return }
hetero.pipeline @p stages = 2 microbatches = 4 {
  // expected-error @+1 {{'hetero.stage' op forward function 'sink' returns nothing, but stage 1 needs its activation}}
  hetero.stage 0 forward @sink backward @forward_returns_nothing
  hetero.stage 1 forward @forward_returns_nothing backward @forward_returns_nothing
}

// -----

func.func @forward_takes_no_activation(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
func.func @source() -> tensor<4xf32> { %0 = tensor.empty() : tensor<4xf32>
  return %0 : tensor<4xf32> }
hetero.pipeline @p stages = 2 microbatches = 4 {
  hetero.stage 0 forward @forward_takes_no_activation backward @forward_takes_no_activation
  // expected-error @+1 {{'hetero.stage' op forward function 'source' takes no activation from stage 0}}
  hetero.stage 1 forward @source backward @forward_takes_no_activation
}

// -----

func.func @negative_task_mark_microbatch() {
  // expected-error @+1 {{'hetero.task_mark' op attribute 'microbatch' failed to satisfy constraint: 64-bit integer attribute whose value is non-negative}}
  hetero.task_mark forward -1
  return
}
