// Fusion and compression decided together (strategy=joint). Three
// top-k-compressed gradients of 1, 2 and 1 MB, with the profile of
// test/Sim/hetero-sim-fusion.test (DENSE): the grouping is the optimal
// all-compressed one, [0] [1-2] (10 ms), but the first goes uncompressed,
// without waiting for a compression (9.25 ms).
// RUN: hetero-opt %s --hetero-fuse-gradients="profile=%S/../Sim/Inputs/three-tensors-dense.json strategy=joint" | FileCheck %s --check-prefix=JOINT
// RUN: hetero-opt %s --hetero-fuse-gradients="profile=%S/../Sim/Inputs/three-tensors-dense.json" | FileCheck %s --check-prefix=OPTIMAL
// Without "dense_comm" there is no cost of an uncompressed transfer.
// RUN: not hetero-opt %s --hetero-fuse-gradients="profile=%S/../Sim/Inputs/three-tensors.json strategy=joint" 2>&1 | FileCheck %s --check-prefix=NODENSE
// The built-in model prices an uncompressed group at all its bytes: with
// a slow compression (1 s a gradient) and a fast link, nothing is
// compressed; with free compression and a slow link, everything is.
// RUN: hetero-opt %s --hetero-fuse-gradients="strategy=joint compress-alpha-ms=1000" | FileCheck %s --check-prefix=SLOW
// RUN: hetero-opt %s --hetero-fuse-gradients="strategy=joint compress-alpha-ms=0 compress-beta-ms-per-mb=0 comm-beta-ms-per-mb=1000" | FileCheck %s --check-prefix=FAST

// JOINT-LABEL: func.func @step
// JOINT:         %[[A:.*]] = hetero.all_reduce %{{.*}} : tensor<262144xf32>
// JOINT-NEXT:    %[[BC:.*]]:2 = hetero.bucket %{{.*}}, %{{.*}} compress <topk, ratio = 2.500000e-01, scheme = allgather> : tensor<524288xf32>, tensor<262144xf32>
// JOINT-NEXT:    return %[[A]], %[[BC]]#0, %[[BC]]#1

// OPTIMAL-LABEL: func.func @step
// OPTIMAL:       hetero.all_reduce %{{.*}} compress <topk
// OPTIMAL-NEXT:  hetero.bucket %{{.*}}, %{{.*}} compress <topk

// NODENSE: error: hetero-fuse-gradients: strategy=joint decides which buckets to compress, but the profile gives no "dense_comm" (the cost of an uncompressed transfer); expected one

// SLOW-LABEL: func.func @step
// SLOW-NOT:     compress
// SLOW:         return

// FAST-LABEL: func.func @step
// FAST-NOT:     hetero.all_reduce {{[^<]*}} :
// FAST-NOT:     hetero.bucket {{[^<]*}} :
// FAST:         compress <topk
// FAST-NOT:     hetero.all_reduce {{[^<]*}} :
// FAST-NOT:     hetero.bucket {{[^<]*}} :
// FAST:         return
func.func @step(%x: tensor<262144xf32>, %y: tensor<524288xf32>) -> (tensor<262144xf32>, tensor<524288xf32>, tensor<262144xf32>) {
  %a = arith.mulf %x, %x : tensor<262144xf32>
  %b = arith.mulf %y, %y : tensor<524288xf32>
  %c = arith.addf %x, %a : tensor<262144xf32>
  %ra = hetero.all_reduce %a compress <topk, ratio = 0.25, scheme = allgather> : tensor<262144xf32>
  %rb = hetero.all_reduce %b compress <topk, ratio = 0.25, scheme = allgather> : tensor<524288xf32>
  %rc = hetero.all_reduce %c compress <topk, ratio = 0.25, scheme = allgather> : tensor<262144xf32>
  return %ra, %rb, %rc : tensor<262144xf32>, tensor<524288xf32>, tensor<262144xf32>
}
