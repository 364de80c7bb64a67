// RUN: hetero-opt %s --hetero-kfkb-schedule=group-size=2 --hetero-lower-pipeline=reference=true | FileCheck %s --enable-var-scope
// RUN: hetero-opt %s --hetero-lower-pipeline | FileCheck %s --check-prefix=ONE-F-ONE-B
// RUN: not hetero-opt %s --hetero-lower-pipeline=schedule=p_missing 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: hetero-opt %s --hetero-kfkb-schedule=group-sizes=1,2 --hetero-lower-pipeline | FileCheck %s --check-prefix=PLANS
// RUN: hetero-opt %s --hetero-lower-pipeline=late-gradient-sync | FileCheck %s --check-prefix=LATE
// RUN: hetero-opt %s --hetero-lower-pipeline | FileCheck %s --check-prefix=ADAM

// The step of a 2-stage pipeline on a 2x2 grid (stages x replicas), Adam.

shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<4x4xf32> = dense<0.5>
memref.global "private" @w1 : memref<4x4xf32> = dense<0.25>
func.func private @data(i64, i64, i64) -> (tensor<2x4xf32>, tensor<2x4xf32>)
func.func private @s0_fwd(tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
func.func private @s0_bwd(tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<4x4xf32>)
func.func private @s1_fwd(tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<4x4xf32>)
hetero.pipeline @p stages = 2 microbatches = 2 on @grid data @data optimizer #hetero.adam<lr = 1.0e-03> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// Adam's state: two moments per parameter and one step counter.
// CHECK-DAG: memref.global "private" @w0_adam_m : memref<4x4xf32> = dense<0.000000e+00>
// CHECK-DAG: memref.global "private" @w0_adam_v : memref<4x4xf32> = dense<0.000000e+00>
// CHECK-DAG: memref.global "private" @w1_adam_m : memref<4x4xf32> = dense<0.000000e+00>
// CHECK-DAG: memref.global "private" @p_optimizer_steps : memref<i64> = dense<0>

// Every rank runs the program of its stage (grid axis 0) as its replica
// (axis 1), then the mean loss is reduced over the whole grid.
// CHECK-LABEL: func.func @p_step(
// CHECK-SAME:      %[[STEP:.*]]: i64) -> f32 attributes {hetero.grid = @grid, hetero.pipeline = @p, hetero.schedule = @p_2f2b}
// CHECK:         %[[COORD:.*]]:2 = shard.process_multi_index on @grid axes = [0, 1] : index, index
// CHECK:         %[[REPLICA:.*]] = arith.index_cast %[[COORD]]#1 : index to i64
// CHECK:         %[[LOCAL:.*]] = scf.index_switch %[[COORD]]#0 -> f32
// CHECK:         case 0 {
// CHECK:           func.call @p_step_stage0(%[[STEP]], %[[REPLICA]])
// CHECK:         case 1 {
// CHECK:           func.call @p_step_stage1(%[[STEP]], %[[REPLICA]])
// CHECK:         %[[LOSS:.*]] = tensor.from_elements %[[LOCAL]] : tensor<f32>
// CHECK:         %[[TOTAL:.*]] = hetero.all_reduce %[[LOSS]] on @grid axes = [0, 1] : tensor<f32>
// CHECK:         %[[SUM:.*]] = tensor.extract %[[TOTAL]][]
// 2 micro-batches x 2 replicas.
// CHECK:         %[[MEAN:.*]] = arith.divf %[[SUM]], %cst
// CHECK:         return %[[MEAN]]

// Stage 0's tasks and update. A task calls the stage function with the
// parameters read from their globals; the backward task adds its parameter
// gradient into @w0_grad_sum in place; the update is Adam's on w0.
// CHECK-LABEL: func.func private @p_stage0_update(
// CHECK-SAME:      %[[GRAD:.*]]: tensor<4x4xf32>)
// CHECK:         memref.get_global @p_optimizer_steps
// CHECK:         %[[GRADBUF:.*]] = bufferization.to_buffer %[[GRAD]] read_only
// CHECK:         %[[WBUF:.*]] = memref.get_global @w0 :
// CHECK:         linalg.generic {{.*}} ins(%[[GRADBUF]] : memref<4x4xf32>) outs(%[[WBUF]], %{{.*}}, %{{.*}} :
// CHECK:         return
// CHECK-LABEL: func.func private @p_stage0_backward_task(
// CHECK-SAME:      %[[X:.*]]: tensor<2x4xf32>, %[[DY:.*]]: tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK:         %[[WT:.*]] = bufferization.to_tensor %{{.*}} restrict : memref<4x4xf32> to tensor<4x4xf32>
// CHECK:         %[[G:.*]]:2 = call @s0_bwd(%[[X]], %[[WT]], %[[DY]])
// CHECK:         %[[SUMBUF:.*]] = memref.get_global @w0_grad_sum
// CHECK:         %[[TERM:.*]] = bufferization.to_buffer %[[G]]#1 read_only
// CHECK:         linalg.add ins(%[[SUMBUF]], %[[TERM]] : {{.*}}) outs(%[[SUMBUF]] :
// CHECK:         return %[[G]]#0
// CHECK-LABEL: func.func private @p_stage0_forward_task(
// CHECK-SAME:      %[[X:.*]]: tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK:         %[[WT:.*]] = bufferization.to_tensor %{{.*}} restrict
// CHECK:         %[[Y:.*]] = call @s0_fwd(%[[X]], %[[WT]])
// CHECK:         return %[[Y]]

// Stage 0 under 2F2B: F0 F1 B0 B1, activations sent with the micro-batch
// as tag, gradients received with M + micro-batch; the stashed input of
// each forward is what its backward takes; the gradient sum is zeroed
// first, reduced over the replicas right after the last backward, then
// passed to the update.
// CHECK-LABEL: func.func private @p_step_stage0(
// CHECK-SAME:      %[[STEP:.*]]: i64, %[[REPLICA:.*]]: i64) -> f32 attributes {hetero.peak_stash = 2 : i64, hetero.peak_stash_bytes = 64 : i64, hetero.pipeline = @p, hetero.stage = 0 : i64}
// CHECK:         %[[ZEROED:.*]] = memref.get_global @w0_grad_sum
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%[[ZEROED]] :
// CHECK:         %[[BATCH0:.*]]:2 = call @data(%[[STEP]], %[[REPLICA]], %c0_i64)
// CHECK:         %[[Y0:.*]] = call @p_stage0_forward_task(%[[BATCH0]]#0)
// CHECK:         hetero.send %[[Y0]] to 1 on @grid axes = [0] :
// CHECK:         %[[BATCH1:.*]]:2 = call @data(%[[STEP]], %[[REPLICA]], %c1_i64)
// CHECK:         %[[Y1:.*]] = call @p_stage0_forward_task(%[[BATCH1]]#0)
// CHECK:         hetero.send %[[Y1]] to 1 on @grid axes = [0] tag = 1
// CHECK:         %[[DY0:.*]] = hetero.recv from 1 on @grid axes = [0] tag = 2
// CHECK:         call @p_stage0_backward_task(%[[BATCH0]]#0, %[[DY0]])
// CHECK:         %[[DY1:.*]] = hetero.recv from 1 on @grid axes = [0] tag = 3
// CHECK:         call @p_stage0_backward_task(%[[BATCH1]]#0, %[[DY1]])
// CHECK:         %[[SUMS:.*]] = memref.get_global @w0_grad_sum
// CHECK:         %[[SUM0:.*]] = bufferization.to_tensor %[[SUMS]] restrict
// CHECK:         %[[REDUCED:.*]] = hetero.all_reduce %[[SUM0]] on @grid axes = [1] : tensor<4x4xf32>
// CHECK:         call @p_stage0_update(%[[REDUCED]])
// Stage 0 computes no loss.
// CHECK:         return %cst

// The last stage takes the target from the data function, receives the
// activation right before the forward that takes it, sums the losses, and
// starts its all-reduce before it sends the last gradient.
// CHECK-LABEL: func.func private @p_step_stage1(
// CHECK:         %[[B0:.*]]:2 = call @data(
// CHECK-NEXT:    %[[H0:.*]] = hetero.recv from 0 on @grid axes = [0] :
// CHECK-NEXT:    %[[L0:.*]] = call @p_stage1_forward_task(%[[H0]], %[[B0]]#1)
// CHECK:         tensor.extract %[[L0]][]
// CHECK:         %[[H1:.*]] = hetero.recv from 0 on @grid axes = [0] tag = 1
// CHECK:         call @p_stage1_forward_task(%[[H1]],
// CHECK:         %[[D0:.*]] = call @p_stage1_backward_task(%[[H0]], %[[B0]]#1)
// CHECK:         hetero.send %[[D0]] to 0 on @grid axes = [0] tag = 2
// CHECK:         %[[D1:.*]] = call @p_stage1_backward_task(%[[H1]],
// CHECK:         hetero.all_reduce %{{.*}} on @grid axes = [1]
// CHECK-NEXT:    hetero.send %[[D1]] to 0 on @grid axes = [0] tag = 3

// The reference: every replica's micro-batches in order, forward through
// all stages and back, on one process.
// CHECK-LABEL: func.func @p_step_reference(
// CHECK:         scf.for %[[R:.*]] = %c0 to %c2 step %c1
// CHECK:           scf.for %[[I:.*]] = %c0 to %c2{{.*}} step %c1
// CHECK:             func.call @data(
// CHECK:             func.call @s0_fwd(
// CHECK:             func.call @s1_fwd(
// CHECK:             func.call @s1_bwd(
// CHECK:             func.call @s0_bwd(
// CHECK-NOT:   hetero.all_reduce
// CHECK:         return

// Without a schedule, 1F1B: stage 0 runs F0 F1 ... with one backward after
// each forward once the pipeline is full.
// ONE-F-ONE-B-LABEL: func.func private @p_step_stage0(
// ONE-F-ONE-B:         call @p_stage0_forward_task(
// ONE-F-ONE-B:         call @p_stage0_forward_task(
// ONE-F-ONE-B:         call @p_stage0_backward_task(
// ONE-F-ONE-B:         call @p_stage0_backward_task(
// ONE-F-ONE-B-LABEL: func.func private @p_step_stage1(
// ONE-F-ONE-B:         call @p_stage1_forward_task(
// ONE-F-ONE-B-NEXT:    hetero.task_mark forward 0{{$}}
// ONE-F-ONE-B-NEXT:    tensor.extract
// ONE-F-ONE-B-NEXT:    arith.addf
// ONE-F-ONE-B-NEXT:    call @p_stage1_backward_task(
// ONE-F-ONE-B-NEXT:    hetero.task_mark backward 0{{$}}

// MISSING: error: 'hetero.pipeline' op has no schedule 'p_missing' (hetero-lower-pipeline schedule=p_missing)

// A plan set: one step per plan, and @p_step runs the default one and
// carries the table hetero-run --adaptive picks from.
// PLANS-LABEL: func.func @p_step(
// PLANS-SAME:      hetero.plan_table = [{group_size = 1 : i64, microbatches = 2 : i64, schedule = @p_1f1b, step = @p_step_p_1f1b, tasks = 1 : i64}, {group_size = 2 : i64, microbatches = 2 : i64, schedule = @p_2f2b, step = @p_step_p_2f2b, tasks = 1 : i64}], hetero.stages = 2 : i64
// PLANS-NEXT:    %[[LOSS:.*]] = call @p_step_p_1f1b(%arg0)
// PLANS-NEXT:    return %[[LOSS]]
// PLANS-DAG:   func.func @p_step_p_2f2b({{.*}}hetero.schedule = @p_2f2b
// PLANS-DAG:   func.func @p_step_p_1f1b({{.*}}hetero.schedule = @p_1f1b
// PLANS-DAG:   func.func private @p_step_p_2f2b_stage1(
// PLANS-DAG:   hetero.plan_set @p_plans for @p [@p_1f1b, @p_2f2b] default @p_1f1b

// late-gradient-sync reduces the gradients after the stage's last send.
// LATE-LABEL: func.func private @p_step_stage1(
// LATE:         call @p_stage1_backward_task(
// LATE:         call @p_stage1_backward_task(
// LATE:         hetero.send
// LATE-NEXT:    memref.get_global @w1_grad_sum
// LATE-NEXT:    bufferization.to_tensor
// LATE-NEXT:    hetero.all_reduce %{{.*}} on @grid axes = [1]

// The Adam update of one element, in a fixed order of ops (one op per
// builder statement, whatever order a compiler evaluates arguments in):
// g = sum/4; m = 0.9 m + 0.1 g; v = 0.999 v + 0.001 g^2;
// w -= lr (m / c1) / (sqrt(v / c2) + eps).
// ADAM-LABEL: func.func private @p_stage0_update
// ADAM:      ^bb0(%[[SUM:[^:]*]]: f32, %[[W:[^:]*]]: f32, %[[M:[^:]*]]: f32, %[[V:[^:]*]]: f32):
// ADAM-NEXT:   %[[QUARTER:.*]] = arith.constant 2.500000e-01 : f32
// ADAM-NEXT:   %[[G:.*]] = arith.mulf %[[SUM]], %[[QUARTER]] : f32
// ADAM-NEXT:   %[[B1:.*]] = arith.constant 0.899999976 : f32
// ADAM-NEXT:   %[[KEPTM:.*]] = arith.mulf %[[M]], %[[B1]] : f32
// ADAM-NEXT:   %[[NB1:.*]] = arith.constant 1.000000e-01 : f32
// ADAM-NEXT:   %[[NEWM:.*]] = arith.mulf %[[G]], %[[NB1]] : f32
// ADAM-NEXT:   %[[NEXTM:.*]] = arith.addf %[[KEPTM]], %[[NEWM]] : f32
// ADAM-NEXT:   %[[SQ:.*]] = arith.mulf %[[G]], %[[G]] : f32
// ADAM-NEXT:   %[[B2:.*]] = arith.constant 9.990000e-01 : f32
// ADAM-NEXT:   %[[KEPTV:.*]] = arith.mulf %[[V]], %[[B2]] : f32
// ADAM-NEXT:   %[[NB2:.*]] = arith.constant 1.000000e-03 : f32
// ADAM-NEXT:   %[[NEWV:.*]] = arith.mulf %[[SQ]], %[[NB2]] : f32
// ADAM-NEXT:   %[[NEXTV:.*]] = arith.addf %[[KEPTV]], %[[NEWV]] : f32
// ADAM-NEXT:   %[[MHAT:.*]] = arith.divf %[[NEXTM]], %{{.*}} : f32
// ADAM-NEXT:   %[[VHAT:.*]] = arith.divf %[[NEXTV]], %{{.*}} : f32
// ADAM-NEXT:   %[[ROOT:.*]] = math.sqrt %[[VHAT]] : f32
// ADAM-NEXT:   %[[EPS:.*]] = arith.constant 9.99999993E-9 : f32
// ADAM-NEXT:   %[[DEN:.*]] = arith.addf %[[ROOT]], %[[EPS]] : f32
// ADAM-NEXT:   %[[DIR:.*]] = arith.divf %[[MHAT]], %[[DEN]] : f32
// ADAM-NEXT:   %[[LR:.*]] = arith.constant 1.000000e-03 : f32
// ADAM-NEXT:   %[[STEP:.*]] = arith.mulf %[[DIR]], %[[LR]] : f32
// ADAM-NEXT:   %[[NEW:.*]] = arith.subf %[[W]], %[[STEP]] : f32
// ADAM-NEXT:   linalg.yield %[[NEW]], %[[NEXTM]], %[[NEXTV]] : f32, f32, f32
