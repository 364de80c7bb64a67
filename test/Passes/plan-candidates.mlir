// Ada-Grouper's candidates under a memory cap: 4 stages, 32 samples of 1 KiB
// activations, 16 KiB per stage. Stage 0 holds min(4k, M) micro-batches of b
// samples: k = 1 fits b = 4 (M = 8), k = 2 b = 2 (M = 16), k = 3 and 4
// b = 1 (M = 32); k = 5 would hold 20 KiB.
// RUN: hetero-opt %s --hetero-plan-candidates="batch=32 activation-bytes=1024 memory-cap=16384" --hetero-verify-schedule | FileCheck %s
// RUN: not hetero-opt %s --hetero-plan-candidates="batch=32 activation-bytes=1024 memory-cap=16384" --hetero-verify-schedule="memory-cap=8" -o /dev/null 2>&1 | FileCheck %s --check-prefix=INFLIGHT
// RUN: hetero-opt %s --hetero-plan-candidates="batch=32 activation-bytes=1024 memory-cap=16384" --hetero-print-schedule -o /dev/null | FileCheck %s --check-prefix=ORDER
// RUN: not hetero-opt %s --hetero-plan-candidates="batch=32 activation-bytes=1024 memory-cap=2048" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TIGHT
// RUN: not hetero-opt %s --hetero-plan-candidates="memory-cap=0 batch=32" -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPTIONS

func.func @identity_stage(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @four stages = 4 microbatches = 8 {
  hetero.stage 0 forward @identity_stage backward @identity_stage
  hetero.stage 1 forward @identity_stage backward @identity_stage
  hetero.stage 2 forward @identity_stage backward @identity_stage
  hetero.stage 3 forward @identity_stage backward @identity_stage
}

// CHECK: hetero.schedule @four_k1_b4 for @four group_size = 1 microbatch_size = 4 microbatches = 8 {
// CHECK: hetero.schedule @four_k2_b2 for @four group_size = 2 microbatch_size = 2 microbatches = 16 {
// CHECK: hetero.schedule @four_k3_b1 for @four group_size = 3 microbatch_size = 1 microbatches = 32 {
// CHECK: hetero.schedule @four_k4_b1 for @four group_size = 4 microbatch_size = 1 microbatches = 32 {
// CHECK-NOT: hetero.schedule
// CHECK: hetero.plan_set @four_plans for @four [@four_k1_b4, @four_k2_b2, @four_k3_b1, @four_k4_b1] default @four_k1_b4

// Every candidate keeps stage 0 within 16 micro-batch-KiB; in micro-batches
// that is 4, 8, 12 and 16, so a cap of 8 in flight rejects k = 3 and 4.
// INFLIGHT-NOT: four_k1_b4
// INFLIGHT-NOT: four_k2_b2
// INFLIGHT: error: schedule 'four_k3_b1': rank 0 holds 9 micro-batch stashes after F8 of stage 0
// INFLIGHT: error: schedule 'four_k4_b1': rank 0 holds 9 micro-batch stashes after F8 of stage 0

// The 1F1B candidate runs 8 micro-batches of 4 samples.
// ORDER: stage 0: F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7

// TIGHT: error: hetero-plan-candidates: no schedule of pipeline 'four' fits 2048 bytes: 1F1B with 1 sample per micro-batch holds 4096 on its fullest stage
// OPTIONS: error: hetero-plan-candidates: memory-cap must be at least 1 and batch and activation-bytes at least 0 (0: from the IR), got memory-cap=0 batch=32 activation-bytes=0
