// hetero-gpu-row-kernels: consecutive linalg ops on buffers over the same
// rows become one gpu.launch of a block per row, the ops one after the
// other in it, separated by barriers; reductions of a whole row are
// reduced by the block (gpu.all_reduce), fills of their outputs folded.
// An op that reads what the chain writes in another row, or an op with
// memory effects between two, ends the chain; chains of one op stay.
// RUN: hetero-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(hetero-gpu-row-kernels))' | FileCheck %s
// RUN: hetero-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(hetero-gpu-row-kernels{threads-per-block=32}))' | FileCheck %s --check-prefix=SMALL
// RUN: not hetero-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(hetero-gpu-row-kernels{threads-per-block=48}))' 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: error: hetero-gpu-row-kernels: threads-per-block must be a power of two from 32 to 1024; got 48

// A layer norm: the mean and the variance (row sums from the fills'
// zeros), then the normalised row, in one kernel of 128 blocks of 64
// threads. Each thread strides over the row's 64 elements.
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME:  (%[[X:.*]]: memref<128x64xf32>, %[[G:.*]]: memref<64xf32>, %[[Y:.*]]: memref<128x64xf32>)
// CHECK-NOT:   linalg.
// CHECK:       %[[MEAN:.*]] = memref.alloc() : memref<128xf32>
// CHECK:       %[[VAR:.*]], %{{.*}} = gpu.alloc async
// CHECK:       gpu.wait
// CHECK:       gpu.launch blocks(%[[ROW:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c128{{(_[0-9]+)?}}, %{{.*}} = %c1{{(_[0-9]+)?}}, %{{.*}} = %c1{{(_[0-9]+)?}}) threads(%[[T:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c64{{(_[0-9]+)?}}, %{{.*}} = %c1{{(_[0-9]+)?}}, %{{.*}} = %c1{{(_[0-9]+)?}})
// CHECK:         scf.for %[[C:.*]] = %[[T]] to %c64{{.*}} step %c64
// CHECK:           memref.load %[[X]][%[[ROW]], %[[C]]]
// CHECK:         gpu.all_reduce add
// CHECK:         scf.if
// CHECK-NEXT:      arith.addf %{{.*}}, %cst : f32
// CHECK-NEXT:      memref.store %{{.*}}, %[[MEAN]][%[[ROW]]]
// CHECK:         gpu.barrier
// CHECK:         scf.for
// CHECK:           memref.load %[[MEAN]][%[[ROW]]]
// CHECK:         gpu.all_reduce add
// CHECK:         memref.store %{{.*}}, %[[VAR]][%[[ROW]]]
// CHECK:         gpu.barrier
// CHECK:         scf.for %[[C2:.*]] = %[[T]] to %c64{{.*}} step %c64
// CHECK-DAG:       memref.load %[[MEAN]][%[[ROW]]]
// CHECK-DAG:       memref.load %[[VAR]][%[[ROW]]]
// CHECK-DAG:       memref.load %[[G]][%[[C2]]]
// CHECK:           math.rsqrt
// CHECK:           memref.store %{{.*}}, %[[Y]][%[[ROW]], %[[C2]]]
// CHECK-NOT:     gpu.barrier
// CHECK:         gpu.terminator
// CHECK-NOT:   linalg.
// CHECK:       return
// With 32 threads a block, each thread takes two elements of a row.
// SMALL-LABEL: func.func @layer_norm
// SMALL:       gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c32
// SMALL:         scf.for %{{.*}} = %{{.*}} to %c64{{.*}} step %c32
#x = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @layer_norm(%x: memref<128x64xf32>, %g: memref<64xf32>, %y: memref<128x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 64.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %mean = memref.alloc() : memref<128xf32>
  linalg.fill ins(%zero : f32) outs(%mean : memref<128xf32>)
  linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]} ins(%x : memref<128x64xf32>) outs(%mean : memref<128xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %q = arith.divf %a, %n : f32
    %s = arith.addf %q, %acc : f32
    linalg.yield %s : f32
  }
  // A device allocation between two ops of the chain, and the waits for
  // it, stay before the kernel.
  %t0 = gpu.wait async
  %var, %t1 = gpu.alloc async [%t0] () : memref<128xf32>
  gpu.wait [%t1]
  linalg.fill ins(%zero : f32) outs(%var : memref<128xf32>)
  linalg.generic {indexing_maps = [#x, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%x, %mean : memref<128x64xf32>, memref<128xf32>) outs(%var : memref<128xf32>) {
  ^bb0(%a: f32, %m: f32, %acc: f32):
    %d = arith.subf %a, %m : f32
    %sq = arith.mulf %d, %d : f32
    %q = arith.divf %sq, %n : f32
    %s = arith.addf %q, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#x, #row, #row, #col, #x], iterator_types = ["parallel", "parallel"]} ins(%x, %mean, %var, %g : memref<128x64xf32>, memref<128xf32>, memref<128xf32>, memref<64xf32>) outs(%y : memref<128x64xf32>) {
  ^bb0(%a: f32, %m: f32, %v: f32, %gg: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %ve = arith.addf %v, %eps : f32
    %r = math.rsqrt %ve : f32
    %t = arith.mulf %d, %r : f32
    %u = arith.mulf %t, %gg : f32
    linalg.yield %u : f32
  }
  memref.dealloc %mean : memref<128xf32>
  gpu.dealloc %var : memref<128xf32>
  return
}

// -----

// A softmax over the last of three dimensions: 4 x 8 rows (the block's
// index split into both), 16 elements each, a warp a block. The
// exponentials are written to a buffer of the chain and read back in the
// same row.
// CHECK-LABEL: func.func @softmax
// CHECK-NOT:   linalg.
// CHECK:       gpu.launch blocks(%[[B:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c32{{(_[0-9]+)?}}, {{.*}} threads(%{{.*}}) in (%{{.*}} = %c32
// CHECK-DAG:     %[[J:.*]] = arith.remui %[[B]], %c8
// CHECK-DAG:     %[[I:.*]] = arith.divui %[[B]], %c8
// CHECK:         gpu.all_reduce maximumf
// CHECK:         gpu.barrier
// CHECK:         math.exp
// CHECK:         memref.store %{{.*}}, %[[E:.*]][%[[I]], %[[J]], %{{.*}}] : memref<4x8x16xf32>
// CHECK:         gpu.barrier
// CHECK:         memref.load %[[E]][%[[I]], %[[J]], %{{.*}}]
// CHECK:         gpu.all_reduce add
// CHECK:         gpu.barrier
// CHECK:         arith.divf
// CHECK:         gpu.terminator
// CHECK-NOT:   linalg.
// CHECK:       return
#x3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#r3 = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @softmax(%x: memref<4x8x16xf32>, %y: memref<4x8x16xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %max = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%ninf : f32) outs(%max : memref<4x8xf32>)
  linalg.generic {indexing_maps = [#x3, #r3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : memref<4x8x16xf32>) outs(%max : memref<4x8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.maximumf %a, %acc : f32
    linalg.yield %m : f32
  }
  %e = memref.alloc() : memref<4x8x16xf32>
  linalg.generic {indexing_maps = [#x3, #r3, #x3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %max : memref<4x8x16xf32>, memref<4x8xf32>) outs(%e : memref<4x8x16xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %ex = math.exp %d : f32
    linalg.yield %ex : f32
  }
  %sum = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<4x8xf32>)
  linalg.generic {indexing_maps = [#x3, #r3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%e : memref<4x8x16xf32>) outs(%sum : memref<4x8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#x3, #r3, #x3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%e, %sum : memref<4x8x16xf32>, memref<4x8xf32>) outs(%y : memref<4x8x16xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %q = arith.divf %a, %s : f32
    linalg.yield %q : f32
  }
  return
}


// -----

// %t is written by the chain and read transposed by the third op: that op
// would read other rows than its block writes, so it ends the chain (and
// is left alone). The row sum after the opaque call cannot join the
// scaling before it.
// CHECK-LABEL: func.func @broken
// CHECK:       gpu.launch
// CHECK:         arith.mulf
// CHECK:         gpu.barrier
// CHECK:         gpu.all_reduce add
// CHECK:         gpu.terminator
// CHECK:       linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : memref<32x32xf32>, memref<32xf32>)
// CHECK:       call @opaque
// CHECK:       linalg.fill
// CHECK:       linalg.generic
// CHECK-NOT:   gpu.launch
// CHECK:       return
#x = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @broken(%x: memref<32x32xf32>, %t: memref<32x32xf32>, %out: memref<32x32xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel"]} ins(%x : memref<32x32xf32>) outs(%t : memref<32x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  }
  %rs = memref.alloc() : memref<32xf32>
  linalg.fill ins(%zero : f32) outs(%rs : memref<32xf32>)
  linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]} ins(%t : memref<32x32xf32>) outs(%rs : memref<32xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#t, #row, #x], iterator_types = ["parallel", "parallel"]} ins(%t, %rs : memref<32x32xf32>, memref<32xf32>) outs(%out : memref<32x32xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %q = arith.mulf %a, %s : f32
    linalg.yield %q : f32
  }
  func.call @opaque(%rs) : (memref<32xf32>) -> ()
  %rs2 = memref.alloc() : memref<32xf32>
  linalg.fill ins(%zero : f32) outs(%rs2 : memref<32xf32>)
  linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]} ins(%out : memref<32x32xf32>) outs(%rs2 : memref<32xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}
func.func private @opaque(memref<32xf32>)
