// Schedules in the pipeline-order CSV of torch.distributed.pipelining.

// Export: one row per rank, transfers included.
// RUN: hetero-opt %s --hetero-kfkb-schedule=group-size=2 --hetero-export-schedule -o /dev/null | FileCheck %s --check-prefix=EXPORT
// EXPORT:      0F0,0SEND_F0,0F1,0SEND_F1,0F2,0SEND_F2,0F3,0SEND_F3,0RECV_B0,0B0,0RECV_B1,0B1,0RECV_B2,0B2,0RECV_B3,0B3
// EXPORT-NEXT: 1RECV_F0,1F0,1RECV_F1,1F1,1B0,1SEND_B0,1B1,1SEND_B1,1RECV_F2,1F2,1RECV_F3,1F3,1B2,1SEND_B2,1B3,1SEND_B3

// Round trip: export, import, the same schedule.
// RUN: hetero-opt %s --hetero-kfkb-schedule=group-size=2 --hetero-export-schedule=output=%t.csv -o /dev/null
// RUN: hetero-opt %s --hetero-import-schedule="input=%t.csv name=back group-size=2" --hetero-verify-schedule --hetero-print-schedule -o /dev/null | FileCheck %s --check-prefix=ROUND
// ROUND:      stage 0: F0 F1 F2 F3 B0 B1 B2 B3
// ROUND-NEXT: stage 1: F0 F1 B0 B1 F2 F3 B2 B3

// The compute-only form (idle slots as empty cells) gets its transfers.
// RUN: hetero-opt %s --hetero-import-schedule="input=%S/Inputs/1f1b-compute-only.csv name=from_torch" | FileCheck %s --check-prefix=IMPORT
// IMPORT:      hetero.schedule @from_torch for @two group_size = 1 {
// IMPORT-NEXT:   hetero.stage_program 0 {
// IMPORT-NEXT:     hetero.fwd 0
// IMPORT-NEXT:     hetero.send_task activation 0 to 1
// IMPORT:        hetero.stage_program 1 {
// IMPORT-NEXT:     hetero.recv_task activation 0 from 0
// IMPORT-NEXT:     hetero.fwd 0
// IMPORT-NEXT:     hetero.recv_task activation 1 from 0
// IMPORT-NEXT:     hetero.bwd 0
// IMPORT-NEXT:     hetero.send_task gradient 0 to 0

// Bad files are reported with their place in the file.
// RUN: not hetero-opt %s --hetero-import-schedule="input=%S/Inputs/split-backward.csv" 2>&1 | FileCheck %s --check-prefix=SPLIT
// SPLIT: error: hetero-import-schedule: {{.*}}split-backward.csv: rank 0 never runs W0 of stage 0
// RUN: not hetero-opt %s --hetero-import-schedule="input=%S/Inputs/wrong-rank.csv" 2>&1 | FileCheck %s --check-prefix=RANK
// RANK: error: hetero-import-schedule: {{.*}}wrong-rank.csv: line 2 runs stage 1, which line 1 runs too; a stage runs on one rank
// RUN: not hetero-opt %s --hetero-import-schedule="input=%S/Inputs/swapped.csv" 2>&1 | FileCheck %s --check-prefix=PLACED
// PLACED: error: hetero-import-schedule: {{.*}}swapped.csv places the stages on ranks [1, 0], but pipeline 'two' places them on [0, 1]
// RUN: not hetero-opt %s --hetero-import-schedule="input=%S/Inputs/microbatch.csv" 2>&1 | FileCheck %s --check-prefix=MB
// MB: error: hetero-import-schedule: {{.*}}microbatch.csv: line 1, column 2: '0B9' names micro-batch 9, but the pipeline has 4
// RUN: not hetero-opt %s --hetero-import-schedule="input=%S/Inputs/no-stage.csv" 2>&1 | FileCheck %s --check-prefix=CELL
// CELL: error: hetero-import-schedule: {{.*}}no-stage.csv: line 1, column 2: expected [stage][F|I|W|B|BW|SEND_F|RECV_F|SEND_B|RECV_B|UNSHARD|RESHARD|REDUCE_GRAD][micro-batch] or (a;b)OVERLAP_F_B, got 'F0'
// RUN: not hetero-opt %s --hetero-import-schedule="input=%S/Inputs/one-row.csv" 2>&1 | FileCheck %s --check-prefix=ROWS
// ROWS: error: hetero-import-schedule: {{.*}}one-row.csv has 1 rows (ranks), but pipeline 'two' runs on 2 ranks
// RUN: not hetero-opt %s --hetero-import-schedule="input=%S/Inputs/incomplete.csv" 2>&1 | FileCheck %s --check-prefix=UNSOUND
// UNSOUND: error: hetero-import-schedule: {{.*}}incomplete.csv: rank 0 never runs F1 of stage 0
// RUN: not hetero-opt %s --hetero-import-schedule="input=%t.missing" 2>&1 | FileCheck %s --check-prefix=FILE
// FILE: error: hetero-import-schedule: cannot read '{{.*}}.missing'
// RUN: not hetero-opt %s --hetero-kfkb-schedule --hetero-kfkb-schedule=group-size=2 --hetero-export-schedule 2>&1 | FileCheck %s --check-prefix=WHICH
// WHICH: error: hetero-export-schedule: more than one hetero.schedule in the module; name one with schedule=<name>

func.func @identity_stage(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @two stages = 2 microbatches = 4 {
  hetero.stage 0 forward @identity_stage backward @identity_stage
  hetero.stage 1 forward @identity_stage backward @identity_stage
}
