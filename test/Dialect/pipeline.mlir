// RUN: hetero-opt %s | FileCheck %s
// RUN: hetero-opt %s | hetero-opt | FileCheck %s
// RUN: hetero-opt -mlir-print-op-generic %s | hetero-opt | FileCheck %s

shard.grid @devices(shape = 2x2)

func.func @stage0_fwd(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  return %x : tensor<4x8xf32>
}
func.func @stage0_bwd(%dy: tensor<4x8xf32>) -> tensor<8x8xf32> {
  %0 = tensor.empty() : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
func.func @stage1_fwd(%x: tensor<4x8xf32>) -> tensor<f32> {
  %0 = tensor.empty() : tensor<f32>
  return %0 : tensor<f32>
}
func.func @stage1_bwd() -> tensor<4x8xf32> {
  %0 = tensor.empty() : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: hetero.pipeline @gpt stages = 2 microbatches = 4 on @devices {
// CHECK-NEXT:    hetero.stage 0 forward @stage0_fwd backward @stage0_bwd
// CHECK-NEXT:    hetero.stage 1 forward @stage1_fwd backward @stage1_bwd on "a100"
// CHECK-NEXT:  }
hetero.pipeline @gpt stages = 2 microbatches = 4 on @devices {
  hetero.stage 0 forward @stage0_fwd backward @stage0_bwd
  hetero.stage 1 forward @stage1_fwd backward @stage1_bwd on "a100"
}

// A stage written forward-only (hetero-derive-backward derives the rest).
// CHECK-LABEL: hetero.pipeline @forward_only stages = 2 microbatches = 4 on @devices {
// CHECK-NEXT:    hetero.stage 0 forward @stage0_fwd on "a100"
// CHECK-NEXT:    hetero.stage 1 forward @stage1_fwd backward @stage1_bwd
// CHECK-NEXT:  }
hetero.pipeline @forward_only stages = 2 microbatches = 4 on @devices {
  hetero.stage 0 forward @stage0_fwd on "a100"
  hetero.stage 1 forward @stage1_fwd backward @stage1_bwd
}

// CHECK-LABEL: hetero.schedule @gpt_1f1b for @gpt group_size = 1 microbatch_size = 8 {
// CHECK-NEXT:    hetero.stage_program 0 {
// CHECK-NEXT:      hetero.fwd 0
// CHECK-NEXT:      hetero.send_task activation 0 to 1
// CHECK-NEXT:      hetero.recv_task gradient 0 from 1
// CHECK-NEXT:      hetero.bwd 0
// CHECK-NEXT:    }
// CHECK-NEXT:    hetero.stage_program 1 {
// CHECK-NEXT:      hetero.recv_task activation 0 from 0
// CHECK-NEXT:      hetero.fwd 0
// CHECK-NEXT:      hetero.bwd 0
// CHECK-NEXT:      hetero.send_task gradient 0 to 0
// CHECK-NEXT:    }
// CHECK-NEXT:  }
hetero.schedule @gpt_1f1b for @gpt group_size = 1 microbatch_size = 8 {
  hetero.stage_program 0 {
    hetero.fwd 0
    hetero.send_task activation 0 to 1
    hetero.recv_task gradient 0 from 1
    hetero.bwd 0
  }
  hetero.stage_program 1 {
    hetero.recv_task activation 0 from 0
    hetero.fwd 0
    hetero.bwd 0
    hetero.send_task gradient 0 to 0
  }
}

// A schedule whose programs are listed out of stage order.
// CHECK-LABEL: hetero.schedule @gpt_gpipe for @gpt group_size = 4 {
// CHECK:         hetero.stage_program 1 {
// CHECK:         hetero.stage_program 0 {
hetero.schedule @gpt_gpipe for @gpt group_size = 4 {
  hetero.stage_program 1 {
    hetero.fwd 0
    hetero.bwd 0
  }
  hetero.stage_program 0 {
    hetero.fwd 0
    hetero.bwd 0
  }
}

// CHECK-LABEL: hetero.plan_set @gpt_plans for @gpt [@gpt_1f1b, @gpt_gpipe] default @gpt_gpipe
hetero.plan_set @gpt_plans for @gpt [@gpt_1f1b, @gpt_gpipe] default @gpt_gpipe

// -----

// An executable pipeline: its data function, optimizer and parameters.
// CHECK-LABEL: hetero.pipeline @executable stages = 1 microbatches = 2 data @batches optimizer #hetero.adam<lr = 1.000000e-03, beta2 = 5.000000e-01>
// CHECK-NEXT:    hetero.stage 0 forward @fwd backward @bwd params [@w]
// CHECK-LABEL: func.func @marks
// CHECK:         hetero.task_mark forward{{$}}
// CHECK:         hetero.task_mark backward 3{{$}}
memref.global "private" @w : memref<4x4xf32> = dense<0.0>
func.func private @batches(i64, i64, i64) -> (tensor<2x4xf32>, tensor<2x4xf32>)
func.func private @fwd(tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<f32>
func.func private @bwd(tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<4x4xf32>)
hetero.pipeline @executable stages = 1 microbatches = 2 data @batches optimizer #hetero.adam<lr = 1.0e-03, beta2 = 0.5> {
  hetero.stage 0 forward @fwd backward @bwd params [@w]
}
func.func @marks() {
  hetero.task_mark forward
  hetero.task_mark backward 3
  return
}

// -----

// Stage functions for micro-batches of 6 and 4 samples beside the
// pipeline's 2: the input and target grow along their first dimension.
// CHECK-LABEL: hetero.pipeline @sized stages = 1 microbatches = 6 data @batches
// CHECK-NEXT:    hetero.stage 0 forward @fwd backward @bwd params [@w_sized]
// CHECK-NEXT:    hetero.stage_variant 0 microbatch_size = 6 forward @fwd_b6 backward @bwd_b6
// CHECK-NEXT:    hetero.stage_variant 0 microbatch_size = 4 forward @fwd_b4 backward @bwd_b4
// CHECK-NEXT:  }
memref.global "private" @w_sized : memref<4x4xf32> = dense<0.0>
func.func private @fwd_b4(tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<f32>
func.func private @bwd_b4(tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>)
func.func private @fwd_b6(tensor<6x4xf32>, tensor<4x4xf32>, tensor<6x4xf32>) -> tensor<f32>
func.func private @bwd_b6(tensor<6x4xf32>, tensor<4x4xf32>, tensor<6x4xf32>) -> (tensor<6x4xf32>, tensor<4x4xf32>)
hetero.pipeline @sized stages = 1 microbatches = 6 data @batches optimizer #hetero.sgd<lr = 1.0e-03> {
  hetero.stage 0 forward @fwd backward @bwd params [@w_sized]
  hetero.stage_variant 0 microbatch_size = 6 forward @fwd_b6 backward @bwd_b6
  hetero.stage_variant 0 microbatch_size = 4 forward @fwd_b4 backward @bwd_b4
}
