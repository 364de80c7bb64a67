// hetero-gpu-device-buffers: temporaries become device allocations (the
// async forms, each waited for), copies become linalg.copy (kernels later),
// and a buffer the host itself loads, stores or passes to a call stays a
// host allocation.
// RUN: hetero-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(hetero-gpu-device-buffers))' | FileCheck %s

// CHECK-LABEL: func.func @temporaries
// CHECK:      %[[T0:.*]] = gpu.wait async
// CHECK-NEXT: %[[M:.*]], %[[T1:.*]] = gpu.alloc async [%[[T0]]] (%arg1) : memref<?x64xf32>
// CHECK-NEXT: gpu.wait [%[[T1]]]
// CHECK-NOT:  memref.alloc(
// CHECK:      linalg.copy ins(%arg0 : memref<?x64xf32>) outs(%[[M]] : memref<?x64xf32>)
// CHECK:      linalg.copy ins(%[[M]] : memref<?x64xf32>) outs(%arg2 : memref<?x64xf32>)
// CHECK:      %[[T2:.*]] = gpu.wait async
// CHECK-NEXT: %[[T3:.*]] = gpu.dealloc async [%[[T2]]] %[[M]] : memref<?x64xf32>
// CHECK-NEXT: gpu.wait [%[[T3]]]
// CHECK-NOT:  memref.dealloc
// CHECK:      return
func.func @temporaries(%in: memref<?x64xf32>, %n: index, %out: memref<?x64xf32>) {
  %t = memref.alloc(%n) {alignment = 64 : i64} : memref<?x64xf32>
  memref.copy %in, %t : memref<?x64xf32> to memref<?x64xf32>
  memref.copy %t, %out : memref<?x64xf32> to memref<?x64xf32>
  memref.dealloc %t : memref<?x64xf32>
  return
}

// The deallocation's ownership lists: stored, loaded and passed by the
// host, through a cast. A buffer a structured op stores to is not the
// host's.
// CHECK-LABEL: func.func @bookkeeping
// CHECK:     %[[LIST:.*]] = memref.alloc() : memref<2xindex>
// CHECK:     %[[FLAGS:.*]] = memref.alloc() : memref<2xi1>
// CHECK:     %[[CALLED:.*]] = memref.alloc() : memref<4xf32>
// CHECK:     gpu.alloc async {{.*}} : memref<8xf32>
// CHECK:     memref.dealloc %[[LIST]]
// CHECK:     memref.dealloc %[[FLAGS]]
// CHECK:     memref.dealloc %[[CALLED]]
// CHECK:     gpu.dealloc async {{.*}} : memref<8xf32>
func.func private @helper(memref<?xf32>)
func.func @bookkeeping(%p: index, %b: i1, %x: f32) -> i1 {
  %c0 = arith.constant 0 : index
  %list = memref.alloc() : memref<2xindex>
  memref.store %p, %list[%c0] : memref<2xindex>
  %flags = memref.alloc() : memref<2xi1>
  %view = memref.cast %flags : memref<2xi1> to memref<?xi1>
  %f = memref.load %view[%c0] : memref<?xi1>
  %called = memref.alloc() : memref<4xf32>
  %dynamic = memref.cast %called : memref<4xf32> to memref<?xf32>
  func.call @helper(%dynamic) : (memref<?xf32>) -> ()
  %data = memref.alloc() : memref<8xf32>
  linalg.fill ins(%x : f32) outs(%data : memref<8xf32>)
  memref.dealloc %list : memref<2xindex>
  memref.dealloc %flags : memref<2xi1>
  memref.dealloc %called : memref<4xf32>
  memref.dealloc %data : memref<8xf32>
  return %f : i1
}

// -----

func.func @strided(%n: index) {
  // expected-error @+1 {{hetero-gpu-device-buffers: an allocation with a layout is not supported; expected the identity layout that bufferization gives temporaries}}
  %t = memref.alloc(%n) : memref<?xf32, strided<[2]>>
  return
}
