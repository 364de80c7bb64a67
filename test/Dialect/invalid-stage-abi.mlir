// RUN: hetero-opt %s -split-input-file -verify-diagnostics

// The stage ABI of an executable hetero.pipeline (docs/execution.md).

// A data function without an optimizer.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
// expected-error @+1 {{'hetero.pipeline' op names a data function but no optimizer; an executable pipeline names both}}
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// An optimizer without a data function.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
// expected-error @+1 {{'hetero.pipeline' op names an optimizer but no data function; an executable pipeline names both}}
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// Parameters belong to executable pipelines.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid {
// expected-error @+1 {{'hetero.stage' op lists parameters, but its pipeline names no data function and optimizer}}
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// Grid axis 0 holds the stages.
shard.grid @grid(shape = 3x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
// expected-error @+1 {{'hetero.pipeline' op runs on grid 'grid' of shape 3x2, expected axis 0 of size 2 (the stages), optionally axis 1 (the data-parallel replicas) and axis 2 (the tensor-parallel shards)}}
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// At most a stage axis and a replica axis.
shard.grid @grid(shape = 2x2x2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
// expected-error @+1 {{'hetero.pipeline' op runs on grid 'grid' of shape 2x2x2x2, expected axis 0 of size 2 (the stages), optionally axis 1 (the data-parallel replicas) and axis 2 (the tensor-parallel shards)}}
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// A grid of dynamic size.
shard.grid @grid(shape = 2x?)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
// expected-error @+1 {{'hetero.pipeline' op runs on grid 'grid', which has a dynamic size}}
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// A grid of dynamic size, with a checkpoint whose replicas are checked
// against the grid's ranks.
shard.grid @grid(shape = 2x?)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
// expected-error @+1 {{'hetero.pipeline' op runs on grid 'grid', which has a dynamic size}}
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> checkpoint #hetero.checkpoint<replicas = 2, placement = group> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// More ranks than MPI numbers (the product would not fit in 64 bits either).
shard.grid @grid(shape = 2x4611686018427387904)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
// expected-error @+1 {{'hetero.pipeline' op runs on grid 'grid' of shape 2x4611686018427387904, expected at most 2147483647 ranks (MPI's rank numbers)}}
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> checkpoint #hetero.checkpoint<replicas = 3, placement = ring> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// The data function must exist.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
// expected-error @+1 {{'hetero.pipeline' op data function 'batches' is not defined}}
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @batches optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// The data function must be a func.func.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
// expected-error @+1 {{'hetero.pipeline' op data function 'w0' is not a func.func}}
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @w0 optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// The data function returns the input and the target.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> tensor<4x8xf32>
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
// expected-error @+1 {{'hetero.pipeline' op data function 'data' returns 1 values, expected 2 (the input and the target of a micro-batch)}}
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// The data function takes (step, replica, micro-batch).
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
// expected-error @+1 {{'hetero.pipeline' op data function 'data' takes 2 arguments, expected 3 (the step, the replica, the micro-batch)}}
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// ... all of them i64.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i32, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
// expected-error @+1 {{'hetero.pipeline' op data function 'data' argument 1 (the replica) has type 'i32', expected 'i64'}}
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// A parameter must be defined.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
// expected-error @+1 {{'hetero.stage' op parameter 'w2' is not defined}}
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w2]
}

// -----

// A parameter is a memref.global.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
// expected-error @+1 {{'hetero.stage' op parameter 'data' is not a memref.global}}
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@data]
}

// -----

// A parameter is an ordinary memref: static shape, identity layout, default memory space.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32, 1> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
// expected-error @+1 {{'hetero.stage' op parameter 'w1' has type 'memref<16x4xf32, 1>', expected a memref of static shape with the identity layout}}
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// A parameter has an initial value.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = uninitialized
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
// expected-error @+1 {{'hetero.stage' op parameter 'w1' needs an initial value}}
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// A parameter is not constant.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" constant @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
// expected-error @+1 {{'hetero.stage' op parameter 'w1' is a constant global; training writes it}}
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// A parameter belongs to one stage.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
// expected-error @+1 {{'hetero.stage' op parameter 'w0' is already a parameter of stage 0}}
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w0]
}

// -----

// ... and is listed once.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
// expected-error @+1 {{'hetero.stage' op parameter 'w0' is already listed by this stage}}
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0, @w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// The forward of stage 0 takes the input of the data function.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x9xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
// expected-error @+1 {{'hetero.stage' op stage 0 forward function 's0_fwd' argument 0 (the micro-batch input) has type 'tensor<4x9xf32>', expected 'tensor<4x8xf32>'}}
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// Then its parameters, in order.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
// expected-error @+1 {{'hetero.stage' op stage 0 forward function 's0_fwd' argument 1 (parameter w0) has type 'tensor<16x8xf32>', expected 'tensor<8x16xf32>'}}
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// A middle stage returns one activation.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>)
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
// expected-error @+1 {{'hetero.stage' op forward function 's0_fwd' returns 2 values, expected 1 (the activation for stage 1)}}
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// The next stage takes that activation.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<4x15xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
// expected-error @+1 {{'hetero.stage' op stage 1 forward function 's1_fwd' argument 0 (the activation of stage 0) has type 'tensor<4x15xf32>', expected 'tensor<4x16xf32>'}}
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// The last stage takes the target.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
// expected-error @+1 {{'hetero.stage' op stage 1 forward function 's1_fwd' takes 2 arguments, expected 3 (the activation of stage 0, parameter w1, the target)}}
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// ... and returns the loss as tensor<f32>.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<4xf32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
// expected-error @+1 {{'hetero.stage' op stage 1 forward function 's1_fwd' result 0 (the micro-batch loss) has type 'tensor<4xf32>', expected 'tensor<f32>'}}
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// A backward takes the gradient of its output last.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
// expected-error @+1 {{'hetero.stage' op stage 0 backward function 's0_bwd' argument 2 (the gradient of the stage's output) has type 'tensor<4x8xf32>', expected 'tensor<4x16xf32>'}}
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// A last stage has no output gradient.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>, tensor<f32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
// expected-error @+1 {{'hetero.stage' op stage 1 backward function 's1_bwd' takes 4 arguments, expected 3 (the activation of stage 0, parameter w1, the target)}}
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// A backward returns the input gradient and one per parameter.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<4x16xf32>
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
// expected-error @+1 {{'hetero.stage' op stage 1 backward function 's1_bwd' returns 1 values, expected 2 (the input gradient, the gradient of w1)}}
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

// ... each of its parameter's type.
shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<8x16xf32> = dense<0.0>
memref.global "private" @w1 : memref<16x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf16>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
// expected-error @+1 {{'hetero.stage' op stage 0 backward function 's0_bwd' result 1 (the gradient of w0) has type 'tensor<8x16xf16>', expected 'tensor<8x16xf32>'}}
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// -----

func.func private @sgd_lr_zero(tensor<4xf32>) -> tensor<4xf32>
// expected-error @+1 {{sgd lr must be in (0, inf), got 0}}
hetero.pipeline @p stages = 1 microbatches = 1 optimizer #hetero.sgd<lr = 0.0> {
  hetero.stage 0 forward @sgd_lr_zero backward @sgd_lr_zero
}

// -----

func.func private @sgd_momentum_one(tensor<4xf32>) -> tensor<4xf32>
// expected-error @+1 {{sgd momentum must be in [0, 1), got 1}}
hetero.pipeline @p stages = 1 microbatches = 1 optimizer #hetero.sgd<lr = 0.1, momentum = 1.0> {
  hetero.stage 0 forward @sgd_momentum_one backward @sgd_momentum_one
}

// -----

func.func private @adam_beta2_above_one(tensor<4xf32>) -> tensor<4xf32>
// expected-error @+1 {{adam beta2 must be in [0, 1), got 1.5}}
hetero.pipeline @p stages = 1 microbatches = 1 optimizer #hetero.adam<lr = 1.0e-03, beta2 = 1.5> {
  hetero.stage 0 forward @adam_beta2_above_one backward @adam_beta2_above_one
}

// -----

func.func private @adam_eps_negative(tensor<4xf32>) -> tensor<4xf32>
// expected-error @+1 {{adam eps must be in (0, inf), got -1}}
hetero.pipeline @p stages = 1 microbatches = 1 optimizer #hetero.adam<lr = 1.0e-03, eps = -1.0> {
  hetero.stage 0 forward @adam_eps_negative backward @adam_eps_negative
}

// -----

func.func private @adam_lr_negative(tensor<4xf32>) -> tensor<4xf32>
// expected-error @+1 {{adam lr must be in (0, inf), got -0.001}}
hetero.pipeline @p stages = 1 microbatches = 1 optimizer #hetero.adam<lr = -1.0e-03> {
  hetero.stage 0 forward @adam_lr_negative backward @adam_lr_negative
}

// -----

func.func private @unknown_adam_parameter(tensor<4xf32>) -> tensor<4xf32>
// expected-error @+1 {{unknown adam parameter 'momentum', expected one of lr, beta1, beta2, eps}}
hetero.pipeline @p stages = 1 microbatches = 1 optimizer #hetero.adam<lr = 1.0e-03, momentum = 0.9> {
  hetero.stage 0 forward @unknown_adam_parameter backward @unknown_adam_parameter
}

// -----

func.func private @sgd_needs_lr(tensor<4xf32>) -> tensor<4xf32>
// expected-error @+1 {{sgd needs 'lr'}}
hetero.pipeline @p stages = 1 microbatches = 1 optimizer #hetero.sgd<momentum = 0.9> {
  hetero.stage 0 forward @sgd_needs_lr backward @sgd_needs_lr
}

// -----

func.func private @optimizer_lr_given_twice(tensor<4xf32>) -> tensor<4xf32>
// expected-error @+1 {{'lr' is given twice}}
hetero.pipeline @p stages = 1 microbatches = 1 optimizer #hetero.sgd<lr = 0.1, lr = 0.2> {
  hetero.stage 0 forward @optimizer_lr_given_twice backward @optimizer_lr_given_twice
}

// -----

// Activations cross ranks: they have static shapes.
func.func private @data(i64, i64, i64) -> (tensor<?x8xf32>, tensor<4x4xf32>)
func.func private @f(tensor<?x8xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @b(tensor<?x8xf32>, tensor<4x4xf32>) -> tensor<?x8xf32>
// expected-error @+1 {{'hetero.pipeline' op data function 'data' result 0 (the input) has type 'tensor<?x8xf32>', expected a tensor of static shape}}
hetero.pipeline @p stages = 1 microbatches = 1 data @data optimizer #hetero.sgd<lr = 0.1> {
  hetero.stage 0 forward @f backward @b
}

// -----

func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @f0(tensor<4x8xf32>) -> tensor<4x?xf32>
func.func private @b0(tensor<4x8xf32>, tensor<4x?xf32>) -> tensor<4x8xf32>
func.func private @f1(tensor<4x?xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @b1(tensor<4x?xf32>, tensor<4x4xf32>) -> tensor<4x?xf32>
hetero.pipeline @p stages = 2 microbatches = 1 data @data optimizer #hetero.sgd<lr = 0.1> {
  // expected-error @+1 {{'hetero.stage' op forward function 'f0' result 0 (the activation for stage 1) has type 'tensor<4x?xf32>', expected a tensor of static shape}}
  hetero.stage 0 forward @f0 backward @b0
  hetero.stage 1 forward @f1 backward @b1
}

// -----

// Token ids may enter stage 0 (its backward returns no input gradient), but
// what passes between stages carries a gradient back.
func.func private @data(i64, i64, i64) -> (tensor<4x8xi32>, tensor<4x4xf32>)
func.func private @f0(tensor<4x8xi32>) -> tensor<4x8xi32>
func.func private @b0(tensor<4x8xi32>, tensor<4x8xi32>) -> ()
func.func private @f1(tensor<4x8xi32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @b1(tensor<4x8xi32>, tensor<4x4xf32>) -> ()
hetero.pipeline @p stages = 2 microbatches = 1 data @data optimizer #hetero.sgd<lr = 0.1> {
  // expected-error @+1 {{'hetero.stage' op forward function 'f0' result 0 (the activation for stage 1) has type 'tensor<4x8xi32>', expected floating-point elements: the gradient flows back through it}}
  hetero.stage 0 forward @f0 backward @b0
  hetero.stage 1 forward @f1 backward @b1
}

// -----

// A backward of token ids that returns an input gradient anyway.
memref.global "private" @w : memref<8x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<4x8xi32>, tensor<4x4xf32>)
func.func private @f(tensor<4x8xi32>, tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @b(tensor<4x8xi32>, tensor<8x4xf32>, tensor<4x4xf32>) -> (tensor<4x8xi32>, tensor<8x4xf32>)
hetero.pipeline @p stages = 1 microbatches = 1 data @data optimizer #hetero.sgd<lr = 0.1> {
  // expected-error @+1 {{'hetero.stage' op stage 0 backward function 'b' returns 2 values, expected 1 (the gradient of w)}}
  hetero.stage 0 forward @f backward @b params [@w]
}

// -----

// A sharded parameter (hetero.shard_dim, from hetero-partition-tp) has no
// initial value of its own: its slice is copied in on entry. One without
// the attribute still needs one.
shard.grid @grid(shape = 2x1x2)
memref.global "private" @w0 : memref<8x8xf32> = uninitialized {hetero.shard_dim = 1 : i64}
memref.global "private" @w1 : memref<16x4xf32> = uninitialized
func.func private @data(i64, i64, i64) -> (tensor<4x8xf32>, tensor<4x4xf32>)
func.func private @s0_fwd(tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x16xf32>
func.func private @s0_bwd(tensor<4x8xf32>, tensor<8x8xf32>, tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x8xf32>)
func.func private @s1_fwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<4x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>)
hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
// expected-error @+1 {{'hetero.stage' op parameter 'w1' needs an initial value}}
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}
