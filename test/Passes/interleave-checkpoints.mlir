// RUN: hetero-opt %s --hetero-lower-pipeline | FileCheck %s --check-prefix=LOWERED
// RUN: hetero-opt %s --hetero-lower-pipeline --hetero-interleave-checkpoints="costs=%S/Inputs/checkpoint-costs.json bandwidth-bytes-per-ms=10 alpha-ms=0.1" | FileCheck %s
// RUN: hetero-opt %s --hetero-lower-pipeline --hetero-interleave-checkpoints="costs=%S/Inputs/checkpoint-costs.json bandwidth-bytes-per-ms=10 alpha-ms=0.1 interleaving=blocking buffer-bytes=96 parts=4" | FileCheck %s --check-prefix=BLOCKING
// RUN: hetero-opt %s --hetero-lower-pipeline --hetero-interleave-checkpoints="costs=%S/Inputs/checkpoint-costs.json bandwidth-bytes-per-ms=10 alpha-ms=0.1 interleaving=naive" | FileCheck %s --check-prefix=NAIVE
// RUN: hetero-opt %s --hetero-lower-pipeline --hetero-interleave-checkpoints="profile=%S/Inputs/checkpoint-timeline.json bandwidth-bytes-per-ms=10 alpha-ms=0.1" | FileCheck %s --check-prefix=PROFILE
// RUN: sed -e 's/replicas = 2, placement = group/replicas = 3/' %s | hetero-opt --hetero-lower-pipeline --hetero-interleave-checkpoints="costs=%S/Inputs/checkpoint-costs.json bandwidth-bytes-per-ms=10 alpha-ms=0.1" | FileCheck %s --check-prefix=COPIES
// RUN: sed -e 's/#hetero.sgd<lr = 1.0e-01>/#hetero.adam<lr = 1.0e-03>/' %s | hetero-opt --hetero-lower-pipeline | FileCheck %s --check-prefix=ADAM
// RUN: sed -e 's/optimizer #hetero.sgd<lr = 1.0e-01>/optimizer #hetero.sgd<lr = 1.0e-01> sync #hetero.sync<policy = dynamic, sync_every_microbatches = 1>/' %s | hetero-opt --hetero-lower-pipeline --hetero-interleave-checkpoints="costs=%S/Inputs/checkpoint-costs.json bandwidth-bytes-per-ms=2 alpha-ms=0.1 buffer-bytes=64" | FileCheck %s --check-prefix=WAR

// A 2-stage pipeline on a 2x2 grid (stages x replicas) with 4 micro-batches
// under 1F1B, checkpointed every step into 2 replicas in groups. Stage 0
// holds w0 (64 bytes) and b0 (16 bytes), stage 1 w1 (64 bytes).

shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<4x4xf32> = dense<0.5>
memref.global "private" @b0 : memref<4xf32> = dense<0.0>
memref.global "private" @w1 : memref<4x4xf32> = dense<0.25>
func.func private @data(i64, i64, i64) -> (tensor<2x4xf32>, tensor<2x4xf32>)
func.func private @s0_fwd(tensor<2x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
func.func private @s0_bwd(tensor<2x4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<4x4xf32>, tensor<4xf32>)
func.func private @s1_fwd(tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<4x4xf32>)
hetero.pipeline @p stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 1.0e-01> checkpoint #hetero.checkpoint<replicas = 2, placement = group> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0, @b0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// hetero-lower-pipeline opens each stage's checkpoint first thing in its
// program, on the state the previous step left.
// LOWERED: hetero.pipeline @p {{.*}} checkpoint <replicas = 2, placement = group> {
// LOWERED-LABEL: func.func private @p_step_stage0(
// LOWERED-SAME:    %[[STEP:[a-z0-9]+]]: i64
// LOWERED:         %[[W0:.*]] = memref.get_global @w0
// LOWERED:         %[[W0T:.*]] = bufferization.to_tensor %[[W0]]
// LOWERED:         %[[B0:.*]] = memref.get_global @b0
// LOWERED:         %[[B0T:.*]] = bufferization.to_tensor %[[B0]]
// LOWERED-NEXT:    hetero.checkpoint %[[W0T]], %[[B0T]] at %[[STEP]] replicas = 2 of 4 placement = group : tensor<4x4xf32>, tensor<4xf32>
// LOWERED-NOT:     hetero.ckpt_chunk
// LOWERED-LABEL: func.func private @p_step_stage1(
// LOWERED:         hetero.checkpoint %{{.*}} at %{{.*}} replicas = 2 of 4 placement = group : tensor<4x4xf32>

// Adam's moments and step counter are training state too.
// ADAM-LABEL: func.func private @p_step_stage0(
// ADAM-DAG:     memref.get_global @w0_adam_m :
// ADAM-DAG:     memref.get_global @w0_adam_v :
// ADAM-DAG:     memref.get_global @b0_adam_m :
// ADAM-DAG:     memref.get_global @b0_adam_v :
// ADAM-DAG:     memref.get_global @p_optimizer_steps :
// ADAM:         hetero.checkpoint %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} at %{{.*}} replicas = 2 of 4 placement = group : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>

// Stage 0's idle spans under 1F1B (F = 2, B = 4, a message 1 ms): [0, 2]
// while F0 runs, [3, 4] in F1, [5, 9] and [10, 15] (both before B0, which
// waits for its gradient), ... At 10 bytes/ms with alpha = 0.1 ms and
// mu = 0.9 they take 17, 8, 35 and the last 20 of its 80 bytes; the chunk
// that crosses from w0 into b0 is two pieces. The commit waits for all of
// them before the update overwrites w0 and b0.
// CHECK-LABEL: func.func private @p_step_stage0(
// CHECK:         hetero.checkpoint %[[W0:.*]], %[[B0:.*]] at
// CHECK-NEXT:    hetero.ckpt_chunk %[[W0]] offset 0 bytes 17 copy 0 span 0 : tensor<4x4xf32>
// CHECK:         hetero.task_mark forward 0
// CHECK-NEXT:    hetero.send
// CHECK-NEXT:    hetero.ckpt_chunk %[[W0]] offset 17 bytes 8 copy 0 span 1 : tensor<4x4xf32>
// CHECK:         hetero.task_mark forward 1
// CHECK-NEXT:    hetero.send
// CHECK-NEXT:    hetero.ckpt_chunk %[[W0]] offset 25 bytes 35 copy 0 span 2 : tensor<4x4xf32>
// CHECK-NEXT:    hetero.ckpt_chunk %[[W0]] offset 60 bytes 4 copy 0 span 3 : tensor<4x4xf32>
// CHECK-NEXT:    hetero.ckpt_chunk %[[B0]] offset 0 bytes 16 copy 0 span 3 : tensor<4xf32>
// CHECK-NEXT:    hetero.recv
// CHECK-NOT:     hetero.ckpt_chunk
// CHECK:         hetero.task_mark backward 3
// CHECK:         hetero.all_reduce
// CHECK:         hetero.all_reduce
// CHECK-NEXT:    hetero.ckpt_commit
// CHECK-NEXT:    call @p_stage0_update(
// Stage 1 waits for F0's activation until 3 ms: its first span, [0, 2],
// comes before that receive.
// CHECK-LABEL: func.func private @p_step_stage1(
// CHECK:         hetero.checkpoint %[[W1:.*]] at
// CHECK-NEXT:    hetero.ckpt_chunk %[[W1]] offset 0 bytes 17 copy 0 span 0 : tensor<4x4xf32>
// CHECK-NOT:     hetero.task_mark
// CHECK:         hetero.recv from 0
// CHECK:         hetero.ckpt_commit
// CHECK-NEXT:    call @p_stage1_update(

// Blocking: everything right after the checkpoint, in chunks of R/p = 24.
// BLOCKING-LABEL: func.func private @p_step_stage0(
// BLOCKING:         hetero.checkpoint %[[W0:.*]], %[[B0:.*]] at
// BLOCKING-NEXT:    hetero.ckpt_chunk %[[W0]] offset 0 bytes 24 copy 0 span 0
// BLOCKING-NEXT:    hetero.ckpt_chunk %[[W0]] offset 24 bytes 24 copy 0 span 0
// BLOCKING-NEXT:    hetero.ckpt_chunk %[[W0]] offset 48 bytes 16 copy 0 span 0
// BLOCKING-NEXT:    hetero.ckpt_chunk %[[B0]] offset 0 bytes 8 copy 0 span 0
// BLOCKING-NEXT:    hetero.ckpt_chunk %[[B0]] offset 8 bytes 8 copy 0 span 0
// BLOCKING-NOT:     hetero.ckpt_chunk
// BLOCKING:         hetero.ckpt_commit

// Naive: one chunk per span, as large as it allows.
// NAIVE-LABEL: func.func private @p_step_stage0(
// NAIVE:         hetero.ckpt_chunk %{{.*}} offset 0 bytes 17 copy 0 span 0
// NAIVE:         hetero.ckpt_chunk %{{.*}} offset 17 bytes 8 copy 0 span 1
// NAIVE:         hetero.ckpt_chunk %{{.*}} offset 25 bytes 35 copy 0 span 2
// NAIVE-NEXT:    hetero.ckpt_chunk %{{.*}} offset 60 bytes 4 copy 0 span 3
// NAIVE-NEXT:    hetero.ckpt_chunk %{{.*}} offset 0 bytes 16 copy 0 span 3

// Three replicas (mixed: one ring of the 4 ranks) send two remote copies;
// the second starts where the first ends.
// COPIES-LABEL: func.func private @p_step_stage0(
// COPIES:         hetero.checkpoint {{.*}} replicas = 3 of 4 placement = mixed
// COPIES:         hetero.ckpt_chunk %{{.*}} offset 0 bytes 16 copy 0 span 3 : tensor<4xf32>
// COPIES-NEXT:    hetero.ckpt_chunk %{{.*}} offset 0 bytes 23 copy 1 span 3 : tensor<4x4xf32>
// COPIES:         hetero.ckpt_chunk %{{.*}} offset 3 bytes 13 copy 1 span 5 : tensor<4xf32>
// COPIES-NOT:     hetero.ckpt_chunk
// COPIES:         hetero.ckpt_commit

// With a local step after every backward (SDPipe, every micro-batch), B0's
// update is the first write: the spans after it are not used, and at
// 2 bytes/ms the last span before it (unbounded: it delays the update) takes
// the rest in chunks of R/p = 16 bytes; the commit follows B0.
// WAR-LABEL: func.func private @p_step_stage0(
// WAR:         hetero.ckpt_chunk %{{.*}} offset 0 bytes 3 copy 0 span 0
// WAR:         hetero.ckpt_chunk %{{.*}} offset 4 bytes 7 copy 0 span 2
// WAR-NEXT:    hetero.ckpt_chunk %{{.*}} offset 11 bytes 16 copy 0 span 3 : tensor<4x4xf32>
// WAR:         hetero.ckpt_chunk %{{.*}} offset 11 bytes 5 copy 0 span 3 : tensor<4xf32>
// WAR-NEXT:    hetero.recv
// WAR:         hetero.task_mark backward 0
// WAR-NOT:     hetero.task_mark
// WAR:         hetero.ckpt_commit
// WAR-NEXT:    call @p_stage0_update_1(
// WAR-NOT:     hetero.ckpt_chunk
// WAR-LABEL: func.func private @p_step_stage1(

// A measured iteration (Inputs/checkpoint-timeline.json, as hetero-run
// --timeline writes it): stage 0's first replica waits in a receive from 4
// to 10 ms, so its spans are [0, 4] (35 bytes) and [10, 22] (the other 45,
// before B0). The second replica's row, busy from 1 ms, is not read.
// PROFILE-LABEL: func.func private @p_step_stage0(
// PROFILE:         hetero.checkpoint %[[W0:.*]], %[[B0:.*]] at
// PROFILE-NEXT:    hetero.ckpt_chunk %[[W0]] offset 0 bytes 35 copy 0 span 0
// PROFILE:         hetero.task_mark forward 1
// PROFILE-NEXT:    hetero.send
// PROFILE-NEXT:    hetero.ckpt_chunk %[[W0]] offset 35 bytes 29 copy 0 span 1
// PROFILE-NEXT:    hetero.ckpt_chunk %[[B0]] offset 0 bytes 16 copy 0 span 1
// PROFILE-NEXT:    hetero.recv
// PROFILE-LABEL: func.func private @p_step_stage1(
// PROFILE:         hetero.ckpt_chunk %{{.*}} offset 0 bytes 64 copy 0 span 0
