// RUN: hetero-opt %S/../Integration/Inputs/mlp-pipeline.mlir --hetero-lower-pipeline=eager-gradient-sync | FileCheck %s
// RUN: hetero-opt %S/../Integration/Inputs/mlp-pipeline.mlir --hetero-lower-pipeline | FileCheck %s --check-prefix=AFTER

// With eager-gradient-sync, a stage's last backward is its backward
// function's body inline: the weight gradient's sum with the earlier
// micro-batches' is all-reduced right after the matmul that computes it,
// before the backward computes the input gradient, so the all-reduce
// overlaps with the rest of the backward. The earlier backwards stay calls
// of the backward task, and the update takes the all-reduced sum.
// CHECK-LABEL: func.func private @mlp_step_stage0(
// CHECK:         call @mlp_stage0_backward_task(
// CHECK:         call @mlp_stage0_backward_task(
// CHECK:         call @mlp_stage0_backward_task(
// CHECK:         hetero.task_mark backward 2
// CHECK-NOT:     call @mlp_stage0_backward_task(
// CHECK:         %[[W0:.*]] = bufferization.to_tensor %{{.*}} restrict : memref<8x16xf32>
// CHECK:         call @s0_fwd(%{{.*}}, %[[W0]])
// CHECK:         %[[DW:.*]] = linalg.matmul
// CHECK-NEXT:    %[[SUMS:.*]] = memref.get_global @w0_grad_sum
// CHECK-NEXT:    %[[SUM:.*]] = bufferization.to_tensor %[[SUMS]]
// CHECK-NEXT:    %[[EMPTY:.*]] = tensor.empty()
// CHECK-NEXT:    %[[TOTAL:.*]] = linalg.add ins(%[[SUM]], %[[DW]] : {{.*}}) outs(%[[EMPTY]]
// CHECK-NEXT:    %[[REDUCED:.*]] = hetero.all_reduce %[[TOTAL]] on @grid axes = [1]
// CHECK:         linalg.transpose ins(%[[W0]]
// CHECK:         linalg.matmul
// CHECK-NEXT:    hetero.task_mark backward 3
// CHECK-NEXT:    call @mlp_stage0_update(%[[REDUCED]])

// The last stage sends its input gradient after the inline backward; the
// all-reduce is already posted by then.
// CHECK-LABEL: func.func private @mlp_step_stage1(
// CHECK:         hetero.task_mark backward 2
// CHECK:         hetero.all_reduce %{{.*}} on @grid axes = [1] : tensor<16x4xf32>
// CHECK:         %[[DX:.*]] = linalg.matmul
// CHECK-NEXT:    hetero.task_mark backward 3
// CHECK-NEXT:    hetero.send %[[DX]] to 0

// Without it, the all-reduce follows the whole last backward call.
// AFTER-LABEL: func.func private @mlp_step_stage0(
// AFTER:         call @mlp_stage0_backward_task(
// AFTER:         call @mlp_stage0_backward_task(
// AFTER:         call @mlp_stage0_backward_task(
// AFTER:         call @mlp_stage0_backward_task(
// AFTER-NEXT:    hetero.task_mark backward 3
// AFTER-NEXT:    memref.get_global @w0_grad_sum
// AFTER-NEXT:    bufferization.to_tensor
// AFTER-NEXT:    hetero.all_reduce

// The two placements exclude each other.
// RUN: not hetero-opt %S/../Integration/Inputs/mlp-pipeline.mlir --hetero-lower-pipeline="eager-gradient-sync late-gradient-sync" 2>&1 | FileCheck %s --check-prefix=BOTH
// BOTH: error: hetero-lower-pipeline: late-gradient-sync and eager-gradient-sync exclude each other
