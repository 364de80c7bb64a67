// RUN: hetero-opt %s --hetero-kfkb-schedule=group-size=4 --hetero-verify-schedule=memory-cap=4 -o /dev/null
// RUN: not hetero-opt %s --hetero-kfkb-schedule=group-size=4 --hetero-verify-schedule=memory-cap=3 -o /dev/null 2>&1 | FileCheck %s
// RUN: hetero-opt %s --hetero-kfkb-schedule=group-size=1 --hetero-verify-schedule=memory-cap=2 -o /dev/null

// GPipe on 2 stages keeps all 4 activations in flight on stage 0; 1F1B keeps
// min(S - s, M) = 2.
// CHECK: error: schedule 'two_4f4b': rank 0 holds 4 micro-batch stashes after F3 of stage 0, above the memory cap of 3

func.func @identity_stage(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @two stages = 2 microbatches = 4 {
  hetero.stage 0 forward @identity_stage backward @identity_stage
  hetero.stage 1 forward @identity_stage backward @identity_stage
}
