// hetero-lower-to-cpu allocates buffers with aligned_alloc's lowering (the
// buffer's pointer is the allocation's, with no integer arithmetic on it)
// through libhetero_rt's allocator, or the C library's with
// runtime-allocator=false; either way a buffer is freed by its own library.
// RUN: hetero-opt %s --hetero-lower-to-cpu | FileCheck %s
// RUN: hetero-opt %s --hetero-lower-to-cpu=runtime-allocator=false | FileCheck %s --check-prefix=LIBC

// CHECK-LABEL: llvm.func @temporary
// CHECK:         llvm.call @_mlir_memref_to_llvm_aligned_alloc(%{{.*}}, %{{.*}}) : (i64, i64) -> !llvm.ptr
// CHECK-NOT:     llvm.inttoptr
// CHECK:         llvm.call @_mlir_memref_to_llvm_free(
// CHECK-NOT:     @malloc
// CHECK-NOT:     @free
// LIBC-LABEL:  llvm.func @temporary
// LIBC:          llvm.call @aligned_alloc(%{{.*}}, %{{.*}}) : (i64, i64) -> !llvm.ptr
// LIBC-NOT:      llvm.inttoptr
// LIBC:          llvm.call @free(
// LIBC-NOT:      _mlir_memref_to_llvm
func.func @temporary(%x: tensor<64xf32>) -> f32 {
  %e = tensor.empty() : tensor<64xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %c = arith.constant 3 : index
  %v = tensor.extract %y[%c] : tensor<64xf32>
  return %v : f32
}
