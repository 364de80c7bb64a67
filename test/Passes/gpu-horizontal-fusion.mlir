// hetero-gpu-horizontal-fusion: consecutive element-wise ops on buffers
// that do not touch what another writes become one gpu.launch, each op on
// blocks of its own (ceil(iterations / 256) of them), one after the other.
// An op that reads what an earlier op of the run writes starts a new run;
// an op with memory effects between two ends it; runs of one op stay.
// RUN: hetero-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(hetero-gpu-horizontal-fusion))' | FileCheck %s
// RUN: not hetero-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(hetero-gpu-horizontal-fusion{threads-per-block=100}))' 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: error: hetero-gpu-horizontal-fusion: threads-per-block must be a power of two from 32 to 1024; got 100

// Three gradient sums (2560, 32 and 1 elements: 10, 1 and 1 blocks) and a
// device allocation between them: one kernel of 12 blocks.
// CHECK-LABEL: func.func @sums
// CHECK-SAME:  (%[[S0:.*]]: memref<80x32xf32>, %[[G0:.*]]: memref<80x32xf32>, %[[S1:.*]]: memref<32xf32>, %[[G1:.*]]: memref<32xf32>, %[[LOSS:.*]]: memref<f32>)
// CHECK-NOT:   linalg.
// CHECK:       gpu.alloc
// CHECK:       gpu.launch blocks(%[[B:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c12{{(_[0-9]+)?}}, {{.*}} threads(%[[T:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256
// The first op: blocks 0 to 9, 2560 iterations, (i / 32, i mod 32).
// CHECK:         %[[IN0:.*]] = arith.andi
// CHECK:         scf.if %[[IN0]]
// CHECK:           %[[I:.*]] = arith.addi %{{.*}}, %[[T]] : index
// CHECK:           arith.cmpi ult, %[[I]], %c2560
// CHECK:             %[[COL:.*]] = arith.remui %[[I]], %c32
// CHECK:             %[[ROW:.*]] = arith.divui %[[I]], %c32
// CHECK:             memref.load %[[S0]][%[[ROW]], %[[COL]]]
// CHECK:             memref.load %[[G0]][%[[ROW]], %[[COL]]]
// CHECK:             arith.addf
// CHECK:             memref.store %{{.*}}, %[[S0]][%[[ROW]], %[[COL]]]
// The second: block 10.
// CHECK:         arith.cmpi uge, %[[B]], %c10{{(_[0-9]+)?}}
// CHECK:         arith.cmpi ult, %[[B]], %c11{{(_[0-9]+)?}}
// CHECK:             memref.store %{{.*}}, %[[S1]][
// The 0-d fill: block 11.
// CHECK:         arith.cmpi uge, %[[B]], %c11{{(_[0-9]+)?}}
// CHECK:             memref.store %{{.*}}, %[[LOSS]][]
// CHECK:         gpu.terminator
// CHECK-NOT:   linalg.
// CHECK:       return
func.func @sums(%s0: memref<80x32xf32>, %g0: memref<80x32xf32>, %s1: memref<32xf32>, %g1: memref<32xf32>, %loss: memref<f32>) {
  %zero = arith.constant 0.0 : f32
  linalg.add ins(%s0, %g0 : memref<80x32xf32>, memref<80x32xf32>) outs(%s0 : memref<80x32xf32>)
  %t0 = gpu.wait async
  %tmp, %t1 = gpu.alloc async [%t0] () : memref<4xf32>
  gpu.wait [%t1]
  linalg.add ins(%s1, %g1 : memref<32xf32>, memref<32xf32>) outs(%s1 : memref<32xf32>)
  linalg.fill ins(%zero : f32) outs(%loss : memref<f32>)
  return
}

// -----

// Each op touches what the one before writes (%a, then %c), so each
// starts a run of its own; a call ends the last. All are left alone.
// CHECK-LABEL: func.func @dependent
// CHECK-NOT:   gpu.launch
// CHECK:       linalg.add
// CHECK:       linalg.add
// CHECK:       linalg.fill
// CHECK:       call @opaque
// CHECK:       linalg.fill
// CHECK-NOT:   gpu.launch
// CHECK:       return
func.func @dependent(%a: memref<32xf32>, %b: memref<32xf32>, %c: memref<32xf32>, %d: memref<8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.add ins(%a, %b : memref<32xf32>, memref<32xf32>) outs(%a : memref<32xf32>)
  linalg.add ins(%a, %b : memref<32xf32>, memref<32xf32>) outs(%c : memref<32xf32>)
  linalg.fill ins(%zero : f32) outs(%c : memref<32xf32>)
  func.call @opaque() : () -> ()
  linalg.fill ins(%zero : f32) outs(%b : memref<32xf32>)
  return
}
func.func private @opaque()
