// RUN: hetero-opt %s -split-input-file -verify-diagnostics

// The augmented forward and the split backward of a stage (docs/autodiff.md).

// A split backward names both of its functions.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
func.func private @s0_bi(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<4x16xf32>)
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  // expected-error @+1 {{'hetero.stage' op names a backward_input function but no backward_weight; a split backward names both}}
  hetero.stage 0 forward @s0_fwd backward_input @s0_bi params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
func.func private @s0_bw(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  // expected-error @+1 {{'hetero.stage' op names a backward_weight function but no backward_input; a split backward names both}}
  hetero.stage 0 forward @s0_fwd backward_weight @s0_bw params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// A stage's backward is whole or split, not both.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s0_bi(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<4x16xf32>)
func.func private @s0_bw(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  // expected-error @+1 {{'hetero.stage' op names both a backward function and a split backward (backward_input, backward_weight); expected one of them}}
  hetero.stage 0 forward @s0_fwd backward @s0_bwd backward_input @s0_bi backward_weight @s0_bw params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// Residuals need a backward that takes them.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
func.func private @s0_aug(tensor<4x8xf32>, tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>)
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  // expected-error @+1 {{'hetero.stage' op names an augmented forward but no backward to take its residuals}}
  hetero.stage 0 forward @s0_fwd augmented @s0_aug params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// The augmented forward returns the output first.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
func.func private @s0_aug(tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  // expected-error @+1 {{'hetero.stage' op stage 0 augmented forward function 's0_aug' returns 0 values, expected 1 outputs and then the residuals}}
  hetero.stage 0 forward @s0_fwd augmented @s0_aug backward @s0_bwd params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
func.func private @s0_aug(tensor<4x8xf32>, tensor<8x16xf32>) -> (tensor<4x8xf32>, tensor<4x16xf32>)
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  // expected-error @+1 {{'hetero.stage' op stage 0 augmented forward function 's0_aug' result 0 (the activation for stage 1) has type 'tensor<4x8xf32>', expected 'tensor<4x16xf32>'}}
  hetero.stage 0 forward @s0_fwd augmented @s0_aug backward @s0_bwd params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// Residuals wait in the stash: their bytes must be known.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
func.func private @s0_aug(tensor<4x8xf32>, tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<?x16xf32>)
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<?x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  // expected-error @+1 {{'hetero.stage' op stage 0 augmented forward function 's0_aug' residual 0 (result 1) has type 'tensor<?x16xf32>', expected a tensor of static shape with integer or floating-point elements}}
  hetero.stage 0 forward @s0_fwd augmented @s0_aug backward @s0_bwd params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// Residuals of index elements have no size in bytes.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
func.func private @s0_aug(tensor<4x8xf32>, tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<4xindex>)
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4xindex>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  // expected-error @+1 {{'hetero.stage' op stage 0 augmented forward function 's0_aug' residual 0 (result 1) has type 'tensor<4xindex>', expected a tensor of static shape with integer or floating-point elements}}
  hetero.stage 0 forward @s0_fwd augmented @s0_aug backward @s0_bwd params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// The backward takes the residuals after the forward's inputs.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
func.func private @s0_aug(tensor<4x8xf32>, tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>)
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  // expected-error @+1 {{'hetero.stage' op stage 0 backward function 's0_bwd' takes 3 arguments, expected 4 (the micro-batch input, parameter w0, residual 0, the gradient of the stage's output)}}
  hetero.stage 0 forward @s0_fwd augmented @s0_aug backward @s0_bwd params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// The input gradient comes first from the backward_input function.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
func.func private @s0_bi(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>)
func.func private @s0_bw(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  // expected-error @+1 {{'hetero.stage' op stage 0 backward_input function 's0_bi' returns nothing, expected the input gradient and then what the weight gradient needs}}
  hetero.stage 0 forward @s0_fwd backward_input @s0_bi backward_weight @s0_bw params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// The weight part takes what the input part saved.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
func.func private @s0_bi(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<4x16xf32>)
func.func private @s0_bw(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x8xf32>) -> tensor<8x16xf32>
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  // expected-error @+1 {{'hetero.stage' op stage 0 backward_weight function 's0_bw' argument 2 (saved value 0) has type 'tensor<4x8xf32>', expected 'tensor<4x16xf32>'}}
  hetero.stage 0 forward @s0_fwd backward_input @s0_bi backward_weight @s0_bw params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// The weight part returns the parameter gradients.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
func.func private @s0_bi(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<4x16xf32>)
func.func private @s0_bw(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  // expected-error @+1 {{'hetero.stage' op stage 0 backward_weight function 's0_bw' returns 2 values, expected 1 (the gradient of w0)}}
  hetero.stage 0 forward @s0_fwd backward_input @s0_bi backward_weight @s0_bw params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// Saved values are handed over through the step: static shapes only.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
func.func private @s0_bi(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<*xf32>)
func.func private @s0_bw(tensor<4x8xf32>, tensor<8x16xf32>, tensor<*xf32>) -> tensor<8x16xf32>
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  // expected-error @+1 {{'hetero.stage' op stage 0 backward_input function 's0_bi' saved value 0 (result 1) has type 'tensor<*xf32>', expected a tensor of static shape with integer or floating-point elements}}
  hetero.stage 0 forward @s0_fwd backward_input @s0_bi backward_weight @s0_bw params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// A valid augmented forward and split backward: the pipeline verifies.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
func.func private @s0_aug(tensor<4x8xf32>, tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>)
func.func private @s0_bi(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<4x16xf32>, tensor<4x8xf32>)
func.func private @s0_bw(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>, tensor<4x8xf32>) -> tensor<8x16xf32>
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd augmented @s0_aug backward_input @s0_bi backward_weight @s0_bw params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// A variant's augmented forward holds its larger micro-batch's residuals.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s0_fwd_b8(tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
func.func private @s0_aug_b8(tensor<8x8xf32>, tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>)
func.func private @s0_bwd_b8(tensor<8x8xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> (tensor<8x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd_b8(tensor<8x16xf32>, tensor<16x4xf32>, tensor<8x4xf32>) -> tensor<f32>
func.func private @s1_bwd_b8(tensor<8x16xf32>, tensor<16x4xf32>, tensor<8x4xf32>) -> (tensor<8x16xf32>, tensor<16x4xf32>)
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
  // expected-error @+1 {{'hetero.stage_variant' op stage 0 variant of 8 samples backward function 's0_bwd_b8' takes 3 arguments, expected 4 (the micro-batch input, parameter w0, residual 0, the gradient of the stage's output)}}
  hetero.stage_variant 0 microbatch_size = 8 forward @s0_fwd_b8 augmented @s0_aug_b8 backward @s0_bwd_b8
  hetero.stage_variant 1 microbatch_size = 8 forward @s1_fwd_b8 backward @s1_bwd_b8
}
