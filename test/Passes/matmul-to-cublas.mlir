// hetero-matmul-to-cublas: an f32 matmul on row-contiguous buffers becomes
// one hrt_cuda_sgemm(m, n, k, A, lda, B, ldb, beta, C, ldc), beta 0 when
// a zero fill of C comes right before it (the fill goes), else 1; other
// matmuls stay.
// RUN: hetero-opt %s --split-input-file --verify-diagnostics --hetero-matmul-to-cublas --cse | FileCheck %s

// CHECK: func.func private @hrt_cuda_sgemm(i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64)
// CHECK-LABEL: func.func @static
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[A:.*]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK: %[[AI:.*]] = arith.index_cast %[[A]] : index to i64
// CHECK: %[[AP:.*]] = llvm.inttoptr %[[AI]]
// CHECK: %[[K:.*]] = arith.constant 32 : i64
// CHECK: %[[B:.*]] = memref.extract_aligned_pointer_as_index %arg1
// CHECK: %[[BP:.*]] = llvm.inttoptr
// CHECK: %[[N:.*]] = arith.constant 48 : i64
// CHECK: %[[C:.*]] = memref.extract_aligned_pointer_as_index %arg2
// CHECK: %[[CP:.*]] = llvm.inttoptr
// CHECK: %[[M:.*]] = arith.constant 64 : i64
// CHECK: call @hrt_cuda_sgemm(%[[M]], %[[N]], %[[K]], %[[AP]], %[[K]], %[[BP]], %[[N]], %[[ONE]], %[[CP]], %[[N]])
// CHECK-NOT: linalg.matmul
func.func @static(%a: memref<64x32xf32>, %b: memref<32x48xf32>, %c: memref<64x48xf32>) {
  linalg.matmul ins(%a, %b : memref<64x32xf32>, memref<32x48xf32>) outs(%c : memref<64x48xf32>)
  return
}

// A view into a wider buffer: the pointer moves by the offset (4 bytes an
// element) and the leading dimension is the row stride, not the width.
// CHECK-LABEL: func.func @view
// CHECK: %[[V:.*]] = memref.subview
// CHECK: %{{.*}}, %[[OFF:.*]], %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[V]] :
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %[[V]]
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[BYTES:.*]] = arith.muli %[[OFF]], %[[C4]]
// CHECK: arith.addi %[[BASE]], %[[BYTES]]
// CHECK: %[[LD:.*]] = arith.constant 96 : i64
// CHECK: call @hrt_cuda_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[LD]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
func.func @view(%a: memref<16x96xf32>, %b: memref<32x8xf32>, %c: memref<16x8xf32>, %o: index) {
  %v = memref.subview %a[0, %o] [16, 32] [1, 1] : memref<16x96xf32> to memref<16x32xf32, strided<[96, 1], offset: ?>>
  linalg.matmul ins(%v, %b : memref<16x32xf32, strided<[96, 1], offset: ?>>, memref<32x8xf32>) outs(%c : memref<16x8xf32>)
  return
}

// Dynamic sizes and strides come from the buffers at run time.
// CHECK-LABEL: func.func @dynamic
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}:2, %[[AST:.*]]:2 = memref.extract_strided_metadata %arg0
// CHECK: %[[LDA:.*]] = arith.index_cast %[[AST]]#0 : index to i64
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}:2, %[[CST:.*]]:2 = memref.extract_strided_metadata %arg2
// CHECK: %[[LDC:.*]] = arith.index_cast %[[CST]]#0 : index to i64
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[MD:.*]] = memref.dim %arg0, %[[C0]]
// CHECK: %[[M:.*]] = arith.index_cast %[[MD]] : index to i64
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[ND:.*]] = memref.dim %arg1, %[[C1]]
// CHECK: %[[N:.*]] = arith.index_cast %[[ND]] : index to i64
// CHECK: %[[KD:.*]] = memref.dim %arg0, %[[C1]]
// CHECK: %[[K:.*]] = arith.index_cast %[[KD]] : index to i64
// CHECK: call @hrt_cuda_sgemm(%[[M]], %[[N]], %[[K]], %{{.*}}, %[[LDA]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[LDC]])
func.func @dynamic(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  linalg.matmul ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>)
  return
}

// The zero fill right before the product is beta = 0 and goes; a fill of
// another value, or one with an op in between, stays, and beta is 1.
// CHECK-LABEL: func.func @fills
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT: linalg.fill
// CHECK: call @hrt_cuda_sgemm({{.*}}, %[[ZERO]], %{{.*}}, %{{.*}})
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg2
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: call @hrt_cuda_sgemm({{.*}}, %[[ONE]], %{{.*}}, %{{.*}})
// CHECK: linalg.fill ins(%[[ZERO]] : f32) outs(%arg2
// CHECK: memref.store
// CHECK: call @hrt_cuda_sgemm({{.*}}, %[[ONE]], %{{.*}}, %{{.*}})
func.func @fills(%a: memref<8x4xf32>, %b: memref<4x8xf32>, %c: memref<8x8xf32>, %i: index) {
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<8x8xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x8xf32>) outs(%c : memref<8x8xf32>)
  linalg.fill ins(%two : f32) outs(%c : memref<8x8xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x8xf32>) outs(%c : memref<8x8xf32>)
  linalg.fill ins(%zero : f32) outs(%c : memref<8x8xf32>)
  memref.store %two, %c[%i, %i] : memref<8x8xf32>
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x8xf32>) outs(%c : memref<8x8xf32>)
  return
}

// Left to the kernels: f16, a column-strided view, tensors, transposed maps.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: call @hrt_cuda_sgemm
// CHECK-COUNT-4: linalg.matmul
// CHECK-NOT: call @hrt_cuda_sgemm
func.func @kept(%a: memref<8x8xf16>, %c: memref<8x8xf16>, %s: memref<8x16xf32>, %f: memref<8x8xf32>, %t: tensor<8x8xf32>) -> tensor<8x8xf32> {
  linalg.matmul ins(%a, %a : memref<8x8xf16>, memref<8x8xf16>) outs(%c : memref<8x8xf16>)
  %cols = memref.subview %s[0, 0] [8, 8] [1, 2] : memref<8x16xf32> to memref<8x8xf32, strided<[16, 2]>>
  linalg.matmul ins(%cols, %f : memref<8x8xf32, strided<[16, 2]>>, memref<8x8xf32>) outs(%f : memref<8x8xf32>)
  %r = linalg.matmul ins(%t, %t : tensor<8x8xf32>, tensor<8x8xf32>) outs(%t : tensor<8x8xf32>) -> tensor<8x8xf32>
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%f, %f : memref<8x8xf32>, memref<8x8xf32>) outs(%f : memref<8x8xf32>)
  return %r : tensor<8x8xf32>
}

// -----

// expected-error @+1 {{hetero-matmul-to-cublas: @hrt_cuda_sgemm is declared as '(i64) -> ()', expected '(i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64) -> ()'}}
func.func private @hrt_cuda_sgemm(i64)
func.func @clash(%a: memref<4x4xf32>) {
  linalg.matmul ins(%a, %a : memref<4x4xf32>, memref<4x4xf32>) outs(%a : memref<4x4xf32>)
  return
}
