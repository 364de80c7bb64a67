// hetero-gpu-device-buffers: the buffers kernels touch become device
// memory (across calls, views and globals), and the host reaches them only
// through copies: one-element copies for its loads and stores, pinned host
// copies for the runtime calls it makes.
// RUN: hetero-opt %s --split-input-file --verify-diagnostics --hetero-gpu-device-buffers | FileCheck %s
// RUN: hetero-opt %s --split-input-file --verify-diagnostics --hetero-gpu-device-buffers=device-collectives | FileCheck %s --check-prefix=NCCL

// A temporary a kernel writes is device memory (the async forms, each
// waited for); copied into a host buffer, it is a transfer; a copy between
// host buffers stays on the host.
// CHECK-LABEL: func.func @temporaries
// CHECK:      %[[T0:.*]] = gpu.wait async
// CHECK-NEXT: %[[M:.*]], %[[T1:.*]] = gpu.alloc async [%[[T0]]] (%arg1) : memref<?x64xf32>
// CHECK-NEXT: gpu.wait [%[[T1]]]
// CHECK:      linalg.fill ins(%arg0 : f32) outs(%[[M]] : memref<?x64xf32>)
// CHECK:      %[[H:.*]] = memref.alloc(%arg1) : memref<?x64xf32>
// CHECK:      %[[T2:.*]] = gpu.wait async
// CHECK-NEXT: %[[T3:.*]] = gpu.memcpy async [%[[T2]]] %[[H]], %[[M]] : memref<?x64xf32>, memref<?x64xf32>
// CHECK-NEXT: gpu.wait [%[[T3]]]
// CHECK:      memref.copy %[[H]], %arg2 : memref<?x64xf32> to memref<?x64xf32>
// CHECK:      %[[T4:.*]] = gpu.wait async
// CHECK-NEXT: %[[T5:.*]] = gpu.dealloc async [%[[T4]]] %[[M]] : memref<?x64xf32>
// CHECK-NEXT: gpu.wait [%[[T5]]]
// CHECK:      memref.dealloc %[[H]] : memref<?x64xf32>
func.func @temporaries(%x: f32, %n: index, %out: memref<?x64xf32>) {
  %t = memref.alloc(%n) {alignment = 64 : i64} : memref<?x64xf32>
  linalg.fill ins(%x : f32) outs(%t : memref<?x64xf32>)
  %h = memref.alloc(%n) : memref<?x64xf32>
  memref.copy %t, %h : memref<?x64xf32> to memref<?x64xf32>
  memref.copy %h, %out : memref<?x64xf32> to memref<?x64xf32>
  memref.dealloc %t : memref<?x64xf32>
  memref.dealloc %h : memref<?x64xf32>
  return
}

// The deallocation's ownership lists: stored, loaded and passed by the
// host, through a cast, stay host memory.
// CHECK-LABEL: func.func @bookkeeping
// CHECK:     %[[LIST:.*]] = memref.alloc() : memref<2xindex>
// CHECK:     %[[FLAGS:.*]] = memref.alloc() : memref<2xi1>
// CHECK:     %[[CALLED:.*]] = memref.alloc() : memref<4xf32>
// CHECK:     gpu.alloc async {{.*}} : memref<8xf32>
// CHECK-NOT: hrt_cuda_copy
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

// Across calls: the callee's kernel makes the caller's allocation device
// memory, and the result the callee returns, which the caller reads on the
// host, is read through a one-element copy into a host slot; the store
// goes the other way.
// CHECK-LABEL: func.func private @scale
// CHECK-NOT:   memref.alloc(
// CHECK:       gpu.alloc async {{.*}} : memref<f32>
// CHECK-LABEL: func.func @caller
// CHECK:       %[[STORE:.*]] = memref.alloca() : memref<f32>
// CHECK:       %[[SLOT:.*]] = memref.alloca() : memref<f32>
// CHECK:       %[[X:.*]], %{{.*}} = gpu.alloc async {{.*}} : memref<4x8xf32>
// CHECK:       %[[SUM:.*]] = call @scale(%[[X]])
// CHECK:       %[[AT:.*]] = memref.extract_aligned_pointer_as_index %[[SUM]]
// CHECK:       %[[DEV:.*]] = llvm.inttoptr
// CHECK:       %[[SLOTAT:.*]] = memref.extract_aligned_pointer_as_index %[[SLOT]]
// CHECK:       %[[HOST:.*]] = llvm.inttoptr
// CHECK:       call @hrt_cuda_copy(%[[HOST]], %[[DEV]], %c4_i64)
// CHECK:       %[[V:.*]] = memref.load %[[SLOT]][] : memref<f32>
// The store to x[1][2]: 4 bytes at element 1 * 8 + 2, byte 40.
// CHECK:       %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %[[X]]
// CHECK:       %[[C40:.*]] = arith.constant 40 : index
// CHECK:       %[[E:.*]] = arith.addi %[[BASE]], %[[C40]] : index
// CHECK:       %[[E64:.*]] = arith.index_cast %[[E]]
// CHECK:       %[[EP:.*]] = llvm.inttoptr %[[E64]]
// CHECK:       memref.store %arg0, %[[STORE]][] : memref<f32>
// CHECK:       call @hrt_cuda_copy(%[[EP]], %{{.*}}, %c4_i64{{.*}})
// CHECK:       return %[[V]]
func.func private @scale(%x: memref<4x8xf32>) -> memref<f32> {
  %sum = memref.alloc() : memref<f32>
  linalg.reduce ins(%x : memref<4x8xf32>) outs(%sum : memref<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %sum : memref<f32>
}
func.func @caller(%y: f32) -> f32 {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %x = memref.alloc() : memref<4x8xf32>
  %sum = func.call @scale(%x) : (memref<4x8xf32>) -> memref<f32>
  %v = memref.load %sum[] : memref<f32>
  memref.store %y, %x[%c1, %c2] : memref<4x8xf32>
  return %v : f32
}

// -----

// Globals: every get_global of a global a kernel uses reads its device
// copy, made by the runtime on first use; a global only the host reads
// stays where it is.
// CHECK-LABEL: func.func @update
// CHECK:       %[[G:.*]] = memref.get_global @w : memref<8x16xf32>
// CHECK:       %[[D:.*]] = builtin.unrealized_conversion_cast %[[G]] : memref<8x16xf32> to !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK:       %[[P:.*]] = llvm.extractvalue %[[D]][1]
// CHECK:       %[[COPY:.*]] = call @hrt_cuda_mirror(%[[P]], %c512_i64)
// CHECK:       %[[D0:.*]] = llvm.insertvalue %[[COPY]], %[[D]][0]
// CHECK:       %[[D1:.*]] = llvm.insertvalue %[[COPY]], %[[D0]][1]
// CHECK:       %[[W:.*]] = builtin.unrealized_conversion_cast %[[D1]] : {{.*}} to memref<8x16xf32>
// CHECK:       linalg.fill ins(%arg0 : f32) outs(%[[W]] : memref<8x16xf32>)
// The globals are looked up at the function's start (and @w's device copy
// right after it), before the work.
// CHECK-LABEL: func.func @peek
// CHECK:       memref.get_global @w
// CHECK:       call @hrt_cuda_mirror
// CHECK:       %[[STEP:.*]] = memref.get_global @step : memref<i64>
// CHECK:       call @hrt_cuda_copy
// CHECK:       memref.load %[[STEP]][] : memref<i64>
memref.global "private" @w : memref<8x16xf32> = dense<1.0>
memref.global "private" @step : memref<i64> = dense<0>
func.func @update(%x: f32) {
  %w = memref.get_global @w : memref<8x16xf32>
  linalg.fill ins(%x : f32) outs(%w : memref<8x16xf32>)
  return
}
func.func @peek() -> (f32, i64) {
  %c0 = arith.constant 0 : index
  %w = memref.get_global @w : memref<8x16xf32>
  %v = memref.load %w[%c0, %c0] : memref<8x16xf32>
  %step = memref.get_global @step : memref<i64>
  %s = memref.load %step[] : memref<i64>
  return %v, %s : f32, i64
}

// -----

// Runtime calls get pinned host copies of device data: a send's copy goes
// in only, a receive's comes back only, and an all-reduce's comes back
// after the wait of its request. With device-collectives (NCCL) these take
// the device addresses; the corpus still writes through host memory.
// CHECK-LABEL: func.func @stage
// CHECK:       %[[IN:.*]] = call @hrt_cuda_stage_in(%[[A:.*]], %c64_i64{{[_0-9]*}}, %c1_i32)
// CHECK:       call @hrt_mlir_send(%arg0, %{{.*}}, %c16_i64, %c0_i32, %c1_i64, %c0_i64)
// CHECK:       call @hrt_cuda_stage_out(%[[IN]], %[[A]], %c64_i64{{[_0-9]*}}, %c0_i32{{.*}})
// CHECK:       %[[OUT:.*]] = call @hrt_cuda_stage_in(%[[B:.*]], %c64_i64{{[_0-9]*}}, %c0_i32{{.*}})
// CHECK:       call @hrt_mlir_recv
// CHECK:       call @hrt_cuda_stage_out(%[[OUT]], %[[B]], %c64_i64{{[_0-9]*}}, %c1_i32{{.*}})
// CHECK:       %[[BOTH:.*]] = call @hrt_cuda_stage_in(%[[C:.*]], %c64_i64{{[_0-9]*}}, %c1_i32{{.*}})
// CHECK:       %[[REQ:.*]] = call @hrt_mlir_all_reduce_start
// CHECK-NEXT:  call @hrt_mlir_task_mark
// CHECK-NEXT:  call @hrt_mlir_wait(%[[REQ]])
// CHECK-NEXT:  arith.constant 1 : i32
// CHECK-NEXT:  call @hrt_cuda_stage_out(%[[BOTH]], %[[C]], %c64_i64{{[_0-9]*}}, %c1_i32{{.*}})
// CHECK:       call @hrt_cuda_stage_in
// CHECK:       call @hrt_mlir_corpus_batch
// CHECK:       call @hrt_cuda_stage_out
// NCCL-LABEL:  func.func @stage
// NCCL-NOT:    hrt_cuda_stage_in
// NCCL:        call @hrt_mlir_all_reduce_start
// NCCL:        call @hrt_cuda_stage_in
// NCCL-NEXT:   llvm.ptrtoint
// NCCL:        call @hrt_mlir_corpus_batch
func.func private @hrt_mlir_send(!llvm.ptr, !llvm.ptr, i64, i32, i64, i64)
func.func private @hrt_mlir_recv(!llvm.ptr, !llvm.ptr, i64, i32, i64, i64)
func.func private @hrt_mlir_all_reduce_start(!llvm.ptr, !llvm.ptr, i64, i32, i32) -> !llvm.ptr
func.func private @hrt_mlir_wait(!llvm.ptr)
func.func private @hrt_mlir_task_mark(i32, i64)
func.func private @hrt_mlir_corpus_batch(!llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64)
func.func @stage(%comm: !llvm.ptr, %x: f32) {
  %c0_i32 = arith.constant 0 : i32
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %c16_i64 = arith.constant 16 : i64
  %a = memref.alloc() : memref<16xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<16xf32>)
  %ai = memref.extract_aligned_pointer_as_index %a : memref<16xf32> -> index
  %ai64 = arith.index_cast %ai : index to i64
  %ap = llvm.inttoptr %ai64 : i64 to !llvm.ptr
  func.call @hrt_mlir_send(%comm, %ap, %c16_i64, %c0_i32, %c1_i64, %c0_i64) : (!llvm.ptr, !llvm.ptr, i64, i32, i64, i64) -> ()
  %b = memref.alloc() : memref<16xf32>
  %bi = memref.extract_aligned_pointer_as_index %b : memref<16xf32> -> index
  %bi64 = arith.index_cast %bi : index to i64
  %bp = llvm.inttoptr %bi64 : i64 to !llvm.ptr
  func.call @hrt_mlir_recv(%comm, %bp, %c16_i64, %c0_i32, %c1_i64, %c0_i64) : (!llvm.ptr, !llvm.ptr, i64, i32, i64, i64) -> ()
  linalg.fill ins(%x : f32) outs(%b : memref<16xf32>)
  %r = func.call @hrt_mlir_all_reduce_start(%comm, %ap, %c16_i64, %c0_i32, %c0_i32) : (!llvm.ptr, !llvm.ptr, i64, i32, i32) -> !llvm.ptr
  func.call @hrt_mlir_task_mark(%c0_i32, %c0_i64) : (i32, i64) -> ()
  func.call @hrt_mlir_wait(%r) : (!llvm.ptr) -> ()
  %tokens = memref.alloc() : memref<4x4xi32>
  %ti = memref.extract_aligned_pointer_as_index %tokens : memref<4x4xi32> -> index
  %ti64 = arith.index_cast %ti : index to i64
  %tp = llvm.inttoptr %ti64 : i64 to !llvm.ptr
  func.call @hrt_mlir_corpus_batch(%tp, %tp, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64) : (!llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64) -> ()
  %sum = memref.alloc() : memref<i32>
  linalg.reduce ins(%tokens : memref<4x4xi32>) outs(%sum : memref<i32>) dimensions = [0, 1]
    (%in: i32, %acc: i32) {
      %s = arith.addi %in, %acc : i32
      linalg.yield %s : i32
    }
  return
}

// -----

// A scalar the host fills and all-reduces stays host memory for the MPI
// backend; NCCL moves device memory only, so with device-collectives it is
// device memory, and the host's store and load go through copies.
// CHECK-LABEL: func.func @host_scalar
// CHECK-NOT:   gpu.alloc
// CHECK-NOT:   hrt_cuda
// CHECK:       return
// NCCL-LABEL:  func.func @host_scalar
// NCCL:        gpu.alloc async {{.*}} : memref<f32>
// NCCL:        call @hrt_cuda_copy
// NCCL:        %[[R:.*]] = call @hrt_mlir_all_reduce_start
// NCCL-NEXT:   call @hrt_mlir_wait(%[[R]])
// NCCL:        call @hrt_cuda_copy
// NCCL:        memref.load
func.func private @hrt_mlir_all_reduce_start(!llvm.ptr, !llvm.ptr, i64, i32, i32) -> !llvm.ptr
func.func private @hrt_mlir_wait(!llvm.ptr)
func.func @host_scalar(%comm: !llvm.ptr, %x: f32) -> f32 {
  %c0_i32 = arith.constant 0 : i32
  %c1_i64 = arith.constant 1 : i64
  %a = memref.alloc() : memref<f32>
  memref.store %x, %a[] : memref<f32>
  %ai = memref.extract_aligned_pointer_as_index %a : memref<f32> -> index
  %ai64 = arith.index_cast %ai : index to i64
  %ap = llvm.inttoptr %ai64 : i64 to !llvm.ptr
  %r = func.call @hrt_mlir_all_reduce_start(%comm, %ap, %c1_i64, %c0_i32, %c0_i32) : (!llvm.ptr, !llvm.ptr, i64, i32, i32) -> !llvm.ptr
  func.call @hrt_mlir_wait(%r) : (!llvm.ptr) -> ()
  %v = memref.load %a[] : memref<f32>
  memref.dealloc %a : memref<f32>
  return %v : f32
}

// -----

// A copy between a device buffer and a strided host view is not one
// transfer: both sides become device memory and the copy a kernel.
// CHECK-LABEL: func.func @strided_copy
// CHECK:       %[[S:.*]], %{{.*}} = gpu.alloc async {{.*}} : memref<8x8xf32>
// CHECK:       %[[V:.*]] = memref.subview %[[S]]
// CHECK:       linalg.copy ins(%{{.*}} : memref<4x4xf32>) outs(%[[V]] : memref<4x4xf32, strided<[8, 1]>>)
func.func @strided_copy(%x: f32) {
  %t = memref.alloc() : memref<4x4xf32>
  linalg.fill ins(%x : f32) outs(%t : memref<4x4xf32>)
  %s = memref.alloc() : memref<8x8xf32>
  %v = memref.subview %s[0, 0] [4, 4] [1, 1] : memref<8x8xf32> to memref<4x4xf32, strided<[8, 1]>>
  memref.copy %t, %v : memref<4x4xf32> to memref<4x4xf32, strided<[8, 1]>>
  return
}

// -----

func.func @strided(%n: index, %x: f32) {
  // expected-error @+1 {{hetero-gpu-device-buffers: an allocation with a layout is not supported; expected the identity layout that bufferization gives temporaries}}
  %t = memref.alloc(%n) : memref<?xf32, strided<[2]>>
  linalg.fill ins(%x : f32) outs(%t : memref<?xf32, strided<[2]>>)
  return
}

// -----

func.func @stack(%x: f32) {
  // expected-error @+1 {{hetero-gpu-device-buffers: a stack allocation that a kernel uses cannot be device memory; expected memref.alloc}}
  %t = memref.alloca() : memref<16xf32>
  linalg.fill ins(%x : f32) outs(%t : memref<16xf32>)
  return
}

// -----

func.func private @hrt_mlir_compressed_all_reduce_start(!llvm.ptr, !llvm.ptr, i64, i32, i32, i32, f64, i64, i32, i32, i64, i32, i64) -> !llvm.ptr
func.func private @keep(!llvm.ptr)
func.func @unwaited(%comm: !llvm.ptr, %x: f32) {
  %c0_i32 = arith.constant 0 : i32
  %c0_i64 = arith.constant 0 : i64
  %c16_i64 = arith.constant 16 : i64
  %ratio = arith.constant 0.01 : f64
  %a = memref.alloc() : memref<16xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<16xf32>)
  %ai = memref.extract_aligned_pointer_as_index %a : memref<16xf32> -> index
  %ai64 = arith.index_cast %ai : index to i64
  %ap = llvm.inttoptr %ai64 : i64 to !llvm.ptr
  // expected-error @+1 {{hetero-gpu-device-buffers: the request of @hrt_mlir_compressed_all_reduce_start on device data is not waited for in this function by @hrt_mlir_wait; expected its wait beside it}}
  %r = func.call @hrt_mlir_compressed_all_reduce_start(%comm, %ap, %c16_i64, %c0_i32, %c0_i32, %c0_i32, %ratio, %c0_i64, %c0_i32, %c0_i32, %c0_i64, %c0_i32, %c0_i64) : (!llvm.ptr, !llvm.ptr, i64, i32, i32, i32, f64, i64, i32, i32, i64, i32, i64) -> !llvm.ptr
  func.call @keep(%r) : (!llvm.ptr) -> ()
  return
}

// -----

// A compressed all-reduce placed on the GPU (placement, the operand before
// the site, is 1) takes the device buffer as it is, on either backend: the
// device kernels compress where the gradient is. Placed on the CPU (0), it
// works on a pinned host copy, as every other runtime call but the
// collectives on NCCL.
// CHECK-LABEL: func.func @compressed_placement
// CHECK:         %[[BUFFER:.*]], %{{.*}} = gpu.alloc async
// CHECK:         %[[INDEX:.*]] = memref.extract_aligned_pointer_as_index %[[BUFFER]]
// CHECK:         %[[INT:.*]] = arith.index_cast %[[INDEX]]
// CHECK:         %[[DEVICE:.*]] = llvm.inttoptr %[[INT]]
// CHECK-NOT:     hrt_cuda_stage_in
// CHECK:         call @hrt_mlir_compressed_all_reduce(%{{.*}}, %[[DEVICE]],
// CHECK:         %[[HOST:.*]] = call @hrt_cuda_stage_in(
// CHECK:         %[[HOSTINT:.*]] = llvm.ptrtoint %[[HOST]]
// CHECK:         %[[HOSTINDEX:.*]] = arith.index_cast %[[HOSTINT]]
// CHECK:         %[[HOSTINT2:.*]] = arith.index_cast %[[HOSTINDEX]]
// CHECK:         %[[HOSTPTR:.*]] = llvm.inttoptr %[[HOSTINT2]]
// CHECK:         call @hrt_mlir_compressed_all_reduce(%{{.*}}, %[[HOSTPTR]],
// CHECK:         call @hrt_cuda_stage_out(%[[HOST]]
// NCCL-LABEL:  func.func @compressed_placement
// NCCL-NOT:      hrt_cuda_stage_in
// NCCL:          call @hrt_mlir_compressed_all_reduce(
// NCCL:          call @hrt_cuda_stage_in(
// NCCL:          call @hrt_mlir_compressed_all_reduce(
func.func private @hrt_mlir_compressed_all_reduce(!llvm.ptr, !llvm.ptr, i64, i32, i32, i32, f64, i64, i32, i32, i64, i32, i64)
func.func @compressed_placement(%comm: !llvm.ptr, %x: f32) {
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %c3_i32 = arith.constant 3 : i32
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %c16_i64 = arith.constant 16 : i64
  %ratio = arith.constant 0.25 : f64
  %a = memref.alloc() : memref<16xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<16xf32>)
  %ai = memref.extract_aligned_pointer_as_index %a : memref<16xf32> -> index
  %ai64 = arith.index_cast %ai : index to i64
  %ap = llvm.inttoptr %ai64 : i64 to !llvm.ptr
  func.call @hrt_mlir_compressed_all_reduce(%comm, %ap, %c16_i64, %c0_i32, %c0_i32, %c3_i32, %ratio, %c0_i64, %c1_i32, %c0_i32, %c0_i64, %c1_i32, %c0_i64) : (!llvm.ptr, !llvm.ptr, i64, i32, i32, i32, f64, i64, i32, i32, i64, i32, i64) -> ()
  func.call @hrt_mlir_compressed_all_reduce(%comm, %ap, %c16_i64, %c0_i32, %c0_i32, %c3_i32, %ratio, %c0_i64, %c1_i32, %c0_i32, %c0_i64, %c0_i32, %c1_i64) : (!llvm.ptr, !llvm.ptr, i64, i32, i32, i32, f64, i64, i32, i32, i64, i32, i64) -> ()
  memref.dealloc %a : memref<16xf32>
  return
}

// -----

// A checkpoint names its globals' host buffers, the same address at the
// opening and at every chunk, with no staging: the runtime refreshes them
// from the device copies as the checkpoint opens, and writes a restored
// checkpoint back (hrt_cuda_mirror_copy). A kernel still reads the device
// copy.
// CHECK-LABEL: func.func @checkpointed
// CHECK:       %[[G:.*]] = memref.get_global @state : memref<8x16xf32>
// CHECK:       call @hrt_cuda_mirror
// CHECK-NOT:   hrt_cuda_stage_in
// CHECK:       %[[A:.*]] = memref.extract_aligned_pointer_as_index %[[G]] : memref<8x16xf32> -> index
// CHECK:       %[[A64:.*]] = arith.index_cast %[[A]] : index to i64
// CHECK:       %[[P:.*]] = llvm.inttoptr %[[A64]] : i64 to !llvm.ptr
// CHECK:       call @hrt_mlir_ckpt_tensor(%[[P]], %c512_i64{{(_[0-9]+)?}})
// CHECK:       %[[B:.*]] = memref.extract_aligned_pointer_as_index %[[G]] : memref<8x16xf32> -> index
// CHECK:       %[[B64:.*]] = arith.index_cast %[[B]] : index to i64
// CHECK:       %[[Q:.*]] = llvm.inttoptr %[[B64]] : i64 to !llvm.ptr
// CHECK:       call @hrt_mlir_ckpt_chunk(%[[Q]], %c0_i64, %c512_i64{{(_[0-9]+)?}}, %c0_i64)
// CHECK-NOT:   hrt_cuda_stage
// CHECK:       linalg.fill ins(%arg0 : f32) outs(%{{.*}} : memref<8x16xf32>)
memref.global "private" @state : memref<8x16xf32> = dense<1.0>
func.func private @hrt_mlir_ckpt_tensor(!llvm.ptr, i64)
func.func private @hrt_mlir_ckpt_chunk(!llvm.ptr, i64, i64, i64)
func.func @checkpointed(%x: f32) {
  %c0_i64 = arith.constant 0 : i64
  %c512_i64 = arith.constant 512 : i64
  %w = memref.get_global @state : memref<8x16xf32>
  %a = memref.extract_aligned_pointer_as_index %w : memref<8x16xf32> -> index
  %a64 = arith.index_cast %a : index to i64
  %p = llvm.inttoptr %a64 : i64 to !llvm.ptr
  func.call @hrt_mlir_ckpt_tensor(%p, %c512_i64) : (!llvm.ptr, i64) -> ()
  %b = memref.extract_aligned_pointer_as_index %w : memref<8x16xf32> -> index
  %b64 = arith.index_cast %b : index to i64
  %q = llvm.inttoptr %b64 : i64 to !llvm.ptr
  func.call @hrt_mlir_ckpt_chunk(%q, %c0_i64, %c512_i64, %c0_i64) : (!llvm.ptr, i64, i64, i64) -> ()
  linalg.fill ins(%x : f32) outs(%w : memref<8x16xf32>)
  return
}

// -----

func.func @checkpoint_not_global(%x: f32) {
  %c512_i64 = arith.constant 512 : i64
  %a = memref.alloc() : memref<8x16xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<8x16xf32>)
  %i = memref.extract_aligned_pointer_as_index %a : memref<8x16xf32> -> index
  %i64 = arith.index_cast %i : index to i64
  %p = llvm.inttoptr %i64 : i64 to !llvm.ptr
  // expected-error @+1 {{hetero-gpu-device-buffers: @hrt_mlir_ckpt_tensor checkpoints a buffer that is not a memref.global's; expected the training state in globals}}
  func.call @hrt_mlir_ckpt_tensor(%p, %c512_i64) : (!llvm.ptr, i64) -> ()
  return
}
func.func private @hrt_mlir_ckpt_tensor(!llvm.ptr, i64)

// -----

func.func private @external(memref<16xf32>)
func.func @memref_operand(%x: f32) {
  %a = memref.alloc() : memref<16xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<16xf32>)
  // expected-error @+1 {{hetero-gpu-device-buffers: @external takes device buffer operand #0 as a memref; expected a runtime function that takes addresses}}
  func.call @external(%a) : (memref<16xf32>) -> ()
  return
}

// -----

// expected-error @+1 {{hetero-gpu-device-buffers: @hrt_cuda_copy is declared as '(i32) -> ()', expected '(!llvm.ptr, !llvm.ptr, i64) -> ()'}}
func.func private @hrt_cuda_copy(i32)

// -----

// Kernels already in a gpu.module are the device's own: their globals and
// loads are left alone.
// CHECK-LABEL: gpu.module @kernels
// CHECK:       memref.global "private" @table
// CHECK:       %[[T:.*]] = memref.get_global @table : memref<16xf32>
// CHECK-NEXT:  memref.load %[[T]]
// CHECK-NOT:   hrt_cuda
// CHECK:       scf.parallel
// CHECK-NEXT:  memref.load %[[T]]
// CHECK-NOT:   hrt_cuda
// CHECK:       gpu.return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    memref.global "private" @table : memref<16xf32> = dense<1.0>
    gpu.func @lookup(%out: memref<16xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      %i = gpu.thread_id x
      %t = memref.get_global @table : memref<16xf32>
      %v = memref.load %t[%i] : memref<16xf32>
      memref.store %v, %out[%i] : memref<16xf32>
      scf.parallel (%j) = (%c0) to (%c16) step (%c1) {
        %w = memref.load %t[%j] : memref<16xf32>
        memref.store %w, %out[%j] : memref<16xf32>
        scf.reduce
      }
      gpu.return
    }
  }
}

// -----

// A gpu.launch body is device code: its loads make the buffer device
// memory and are not staged.
// CHECK-LABEL: func.func @launch
// CHECK:       %[[B:.*]], %{{.*}} = gpu.alloc async {{.*}} : memref<16xf32>
// CHECK:       gpu.launch
// CHECK:       memref.load %[[B]]
// CHECK-NOT:   hrt_cuda_copy
// CHECK:       gpu.terminator
func.func @launch(%out: memref<16xf32>) {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %b = memref.alloc() : memref<16xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1) {
    %v = memref.load %b[%tx] : memref<16xf32>
    memref.store %v, %out[%tx] : memref<16xf32>
    gpu.terminator
  }
  memref.dealloc %b : memref<16xf32>
  return
}

// -----

memref.global "private" @weights : memref<16xf32> = dense<1.0>
func.func @update(%x: f32) {
  %w = memref.get_global @weights : memref<16xf32>
  linalg.fill ins(%x : f32) outs(%w : memref<16xf32>)
  return
}
llvm.func @peek() -> f32 {
  %c0 = arith.constant 0 : index
  %w = memref.get_global @weights : memref<16xf32>
  // expected-error @+1 {{hetero-gpu-device-buffers: a host access of device memory outside a func.func; expected host code in functions}}
  %v = memref.load %w[%c0] : memref<16xf32>
  llvm.return %v : f32
}
