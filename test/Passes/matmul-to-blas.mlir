// hetero-matmul-to-blas: every f32 product on buffers that is one GEMM
// becomes one hrt_cpu_sgemm(batch, transpose_a, transpose_b, m, n, k,
// A, lda, stride_a, B, ldb, stride_b, beta, C, ldc, stride_c): named
// products, transposing maps, batches and generic contractions; beta 0
// when a zero fill of C comes right before it (the fill goes), else 1.
// RUN: hetero-opt %s --split-input-file --verify-diagnostics --hetero-matmul-to-blas --cse | FileCheck %s

// CHECK: func.func private @hrt_cpu_sgemm(i64, i64, i64, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64)
// CHECK-LABEL: func.func @static
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[M:.*]] = arith.constant 64 : i64
// CHECK-DAG: %[[N:.*]] = arith.constant 48 : i64
// CHECK-DAG: %[[K:.*]] = arith.constant 32 : i64
// CHECK-DAG: %[[BETA:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[A:.*]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK-DAG: %[[B:.*]] = memref.extract_aligned_pointer_as_index %arg1
// CHECK-DAG: %[[C:.*]] = memref.extract_aligned_pointer_as_index %arg2
// CHECK-NOT: linalg.fill
// CHECK: call @hrt_cpu_sgemm(%[[ONE]], %[[ZERO]], %[[ZERO]], %[[M]], %[[N]], %[[K]], %{{.*}}, %[[K]], %[[ZERO]], %{{.*}}, %[[N]], %[[ZERO]], %[[BETA]], %{{.*}}, %[[N]], %[[ZERO]])
// CHECK-NOT: linalg.matmul
func.func @static(%a: memref<64x32xf32>, %b: memref<32x48xf32>, %c: memref<64x48xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<64x48xf32>)
  linalg.matmul ins(%a, %b : memref<64x32xf32>, memref<32x48xf32>) outs(%c : memref<64x48xf32>)
  return
}

// X^T dY (a weight's gradient) and dY W^T (an input's), with the transposes
// in the maps: the stored matrices are read in place, transposed, with
// their own row strides as leading dimensions; beta 1 accumulates.
// CHECK-LABEL: func.func @transposed
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : i64
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : i64
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : i64
// CHECK-DAG: %[[BETA:.*]] = arith.constant 1.000000e+00 : f32
// dW[16x8] = X[32x16]^T dY[32x8]
// CHECK: call @hrt_cpu_sgemm(%[[ONE]], %[[ONE]], %[[ZERO]], %[[C16]], %[[C8]], %[[C32]], %{{.*}}, %[[C16]], %[[ZERO]], %{{.*}}, %[[C8]], %[[ZERO]], %[[BETA]], %{{.*}}, %[[C8]], %[[ZERO]])
// dX[32x16] = dY[32x8] W[16x8]^T
// CHECK: call @hrt_cpu_sgemm(%[[ONE]], %[[ZERO]], %[[ONE]], %[[C32]], %[[C16]], %[[C8]], %{{.*}}, %[[C8]], %[[ZERO]], %{{.*}}, %[[C8]], %[[ZERO]], %[[BETA]], %{{.*}}, %[[C16]], %[[ZERO]])
// CHECK-NOT: linalg.
func.func @transposed(%x: memref<32x16xf32>, %dy: memref<32x8xf32>, %w: memref<16x8xf32>, %dw: memref<16x8xf32>, %dx: memref<32x16xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%x, %dy : memref<32x16xf32>, memref<32x8xf32>) outs(%dw : memref<16x8xf32>)
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]}
    ins(%dy, %w : memref<32x8xf32>, memref<16x8xf32>) outs(%dx : memref<32x16xf32>) {
  ^bb0(%l: f32, %r: f32, %acc: f32):
    %p = arith.mulf %l, %r : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// Attention's scores per head: queries [bh, s, d] times keys [bh, s, d]
// transposed, as a batched generic; the batch strides are each operand's.
// CHECK-LABEL: func.func @heads
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[BH:.*]] = arith.constant 6 : i64
// CHECK-DAG: %[[S:.*]] = arith.constant 10 : i64
// CHECK-DAG: %[[D:.*]] = arith.constant 4 : i64
// CHECK-DAG: %[[SD:.*]] = arith.constant 40 : i64
// CHECK-DAG: %[[SS:.*]] = arith.constant 100 : i64
// CHECK: call @hrt_cpu_sgemm(%[[BH]], %[[ZERO]], %[[ONE]], %[[S]], %[[S]], %[[D]], %{{.*}}, %[[D]], %[[SD]], %{{.*}}, %[[D]], %[[SD]], %{{.*}}, %{{.*}}, %[[S]], %[[SS]])
func.func @heads(%q: memref<6x10x4xf32>, %k: memref<6x10x4xf32>, %scores: memref<6x10x10xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b, i, j, e) -> (b, i, e)>, affine_map<(b, i, j, e) -> (b, j, e)>, affine_map<(b, i, j, e) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
    ins(%q, %k : memref<6x10x4xf32>, memref<6x10x4xf32>) outs(%scores : memref<6x10x10xf32>) {
  ^bb0(%l: f32, %r: f32, %acc: f32):
    %p = arith.mulf %l, %r : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// A named batch_matmul whose operands are views into wider buffers: the
// pointers move by the views' offsets, the leading dimensions are the row
// strides.
// CHECK-LABEL: func.func @batch_views
// CHECK: %[[BATCH:.*]] = arith.constant 3 : i64
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %subview :
// CHECK: arith.addi %[[BASE]],
// CHECK-DAG: %[[LDA:.*]] = arith.constant 12 : i64
// CHECK-DAG: %[[SA:.*]] = arith.constant 96 : i64
// CHECK: call @hrt_cpu_sgemm(%[[BATCH]], {{.*}}, %[[LDA]], %[[SA]], {{.*}})
func.func @batch_views(%wide: memref<3x8x12xf32>, %b: memref<3x4x5xf32>, %c: memref<3x8x5xf32>) {
  %v = memref.subview %wide[0, 0, 2] [3, 8, 4] [1, 1, 1] : memref<3x8x12xf32> to memref<3x8x4xf32, strided<[96, 12, 1], offset: 2>>
  linalg.batch_matmul ins(%v, %b : memref<3x8x4xf32, strided<[96, 12, 1], offset: 2>>, memref<3x4x5xf32>) outs(%c : memref<3x8x5xf32>)
  return
}

// C written column by column (its map transposes it): the row-major C^T
// is computed as B^T A^T, with the operands swapped.
// CHECK-LABEL: func.func @column_output
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[C7:.*]] = arith.constant 7 : i64
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : i64
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : i64
// CHECK: memref.extract_aligned_pointer_as_index %arg1
// CHECK: memref.extract_aligned_pointer_as_index %arg0
// CHECK: memref.extract_aligned_pointer_as_index %arg2
// m = 7 (B's columns), n = 5 (A's rows), k = 3: op(A') = B^T, op(B') = A^T.
// CHECK: call @hrt_cpu_sgemm(%[[ONE]], %[[ONE]], %[[ONE]], %[[C7]], %[[C5]], %[[C3]], %{{.*}}, %[[C7]], %{{.*}}, %{{.*}}, %[[C3]], %{{.*}}, %{{.*}}, %{{.*}}, %[[C5]], %{{.*}})
func.func @column_output(%a: memref<5x3xf32>, %b: memref<3x7xf32>, %ct: memref<7x5xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (n, m)>]
    ins(%a, %b : memref<5x3xf32>, memref<3x7xf32>) outs(%ct : memref<7x5xf32>)
  return
}

// Dynamic sizes and strides come from the buffers at run time.
// CHECK-LABEL: func.func @dynamic
// CHECK-DAG: %[[DA:.*]] = memref.dim %arg0, %{{.*}}
// CHECK-DAG: %[[DB:.*]] = memref.dim %arg1, %{{.*}}
// CHECK-DAG: %{{.*}}, %{{.*}}, %{{.*}}:2, %[[AST:.*]]:2 = memref.extract_strided_metadata %arg0
// CHECK-DAG: arith.index_cast %[[AST]]#0 : index to i64
// CHECK: call @hrt_cpu_sgemm
func.func @dynamic(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  linalg.matmul ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>)
  return
}

// Left to the loops: f16; a view strided along both of its dimensions; two
// M loops (a rank-3 lhs with a rank-3 output, not batched: B has no such
// loop); a contraction that adds instead of multiplying; tensors.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: call @hrt_cpu_sgemm
// CHECK-COUNT-2: linalg.matmul
// CHECK-COUNT-2: linalg.generic
// CHECK: linalg.matmul
// CHECK-NOT: call @hrt_cpu_sgemm
func.func @kept(%a: memref<8x8xf16>, %c: memref<8x8xf16>, %s: memref<8x16xf32>, %f: memref<8x8xf32>, %x3: memref<2x8x8xf32>, %y3: memref<2x8x8xf32>, %t: tensor<8x8xf32>) -> tensor<8x8xf32> {
  linalg.matmul ins(%a, %a : memref<8x8xf16>, memref<8x8xf16>) outs(%c : memref<8x8xf16>)
  %cols = memref.subview %s[0, 0] [8, 8] [1, 2] : memref<8x16xf32> to memref<8x8xf32, strided<[16, 2]>>
  linalg.matmul ins(%cols, %f : memref<8x8xf32, strided<[16, 2]>>, memref<8x8xf32>) outs(%f : memref<8x8xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, i, j, e) -> (b, i, e)>, affine_map<(b, i, j, e) -> (e, j)>, affine_map<(b, i, j, e) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
    ins(%x3, %f : memref<2x8x8xf32>, memref<8x8xf32>) outs(%y3 : memref<2x8x8xf32>) {
  ^bb0(%l: f32, %r: f32, %acc: f32):
    %p = arith.mulf %l, %r : f32
    %s2 = arith.addf %acc, %p : f32
    linalg.yield %s2 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]}
    ins(%f, %f : memref<8x8xf32>, memref<8x8xf32>) outs(%f : memref<8x8xf32>) {
  ^bb0(%l: f32, %r: f32, %acc: f32):
    %p = arith.addf %l, %r : f32
    %s2 = arith.addf %acc, %p : f32
    linalg.yield %s2 : f32
  }
  %r = linalg.matmul ins(%t, %t : tensor<8x8xf32>, tensor<8x8xf32>) outs(%t : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

// expected-error @+1 {{hetero-matmul-to-blas: @hrt_cpu_sgemm is declared as '(i64) -> ()', expected '(i64, i64, i64, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64) -> ()'}}
func.func private @hrt_cpu_sgemm(i64)
func.func @clash(%a: memref<4x4xf32>) {
  linalg.matmul ins(%a, %a : memref<4x4xf32>, memref<4x4xf32>) outs(%a : memref<4x4xf32>)
  return
}
