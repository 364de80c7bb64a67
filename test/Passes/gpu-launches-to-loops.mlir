// hetero-gpu-launches-to-loops: a gpu.launch becomes loops on the host, a
// loop over the blocks and, within it, the body's segments (cut after each
// all-reduce and at each barrier) as loops over the threads, the last
// thread first. A value a later segment reads is kept per thread; an
// all-reduce folds its operand over the threads in order. Launches it
// cannot run are errors.
// RUN: hetero-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(hetero-gpu-launches-to-loops))' | FileCheck %s

// CHECK-LABEL: func.func @row_sums
// CHECK-SAME:  (%[[X:.*]]: memref<4x8xf32>, %[[Y:.*]]: memref<4xf32>)
// CHECK-NOT:   gpu.
// CHECK:       %[[KEPT:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK:       scf.for
// CHECK:         scf.for
// CHECK:           scf.for %[[B:.*]] =
// The first segment: thread T - 1 - t loads its element and keeps it.
// CHECK:             scf.for
// CHECK:               scf.for
// CHECK:                 scf.for %[[I:.*]] =
// CHECK:                   %[[T:.*]] = arith.subi %{{.*}}, %[[I]] : index
// CHECK:                   %[[V:.*]] = memref.load %[[X]][%[[B]], %[[T]]]
// CHECK:                   memref.store %[[V]], %[[KEPT]][%{{.*}}]
// The all-reduce, over the kept values in order.
// CHECK:             %[[FIRST:.*]] = memref.load %[[KEPT]][%{{.*}}]
// CHECK:             %[[SUM:.*]] = scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[FIRST]]) -> (f32)
// CHECK:               arith.addf %[[ACC]]
// The second segment reads the sum.
// CHECK:             scf.for
// CHECK:               scf.for
// CHECK:                 scf.for
// CHECK:                   scf.if
// CHECK-NEXT:                memref.store %[[SUM]], %[[Y]][%[[B]]]
// CHECK:       memref.dealloc %[[KEPT]]
func.func @row_sums(%x: memref<4x8xf32>, %y: memref<4xf32>) {
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  gpu.launch blocks(%b, %b1, %b2) in (%gx = %c4, %gy = %c1, %gz = %c1) threads(%t, %t1, %t2) in (%tx = %c8, %ty = %c1, %tz = %c1) {
    %v = memref.load %x[%b, %t] : memref<4x8xf32>
    %s = gpu.all_reduce add %v uniform {} : (f32) -> f32
    %c0 = arith.constant 0 : index
    %first = arith.cmpi eq, %t, %c0 : index
    scf.if %first {
      memref.store %s, %y[%b] : memref<4xf32>
    }
    gpu.terminator
  }
  return
}

// -----

func.func @nested_barrier(%y: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %true = arith.constant true
  // expected-error @+1 {{hetero-gpu-launches-to-loops: cannot run this launch on the host: it has a gpu.barrier nested in control flow}}
  gpu.launch blocks(%b, %b1, %b2) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%t, %t1, %t2) in (%tx = %c1, %ty = %c1, %tz = %c1) {
    scf.if %true {
      gpu.barrier
    }
    gpu.terminator
  }
  return
}

// -----

func.func @shuffle(%y: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %i1 = arith.constant 1 : i32
  %w = arith.constant 32 : i32
  %f = arith.constant 1.0 : f32
  // expected-error @+1 {{cannot run this launch on the host: it has a gpu.shuffle}}
  gpu.launch blocks(%b, %b1, %b2) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%t, %t1, %t2) in (%tx = %c1, %ty = %c1, %tz = %c1) {
    %r, %ok = gpu.shuffle xor %f, %i1, %w : f32
    gpu.terminator
  }
  return
}

// -----

func.func @uniform_operand(%v: f32) {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{cannot run this launch on the host: it has a gpu.all_reduce of a value no op of its body computes}}
  gpu.launch blocks(%b, %b1, %b2) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%t, %t1, %t2) in (%tx = %c1, %ty = %c1, %tz = %c1) {
    %s = gpu.all_reduce add %v uniform {} : (f32) -> f32
    gpu.terminator
  }
  return
}

// -----

func.func @asynchronous() {
  %c1 = arith.constant 1 : index
  %token = gpu.wait async
  // expected-error @+1 {{cannot run this launch on the host: it has an asynchronous launch}}
  %done = gpu.launch async [%token] blocks(%b, %b1, %b2) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%t, %t1, %t2) in (%tx = %c1, %ty = %c1, %tz = %c1) {
    gpu.terminator
  }
  return
}

// -----

func.func @workgroup_memory() {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{cannot run this launch on the host: it has shared memory, clusters or attributions}}
  gpu.launch blocks(%b, %b1, %b2) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%t, %t1, %t2) in (%tx = %c1, %ty = %c1, %tz = %c1) workgroup(%w : memref<32xf32, #gpu.address_space<workgroup>>) {
    gpu.terminator
  }
  return
}

// -----

func.func @several_blocks(%flag: i1) {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{cannot run this launch on the host: it has a body of several blocks}}
  gpu.launch blocks(%b, %b1, %b2) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%t, %t1, %t2) in (%tx = %c1, %ty = %c1, %tz = %c1) {
    cf.cond_br %flag, ^bb1, ^bb2
  ^bb1:
    gpu.terminator
  ^bb2:
    gpu.terminator
  }
  return
}
