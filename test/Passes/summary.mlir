// RUN: hetero-opt %s --hetero-summary -o /dev/null | FileCheck %s
// RUN: hetero-opt %s --hetero-summary=output=%t.txt | FileCheck %s --check-prefix=IR
// RUN: FileCheck %s < %t.txt

// CHECK:      pipeline @two: 2 stages, 6 micro-batches, grid @devices (2x2)
// CHECK-NEXT:   stage 0: forward @s0_fwd, backward @s0_bwd, on a100
// CHECK-NEXT:     1 tensor inputs besides the activation (1.00 KiB), 1 prunable matmuls, sends tensor<4x16xf32> (256 B) per micro-batch
// CHECK-NEXT:   stage 1: forward @s1_fwd, backward @s1_bwd
// CHECK-NEXT:     0 tensor inputs besides the activation (0 B), 0 prunable matmuls, returns tensor<f32> (4 B)
// CHECK-NEXT:   tensor parallel: 1 prunable layers, 1 prunable matmuls (1 col, 0 row), tp = 2
// CHECK-NEXT:   all_reduce: 2 ops, 2.00 KiB of tensors, 1.12 KiB on the wire (1 compressed, 1.8x smaller)
// CHECK-NEXT:   checkpoint: 1 tensors, 1.00 KiB, 2 replicas of 4 machines, group placement, every 5 iterations
// CHECK-NEXT: schedule @two_gpipe for @two: group size 6, 2 compute tasks
// CHECK-NEXT: plan set @plans: 1 candidate schedules, default @two_gpipe

// The pass leaves the IR unchanged.
// IR: hetero.pipeline @two

shard.grid @devices(shape = 2x2)

hetero.pipeline @two stages = 2 microbatches = 6 on @devices {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd on "a100"
  hetero.stage 1 forward @s1_fwd backward @s1_bwd
}

func.func @s0_fwd(%x: tensor<4x16xf32>, %w: tensor<16x16xf32>) -> tensor<4x16xf32> {
  %y = hetero.prunable_matmul col %x, %w layer "fc" tp = 2 : tensor<4x16xf32>, tensor<16x16xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
func.func @s0_bwd(%dw: tensor<16x16xf32>) -> tensor<16x16xf32> {
  // 1 KiB; topk keeps 16 of 256 values: 16 x (4 + 4) = 128 B on the wire.
  %0 = hetero.all_reduce %dw compress <topk, ratio = 0.0625, scheme = allgather> : tensor<16x16xf32>
  %1 = hetero.all_reduce %0 : tensor<16x16xf32>
  %step = arith.constant 0 : i64
  hetero.checkpoint %1 at %step replicas = 2 of 4 placement = group every = 5 : tensor<16x16xf32>
  return %1 : tensor<16x16xf32>
}
func.func @s1_fwd(%x: tensor<4x16xf32>) -> tensor<f32> {
  %0 = tensor.empty() : tensor<f32>
  return %0 : tensor<f32>
}
func.func @s1_bwd() {
  return
}

hetero.schedule @two_gpipe for @two group_size = 6 {
  hetero.stage_program 0 {
    hetero.fwd 0
  }
  hetero.stage_program 1 {
    hetero.bwd 0
  }
}
hetero.plan_set @plans for @two [@two_gpipe] default @two_gpipe
