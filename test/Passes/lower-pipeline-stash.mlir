// The stash of every compiled stage program holds at most the schedule's
// in-flight bound min(k (S - s), M) of forward inputs, and reaches it: here
// S = 3 stages and M = 8 micro-batches.
// RUN: hetero-opt %s --hetero-kfkb-schedule=group-size=1 --hetero-lower-pipeline | FileCheck %s --check-prefix=K1
// RUN: hetero-opt %s --hetero-kfkb-schedule=group-size=2 --hetero-lower-pipeline | FileCheck %s --check-prefix=K2
// RUN: hetero-opt %s --hetero-kfkb-schedule=group-size=8 --hetero-lower-pipeline | FileCheck %s --check-prefix=GPIPE

// K1-DAG: @p_step_stage0({{.*}}hetero.peak_stash = 3 : i64
// K1-DAG: @p_step_stage1({{.*}}hetero.peak_stash = 2 : i64
// K1-DAG: @p_step_stage2({{.*}}hetero.peak_stash = 1 : i64
// K2-DAG: @p_step_stage0({{.*}}hetero.peak_stash = 6 : i64
// K2-DAG: @p_step_stage1({{.*}}hetero.peak_stash = 4 : i64
// K2-DAG: @p_step_stage2({{.*}}hetero.peak_stash = 2 : i64
// GPIPE-DAG: @p_step_stage0({{.*}}hetero.peak_stash = 8 : i64
// GPIPE-DAG: @p_step_stage1({{.*}}hetero.peak_stash = 8 : i64
// GPIPE-DAG: @p_step_stage2({{.*}}hetero.peak_stash = 8 : i64

shard.grid @grid(shape = 3)
memref.global "private" @w0 : memref<4x4xf32> = dense<0.5>
memref.global "private" @w1 : memref<4x4xf32> = dense<0.5>
memref.global "private" @w2 : memref<4x4xf32> = dense<0.5>
func.func private @data(i64, i64, i64) -> (tensor<2x4xf32>, tensor<2x4xf32>)
func.func private @f(tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
func.func private @b(tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<4x4xf32>)
func.func private @last_f(tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<f32>
func.func private @last_b(tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<4x4xf32>)
hetero.pipeline @p stages = 3 microbatches = 8 on @grid data @data optimizer #hetero.sgd<lr = 0.5> {
  hetero.stage 0 forward @f backward @b params [@w0]
  hetero.stage 1 forward @f backward @b params [@w1]
  hetero.stage 2 forward @last_f backward @last_b params [@w2]
}
