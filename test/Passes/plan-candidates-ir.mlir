// Ada-Grouper's candidates with the memory read from the IR: no batch= or
// activation-bytes=. The data function gives micro-batches of 4 samples
// (tensor<4x8xf32>), so the step holds 4 x 4 = 16 samples and b is 4, 8 or
// 16. Stage 0 stashes its input, 4x8 f32 = 32 bytes a sample, and holds
// @w0 (512 bytes) and its gradient sum; stage 1 stashes its input and the
// target, (4x16 + 4x4) f32 = 80 bytes a sample, and holds @w1 (256) twice.
// Stage s holds min(k (2 - s), M) micro-batches. Under 1600 bytes:
//   k = 1: b = 16 puts 16 x 80 + 512 = 1792 on stage 1; b = 8 fits (1536)
//   k = 2: b = 8 puts 2 x 8 x 80 + 512 = 1792 on stage 1; b = 4 fits (1536)
//   k = 3: b = 4 fits (stage 0 1536, stage 1 1472)
//   k = 4: b = 4 puts 4 x 4 x 80 + 512 = 1792 on stage 1: none
// RUN: hetero-opt %S/../Integration/Inputs/mlp-pipeline.mlir --hetero-plan-candidates="memory-cap=1600" --hetero-verify-schedule | FileCheck %s
// CHECK: hetero.schedule @mlp_k1_b8 for @mlp group_size = 1 microbatch_size = 8 microbatches = 2 {
// CHECK: hetero.schedule @mlp_k2_b4 for @mlp group_size = 2 microbatch_size = 4 microbatches = 4 {
// CHECK: hetero.schedule @mlp_k3_b4 for @mlp group_size = 3 microbatch_size = 4 microbatches = 4 {
// CHECK-NOT: hetero.schedule
// CHECK: hetero.plan_set @mlp_plans for @mlp [@mlp_k1_b8, @mlp_k2_b4, @mlp_k3_b4] default @mlp_k1_b8

// Adam keeps two moments per parameter: stage 0 holds 4 x 512 = 2048 for
// good, so under 2400 only 1F1B at the stage functions' 4 samples fits
// (2 x 4 x 32 + 2048 = 2304), and k = 2 would hold 2560.
// RUN: sed 's/#hetero.sgd<lr = 5.0e-02>/#hetero.adam<lr = 1.0e-02>/' %S/../Integration/Inputs/mlp-pipeline.mlir | hetero-opt --hetero-plan-candidates="memory-cap=2400" | FileCheck %s --check-prefix=ADAM
// ADAM: hetero.schedule @mlp_k1_b4 for @mlp group_size = 1 microbatch_size = 4 microbatches = 4 {
// ADAM-NOT: hetero.schedule
// ADAM: hetero.plan_set @mlp_plans for @mlp [@mlp_k1_b4] default @mlp_k1_b4

// The parameters alone overflow 1000 bytes on stage 0.
// RUN: not hetero-opt %S/../Integration/Inputs/mlp-pipeline.mlir --hetero-plan-candidates="memory-cap=1000" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TIGHT
// TIGHT: error: hetero-plan-candidates: no schedule of pipeline 'mlp' fits 1000 bytes: 1F1B with 4 samples per micro-batch holds 1280 on its fullest stage

// Explicit activation bytes keep the IR's batch: every stage stashes 8
// bytes a sample and holds nothing else. 1F1B with one micro-batch of all
// 16 samples holds 128 bytes on stage 0, which fits; GPipe follows.
// RUN: hetero-opt %S/../Integration/Inputs/mlp-pipeline.mlir --hetero-plan-candidates="memory-cap=128 activation-bytes=8" | FileCheck %s --check-prefix=EXPLICIT
// EXPLICIT: hetero.schedule @mlp_k1_b16 for @mlp group_size = 1 microbatch_size = 16 microbatches = 1 {
// EXPLICIT-NOT: hetero.schedule
// EXPLICIT: hetero.plan_set @mlp_plans for @mlp [@mlp_k1_b16] default @mlp_k1_b16

// A pipeline without a data function has no batch in its IR.
// RUN: not hetero-opt %S/plan-candidates.mlir --hetero-plan-candidates="memory-cap=2048" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NODATA
// NODATA: error: hetero-plan-candidates: without batch= and activation-bytes=, the memory of pipeline 'four' comes from its IR, which needs a data function returning a statically shaped input whose first dimension counts the samples of a micro-batch
