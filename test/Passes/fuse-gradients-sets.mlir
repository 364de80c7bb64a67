// RUN: hetero-opt %s --hetero-fuse-gradients="comm-alpha-ms=100" | FileCheck %s

// Different reductions are different fusion sets; sparse all-reduces stay.
// CHECK-LABEL: func.func @sets
// CHECK-DAG:  hetero.bucket %{{.*}}, %{{.*}} reduction = avg
// CHECK-DAG:  hetero.bucket %{{.*}}, %{{.*}} :
// CHECK-DAG:  hetero.all_reduce %{{.*}} sparse = coo
func.func @sets(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %0 = hetero.all_reduce %a reduction = avg : tensor<8xf32>
  %1 = hetero.all_reduce %b reduction = avg : tensor<8xf32>
  %2 = hetero.all_reduce %a : tensor<8xf32>
  %3 = hetero.all_reduce %b : tensor<8xf32>
  %4 = hetero.all_reduce %a sparse = coo : tensor<8xf32>
  return %0, %1, %2, %3, %4 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
