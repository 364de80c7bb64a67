// RUN: hetero-opt %s -split-input-file -verify-diagnostics

// hetero.stage_variant: a stage's functions for micro-batches of n times
// the pipeline's samples (4 here: the first dimension of @data's input).

memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
func.func private @s0_fwd_b8(tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
func.func private @s0_bwd_b8(tensor<8x8xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> (tensor<8x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd_b8(tensor<8x16xf32>, tensor<16x4xf32>, tensor<8x4xf32>) -> tensor<f32>
func.func private @s1_bwd_b8(tensor<8x16xf32>, tensor<16x4xf32>, tensor<8x4xf32>) -> (tensor<8x16xf32>, tensor<16x4xf32>)
hetero.pipeline @stage_variant_twice stages = 2 microbatches = 4 data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
  hetero.stage_variant 0 microbatch_size = 8 forward @s0_fwd_b8 backward @s0_bwd_b8
  hetero.stage_variant 1 microbatch_size = 8 forward @s1_fwd_b8 backward @s1_bwd_b8
  // expected-error @+1 {{'hetero.stage_variant' op stage 1 already has a variant for micro-batches of 8 samples}}
  hetero.stage_variant 1 microbatch_size = 8 forward @s1_fwd_b8 backward @s1_bwd_b8
}

// -----

memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
func.func private @s0_fwd_b8(tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
func.func private @s0_bwd_b8(tensor<8x8xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> (tensor<8x8xf32>, tensor<8x16xf32>)
// expected-error @+1 {{'hetero.pipeline' op has stage variants for micro-batches of 8 samples, but none for stage 1; a variant size must cover every stage}}
hetero.pipeline @stage_variant_missing_stage stages = 2 microbatches = 4 data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
  hetero.stage_variant 0 microbatch_size = 8 forward @s0_fwd_b8 backward @s0_bwd_b8
}

// -----

memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x4xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
hetero.pipeline @stage_variant_outside_pipeline stages = 1 microbatches = 4 data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  // expected-error @+1 {{'hetero.stage_variant' op stage 1 is outside the pipeline (stages 0..0)}}
  hetero.stage_variant 1 microbatch_size = 8 forward @s0_fwd backward @s0_bwd
}

// -----

func.func private @s0_fwd(tensor<4x8xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<4x16xf32>) -> tensor<4x8xf32>
hetero.pipeline @stage_variant_not_executable stages = 1 microbatches = 4 {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd
  // expected-error @+1 {{'hetero.stage_variant' op needs an executable pipeline: its micro-batch size counts the samples of the data function, and the pipeline names no data function and optimizer}}
  hetero.stage_variant 0 microbatch_size = 8 forward @s0_fwd backward @s0_bwd
}

// -----

memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x4xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
hetero.pipeline @stage_variant_size_not_a_multiple stages = 1 microbatches = 4 data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  // expected-error @+1 {{'hetero.stage_variant' op takes micro-batches of 6 samples, expected a multiple of the pipeline's 4 (the first dimension of data function 'data''s input) larger than it}}
  hetero.stage_variant 0 microbatch_size = 6 forward @s0_fwd backward @s0_bwd
}

// -----

memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x4xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
hetero.pipeline @stage_variant_size_of_the_pipeline stages = 1 microbatches = 4 data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  // expected-error @+1 {{'hetero.stage_variant' op takes micro-batches of 4 samples, expected a multiple of the pipeline's 4 (the first dimension of data function 'data''s input) larger than it}}
  hetero.stage_variant 0 microbatch_size = 4 forward @s0_fwd backward @s0_bwd
}

// -----

memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<f32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<f32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<f32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<f32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<f32>, tensor<16x4xf32>)
hetero.pipeline @stage_variant_activation_without_samples stages = 2 microbatches = 4 data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
  // expected-error @+1 {{'hetero.stage_variant' op cannot take more samples: the activation for stage 1 has type 'tensor<f32>', which has no first dimension to hold them}}
  hetero.stage_variant 0 microbatch_size = 8 forward @s0_fwd backward @s0_bwd
  hetero.stage_variant 1 microbatch_size = 8 forward @s1_fwd backward @s1_bwd
}

// -----

memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x4xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
hetero.pipeline @stage_variant_forward_undefined stages = 1 microbatches = 4 data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  // expected-error @+1 {{'hetero.stage_variant' op forward function 's0_fwd_b8' is not defined}}
  hetero.stage_variant 0 microbatch_size = 8 forward @s0_fwd_b8 backward @s0_bwd
}

// -----

memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x4xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s0_fwd_b8(tensor<8x8xf32>, tensor<8x16xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s0_bwd_b8(tensor<8x8xf32>, tensor<8x16xf32>, tensor<8x4xf32>) -> (tensor<8x8xf32>, tensor<8x16xf32>)
hetero.pipeline @stage_variant_target_of_the_pipeline stages = 1 microbatches = 4 data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  // expected-error @+1 {{'hetero.stage_variant' op stage 0 variant of 8 samples forward function 's0_fwd_b8' argument 2 (the target) has type 'tensor<4x4xf32>', expected 'tensor<8x4xf32>'}}
  hetero.stage_variant 0 microbatch_size = 8 forward @s0_fwd_b8 backward @s0_bwd_b8
}

// -----

memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x4xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s0_fwd_b8(tensor<8x8xf32>, tensor<8x16xf32>, tensor<8x4xf32>) -> tensor<f32>
func.func private @s0_bwd_b8(tensor<8x8xf32>, tensor<8x16xf32>, tensor<8x4xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
hetero.pipeline @stage_variant_input_gradient_of_the_pipeline stages = 1 microbatches = 4 data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  // expected-error @+1 {{'hetero.stage_variant' op stage 0 variant of 8 samples backward function 's0_bwd_b8' result 0 (the input gradient) has type 'tensor<4x8xf32>', expected 'tensor<8x8xf32>'}}
  hetero.stage_variant 0 microbatch_size = 8 forward @s0_fwd_b8 backward @s0_bwd_b8
}

// -----

memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
func.func private @s0_fwd_b8(tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
func.func private @s0_bwd_b8(tensor<8x8xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> (tensor<8x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd_b8(tensor<4x32xf32>, tensor<16x4xf32>, tensor<8x4xf32>) -> tensor<f32>
func.func private @s1_bwd_b8(tensor<8x16xf32>, tensor<16x4xf32>, tensor<8x4xf32>) -> (tensor<8x16xf32>, tensor<16x4xf32>)
hetero.pipeline @stage_variant_activation_grows_elsewhere stages = 2 microbatches = 4 data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
  hetero.stage_variant 0 microbatch_size = 8 forward @s0_fwd_b8 backward @s0_bwd_b8
  // expected-error @+1 {{'hetero.stage_variant' op stage 1 variant of 8 samples forward function 's1_fwd_b8' argument 0 (the activation of stage 0) has type 'tensor<4x32xf32>', expected 'tensor<8x16xf32>'}}
  hetero.stage_variant 1 microbatch_size = 8 forward @s1_fwd_b8 backward @s1_bwd_b8
}

// -----

memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x4xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
hetero.pipeline @stage_variant_larger_than_the_step stages = 1 microbatches = 4 data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  // expected-error @+1 {{'hetero.stage_variant' op takes micro-batches of 9223372036854775804 samples, more than the 16 of a whole step (4 micro-batches of 4)}}
  hetero.stage_variant 0 microbatch_size = 9223372036854775804 forward @s0_fwd backward @s0_bwd
}
