// Families on pipelines they do not fit: each error says why.
// RUN: split-file %s %t
// RUN: not hetero-opt %t/v.mlir --hetero-kfkb-schedule=family=1f1b 2>&1 | FileCheck %s --check-prefix=ONE
// ONE: v.mlir:3:1: error: 'hetero.pipeline' op cannot be scheduled: family=1f1b runs one stage per rank, but the pipeline places 4 stages on 2 ranks; use family=interleaved
// RUN: not hetero-opt %t/v.mlir --hetero-kfkb-schedule=family=zb1p 2>&1 | FileCheck %s --check-prefix=LOOP
// LOOP: v.mlir:3:1: error: 'hetero.pipeline' op cannot be scheduled: family=zb1p needs the loop placement (stage s on rank s mod 2), got [0, 1, 1, 0]
// RUN: not hetero-opt %t/loop.mlir --hetero-kfkb-schedule=family=zbv 2>&1 | FileCheck %s --check-prefix=V
// V: loop.mlir:3:1: error: 'hetero.pipeline' op cannot be scheduled: family=zbv needs the V placement (rank r holds stages r and 3-r), got [0, 1, 0, 1]
// RUN: not hetero-opt %t/v.mlir --hetero-kfkb-schedule=family=dualpipev 2>&1 | FileCheck %s --check-prefix=FEW
// FEW: v.mlir:3:1: error: 'hetero.pipeline' op cannot be scheduled: family=dualpipev needs at least as many micro-batch groups as stages (4), got 3
// RUN: not hetero-opt %t/loop.mlir --hetero-kfkb-schedule=family=interleaved 2>&1 | FileCheck %s --check-prefix=ROUNDS
// ROUNDS: loop.mlir:3:1: error: 'hetero.pipeline' op cannot be scheduled: family=interleaved goes round the stages in 2 rounds, which do not divide its 5 micro-batch groups; use a number of groups that 2 divides, or fewer than 2
// RUN: not hetero-opt %t/whole.mlir --hetero-kfkb-schedule=family=zbv 2>&1 | FileCheck %s --check-prefix=SPLIT
// SPLIT: whole.mlir:4:3: error: 'hetero.stage' op has no split backward, but family=zbv runs input and weight gradients as separate tasks; run hetero-derive-backward{split=true} first
// RUN: not hetero-opt %t/v.mlir --hetero-kfkb-schedule=family=zero-bubble 2>&1 | FileCheck %s --check-prefix=NAME
// NAME: error: hetero-kfkb-schedule: family must be one of 1f1b|interleaved|looped-bfs|zb1p|zbv|dualpipev, got 'zero-bubble'

//--- v.mlir
func.func @id(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
shard.grid @grid(shape = 2)
hetero.pipeline @v stages = 4 microbatches = 3 placement = v on @grid {
  hetero.stage 0 forward @id backward_input @id backward_weight @id
  hetero.stage 1 forward @id backward_input @id backward_weight @id
  hetero.stage 2 forward @id backward_input @id backward_weight @id
  hetero.stage 3 forward @id backward_input @id backward_weight @id
}
//--- loop.mlir
func.func @id(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
shard.grid @grid(shape = 2)
hetero.pipeline @loop stages = 4 microbatches = 5 placement = loop on @grid {
  hetero.stage 0 forward @id backward_input @id backward_weight @id
  hetero.stage 1 forward @id backward_input @id backward_weight @id
  hetero.stage 2 forward @id backward_input @id backward_weight @id
  hetero.stage 3 forward @id backward_input @id backward_weight @id
}
//--- whole.mlir
func.func @id(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
shard.grid @grid(shape = 2)
hetero.pipeline @v stages = 4 microbatches = 4 placement = v on @grid {
  hetero.stage 0 forward @id backward @id
  hetero.stage 1 forward @id backward @id
  hetero.stage 2 forward @id backward @id
  hetero.stage 3 forward @id backward @id
}
