// Cupcake's buckets under a compression cost that is flat for small
// buffers (compress-min-ms): three compressed 1 KiB gradients, 100 s of
// backprop per MB (0.1 s each), transfers of 1000 s per MB on the wire
// (about 0.5 s each). With free compression the first gradient is reduced
// as soon as it is ready and the link stays busy from then on: [0] [1-2]
// ends when per-tensor does, with fewer groups. When every compression
// takes at least 1 s on the compute stream, one bucket pays it once and
// wins (2.8 s against 3.3 s for [0] [1-2]).
// RUN: hetero-opt %s --hetero-fuse-gradients="backward-ms-per-mb=100000 compress-alpha-ms=0 compress-beta-ms-per-mb=0 comm-alpha-ms=0 comm-beta-ms-per-mb=1000000" | FileCheck %s --check-prefix=FREE
// RUN: hetero-opt %s --hetero-fuse-gradients="backward-ms-per-mb=100000 compress-alpha-ms=0 compress-beta-ms-per-mb=0 compress-min-ms=1000 comm-alpha-ms=0 comm-beta-ms-per-mb=1000000" | FileCheck %s --check-prefix=FLAT

// FREE-LABEL: func.func @step
// FREE:         hetero.all_reduce %{{.*}} compress <topk
// FREE-NEXT:    hetero.bucket %{{.*}}, %{{.*}} compress <topk
// FLAT-LABEL: func.func @step
// FLAT:         hetero.bucket %{{.*}}, %{{.*}}, %{{.*}} compress <topk
// FLAT-NOT:     hetero.all_reduce
func.func @step(%x: tensor<256xf32>, %y: tensor<256xf32>) -> (tensor<256xf32>, tensor<256xf32>, tensor<256xf32>) {
  %g0 = arith.mulf %x, %x : tensor<256xf32>
  %g1 = arith.mulf %y, %y : tensor<256xf32>
  %g2 = arith.addf %x, %g0 : tensor<256xf32>
  %r0 = hetero.all_reduce %g0 compress <topk, ratio = 0.25, scheme = allgather> : tensor<256xf32>
  %r1 = hetero.all_reduce %g1 compress <topk, ratio = 0.25, scheme = allgather> : tensor<256xf32>
  %r2 = hetero.all_reduce %g2 compress <topk, ratio = 0.25, scheme = allgather> : tensor<256xf32>
  return %r0, %r1, %r2 : tensor<256xf32>, tensor<256xf32>, tensor<256xf32>
}
