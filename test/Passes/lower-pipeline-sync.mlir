// RUN: hetero-opt %s --hetero-lower-pipeline | FileCheck %s --enable-var-scope
// RUN: sed -e 's/sync #hetero.sync<policy = dynamic, period = 4>/sync #hetero.sync<policy = dynamic, sync_every_microbatches = 2>/' %s | hetero-opt --hetero-lower-pipeline | FileCheck %s --check-prefix=EVERY
// RUN: sed -e 's/sync #hetero.sync<policy = dynamic, period = 4>/sync #hetero.sync<policy = allreduce>/' %s | hetero-opt --hetero-lower-pipeline | FileCheck %s --check-prefix=ALLREDUCE
// RUN: sed -e 's/#hetero.sgd<lr = 1.0e-01>/#hetero.adam<lr = 1.0e-03>/; s/period = 4>/period = 4, adam_var_rescale = true>/' %s | hetero-opt --hetero-lower-pipeline | FileCheck %s --check-prefix=RESCALE

// SDPipe's step: a 2-stage pipeline on a 2x3 grid (stages x replicas) with
// 4 micro-batches; every replica takes a local step and then averages its
// weights in a dynamic group.

shard.grid @grid(shape = 2x3)
memref.global "private" @w0 : memref<4x4xf32> = dense<0.5>
memref.global "private" @b0 : memref<4xf32> = dense<0.0>
memref.global "private" @w1 : memref<4x4xf32> = dense<0.25>
func.func private @data(i64, i64, i64) -> (tensor<2x4xf32>, tensor<2x4xf32>)
func.func private @s0_fwd(tensor<2x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
func.func private @s0_bwd(tensor<2x4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<4x4xf32>, tensor<4xf32>)
func.func private @s1_fwd(tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<4x4xf32>)
hetero.pipeline @p stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 1.0e-01> sync #hetero.sync<policy = dynamic, period = 4> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0, @b0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// The step's loss is the pipeline's own: reduced over the stages (axis 0)
// and divided by its 4 micro-batches, not over the replicas.
// CHECK-LABEL: func.func @p_step(
// CHECK:       %[[LOSS:.*]] = hetero.all_reduce %{{.*}} on @grid axes = [0] : tensor<f32>
// CHECK:       %[[SUM:.*]] = tensor.extract %[[LOSS]][]
// CHECK:       %[[FOUR:.*]] = arith.constant 4.000000e+00 : f32
// CHECK:       arith.divf %[[SUM]], %[[FOUR]] : f32

// The local step averages this replica's 4 micro-batches (1/4, not 1/12).
// CHECK-LABEL: func.func private @p_stage0_update(
// CHECK:         arith.constant 2.500000e-01 : f32
// CHECK-LABEL: func.func private @p_stage0_backward_task(

// Stage 0: no gradient all-reduce; after its last backward the local step,
// then READY and the average of both parameters, written back.
// CHECK-LABEL: func.func private @p_step_stage0(
// CHECK-NOT:     hetero.all_reduce
// CHECK:         hetero.task_mark backward 3
// CHECK-NEXT:    %[[W0SUM:.*]] = memref.get_global @w0_grad_sum
// CHECK-NEXT:    %[[W0G:.*]] = bufferization.to_tensor %[[W0SUM]]
// CHECK-NEXT:    %[[B0SUM:.*]] = memref.get_global @b0_grad_sum
// CHECK-NEXT:    %[[B0G:.*]] = bufferization.to_tensor %[[B0SUM]]
// CHECK-NEXT:    call @p_stage0_update(%[[W0G]], %[[B0G]])
// CHECK-NEXT:    %[[W0:.*]] = memref.get_global @w0 :
// CHECK-NEXT:    %[[W0T:.*]] = bufferization.to_tensor %[[W0]]
// CHECK-NEXT:    %[[B0:.*]] = memref.get_global @b0 :
// CHECK-NEXT:    %[[B0T:.*]] = bufferization.to_tensor %[[B0]]
// CHECK-NEXT:    %[[AVG:.*]]:2 = hetero.group_sync %[[W0T]], %[[B0T]] on @grid <policy = dynamic, period = 4> : tensor<4x4xf32>, tensor<4xf32>
// CHECK-NEXT:    %[[W0OUT:.*]] = memref.get_global @w0 :
// CHECK-NEXT:    bufferization.materialize_in_destination %[[AVG]]#0 in writable %[[W0OUT]]
// CHECK-NEXT:    %[[B0OUT:.*]] = memref.get_global @b0 :
// CHECK-NEXT:    bufferization.materialize_in_destination %[[AVG]]#1 in writable %[[B0OUT]]
// CHECK-NEXT:    return
// CHECK-NOT:     hetero.group_sync

// Stage 1 sends its last input gradient before it syncs, so stage 0 does
// not wait for stage 1's group.
// CHECK-LABEL: func.func private @p_step_stage1(
// CHECK-NOT:     hetero.all_reduce
// CHECK:         hetero.task_mark backward 3
// CHECK-NEXT:    hetero.send %{{.*}} to 0 on @grid axes = [0] tag = 7
// CHECK-NEXT:    memref.get_global @w1_grad_sum
// CHECK-NEXT:    bufferization.to_tensor
// CHECK-NEXT:    call @p_stage1_update(
// CHECK:         hetero.group_sync %{{.*}} on @grid <policy = dynamic, period = 4> : tensor<4x4xf32>
// CHECK-NOT:     hetero.group_sync

// Every 2 micro-batches: two local steps of 2 micro-batches each (1/2), the
// sums zeroed after the first.
// EVERY-LABEL: func.func private @p_stage0_update_2(
// EVERY:         arith.constant 5.000000e-01 : f32
// EVERY-LABEL: func.func private @p_step_stage0(
// EVERY:         hetero.task_mark backward 1
// EVERY:         call @p_stage0_update_2(
// EVERY:         hetero.group_sync {{.*}}sync_every_microbatches = 2>
// EVERY:         %[[W0SUM:.*]] = memref.get_global @w0_grad_sum
// EVERY:         linalg.fill ins(%{{.*}} : f32) outs(%[[W0SUM]] :
// EVERY:         %[[B0SUM:.*]] = memref.get_global @b0_grad_sum
// EVERY:         linalg.fill ins(%{{.*}} : f32) outs(%[[B0SUM]] :
// EVERY:         hetero.task_mark backward 2
// EVERY-NOT:     hetero.group_sync
// EVERY:         hetero.task_mark backward 3
// EVERY:         call @p_stage0_update_2(
// EVERY:         hetero.group_sync
// EVERY-NEXT:    memref.get_global @w0 :
// EVERY-NOT:     linalg.fill
// EVERY:         return
// EVERY-NOT:  func.func private @p_stage0_update(

// policy = allreduce is the synchronous step: gradient all-reduces over the
// replicas, one update of all 12 micro-batches, no group_sync.
// ALLREDUCE-LABEL: func.func @p_step(
// ALLREDUCE:       hetero.all_reduce %{{.*}} on @grid axes = [0, 1] : tensor<f32>
// ALLREDUCE:       arith.constant 1.200000e+01 : f32
// ALLREDUCE-LABEL: func.func private @p_stage0_update(
// ALLREDUCE:         arith.constant 0.0833333358 : f32
// ALLREDUCE-LABEL: func.func private @p_step_stage0(
// ALLREDUCE-COUNT-2: hetero.all_reduce %{{.*}} on @grid axes = [1]
// ALLREDUCE-NOT:   hetero.group_sync

// Adam with the variance rescale keeps m2 and divides by
// m2^2 + max(v - m2^2, 0) / 3.
// RESCALE-DAG: memref.global "private" @w0_adam_m2 : memref<4x4xf32> = dense<0.000000e+00>
// RESCALE-DAG: memref.global "private" @w1_adam_m2 : memref<4x4xf32> = dense<0.000000e+00>
// RESCALE-LABEL: func.func private @p_stage0_update(
// RESCALE:         %[[M2:.*]] = memref.get_global @w0_adam_m2
// RESCALE:         linalg.generic {{.*}} outs(%{{.*}}, %{{.*}}, %{{.*}}, %[[M2]] :
// RESCALE:           %[[M:.*]] = arith.addf
// RESCALE:           %[[V:.*]] = arith.addf
// RESCALE:           %[[NEWM2:.*]] = arith.addf
// RESCALE-NEXT:      %[[SQ:.*]] = arith.mulf %[[NEWM2]], %[[NEWM2]]
// RESCALE-NEXT:      %[[SPREAD:.*]] = arith.subf %[[V]], %[[SQ]]
// RESCALE-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00
// RESCALE-NEXT:      %[[CLAMP:.*]] = arith.maximumf %[[SPREAD]], %[[ZERO]]
// RESCALE-NEXT:      %[[THIRD:.*]] = arith.constant 0.333333343
// RESCALE-NEXT:      %[[SHRUNK:.*]] = arith.mulf %[[CLAMP]], %[[THIRD]]
// RESCALE-NEXT:      %[[SECOND:.*]] = arith.addf %[[SQ]], %[[SHRUNK]]
// RESCALE:           arith.divf %[[SECOND]],
// RESCALE:           linalg.yield %{{.*}}, %[[M]], %[[V]], %[[NEWM2]]
