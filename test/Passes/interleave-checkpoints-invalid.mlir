// RUN: not hetero-opt %s --hetero-lower-pipeline --hetero-interleave-checkpoints 2>&1 | FileCheck %s --check-prefix=NO-TIMELINE
// RUN: not hetero-opt %s --hetero-lower-pipeline --hetero-interleave-checkpoints="costs=%S/Inputs/checkpoint-costs.json profile=%S/Inputs/checkpoint-timeline.json" 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: not hetero-opt %s --hetero-lower-pipeline --hetero-interleave-checkpoints="profile=%t.missing.json" 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not hetero-opt %s --hetero-lower-pipeline --hetero-interleave-checkpoints="profile=%S/Inputs/checkpoint-timeline-short.json" 2>&1 | FileCheck %s --check-prefix=OTHER-SCHEDULE
// RUN: not hetero-opt %s --hetero-lower-pipeline --hetero-interleave-checkpoints="profile=%S/Inputs/checkpoint-costs.json" 2>&1 | FileCheck %s --check-prefix=NOT-A-TRACE
// RUN: not hetero-opt %s --hetero-lower-pipeline --hetero-interleave-checkpoints="costs=%S/Inputs/checkpoint-costs.json interleaving=eager" 2>&1 | FileCheck %s --check-prefix=INTERLEAVING
// RUN: not hetero-opt %s --hetero-lower-pipeline --hetero-interleave-checkpoints="costs=%S/Inputs/checkpoint-costs.json mu=1.5" 2>&1 | FileCheck %s --check-prefix=MU
// RUN: not hetero-opt %s --hetero-lower-pipeline --hetero-interleave-checkpoints="costs=%S/Inputs/checkpoint-costs.json bandwidth-bytes-per-ms=0" 2>&1 | FileCheck %s --check-prefix=BANDWIDTH
// RUN: not hetero-opt %s --hetero-lower-pipeline --hetero-interleave-checkpoints="costs=%S/Inputs/checkpoint-costs.json alpha-ms=-1" 2>&1 | FileCheck %s --check-prefix=ALPHA
// RUN: not hetero-opt %s --hetero-lower-pipeline --hetero-interleave-checkpoints="costs=%S/Inputs/checkpoint-costs.json buffer-bytes=2 parts=4" 2>&1 | FileCheck %s --check-prefix=BUFFER
// RUN: not hetero-opt %S/Inputs/checkpoint-outside-step.mlir --hetero-interleave-checkpoints="costs=%S/Inputs/checkpoint-costs.json" 2>&1 | FileCheck %s --check-prefix=OUTSIDE

shard.grid @grid(shape = 2x2)
memref.global "private" @w0 : memref<4x4xf32> = dense<0.5>
memref.global "private" @w1 : memref<4x4xf32> = dense<0.25>
func.func private @data(i64, i64, i64) -> (tensor<2x4xf32>, tensor<2x4xf32>)
func.func private @s0_fwd(tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
func.func private @s0_bwd(tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<4x4xf32>)
func.func private @s1_fwd(tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<f32>
func.func private @s1_bwd(tensor<2x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<4x4xf32>)
hetero.pipeline @p stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 1.0e-01> checkpoint #hetero.checkpoint<replicas = 2> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}

// NO-TIMELINE: error: hetero-interleave-checkpoints needs the step's timeline: costs=<pipeline profile.json> to simulate it, or profile=<timeline.json> measured by hetero-run --timeline
// BOTH: error: hetero-interleave-checkpoints takes costs= or profile=, not both
// MISSING: error: hetero-interleave-checkpoints: cannot open input file '{{.*}}missing.json'
// OTHER-SCHEDULE: interleave-checkpoints-invalid.mlir:21:1: error: hetero-interleave-checkpoints: the timeline of this stage has 6 compute tasks, but its program marks 8; the timeline is of another schedule
// NOT-A-TRACE: error: hetero-interleave-checkpoints: {{.*}}checkpoint-costs.json: $: missing "traceEvents"
// INTERLEAVING: error: hetero-interleave-checkpoints: unknown interleaving 'eager', expected gemini, naive or blocking
// MU: error: hetero-interleave-checkpoints: mu must be in (0, 1]
// BANDWIDTH: error: hetero-interleave-checkpoints: the bandwidth must be a positive number of bytes per ms
// ALPHA: error: hetero-interleave-checkpoints: the start-up time alpha must be >= 0
// BUFFER: error: hetero-interleave-checkpoints: the buffer of 2 bytes cannot be split into 4 parts of at least one byte
// OUTSIDE: checkpoint-outside-step.mlir:5:3: error: hetero-interleave-checkpoints: a hetero.checkpoint is interleaved into the stage program of a step (hetero-lower-pipeline), whose timeline is known; this one is not in one
