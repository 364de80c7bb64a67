// RUN: hetero-opt %s --hetero-lower-pipeline -split-input-file -verify-diagnostics

// A pipeline without the stage ABI has no step to lower to; it stays for
// the analyses.
func.func private @pipeline_without_stage_abi(tensor<4xf32>) -> tensor<4xf32>
// expected-warning @+1 {{is not lowered to a training step: it names no data function and optimizer (see the stage ABI in docs/execution.md)}}
hetero.pipeline @p stages = 1 microbatches = 2 {
  hetero.stage 0 forward @pipeline_without_stage_abi backward @pipeline_without_stage_abi
}

// -----

memref.global "private" @w : memref<4x4xf64> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<2x4xf64>, tensor<2x4xf64>)
func.func private @fwd(tensor<2x4xf64>, tensor<4x4xf64>, tensor<2x4xf64>) -> tensor<f32>
func.func private @bwd(tensor<2x4xf64>, tensor<4x4xf64>, tensor<2x4xf64>) -> (tensor<2x4xf64>, tensor<4x4xf64>)
hetero.pipeline @p stages = 1 microbatches = 2 data @data optimizer #hetero.sgd<lr = 1.0e-01> {
  // expected-error @+1 {{'hetero.stage' op parameter 'w' holds 'f64' elements; hetero-lower-pipeline trains f32 parameters}}
  hetero.stage 0 forward @fwd backward @bwd params [@w]
}

// -----

memref.global "private" @w : memref<4x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<2x4xf32>, tensor<2x4xf32>)
func.func private @fwd(tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<f32>
func.func private @bwd(tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<4x4xf32>)
// expected-error @+1 {{'hetero.pipeline' op has 2 schedules; choose one with hetero-lower-pipeline{schedule=...}: p_a p_b}}
hetero.pipeline @p stages = 1 microbatches = 2 data @data optimizer #hetero.sgd<lr = 1.0e-01> {
  hetero.stage 0 forward @fwd backward @bwd params [@w]
}
hetero.schedule @p_a for @p group_size = 1 {
  hetero.stage_program 0 {
    hetero.fwd 0
    hetero.bwd 0
    hetero.fwd 1
    hetero.bwd 1
  }
}
hetero.schedule @p_b for @p group_size = 2 {
  hetero.stage_program 0 {
    hetero.fwd 0
    hetero.fwd 1
    hetero.bwd 0
    hetero.bwd 1
  }
}

// -----

memref.global "private" @w : memref<4x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<2x4xf32>, tensor<2x4xf32>)
func.func private @fwd(tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<f32>
func.func private @bwd(tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<4x4xf32>)
hetero.pipeline @p stages = 1 microbatches = 2 data @data optimizer #hetero.sgd<lr = 1.0e-01> {
  hetero.stage 0 forward @fwd backward @bwd params [@w]
}
// expected-error @+1 {{'hetero.schedule' op runs 4 micro-batches, but the stage functions of 'p' take the 2 micro-batches of the pipeline; a candidate's micro-batch must hold a whole number of the pipeline's, so its count must divide 2}}
hetero.schedule @p_half for @p group_size = 1 microbatch_size = 1 microbatches = 4 {
  hetero.stage_program 0 {
    hetero.fwd 0
    hetero.bwd 0
    hetero.fwd 1
    hetero.bwd 1
    hetero.fwd 2
    hetero.bwd 2
    hetero.fwd 3
    hetero.bwd 3
  }
}

// -----

memref.global "private" @w : memref<4x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<2x4xf32>, tensor<2x4xf32>)
func.func private @fwd(tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<f32>
func.func private @bwd(tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<4x4xf32>)
hetero.pipeline @p stages = 1 microbatches = 2 data @data optimizer #hetero.sgd<lr = 1.0e-01> {
  hetero.stage 0 forward @fwd backward @bwd params [@w]
}
// An unsound schedule is not lowered: the verifier's problems are reported.
hetero.schedule @p_unsound for @p group_size = 1 {
  hetero.stage_program 0 {
    // expected-error @+1 {{schedule 'p_unsound': rank 0 runs B1 of stage 0 before F1}}
    hetero.bwd 1
    hetero.fwd 0
    hetero.bwd 0
    hetero.fwd 1
  }
}

// -----

// Dynamic groups average every stage's parameters; a stage without any has
// nothing to average and its workers would never report READY.
shard.grid @grid(shape = 2x2)
memref.global "private" @w : memref<4x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<2x4xf32>, tensor<2x4xf32>)
func.func private @s0_fwd(tensor<2x4xf32>) -> tensor<2x4xf32>
func.func private @s0_bwd(tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
func.func private @s1_fwd(tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<4x4xf32>)
hetero.pipeline @p stages = 2 microbatches = 2 on @grid data @data optimizer #hetero.sgd<lr = 1.0e-01> sync #hetero.sync<policy = dynamic> {
  // expected-error @+1 {{'hetero.stage' op has no parameters, but the pipeline synchronises its replicas in dynamic groups (policy = dynamic), which average every stage's parameters}}
  hetero.stage 0 forward @s0_fwd backward @s0_bwd
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w]
}

// -----

// Every rank takes part in a checkpoint's commit with its parameters; a
// stage without any would have nothing to checkpoint.
shard.grid @grid(shape = 2x2)
memref.global "private" @w : memref<4x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<2x4xf32>, tensor<2x4xf32>)
func.func private @s0_fwd(tensor<2x4xf32>) -> tensor<2x4xf32>
func.func private @s0_bwd(tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
func.func private @s1_fwd(tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<4x4xf32>)
hetero.pipeline @p stages = 2 microbatches = 2 on @grid data @data optimizer #hetero.sgd<lr = 1.0e-01> checkpoint #hetero.checkpoint<replicas = 2> {
  // expected-error @+1 {{'hetero.stage' op has no parameters, but the pipeline keeps in-memory checkpoints (checkpoint <...>), which every rank takes part in with its parameters}}
  hetero.stage 0 forward @s0_fwd backward @s0_bwd
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w]
}

// -----

// Several stages per rank: dynamic sync groups and checkpoints are lowered
// for one stage per rank.
memref.global "private" @w0 : memref<4x4xf32> = dense<0.0>
memref.global "private" @w1 : memref<4x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<2x4xf32>, tensor<2x4xf32>)
func.func private @fwd(tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
func.func private @bwd(tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<4x4xf32>)
func.func private @last(tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<f32>
func.func private @last_bwd(tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<4x4xf32>)
shard.grid @grid(shape = 1x2)
// expected-error @+1 {{'hetero.pipeline' op places its 2 stages on 1 ranks and synchronises its replicas in dynamic groups (policy = dynamic); hetero-lower-pipeline lowers dynamic sync groups for one stage per rank}}
hetero.pipeline @p stages = 2 microbatches = 2 placement = [0, 0] on @grid data @data optimizer #hetero.sgd<lr = 1.0e-01> sync #hetero.sync<policy = dynamic, period = 1> {
  hetero.stage 0 forward @fwd backward @bwd params [@w0]
  hetero.stage 1 forward @last backward @last_bwd params [@w1]
}

// -----

memref.global "private" @w0 : memref<4x4xf32> = dense<0.0>
memref.global "private" @w1 : memref<4x4xf32> = dense<0.0>
func.func private @data(i64, i64, i64) -> (tensor<2x4xf32>, tensor<2x4xf32>)
func.func private @fwd(tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
func.func private @bwd(tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<4x4xf32>)
func.func private @last(tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<f32>
func.func private @last_bwd(tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<4x4xf32>)
shard.grid @grid(shape = 1x2)
// expected-error @+1 {{'hetero.pipeline' op places its 2 stages on 1 ranks and keeps in-memory checkpoints (checkpoint <...>); hetero-lower-pipeline lowers checkpoints for one stage per rank}}
hetero.pipeline @p stages = 2 microbatches = 2 placement = [0, 0] on @grid data @data optimizer #hetero.sgd<lr = 1.0e-01> checkpoint #hetero.checkpoint<replicas = 2, placement = group> {
  hetero.stage 0 forward @fwd backward @bwd params [@w0]
  hetero.stage 1 forward @last backward @last_bwd params [@w1]
}
