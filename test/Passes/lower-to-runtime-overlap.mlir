// RUN: hetero-opt %s --hetero-lower-to-runtime -split-input-file | FileCheck %s
// RUN: hetero-opt %s --hetero-lower-to-runtime=blocking-collectives -split-input-file | FileCheck %s --check-prefix=BLOCKING

shard.grid @grid(shape = 2x2)

// A dense all-reduce starts where it stands and is waited for right before
// the first use of its result: the work in between overlaps with it.
// CHECK-LABEL: func.func @overlaps_until_first_use
// CHECK:         %[[REQUEST:.*]] = call @hrt_mlir_all_reduce_start(
// CHECK-NOT:     call @hrt_mlir_wait
// CHECK:         call @hrt_mlir_send(
// CHECK:         %[[OTHER:.*]] = linalg.add
// CHECK:         call @hrt_mlir_wait(%[[REQUEST]])
// CHECK-NEXT:    %[[REDUCED:.*]] = bufferization.to_tensor
// CHECK-NEXT:    linalg.sub ins(%[[REDUCED]], %[[OTHER]]
// BLOCKING-LABEL: func.func @overlaps_until_first_use
// BLOCKING:         call @hrt_mlir_all_reduce(
// BLOCKING-NEXT:    bufferization.to_tensor
// BLOCKING:         call @hrt_mlir_send(
// BLOCKING-NOT:     hrt_mlir_wait
func.func @overlaps_until_first_use(%g: tensor<8xf32>, %a: tensor<8xf32>) -> tensor<8xf32> {
  %sum = hetero.all_reduce %g on @grid axes = [1] : tensor<8xf32>
  hetero.send %a to 1 on @grid axes = [0] : tensor<8xf32>
  %e = tensor.empty() : tensor<8xf32>
  %other = linalg.add ins(%a, %a : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %d = linalg.sub ins(%sum, %other : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  return %d : tensor<8xf32>
}

// -----

shard.grid @grid(shape = 2x2)

// A result used only inside a nested region is waited for before the op
// that holds the use; an unused result before the end of its block.
// CHECK-LABEL: func.func @waits_before_the_region
// CHECK:         %[[FIRST:.*]] = call @hrt_mlir_all_reduce_start(
// CHECK:         %[[SECOND:.*]] = call @hrt_mlir_all_reduce_start(
// CHECK:         call @hrt_mlir_wait(%[[FIRST]])
// CHECK-NEXT:    bufferization.to_tensor
// CHECK-NEXT:    scf.if
// CHECK:         call @hrt_mlir_wait(%[[SECOND]])
// CHECK-NEXT:    bufferization.to_tensor
// CHECK-NEXT:    return
func.func @waits_before_the_region(%g: tensor<8xf32>, %unused: tensor<4xf32>, %c: i1) -> tensor<8xf32> {
  %sum = hetero.all_reduce %g on @grid axes = [1] : tensor<8xf32>
  %dropped = hetero.all_reduce %unused on @grid axes = [0] : tensor<4xf32>
  %r = scf.if %c -> tensor<8xf32> {
    scf.yield %sum : tensor<8xf32>
  } else {
    scf.yield %g : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

shard.grid @grid(shape = 2x2)

// A compressed all-reduce overlaps in the same way: the runtime compresses
// and communicates it on its communication thread until the wait.
// CHECK-LABEL: func.func @compressed_overlaps
// CHECK:         %[[REQUEST:.*]] = call @hrt_mlir_compressed_all_reduce_start(
// CHECK-NOT:     call @hrt_mlir_wait
// CHECK:         call @hrt_mlir_send(
// CHECK:         call @hrt_mlir_wait(%[[REQUEST]])
// CHECK-NEXT:    bufferization.to_tensor
// CHECK-NEXT:    return
// BLOCKING-LABEL: func.func @compressed_overlaps
// BLOCKING:         call @hrt_mlir_compressed_all_reduce(
// BLOCKING-NEXT:    bufferization.to_tensor
// BLOCKING:         call @hrt_mlir_send(
// BLOCKING-NOT:     hrt_mlir_wait
func.func @compressed_overlaps(%g: tensor<8xf32>, %a: tensor<8xf32>) -> tensor<8xf32> {
  %sum = hetero.all_reduce %g on @grid axes = [1] compress <qsgd, levels = 16, placement = cpu, scheme = allgather> : tensor<8xf32>
  hetero.send %a to 1 on @grid axes = [0] : tensor<8xf32>
  return %sum : tensor<8xf32>
}

// -----

shard.grid @grid(shape = 3x2x2)

// The grid coordinates of a rank are the row-major digits of its rank in
// the whole grid: axis 2 is rank mod 2, axis 0 rank div 4 mod 3.
// CHECK-LABEL: func.func @coordinates
// CHECK:         %[[COMM:.*]] = call @hrt_mlir_group(
// CHECK:         %[[RANK:.*]] = call @hrt_mlir_rank(%[[COMM]])
// CHECK:         %[[S2:.*]] = arith.divsi %[[RANK]], %c1_i64
// CHECK:         %[[D2:.*]] = arith.remsi %[[S2]], %c2_i64
// CHECK:         %[[I2:.*]] = arith.index_cast %[[D2]]
// CHECK:         %[[S0:.*]] = arith.divsi %[[RANK]], %c4_i64
// CHECK:         %[[D0:.*]] = arith.remsi %[[S0]], %c3_i64
// CHECK:         %[[I0:.*]] = arith.index_cast %[[D0]]
// CHECK:         return %[[I2]], %[[I0]]
func.func @coordinates() -> (index, index) {
  %i:2 = shard.process_multi_index on @grid axes = [2, 0] : index, index
  return %i#0, %i#1 : index, index
}

// -----

// A task mark tells the runtime which kind of compute task just ended, and
// its micro-batch (-1 when the mark does not say).
// CHECK-LABEL: func.func @marks
// CHECK:         %[[FORWARD:.*]] = arith.constant 0 : i32
// CHECK:         %[[UNKNOWN:.*]] = arith.constant -1 : i64
// CHECK:         call @hrt_mlir_task_mark(%[[FORWARD]], %[[UNKNOWN]]) : (i32, i64) -> ()
// CHECK:         %[[BACKWARD:.*]] = arith.constant 1 : i32
// CHECK:         %[[THREE:.*]] = arith.constant 3 : i64
// CHECK:         call @hrt_mlir_task_mark(%[[BACKWARD]], %[[THREE]]) : (i32, i64) -> ()
func.func @marks() {
  hetero.task_mark forward
  hetero.task_mark backward 3
  return
}

// -----

shard.grid @stages(shape = 2x2)
shard.grid @flat(shape = 4)

// A function every rank of a grid calls creates the groups of every grid on
// entry, in module order, whatever it communicates first: creating groups
// is collective over the world, and stages reach their first collective at
// different points.
// CHECK-LABEL: func.func @step
// CHECK-SAME:    hetero.grid = @stages
// CHECK-NOT:     hrt_mlir_all_reduce_start
// CHECK:         call @hrt_mlir_group(%c2_i64, %c2_i64_0, %c2_i64_1, %c1_i64, %c1_i64_2, %c0_i64)
// CHECK-NOT:     hrt_mlir_all_reduce_start
// CHECK:         call @hrt_mlir_group(%c1_i64_3, %c4_i64, %c1_i64_4, %c1_i64_5, %c1_i64_6, %c0_i64_7)
// CHECK:         hrt_mlir_all_reduce_start
// CHECK-LABEL: func.func @elsewhere
// CHECK-NOT:     hrt_mlir_group
// CHECK:         return
func.func @step(%g: tensor<8xf32>) -> tensor<8xf32> attributes {hetero.grid = @stages} {
  %sum = hetero.all_reduce %g on @stages axes = [1] : tensor<8xf32>
  return %sum : tensor<8xf32>
}
func.func @elsewhere(%x: tensor<8xf32>) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}
