// The memory cap counts every stash a rank holds, over all its stages:
// 4 stages on 2 ranks, 8 micro-batches. ZB1P holds at most 4 on a rank,
// interleaved 1F1B 5, looped BFS all 16 of rank 0's two stages.
// RUN: hetero-opt %s --hetero-kfkb-schedule=family=zb1p --hetero-verify-schedule=memory-cap=4 -o /dev/null
// RUN: hetero-opt %s --hetero-kfkb-schedule=family=interleaved --hetero-verify-schedule=memory-cap=5 -o /dev/null
// RUN: not hetero-opt %s --hetero-kfkb-schedule=family=interleaved --hetero-verify-schedule=memory-cap=4 -o /dev/null 2>&1 | FileCheck %s --check-prefix=INTERLEAVED
// INTERLEAVED: error: schedule 'loop_interleaved': rank 0 holds 5 micro-batch stashes after F2 of stage 0, above the memory cap of 4
// RUN: hetero-opt %s --hetero-kfkb-schedule=family=looped-bfs --hetero-verify-schedule=memory-cap=16 -o /dev/null
// RUN: not hetero-opt %s --hetero-kfkb-schedule=family=looped-bfs --hetero-verify-schedule=memory-cap=8 -o /dev/null 2>&1 | FileCheck %s --check-prefix=BFS
// BFS: error: schedule 'loop_looped_bfs': rank 0 holds 9 micro-batch stashes after F0 of stage 2, above the memory cap of 8

func.func @id(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
shard.grid @grid(shape = 2)
hetero.pipeline @loop stages = 4 microbatches = 8 placement = loop on @grid {
  hetero.stage 0 forward @id backward_input @id backward_weight @id
  hetero.stage 1 forward @id backward_input @id backward_weight @id
  hetero.stage 2 forward @id backward_input @id backward_weight @id
  hetero.stage 3 forward @id backward_input @id backward_weight @id
}
