// hetero-gpu-map-loops tiles each outermost parallel loop into blocks of
// threads and maps the innermost dimension to x. Upstream's mapping would
// launch one thread per block with the first dimension on x.
// RUN: hetero-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(hetero-gpu-map-loops))' | FileCheck %s
// RUN: hetero-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(hetero-gpu-map-loops{threads-per-block=64}))' | FileCheck %s --check-prefix=SMALL
// RUN: not hetero-opt %s --pass-pipeline='builtin.module(func.func(hetero-gpu-map-loops{threads-per-block=48}))' 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not hetero-opt %s --pass-pipeline='builtin.module(func.func(hetero-gpu-map-loops{threads-per-block=2048}))' 2>&1 | FileCheck %s --check-prefix=BAD2

// BAD: error: hetero-gpu-map-loops: threads-per-block is 48, expected a power of two from 32 to 1024
// BAD2: error: hetero-gpu-map-loops: threads-per-block is 2048, expected a power of two from 32 to 1024

// A 2-d loop: 32 threads along the rows (x), the rest of 256 along the
// columns (y); blocks step by the tile, and a guard keeps the last partial
// tile inside the bounds.
// CHECK-LABEL: func.func @rows
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[S0:.*]] = arith.muli %{{.*}}, %[[C8]]
// CHECK: %[[S1:.*]] = arith.muli %{{.*}}, %[[C32]]
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = ({{.*}}) to ({{.*}}) step (%[[S0]], %[[S1]])
// CHECK: scf.parallel ({{.*}}) = ({{.*}}) to (%[[S0]], %[[S1]])
// CHECK: arith.cmpi ult, %{{.*}}, %c100
// CHECK: arith.cmpi ult, %{{.*}}, %c300
// CHECK: scf.if
// CHECK: memref.store
// CHECK: mapping = [#gpu.loop_dim_map<processor = thread_y, {{.*}}>, #gpu.loop_dim_map<processor = thread_x, {{.*}}>]
// CHECK: mapping = [#gpu.loop_dim_map<processor = block_y, {{.*}}>, #gpu.loop_dim_map<processor = block_x, {{.*}}>]
// SMALL-LABEL: func.func @rows
// SMALL-DAG: arith.constant 2 : index
// SMALL-DAG: arith.constant 32 : index
func.func @rows(%out: memref<100x300xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c100 = arith.constant 100 : index
  %c300 = arith.constant 300 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c100, %c300) step (%c1, %c1) {
    memref.store %zero, %out[%i, %j] : memref<100x300xf32>
  }
  return
}

// -----

// A 1-d loop takes the whole block along x; a short one no more threads
// than its iterations (rounded up to a power of two).
// CHECK-LABEL: func.func @vectors
// CHECK: arith.constant 256 : index
// CHECK: mapping = [#gpu.loop_dim_map<processor = thread_x, {{.*}}>]
// CHECK: mapping = [#gpu.loop_dim_map<processor = block_x, {{.*}}>]
// CHECK: arith.constant 8 : index
// CHECK: mapping = [#gpu.loop_dim_map<processor = thread_x, {{.*}}>]
func.func @vectors(%a: memref<5000xf32>, %b: memref<5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c5000 = arith.constant 5000 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c5000) step (%c1) {
    memref.store %zero, %a[%i] : memref<5000xf32>
  }
  scf.parallel (%i) = (%c0) to (%c5) step (%c1) {
    memref.store %zero, %b[%i] : memref<5xf32>
  }
  return
}

// -----

// Four dimensions: the innermost three go to x, y and z (16 x 16 x 1
// threads here), the outermost runs sequentially in each thread; a nested
// parallel loop is sequential too. Dynamic bounds keep the default tile.
// CHECK-LABEL: func.func @heads
// CHECK: mapping = [#gpu.loop_dim_map<processor = sequential, {{.*}}>, #gpu.loop_dim_map<processor = sequential, {{.*}}>]
// CHECK: mapping = [#gpu.loop_dim_map<processor = sequential, {{.*}}>, #gpu.loop_dim_map<processor = thread_z, {{.*}}>, #gpu.loop_dim_map<processor = thread_y, {{.*}}>, #gpu.loop_dim_map<processor = thread_x, {{.*}}>]
// CHECK: mapping = [#gpu.loop_dim_map<processor = sequential, {{.*}}>, #gpu.loop_dim_map<processor = block_z, {{.*}}>, #gpu.loop_dim_map<processor = block_y, {{.*}}>, #gpu.loop_dim_map<processor = block_x, {{.*}}>]
// CHECK-LABEL: func.func @dynamic
// CHECK-DAG: arith.constant 8 : index
// CHECK-DAG: arith.constant 32 : index
func.func @heads(%out: memref<4x2x16x16x2x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%b, %h, %i, %j) = (%c0, %c0, %c0, %c0) to (%c4, %c2, %c16, %c16) step (%c1, %c1, %c1, %c1) {
    scf.parallel (%k, %l) = (%c0, %c0) to (%c2, %c2) step (%c1, %c1) {
      memref.store %zero, %out[%b, %h, %i, %j, %k, %l] : memref<4x2x16x16x2x2xf32>
    }
  }
  return
}
func.func @dynamic(%out: memref<?x?xf32>, %m: index, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
    memref.store %zero, %out[%i, %j] : memref<?x?xf32>
  }
  return
}

// -----

// A loop with a reduction is left unmapped (convert-parallel-loops-to-gpu
// keeps it on the host).
// CHECK-LABEL: func.func @sum
// CHECK: scf.parallel
// CHECK-NOT: scf.parallel
// CHECK-NOT: mapping
// CHECK: return
func.func @sum(%in: memref<64xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %s = scf.parallel (%i) = (%c0) to (%c64) step (%c1) init (%zero) -> f32 {
    %v = memref.load %in[%i] : memref<64xf32>
    scf.reduce(%v : f32) {
    ^bb0(%l: f32, %r: f32):
      %t = arith.addf %l, %r : f32
      scf.reduce.return %t : f32
    }
  }
  return %s : f32
}

// -----

// A parallel loop under a sequential one inside the nest (a contraction
// whose reduction loop is not innermost, as linalg's parallel loops give
// C[i, j] += A[i, k] B[k, j] over loops i, k, j) runs as sequential loops
// in each thread: the conversion to kernels takes only parallel loops
// nested directly in parallel loops, and would leave the whole nest on the
// host.
// CHECK-LABEL: func.func @middle_reduction
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK: scf.for
// CHECK-NEXT: scf.for
// CHECK-NOT: scf.parallel
// CHECK: mapping = [#gpu.loop_dim_map<processor = thread_x, {{.*}}>]
// CHECK: mapping = [#gpu.loop_dim_map<processor = block_x, {{.*}}>]
func.func @middle_reduction(%a: memref<16x8xf32>, %b: memref<8x32xf32>, %c: memref<16x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  scf.parallel (%i) = (%c0) to (%c16) step (%c1) {
    scf.for %k = %c0 to %c8 step %c1 {
      scf.parallel (%j) = (%c0) to (%c32) step (%c1) {
        %x = memref.load %a[%i, %k] : memref<16x8xf32>
        %y = memref.load %b[%k, %j] : memref<8x32xf32>
        %z = memref.load %c[%i, %j] : memref<16x32xf32>
        %p = arith.mulf %x, %y : f32
        %s = arith.addf %z, %p : f32
        memref.store %s, %c[%i, %j] : memref<16x32xf32>
      }
    }
  }
  return
}
