// RUN: hetero-opt %s --hetero-kfkb-schedule=group-size=2 --hetero-verify-schedule --hetero-print-schedule -o /dev/null | FileCheck %s --check-prefix=K2
// RUN: hetero-opt %s --hetero-kfkb-schedule=group-size=1 --hetero-verify-schedule --hetero-print-schedule -o /dev/null | FileCheck %s --check-prefix=K1
// RUN: hetero-opt %s --hetero-kfkb-schedule=group-size=6 --hetero-verify-schedule --hetero-print-schedule -o /dev/null | FileCheck %s --check-prefix=GPIPE
// RUN: hetero-opt %s --hetero-kfkb-schedule=group-size=4 --hetero-verify-schedule --hetero-print-schedule -o /dev/null | FileCheck %s --check-prefix=K4
// RUN: hetero-opt %s --hetero-kfkb-schedule=group-size=2 | FileCheck %s --check-prefix=IR
// RUN: not hetero-opt %s --hetero-kfkb-schedule=group-size=0 2>&1 | FileCheck %s --check-prefix=ZERO

// 2F2B on 2 stages and 6 micro-batches.
// K2:      stage 0: F0 F1 F2 F3 B0 B1 F4 F5 B2 B3 B4 B5
// K2-NEXT: stage 1: F0 F1 B0 B1 F2 F3 B2 B3 F4 F5 B4 B5

// 1F1B (PipeDream-Flush).
// K1:      stage 0: F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 B5
// K1-NEXT: stage 1: F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5

// k = M is GPipe.
// GPIPE:      stage 0: F0 F1 F2 F3 F4 F5 B0 B1 B2 B3 B4 B5
// GPIPE-NEXT: stage 1: F0 F1 F2 F3 F4 F5 B0 B1 B2 B3 B4 B5

// k = 4 does not divide 6: groups {0..3} {4, 5}.
// K4:      stage 0: F0 F1 F2 F3 F4 F5 B0 B1 B2 B3 B4 B5
// K4-NEXT: stage 1: F0 F1 F2 F3 B0 B1 B2 B3 F4 F5 B4 B5

// Transfers sit right around the tasks that produce and consume them.
// IR-LABEL: hetero.schedule @two_2f2b for @two group_size = 2 {
// IR-NEXT:    hetero.stage_program 0 {
// IR-NEXT:      hetero.fwd 0
// IR-NEXT:      hetero.send_task activation 0 to 1
// IR-NEXT:      hetero.fwd 1
// IR-NEXT:      hetero.send_task activation 1 to 1
// IR:           hetero.recv_task gradient 0 from 1
// IR-NEXT:      hetero.bwd 0
// IR:         hetero.stage_program 1 {
// IR-NEXT:      hetero.recv_task activation 0 from 0
// IR-NEXT:      hetero.fwd 0
// IR:           hetero.bwd 0
// IR-NEXT:      hetero.send_task gradient 0 to 0

// ZERO: error: hetero-kfkb-schedule: group-size must be at least 1, got 0

func.func @identity_stage(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @two stages = 2 microbatches = 6 {
  hetero.stage 0 forward @identity_stage backward @identity_stage
  hetero.stage 1 forward @identity_stage backward @identity_stage
}
