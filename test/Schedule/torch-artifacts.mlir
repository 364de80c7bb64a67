// PyTorch's own schedule artifacts (Inputs/torch/README.md): hetero reads
// them, finds them sound, builds the same schedules itself, and lowers
// compute-only files to the transfers PyTorch's lowering adds.
// RUN: split-file %s %t

// ZB1P on 2 ranks, 2 stages each (a loop), 8 micro-batches.
// RUN: hetero-opt %t/zb.mlir --hetero-import-schedule="input=%S/Inputs/torch/zb1p_2rank_2stagep_compute.csv name=compute" --hetero-verify-schedule --hetero-print-schedule -o /dev/null > %t/zb-imported.txt
// RUN: FileCheck %s --check-prefix=ZB < %t/zb-imported.txt
// ZB:      rank 0: 0F0 0F1 2F0 2F1 2B0 0F2 2B1 0F3 0B0 2F2 0B1 2F3 2B2 0F4
// ZB-NEXT: rank 1: 1F0 1F1 3F0 3I0 3F1 3I1 3W0 1F2 1I0 3W1 1F3 1I1 1W0 3F2
// hetero's zb1p family is PyTorch's ScheduleInterleavedZeroBubble: the
// same order once an I right before its own W is one B, as PyTorch's
// import merges them (_merge_bw).
// RUN: hetero-opt %t/zb.mlir --hetero-kfkb-schedule=family=zb1p --hetero-print-schedule -o /dev/null | sed -E 's/([0-9]+)I([0-9]+) \1W\2( |$)/\1B\2\3/g' > %t/zb-family.txt
// RUN: diff %t/zb-imported.txt %t/zb-family.txt
// The transfers hetero adds to the compute-only file are those of
// PyTorch's comms artifact, cell for cell.
// RUN: hetero-opt %t/zb.mlir --hetero-import-schedule="input=%S/Inputs/torch/zb1p_2rank_2stagep_compute.csv name=compute" --hetero-export-schedule=output=%t/zb-from-compute.csv -o /dev/null
// RUN: hetero-opt %t/zb.mlir --hetero-import-schedule="input=%S/Inputs/torch/zb1p_2rank_2stagep_comms.csv name=comms" --hetero-verify-schedule --hetero-export-schedule=output=%t/zb-from-comms.csv -o /dev/null
// RUN: diff %t/zb-from-compute.csv %t/zb-from-comms.csv
// And the file itself, once its older names are the current ones (B, an
// input gradient, is I; BW, a whole backward, is B): equal, action for
// action, not only up to the order of independent transfers.
// RUN: sed -E 's/([0-9])B([0-9])/\1I\2/g; s/BW/B/g' %S/Inputs/torch/zb1p_2rank_2stagep_comms.csv > %t/zb-pytorch-current.csv
// RUN: diff %t/zb-pytorch-current.csv %t/zb-from-compute.csv
// RUN: FileCheck %s --check-prefix=COMMS < %t/zb-from-comms.csv
// COMMS: 0F0,0SEND_F0,2RECV_F0,0F1,0SEND_F1,2RECV_F1,2F0,2SEND_F0,2F1,2SEND_F1,2RECV_B0,2B0,2SEND_B0,0F2,

// DualPipeV on 4 ranks in a V, 10 micro-batches, with overlapped pairs.
// RUN: hetero-opt %t/dv.mlir --hetero-import-schedule="input=%S/Inputs/torch/dualpipev_4rank_10mb.csv name=compute" --hetero-verify-schedule --hetero-print-schedule -o /dev/null > %t/dv-imported.txt
// RUN: FileCheck %s --check-prefix=DV < %t/dv-imported.txt
// DV:      rank 0: 0F0 0F1 0F2 0F3 0F4 0F5 0F6 7F0 7B0 7F1 7B1 7F2 7B2 7F3 0F7 7B3
// DV:      rank 3: 3F0 4F0 3F1 4F1 3F2 4F2 3F3 4F3 3F4 4B0 4F4 3B0
// DV-SAME: 4I8 3I8 4I9 3I9 4W8 3W8 4W9 3W9
// RUN: hetero-opt %t/dv.mlir --hetero-kfkb-schedule=family=dualpipev --hetero-print-schedule -o /dev/null | sed -E 's/([0-9]+)I([0-9]+) \1W\2( |$)/\1B\2\3/g' > %t/dv-family.txt
// RUN: diff %t/dv-imported.txt %t/dv-family.txt

// The simulator runs them: each rank does 2 stages x M micro-batches of
// F (1 ms) and B (2 ms, I and W 1 ms each). ZB1P's 48 ms of work per rank
// take 49 ms (a bubble of 1/49), hetero's zb1p the same; DualPipeV's 60 ms
// take 68.
// RUN: echo '{"forward_ms": 1, "backward_ms": 2, "comm_ms": 0}' > %t/uniform.json
// RUN: hetero-opt %t/zb.mlir --hetero-import-schedule="input=%S/Inputs/torch/zb1p_2rank_2stagep_compute.csv" -o %t/zb-imported.mlir
// RUN: hetero-sim %t/zb-imported.mlir --profile %t/uniform.json | FileCheck %s --check-prefix=ZBSIM
// RUN: hetero-opt %t/zb.mlir --hetero-kfkb-schedule=family=zb1p -o %t/zb-family.mlir
// RUN: hetero-sim %t/zb-family.mlir --profile %t/uniform.json | FileCheck %s --check-prefix=ZBSIM
// ZBSIM:      iteration_ms: 49
// ZBSIM-NEXT: bubble_fraction: 0.0204082
// RUN: hetero-opt %t/dv.mlir --hetero-import-schedule="input=%S/Inputs/torch/dualpipev_4rank_10mb.csv" -o %t/dv-imported.mlir
// RUN: hetero-sim %t/dv-imported.mlir --profile %t/uniform.json | FileCheck %s --check-prefix=DVSIM
// DVSIM:      iteration_ms: 68
// DVSIM-NEXT: bubble_fraction: 0.117647

// A file for another placement is refused.
// RUN: not hetero-opt %t/dv.mlir --hetero-import-schedule="input=%S/Inputs/torch/zb1p_2rank_2stagep_compute.csv" 2>&1 | FileCheck %s --check-prefix=OTHER
// OTHER: error: hetero-import-schedule: {{.*}}zb1p_2rank_2stagep_compute.csv has 2 rows (ranks), but pipeline 'dv' runs on 4 ranks

//--- zb.mlir
func.func @id(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
shard.grid @two(shape = 2)
hetero.pipeline @zb stages = 4 microbatches = 8 placement = loop on @two {
  hetero.stage 0 forward @id backward_input @id backward_weight @id
  hetero.stage 1 forward @id backward_input @id backward_weight @id
  hetero.stage 2 forward @id backward_input @id backward_weight @id
  hetero.stage 3 forward @id backward_input @id backward_weight @id
}
//--- dv.mlir
func.func @id(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
shard.grid @four(shape = 4)
hetero.pipeline @dv stages = 8 microbatches = 10 placement = v on @four {
  hetero.stage 0 forward @id backward_input @id backward_weight @id
  hetero.stage 1 forward @id backward_input @id backward_weight @id
  hetero.stage 2 forward @id backward_input @id backward_weight @id
  hetero.stage 3 forward @id backward_input @id backward_weight @id
  hetero.stage 4 forward @id backward_input @id backward_weight @id
  hetero.stage 5 forward @id backward_input @id backward_weight @id
  hetero.stage 6 forward @id backward_input @id backward_weight @id
  hetero.stage 7 forward @id backward_input @id backward_weight @id
}
