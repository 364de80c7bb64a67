// hetero-lower-pipeline runs a candidate of larger micro-batches on the
// stage functions compiled for them (hetero.stage_variant): the MLP of
// test/Integration/Inputs/mlp-pipeline.mlir (4 micro-batches of 4 samples)
// with its stages for 8 samples. Under 1600 bytes hetero-plan-candidates
// keeps (k, b) = (1, 8), (2, 4), (3, 4) (test/Passes/plan-candidates-ir.mlir).
// RUN: sed '$d' %S/../Integration/Inputs/mlp-pipeline.mlir | cat - %S/../Integration/Inputs/mlp-variants.mlir | hetero-opt --hetero-plan-candidates="memory-cap=1600" --hetero-lower-pipeline | FileCheck %s --enable-var-scope

// One task per micro-batch of 8 in the plan table.
// CHECK: hetero.plan_table = [{group_size = 1 : i64, microbatch_size = 8 : i64, microbatches = 2 : i64, schedule = @mlp_k1_b8, step = @mlp_step_mlp_k1_b8, tasks = 1 : i64}, {group_size = 2 : i64, microbatch_size = 4 : i64, microbatches = 4 : i64, schedule = @mlp_k2_b4, step = @mlp_step_mlp_k2_b4, tasks = 1 : i64}, {group_size = 3 : i64, microbatch_size = 4 : i64, microbatches = 4 : i64, schedule = @mlp_k3_b4, step = @mlp_step_mlp_k3_b4, tasks = 1 : i64}]

// The step of (1, 8): the loss is the mean of 2 micro-batches on each of
// the 2 replicas.
// CHECK-LABEL: func.func @mlp_step_mlp_k2_b4(
// CHECK:         arith.constant 8.000000e+00 : f32
// CHECK-LABEL: func.func @mlp_step_mlp_k1_b8(
// CHECK:         arith.constant 4.000000e+00 : f32

// The variant's tasks; its update covers 2 micro-batches per replica.
// CHECK-LABEL: func.func private @mlp_stage0_update_2(
// CHECK:         arith.constant 2.500000e-01 : f32
// CHECK-LABEL: func.func private @mlp_stage0_backward_task_b8(
// CHECK:         call @s0_bwd_b8(
// CHECK-LABEL: func.func private @mlp_stage0_forward_task_b8(
// CHECK:         call @s0_fwd_b8(

// Stage 0 joins the inputs of the data function's micro-batches 0 and 1
// (then 2 and 3) along the samples, and nothing else.
// CHECK-LABEL: func.func private @mlp_step_mlp_k1_b8_stage0(
// CHECK:         %[[D0:.*]]:2 = call @data(%{{.*}}, %{{.*}}, %c0_i64)
// CHECK:         %[[D1:.*]]:2 = call @data(%{{.*}}, %{{.*}}, %c1_i64)
// CHECK:         %[[E0:.*]] = tensor.empty() : tensor<8x8xf32>
// CHECK:         %[[I0:.*]] = tensor.insert_slice %[[D0]]#0 into %[[E0]][0, 0] [4, 8] [1, 1]
// CHECK:         %[[I1:.*]] = tensor.insert_slice %[[D1]]#0 into %[[I0]][4, 0] [4, 8] [1, 1]
// CHECK-NOT:     tensor<4x4xf32> into
// CHECK:         %[[A0:.*]] = call @mlp_stage0_forward_task_b8(%[[I1]])
// CHECK:         hetero.send %[[A0]] to 1 on @grid axes = [0] : tensor<8x16xf32>
// CHECK:         call @data(%{{.*}}, %{{.*}}, %c2_i64)
// CHECK:         call @data(%{{.*}}, %{{.*}}, %c3_i64)
// CHECK:         %[[G0:.*]] = hetero.recv from 1 on @grid axes = [0] tag = 4 : tensor<8x16xf32>
// CHECK:         call @mlp_stage0_backward_task_b8(%[[I1]], %[[G0]])
// CHECK:         call @mlp_stage0_update_2(

// Stage 1 joins the targets, then receives the activation its forward
// takes (a receive waits right before the task that needs it).
// CHECK-LABEL: func.func private @mlp_step_mlp_k1_b8_stage1(
// CHECK:         %[[T0:.*]]:2 = call @data(%{{.*}}, %{{.*}}, %c0_i64)
// CHECK:         %[[T1:.*]]:2 = call @data(%{{.*}}, %{{.*}}, %c1_i64)
// CHECK-NOT:     tensor<4x8xf32> into
// CHECK:         %[[E1:.*]] = tensor.empty() : tensor<8x4xf32>
// CHECK:         %[[J0:.*]] = tensor.insert_slice %[[T0]]#1 into %[[E1]][0, 0] [4, 4] [1, 1]
// CHECK:         %[[J1:.*]] = tensor.insert_slice %[[T1]]#1 into %[[J0]][4, 0] [4, 4] [1, 1]
// CHECK-NEXT:    %[[RECV0:.*]] = hetero.recv from 0 on @grid axes = [0] : tensor<8x16xf32>
// CHECK-NEXT:    call @mlp_stage1_forward_task_b8(%[[RECV0]], %[[J1]])
// CHECK:         hetero.task_mark forward 0
// CHECK:         call @mlp_stage1_backward_task_b8(%[[RECV0]], %[[J1]])
// CHECK:         hetero.send %{{.*}} to 0 on @grid axes = [0] tag = 4 : tensor<8x16xf32>
// CHECK:         call @mlp_stage1_update_2(

// A plan of 16 samples a micro-batch runs each as 2 tasks of the variant
// of 8: the largest that divides it.
// RUN: sed '$d' %S/../Integration/Inputs/mlp-pipeline.mlir | cat - %S/../Integration/Inputs/mlp-variants.mlir | hetero-opt --hetero-plan-candidates="memory-cap=100000" --hetero-lower-pipeline | FileCheck %s --check-prefix=SIXTEEN
// SIXTEEN: hetero.plan_table = [{group_size = 1 : i64, microbatch_size = 16 : i64, microbatches = 1 : i64, schedule = @mlp_k1_b16, step = @mlp_step_mlp_k1_b16, tasks = 2 : i64}]
// SIXTEEN-LABEL: func.func private @mlp_step_mlp_k1_b16_stage0(
// SIXTEEN-COUNT-2: call @mlp_stage0_forward_task_b8(
// SIXTEEN: call @mlp_stage0_update_2(

// Without variants the same plan runs 4 tasks of the pipeline's size.
// RUN: hetero-opt %S/../Integration/Inputs/mlp-pipeline.mlir --hetero-plan-candidates="memory-cap=100000" --hetero-lower-pipeline | FileCheck %s --check-prefix=PLAIN
// PLAIN: tasks = 4 : i64
// PLAIN-LABEL: func.func private @mlp_step_mlp_k1_b16_stage0(
// PLAIN-COUNT-4: call @mlp_stage0_forward_task(
// PLAIN: call @mlp_stage0_update(
