// RUN: hetero-opt %s --hetero-lower-to-runtime -split-input-file | FileCheck %s

// READY with the grid and the sync's options, then one in-place average
// per parameter over the group the runtime returned.
// CHECK-DAG: func.func private @hrt_mlir_sync_ready(i64, i64, i32, i64, i32, i32, f64) -> i64
// CHECK-DAG: func.func private @hrt_mlir_sync_average(!llvm.ptr, i64, i32)
shard.grid @grid(shape = 2x4)

// CHECK-LABEL: func.func @dynamic
// CHECK-SAME:    (%[[W:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<3xf64>)
// dynamic is policy 1; period 6; periodic semantics 1; lock off 0.
// CHECK:         %[[WINDOW:.*]] = arith.constant 2.500000e-01 : f64
// CHECK-NEXT:    %[[STAGES:.*]] = arith.constant 2 : i64
// CHECK-NEXT:    %[[REPLICAS:.*]] = arith.constant 4 : i64
// CHECK-NEXT:    %[[POLICY:.*]] = arith.constant 1 : i32
// CHECK-NEXT:    %[[PERIOD:.*]] = arith.constant 6 : i64
// CHECK-NEXT:    %[[PERIODIC:.*]] = arith.constant 1 : i32
// CHECK-NEXT:    %[[LOCK:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    call @hrt_mlir_sync_ready(%[[STAGES]], %[[REPLICAS]], %[[POLICY]], %[[PERIOD]], %[[PERIODIC]], %[[LOCK]], %[[WINDOW]])
// CHECK:         %[[WBUF:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK:         bufferization.materialize_in_destination %[[W]] in writable %[[WBUF]]
// CHECK:         %[[WCOUNT:.*]] = arith.constant 32 : i64
// CHECK:         %[[F32:.*]] = arith.constant 0 : i32
// CHECK:         call @hrt_mlir_sync_average(%{{.*}}, %[[WCOUNT]], %[[F32]])
// CHECK:         %[[WOUT:.*]] = bufferization.to_tensor %[[WBUF]] restrict writable
// CHECK:         %[[BBUF:.*]] = memref.alloc() : memref<3xf64>
// CHECK:         bufferization.materialize_in_destination %[[B]] in writable %[[BBUF]]
// CHECK:         %[[BCOUNT:.*]] = arith.constant 3 : i64
// CHECK:         %[[F64:.*]] = arith.constant 1 : i32
// CHECK:         call @hrt_mlir_sync_average(%{{.*}}, %[[BCOUNT]], %[[F64]])
// CHECK:         %[[BOUT:.*]] = bufferization.to_tensor %[[BBUF]] restrict writable
// CHECK:         return %[[WOUT]], %[[BOUT]]
func.func @dynamic(%w: tensor<4x8xf32>, %b: tensor<3xf64>) -> (tensor<4x8xf32>, tensor<3xf64>) {
  %0:2 = hetero.group_sync %w, %b on @grid <policy = dynamic, window = 0.25, period = 6, semantics = periodic, lock = false> : tensor<4x8xf32>, tensor<3xf64>
  return %0#0, %0#1 : tensor<4x8xf32>, tensor<3xf64>
}

// All-reduce with the defaults: period 10, sliding (0), lock on (1), window
// -1 (1/N).
// CHECK-LABEL: func.func @defaults
// CHECK:         %[[WINDOW:.*]] = arith.constant -1.000000e+00 : f64
// CHECK-NEXT:    arith.constant 2 : i64
// CHECK-NEXT:    arith.constant 4 : i64
// CHECK-NEXT:    %[[POLICY:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[PERIOD:.*]] = arith.constant 10 : i64
// CHECK-NEXT:    %[[PERIODIC:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[LOCK:.*]] = arith.constant 1 : i32
// CHECK-NEXT:    call @hrt_mlir_sync_ready(%{{.*}}, %{{.*}}, %[[POLICY]], %[[PERIOD]], %[[PERIODIC]], %[[LOCK]], %[[WINDOW]])
// CHECK:         call @hrt_mlir_sync_average
func.func @defaults(%w: tensor<4xf32>) -> tensor<4xf32> {
  %0 = hetero.group_sync %w on @grid <policy = allreduce> : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// One replica: nothing to average, no runtime call.
shard.grid @stages(shape = 3)

// CHECK-LABEL: func.func @one_replica
// CHECK-SAME:    (%[[W:.*]]: tensor<4xf32>)
// CHECK-NOT:     call
// CHECK:         return %[[W]]
func.func @one_replica(%w: tensor<4xf32>) -> tensor<4xf32> {
  %0 = hetero.group_sync %w on @stages <policy = dynamic> : tensor<4xf32>
  return %0 : tensor<4xf32>
}
