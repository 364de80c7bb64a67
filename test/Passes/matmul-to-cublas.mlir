// hetero-matmul-to-cublas sends the products that hetero-matmul-to-blas
// sends to OpenBLAS (one matcher, passes/Gemm.h: named products,
// transposing maps, batches, generic contractions such as derived
// adjoints, views with their strides) to cuBLAS, in the same ABI:
// hrt_cuda_sgemm(batch, transpose_a, transpose_b, m, n, k, A, lda,
// stride_a, B, ldb, stride_b, beta, C, ldc, stride_c). Every check of
// matmul-to-blas.mlir holds with hrt_cuda_sgemm in place of hrt_cpu_sgemm.
// RUN: sed -e '/^\/\/ -----$/,$d' %S/matmul-to-blas.mlir | hetero-opt --hetero-matmul-to-cublas --cse | sed -e 's/@hrt_cuda_sgemm/@hrt_cpu_sgemm/g' | FileCheck %S/matmul-to-blas.mlir
// RUN: hetero-opt %s --split-input-file --verify-diagnostics --hetero-matmul-to-cublas | FileCheck %s

// CHECK: func.func private @hrt_cuda_sgemm(i64, i64, i64, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64)
// CHECK-LABEL: func.func @static
// CHECK: call @hrt_cuda_sgemm(
// CHECK-NOT: linalg.matmul
func.func @static(%a: memref<64x32xf32>, %b: memref<32x48xf32>, %c: memref<64x48xf32>) {
  linalg.matmul ins(%a, %b : memref<64x32xf32>, memref<32x48xf32>) outs(%c : memref<64x48xf32>)
  return
}

// -----

// expected-error @+1 {{hetero-matmul-to-cublas: @hrt_cuda_sgemm is declared as '(i64) -> ()', expected '(i64, i64, i64, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64) -> ()'}}
func.func private @hrt_cuda_sgemm(i64)
func.func @clash(%a: memref<4x4xf32>) {
  linalg.matmul ins(%a, %a : memref<4x4xf32>, memref<4x4xf32>) outs(%a : memref<4x4xf32>)
  return
}
