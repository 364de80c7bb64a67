// A grid with a dynamic extent: the group size of a collective over it is
// known at run time only, so the cost model assumes `ranks` (the group size
// used to be the product of the extents, which overflowed on the dynamic
// marker). With 4 ranks on a slow link the 1 MiB gradient is compressed.
// RUN: hetero-opt %s --hetero-select-compression="link-beta-ms-per-mb=10 ranks=4" | FileCheck %s

shard.grid @grid(shape = ?x2)

// CHECK-LABEL: func.func @step
// CHECK: hetero.all_reduce %arg0 on @grid compress <topk
func.func @step(%g: tensor<262144xf32>) -> tensor<262144xf32> {
  %0 = hetero.all_reduce %g on @grid : tensor<262144xf32>
  return %0 : tensor<262144xf32>
}
