// A gradient reduced twice, by collectives of two fusion sets (one
// compressed, one not): rewriting the first set replaces the value the
// second reduces. The second set reads it through its collective's operand.
// RUN: hetero-opt %s --hetero-fuse-gradients | FileCheck %s

// CHECK-LABEL: func.func @twice
// CHECK:       %[[C:.*]] = hetero.all_reduce %arg0 compress <topk, ratio = 6.250000e-02, scheme = allgather> : tensor<16x16xf32>
// CHECK-NEXT:  %[[D:.*]] = hetero.all_reduce %[[C]] : tensor<16x16xf32>
// CHECK-NEXT:  return %[[D]]
func.func @twice(%g: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %0 = hetero.all_reduce %g compress <topk, ratio = 0.0625, scheme = allgather> : tensor<16x16xf32>
  %1 = hetero.all_reduce %0 : tensor<16x16xf32>
  return %1 : tensor<16x16xf32>
}
