// hetero-gpu-async-launches: kernels queue on the stream without the host
// waiting; the host waits before the runtime calls outside
// libhetero_rt_cuda, and for the copies it reads.
// RUN: hetero-opt %s --split-input-file --verify-diagnostics --hetero-gpu-async-launches | FileCheck %s
// RUN: hetero-opt %s --split-input-file --verify-diagnostics --hetero-gpu-async-launches=device-collectives | FileCheck %s --check-prefix=NCCL

// CHECK-LABEL: func.func @step
// The allocation's wait goes: the pool serves it in stream order.
// CHECK:       %[[T0:.*]] = gpu.wait async
// CHECK-NEXT:  %[[M:.*]], %{{.*}} = gpu.alloc async [%[[T0]]] () : memref<64xf32>
// CHECK-NEXT:  %[[S1:.*]] = gpu.wait async
// CHECK-NEXT:  gpu.launch_func async [%[[S1]]] @kernels::@fill
// CHECK-NEXT:  %[[S2:.*]] = gpu.wait async
// CHECK-NEXT:  gpu.launch_func async [%[[S2]]] @kernels::@fill
// cuBLAS is on the same stream: no wait.
// CHECK-NEXT:  call @hrt_cuda_sgemm
// A runtime call that may read the data on another stream waits for it.
// CHECK-NEXT:  call @hrt_cuda_synchronize() : () -> ()
// CHECK-NEXT:  call @hrt_mlir_send
// CHECK-NEXT:  call @hrt_cuda_synchronize() : () -> ()
// CHECK-NEXT:  call @hrt_mlir_task_mark
// On NCCL the send orders itself after the stream (an event): no wait;
// the task mark, which times the work, still waits.
// NCCL-LABEL:  func.func @step
// NCCL:        call @hrt_cuda_sgemm
// NCCL-NEXT:   call @hrt_mlir_send
// NCCL-NEXT:   call @hrt_cuda_synchronize() : () -> ()
// NCCL-NEXT:   call @hrt_mlir_task_mark
// The copy the host reads keeps its wait.
// CHECK:       %[[C:.*]] = gpu.memcpy async
// CHECK-NEXT:  gpu.wait [%[[C]]]
// Calls inside the module do not wait.
// CHECK-NEXT:  call @helper
// CHECK-NOT:   hrt_cuda_synchronize
// CHECK:       gpu.dealloc async
// CHECK-NOT:   gpu.wait [
// CHECK:       return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @fill(%m: memref<64xf32>, %x: f32) kernel {
      %i = gpu.thread_id x
      memref.store %x, %m[%i] : memref<64xf32>
      gpu.return
    }
  }
  func.func private @hrt_cuda_sgemm(i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64)
  func.func private @hrt_mlir_send(!llvm.ptr, !llvm.ptr, i64, i32, i64, i64)
  func.func private @hrt_mlir_task_mark(i64, i64)
  func.func private @helper(%h: memref<64xf32>) {
    return
  }
  func.func @step(%x: f32, %p: !llvm.ptr, %h: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %i1 = arith.constant 1 : i64
    %i0 = arith.constant 0 : i32
    %one = arith.constant 1.0 : f32
    %t0 = gpu.wait async
    %m, %t1 = gpu.alloc async [%t0] () : memref<64xf32>
    gpu.wait [%t1]
    gpu.launch_func @kernels::@fill blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%m : memref<64xf32>, %x : f32)
    gpu.launch_func @kernels::@fill blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%m : memref<64xf32>, %x : f32)
    func.call @hrt_cuda_sgemm(%i1, %i1, %i1, %p, %i1, %p, %i1, %one, %p, %i1) : (i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64) -> ()
    func.call @hrt_mlir_send(%p, %p, %i1, %i0, %i1, %i1) : (!llvm.ptr, !llvm.ptr, i64, i32, i64, i64) -> ()
    func.call @hrt_mlir_task_mark(%i1, %i1) : (i64, i64) -> ()
    %t2 = gpu.wait async
    %t3 = gpu.memcpy async [%t2] %h, %m : memref<64xf32>, memref<64xf32>
    gpu.wait [%t3]
    func.call @helper(%h) : (memref<64xf32>) -> ()
    %t4 = gpu.wait async
    %t5 = gpu.dealloc async [%t4] %m : memref<64xf32>
    gpu.wait [%t5]
    return
  }
}

// -----

module attributes {gpu.container_module} {
  // expected-error @+1 {{hetero-gpu-async-launches: @hrt_cuda_synchronize is declared as '(i32) -> ()', expected '() -> ()'}}
  func.func private @hrt_cuda_synchronize(i32)
  func.func private @hrt_mlir_wait(!llvm.ptr)
  func.func @waits(%p: !llvm.ptr) {
    func.call @hrt_mlir_wait(%p) : (!llvm.ptr) -> ()
    return
  }
}

// -----

module attributes {gpu.container_module} {
  // expected-error @+1 {{hetero-gpu-async-launches: @hrt_cuda_synchronize names something else; expected the runtime function '() -> ()'}}
  memref.global "private" @hrt_cuda_synchronize : memref<f32>
  func.func private @hrt_mlir_wait(!llvm.ptr)
  func.func @waits(%p: !llvm.ptr) {
    func.call @hrt_mlir_wait(%p) : (!llvm.ptr) -> ()
    return
  }
}
