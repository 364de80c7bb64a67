// hetero-gpu-serial-kernels: a linalg op on buffers with no parallel loop
// (a 0-d fill, a reduction of everything to one value) becomes a generic
// with a leading parallel loop of one iteration over its outputs viewed
// with a leading unit dimension; the body's loop indices move up by one.
// Ops with a parallel loop, and ops on tensors, are left alone.
// RUN: hetero-opt %s --split-input-file --verify-diagnostics --hetero-gpu-serial-kernels | FileCheck %s
// After convert-linalg-to-parallel-loops the reduction's loops sit inside
// an scf.parallel of one iteration, which hetero-gpu-map-loops maps.
// RUN: hetero-opt %s --split-input-file --verify-diagnostics --hetero-gpu-serial-kernels --convert-linalg-to-parallel-loops | FileCheck %s --check-prefix=LOOPS

#map = affine_map<(d0, d1) -> (d0, d1)>
#all = affine_map<(d0, d1) -> ()>

// CHECK-DAG: #[[$SCALAR:.*]] = affine_map<(d0) -> ()>
// CHECK-DAG: #[[$UNIT:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[$IN:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$OUT:.*]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-LABEL: func.func @loss
// CHECK-SAME: (%[[Y:.*]]: memref<4x4xf32>, %[[T:.*]]: memref<4x4xf32>, %[[LOSS:.*]]: memref<f32>)
// CHECK-NOT:  linalg.fill
// CHECK:      %[[V0:.*]] = memref.expand_shape %[[LOSS]] [] output_shape [1] : memref<f32> into memref<1xf32>
// CHECK:      linalg.generic {indexing_maps = [#[[$SCALAR]], #[[$UNIT]]], iterator_types = ["parallel"]} ins(%{{.*}} : f32) outs(%[[V0]] : memref<1xf32>)
// CHECK:      %[[V1:.*]] = memref.expand_shape %[[LOSS]] [] output_shape [1] : memref<f32> into memref<1xf32>
// CHECK:      linalg.generic {indexing_maps = [#[[$IN]], #[[$IN]], #[[$OUT]]], iterator_types = ["parallel", "reduction", "reduction"]} ins(%[[Y]], %[[T]] : memref<4x4xf32>, memref<4x4xf32>) outs(%[[V1]] : memref<1xf32>)
// CHECK:      linalg.index 2 : index
// LOOPS-LABEL: func.func @loss
// LOOPS:       scf.parallel (%{{.*}}) = (%c0) to (%c1) step (%c1)
// LOOPS:         memref.store
// LOOPS:       scf.parallel (%{{.*}}) = (%c0) to (%c1) step (%c1)
// LOOPS-NEXT:    scf.for
// LOOPS-NEXT:      scf.for
func.func @loss(%y: memref<4x4xf32>, %t: memref<4x4xf32>, %loss: memref<f32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%loss : memref<f32>)
  linalg.generic {indexing_maps = [#map, #map, #all], iterator_types = ["reduction", "reduction"]} ins(%y, %t : memref<4x4xf32>, memref<4x4xf32>) outs(%loss : memref<f32>) {
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

// A reduction into one element of a strided output: the view keeps the
// layout. An op with a parallel loop (the fill) stays.
// CHECK-DAG: #[[$COLUMN:.*]] = affine_map<(d0, d1) -> (d1, 3)>
// CHECK-DAG: #[[$ELEMENT:.*]] = affine_map<(d0, d1) -> (d0, 3)>
// CHECK-LABEL: func.func @column
// CHECK:      %[[V:.*]] = memref.expand_shape %arg1 {{\[\[}}0, 1]] output_shape [1, 8] : memref<8xf32, strided<[2]>> into memref<1x8xf32, strided<[16, 2]>>
// CHECK:      linalg.generic {indexing_maps = [#[[$COLUMN]], #[[$ELEMENT]]], iterator_types = ["parallel", "reduction"]} ins(%arg0 : memref<?x8xf32, strided<[16, 1]>>) outs(%[[V]] : memref<1x8xf32, strided<[16, 2]>>)
// CHECK:      linalg.fill ins(%{{.*}} : f32) outs(%arg1 : memref<8xf32, strided<[2]>>)
func.func @column(%x: memref<?x8xf32, strided<[16, 1]>>, %out: memref<8xf32, strided<[2]>>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0, 3)>, affine_map<(d0) -> (3)>], iterator_types = ["reduction"]} ins(%x : memref<?x8xf32, strided<[16, 1]>>) outs(%out : memref<8xf32, strided<[2]>>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  }
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%out : memref<8xf32, strided<[2]>>)
  return
}

// -----

// A dynamic output keeps its size in the view, and each of two outputs gets
// its own view; an output also read as an input is read through the
// original buffer.
// CHECK-DAG: #[[$XS:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[$A0:.*]] = affine_map<(d0, d1) -> (0)>
// CHECK-DAG: #[[$OUTA:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[$OUTB:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @two
// CHECK-SAME: (%[[X:.*]]: memref<?xf32>, %[[A:.*]]: memref<?xf32>, %[[B:.*]]: memref<f32>)
// CHECK:      %[[N:.*]] = memref.dim %[[A]], %c0
// CHECK:      %[[VA:.*]] = memref.expand_shape %[[A]] {{\[\[}}0, 1]] output_shape [1, %[[N]]] : memref<?xf32> into memref<1x?xf32>
// CHECK:      %[[VB:.*]] = memref.expand_shape %[[B]] [] output_shape [1] : memref<f32> into memref<1xf32>
// CHECK:      linalg.generic {indexing_maps = [#[[$XS]], #[[$A0]], #[[$OUTA]], #[[$OUTB]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]], %[[A]] : memref<?xf32>, memref<?xf32>) outs(%[[VA]], %[[VB]] : memref<1x?xf32>, memref<1xf32>)
func.func @two(%x: memref<?xf32>, %a: memref<?xf32>, %b: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (0)>, affine_map<(d0) -> (0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%x, %a : memref<?xf32>, memref<?xf32>) outs(%a, %b : memref<?xf32>, memref<f32>) {
  ^bb0(%v: f32, %first: f32, %acc: f32, %max: f32):
    %s = arith.addf %acc, %v : f32
    %m = arith.maximumf %max, %first : f32
    linalg.yield %s, %m : f32, f32
  }
  return
}

// -----

// On tensors nothing changes: the pass runs after bufferization.
// CHECK-LABEL: func.func @tensors
// CHECK-NOT:  expand_shape
// CHECK:      linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<f32>)
func.func @tensors(%t: tensor<f32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %f = linalg.fill ins(%zero : f32) outs(%t : tensor<f32>) -> tensor<f32>
  return %f : tensor<f32>
}

// -----

// An output whose layout is not strided cannot be viewed with a unit
// dimension: the op would stay host code on device memory.
func.func @unstrided(%x: memref<8xf32>, %out: memref<4xf32, affine_map<(d0) -> (d0 mod 2)>>) {
  // expected-error @below {{has no parallel loop and an output whose layout is not strided, so it cannot get a one-iteration parallel loop for the GPU (hetero-gpu-serial-kernels); expected outputs with identity or strided layouts}}
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (3)>], iterator_types = ["reduction"]} ins(%x : memref<8xf32>) outs(%out : memref<4xf32, affine_map<(d0) -> (d0 mod 2)>>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  }
  return
}
