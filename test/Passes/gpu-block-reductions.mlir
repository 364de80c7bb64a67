// hetero-gpu-block-reductions: a linalg reduction on buffers with few
// outputs becomes a gpu.launch of one block per output; its threads stride
// over the reduced elements, gpu.all_reduce combines their partials, and
// thread 0 combines the total into the output. A fill of the output just
// before the op is folded into that last combine. With dynamic extents the
// caps that the static ones leave open guard the kernel, the op in the
// guard's else. Products, large or short reductions, other element types,
// combiners gpu.all_reduce lacks and tensors are left alone.
// RUN: hetero-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(hetero-gpu-block-reductions))' | FileCheck %s
// Fewer threads per block cap the block; more outputs than max-outputs
// (the 256 columns of @column_max) leave the op alone.
// RUN: hetero-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(hetero-gpu-block-reductions{threads-per-block=64 max-outputs=200}))' | FileCheck %s --check-prefix=SMALL
// RUN: not hetero-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(hetero-gpu-block-reductions{threads-per-block=48}))' 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: error: hetero-gpu-block-reductions: threads-per-block must be a power of two from 32 to 1024 and max-outputs and min-reduced positive; got threads-per-block = 48, max-outputs = 16384, min-reduced = 32

// The cap of 64 threads: a block of 64 strides over the 256 elements.
// SMALL-LABEL: func.func @row_sum
// SMALL:       gpu.launch blocks({{.*}}) in (%{{.*}} = %c128{{(_[0-9]+)?}}, {{.*}}) threads({{.*}}) in (%{{.*}} = %c64{{(_[0-9]+)?}}, {{.*}})
// SMALL:         scf.for %{{.*}} = %{{.*}} to %c256{{.*}} step %c64{{(_[0-9]+)?}}
// CHECK-LABEL: func.func @row_sum
// CHECK-SAME:  (%[[X:.*]]: memref<128x256xf32>)
// CHECK-DAG:   %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:   %[[SUM:.*]] = memref.alloc() : memref<128xf32>
// CHECK-NOT:   linalg.fill
// CHECK:       gpu.launch blocks(%[[B:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c128{{(_[0-9]+)?}}, %{{.*}} = %c1{{(_[0-9]+)?}}, %{{.*}} = %c1{{(_[0-9]+)?}}) threads(%[[T:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256{{(_[0-9]+)?}}, %{{.*}} = %c1{{(_[0-9]+)?}}, %{{.*}} = %c1{{(_[0-9]+)?}})
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[NEUTRAL:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[PARTIAL:.*]] = scf.for %[[R:.*]] = %[[T]] to %c256{{.*}} step %c256{{.*}} iter_args(%[[ACC:.*]] = %[[NEUTRAL]]) -> (f32)
// CHECK:           %[[V:.*]] = memref.load %[[X]][%[[B]], %[[R]]] : memref<128x256xf32>
// CHECK:           %[[NEXT:.*]] = arith.addf %[[V]], %[[ACC]] : f32
// CHECK:           scf.yield %[[NEXT]] : f32
// CHECK:         %[[TOTAL:.*]] = gpu.all_reduce add %[[PARTIAL]] uniform
// CHECK:         %[[FIRST:.*]] = arith.cmpi eq, %[[T]], %c0{{(_[0-9]+)?}} : index
// CHECK:         scf.if %[[FIRST]]
// CHECK-NEXT:      %[[OUT:.*]] = arith.addf %[[TOTAL]], %[[ZERO]] : f32
// CHECK-NEXT:      memref.store %[[OUT]], %[[SUM]][%[[B]]] : memref<128xf32>
// CHECK:         gpu.terminator
#in = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @row_sum(%x: memref<128x256xf32>) -> memref<128xf32> {
  %zero = arith.constant 0.0 : f32
  %sum = memref.alloc() : memref<128xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<128xf32>)
  // An allocation between the fill and the reduction does not keep the
  // fill.
  %other = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#in, #row], iterator_types = ["parallel", "reduction"]} ins(%x : memref<128x256xf32>) outs(%sum : memref<128xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return %sum : memref<128xf32>
}

// -----

// A reduction to one value (two reduced dimensions, the inner one read by
// linalg.index): one block of one warp, the reduced index split into both.
// CHECK-LABEL: func.func @loss
// CHECK-SAME:  (%[[Y:.*]]: memref<4x4xf32>, %[[T:.*]]: memref<4x4xf32>, %[[LOSS:.*]]: memref<f32>)
// CHECK-NOT:   linalg.fill
// CHECK:       gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{(_[0-9]+)?}}, %{{.*}} = %c1{{(_[0-9]+)?}}) threads(%[[TID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c32{{(_[0-9]+)?}}, %{{.*}} = %c1{{(_[0-9]+)?}}, %{{.*}} = %c1{{(_[0-9]+)?}})
// CHECK:         scf.for %[[R:.*]] = %[[TID]] to %c16{{(_[0-9]+)?}} step %c32{{(_[0-9]+)?}}
// CHECK:           %[[J:.*]] = arith.remui %[[R]], %c4{{(_[0-9]+)?}} : index
// CHECK:           %[[I:.*]] = arith.divui %[[R]], %c4{{(_[0-9]+)?}} : index
// CHECK:           memref.load %[[Y]][%[[I]], %[[J]]]
// CHECK:           memref.load %[[T]][%[[I]], %[[J]]]
// CHECK:           arith.index_cast %[[J]] : index to i32
// CHECK:         gpu.all_reduce add
// CHECK:         scf.if
// CHECK-NEXT:      arith.addf %cst, %{{.*}} : f32
// CHECK-NEXT:      memref.store %{{.*}}, %[[LOSS]][] : memref<f32>
// SMALL-LABEL: func.func @loss
// SMALL:       gpu.launch
#in = affine_map<(d0, d1) -> (d0, d1)>
#all = affine_map<(d0, d1) -> ()>
func.func @loss(%y: memref<4x4xf32>, %t: memref<4x4xf32>, %loss: memref<f32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%loss : memref<f32>)
  linalg.generic {indexing_maps = [#in, #in, #all], iterator_types = ["reduction", "reduction"]} ins(%y, %t : memref<4x4xf32>, memref<4x4xf32>) outs(%loss : memref<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %j = linalg.index 1 : index
    %c = arith.index_cast %j : index to i32
    %f = arith.sitofp %c : i32 to f32
    %d = arith.subf %a, %b : f32
    %e = arith.mulf %d, %f : f32
    %s = arith.addf %acc, %e : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A column maximum (the reduced dimension outer): a block per column, the
// partials start from -inf, and with no fill thread 0 reads the output.
// CHECK-LABEL: func.func @column_max
// CHECK-SAME:  (%[[X:.*]]: memref<128x256xf32>, %[[M:.*]]: memref<256xf32>)
// CHECK:       gpu.launch blocks(%[[B:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256{{(_[0-9]+)?}}, %{{.*}} = %c1{{(_[0-9]+)?}}, %{{.*}} = %c1{{(_[0-9]+)?}}) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c128{{(_[0-9]+)?}}, %{{.*}} = %c1{{(_[0-9]+)?}}, %{{.*}} = %c1{{(_[0-9]+)?}})
// CHECK:         %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         scf.for %[[R:.*]] = %{{.*}} iter_args(%[[ACC:.*]] = %[[NEG]])
// CHECK:           %[[V:.*]] = memref.load %[[X]][%[[R]], %[[B]]]
// CHECK:           arith.maximumf %[[ACC]], %[[V]] : f32
// CHECK:         %[[TOTAL:.*]] = gpu.all_reduce maximumf
// CHECK:         scf.if
// CHECK-NEXT:      %[[OLD:.*]] = memref.load %[[M]][%[[B]]] : memref<256xf32>
// CHECK-NEXT:      %[[NEW:.*]] = arith.maximumf %[[OLD]], %[[TOTAL]] : f32
// CHECK-NEXT:      memref.store %[[NEW]], %[[M]][%[[B]]] : memref<256xf32>
// SMALL-LABEL: func.func @column_max
// SMALL-NOT:   gpu.launch
#in = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @column_max(%x: memref<128x256xf32>, %m: memref<256xf32>) {
  linalg.generic {indexing_maps = [#in, #col], iterator_types = ["reduction", "parallel"]} ins(%x : memref<128x256xf32>) outs(%m : memref<256xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.maximumf %acc, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A named linalg.reduce of integers: 64 reduced elements, 64 threads.
// CHECK-LABEL: func.func @named_reduce
// CHECK:       gpu.launch blocks({{.*}}) in (%{{.*}} = %c8{{(_[0-9]+)?}}, %{{.*}} = %c1{{(_[0-9]+)?}}, %{{.*}} = %c1{{(_[0-9]+)?}}) threads({{.*}}) in (%{{.*}} = %c64{{(_[0-9]+)?}}, %{{.*}} = %c1{{(_[0-9]+)?}}, %{{.*}} = %c1{{(_[0-9]+)?}})
// CHECK:         arith.constant -2147483648 : i32
// CHECK:         arith.maxsi
// CHECK:         gpu.all_reduce maxsi
// CHECK-NOT:   linalg.reduce
// SMALL-LABEL: func.func @named_reduce
// SMALL:       gpu.launch
func.func @named_reduce(%x: memref<8x64xi32>, %m: memref<8xi32>) {
  linalg.reduce ins(%x : memref<8x64xi32>) outs(%m : memref<8xi32>) dimensions = [1]
    (%a: i32, %acc: i32) {
      %s = arith.maxsi %a, %acc : i32
      linalg.yield %s : i32
    }
  return
}

// -----

// A row dot product is a candidate; a matrix product is not.
// CHECK-LABEL: func.func @products
// CHECK:       gpu.launch
// CHECK:         arith.mulf
// CHECK:         gpu.all_reduce add
// CHECK-NOT:   gpu.launch
// CHECK:       linalg.matmul
// SMALL-LABEL: func.func @products
#in = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @products(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %dot: memref<64xf32>, %c: memref<64x64xf32>) {
  linalg.generic {indexing_maps = [#in, #in, #row], iterator_types = ["parallel", "reduction"]} ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%dot : memref<64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.matmul ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

// The fill's buffer is also read (through a view) by the reduction: the
// fill stays, and thread 0 reads the filled value back.
// CHECK-LABEL: func.func @fill_read_by_input
// CHECK:       %[[ROW:.*]] = memref.subview
// CHECK:       linalg.fill ins(%{{.*}} : f32) outs(%[[ROW]] : memref<64xf32, strided<[1]>>)
// CHECK:       gpu.launch
// CHECK:         scf.if
// CHECK-NEXT:      memref.load %[[ROW]]
#in = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @fill_read_by_input(%buffer: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %row = memref.subview %buffer[0, 0] [1, 64] [1, 1] : memref<64x64xf32> to memref<64xf32, strided<[1]>>
  linalg.fill ins(%zero : f32) outs(%row : memref<64xf32, strided<[1]>>)
  linalg.generic {indexing_maps = [#in, #row], iterator_types = ["parallel", "reduction"]} ins(%buffer : memref<64x64xf32>) outs(%row : memref<64xf32, strided<[1]>>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:   gpu.launch
// CHECK:       linalg.generic
// CHECK-NOT:   gpu.launch
// CHECK:       linalg.generic
// CHECK-NOT:   gpu.launch
// CHECK:       linalg.generic
// CHECK-NOT:   gpu.launch
// CHECK:       linalg.generic
// CHECK-NOT:   gpu.launch
// CHECK:       linalg.generic
// CHECK-NOT:   gpu.launch
// CHECK:       linalg.generic
// CHECK-NOT:   gpu.launch
// CHECK:       linalg.generic
// CHECK-NOT:   gpu.launch
// CHECK:       linalg.generic
// CHECK-NOT:   gpu.launch
// CHECK:       return
#in = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @left_alone(%many: memref<32768x64xf32>, %manyOut: memref<32768xf32>,
                      %short: memref<128x8xf32>, %shortOut: memref<128xf32>,
                      %half: memref<128x64xf16>, %halfOut: memref<128xf16>,
                      %t: tensor<128x64xf32>, %tOut: tensor<128xf32>,
                      %mid: memref<128x64xf32>,
                      %cube: memref<4x8x64xf32>, %cubeOut: memref<4xf32>,
                      %square: memref<64x64xf32>, %diagonal: memref<64x64xf32>) -> tensor<128xf32> {
  linalg.generic {indexing_maps = [#in, #row], iterator_types = ["parallel", "reduction"]} ins(%many : memref<32768x64xf32>) outs(%manyOut : memref<32768xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#in, #row], iterator_types = ["parallel", "reduction"]} ins(%short : memref<128x8xf32>) outs(%shortOut : memref<128xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#in, #row], iterator_types = ["parallel", "reduction"]} ins(%half : memref<128x64xf16>) outs(%halfOut : memref<128xf16>) {
  ^bb0(%a: f16, %acc: f16):
    %s = arith.addf %a, %acc : f16
    linalg.yield %s : f16
  }
  // Not a combiner gpu.all_reduce has.
  linalg.generic {indexing_maps = [#in, #row], iterator_types = ["parallel", "reduction"]} ins(%mid : memref<128x64xf32>) outs(%shortOut : memref<128xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.subf %acc, %a : f32
    linalg.yield %s : f32
  }
  // The accumulator read twice.
  linalg.generic {indexing_maps = [#in, #row], iterator_types = ["parallel", "reduction"]} ins(%mid : memref<128x64xf32>) outs(%shortOut : memref<128xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %p = arith.mulf %acc, %a : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  }
  // A parallel loop the output does not index: blocks would race on it.
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%cube : memref<4x8x64xf32>) outs(%cubeOut : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  // The output indexed twice by one loop (its diagonal): a fill of it
  // could not be folded.
  linalg.generic {indexing_maps = [#in, affine_map<(d0, d1) -> (d0, d0)>], iterator_types = ["parallel", "reduction"]} ins(%square : memref<64x64xf32>) outs(%diagonal : memref<64x64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  %r = linalg.generic {indexing_maps = [#in, #row], iterator_types = ["parallel", "reduction"]} ins(%t : tensor<128x64xf32>) outs(%tOut : tensor<128xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<128xf32>
  return %r : tensor<128xf32>
}

// -----

// Dynamic extents. Rows of 64 (static, enough to reduce) but a dynamic
// count of them: the kernel, a block per row of 64 threads, runs while the
// count is 1 to max-outputs, the op otherwise; the fill before it is not
// folded, since the op in the else reads it.
// CHECK-LABEL: func.func @dynamic_rows
// CHECK-SAME:  (%[[X:.*]]: memref<?x64xf32>, %[[OUT:.*]]: memref<?xf32>)
// CHECK:       linalg.fill
// CHECK:       %[[ROWS:.*]] = memref.dim %[[X]], %{{.*}} : memref<?x64xf32>
// CHECK-DAG:   %[[SOME:.*]] = arith.cmpi sge, %[[ROWS]], %c1{{(_[0-9]+)?}} : index
// CHECK-DAG:   %[[FEW:.*]] = arith.cmpi sle, %[[ROWS]], %c16384 : index
// CHECK:       %[[BOTH:.*]] = arith.andi %[[SOME]], %[[FEW]] : i1
// CHECK:       scf.if %[[BOTH]] {
// CHECK:         gpu.launch blocks(%[[B:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[ROWS]], %{{.*}}) threads(%[[T:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c64{{(_[0-9]+)?}}, %{{.*}})
// CHECK:           scf.for %[[R:.*]] = %[[T]] to %c64{{(_[0-9]+)?}} step %c64
// CHECK:             memref.load %[[X]][%[[B]], %[[R]]] : memref<?x64xf32>
// CHECK:           gpu.all_reduce add
// CHECK:           %[[START:.*]] = memref.load %[[OUT]][%[[B]]] : memref<?xf32>
// CHECK:           arith.addf %{{.*}}, %[[START]] : f32
// CHECK:       } else {
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[X]] : memref<?x64xf32>) outs(%[[OUT]] : memref<?xf32>)
// Rows of a dynamic length: a block of the full 256 threads strides over
// each, while a row has at least min-reduced elements. One value reduced
// from a dynamic extent needs no guard: a single block is its only kernel.
// CHECK-LABEL: func.func @dynamic_length
// CHECK-SAME:  (%[[Y:.*]]: memref<128x?xf32>, %[[ROW:.*]]: memref<128xf32>, %[[V:.*]]: memref<?xf32>, %[[TOTAL:.*]]: memref<f32>)
// CHECK:       %[[LENGTH:.*]] = memref.dim %[[Y]], %{{.*}} : memref<128x?xf32>
// CHECK:       %[[LONG:.*]] = arith.cmpi sge, %[[LENGTH]], %c32 : index
// CHECK:       scf.if %[[LONG]] {
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c128{{(_[0-9]+)?}}, %{{.*}}) threads(%[[T2:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256{{(_[0-9]+)?}}, %{{.*}})
// CHECK:           scf.for %{{.*}} = %[[T2]] to %[[LENGTH]] step %c256
// CHECK:       } else {
// CHECK-NEXT:    linalg.generic
// CHECK:       %[[N:.*]] = memref.dim %[[V]], %{{.*}} : memref<?xf32>
// CHECK-NOT:   scf.if
// CHECK:       gpu.launch blocks({{.*}}) in (%{{.*}} = %c1{{(_[0-9]+)?}}, %{{.*}}) threads(%[[T3:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256{{(_[0-9]+)?}}, %{{.*}})
// CHECK:         scf.for %{{.*}} = %[[T3]] to %[[N]] step %c256
// CHECK-NOT:   linalg.generic
// CHECK:       return
// SMALL-LABEL: func.func @dynamic_rows
// SMALL:       arith.cmpi sle, %{{.*}}, %c200 : index
#in = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @dynamic_rows(%x: memref<?x64xf32>, %out: memref<?xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<?xf32>)
  linalg.generic {indexing_maps = [#in, #row], iterator_types = ["parallel", "reduction"]} ins(%x : memref<?x64xf32>) outs(%out : memref<?xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}
func.func @dynamic_length(%y: memref<128x?xf32>, %row: memref<128xf32>, %v: memref<?xf32>, %total: memref<f32>) {
  linalg.generic {indexing_maps = [#in, #row], iterator_types = ["parallel", "reduction"]} ins(%y : memref<128x?xf32>) outs(%row : memref<128xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.maximumf %a, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%v : memref<?xf32>) outs(%total : memref<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}
