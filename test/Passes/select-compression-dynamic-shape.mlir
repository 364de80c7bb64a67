// A gradient whose shape is known at run time only: its cost is unknown to
// the pass, so it stays dense (its element count used to be multiplied out
// of the dynamic marker), and the static gradient beside it is still
// decided for. On a slow link with density 0.001 the static one goes
// sparse.
// RUN: hetero-opt %s --hetero-select-compression="link-beta-ms-per-mb=10 ranks=4" | FileCheck %s
// RUN: hetero-opt %s --hetero-select-compression="density=0.001 ranks=4" | FileCheck %s --check-prefix=SPARSE

// CHECK-LABEL: func.func @step
// CHECK: hetero.all_reduce %arg0 reduction = avg : tensor<?xf32>
// CHECK: hetero.all_reduce %arg1 reduction = avg compress <topk
// SPARSE: hetero.all_reduce %arg0 reduction = avg : tensor<?xf32>
// SPARSE: hetero.all_reduce %arg1 reduction = avg sparse = allgather
func.func @step(%d: tensor<?xf32>, %g: tensor<1048576xf32>) -> (tensor<?xf32>, tensor<1048576xf32>) {
  %0 = hetero.all_reduce %d reduction = avg : tensor<?xf32>
  %1 = hetero.all_reduce %g reduction = avg : tensor<1048576xf32>
  return %0, %1 : tensor<?xf32>, tensor<1048576xf32>
}
