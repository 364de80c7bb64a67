// Cupcake's optimal gradient buckets.
// RUN: hetero-opt %s --hetero-fuse-gradients="comm-alpha-ms=100" | FileCheck %s --check-prefix=LATENCY
// RUN: hetero-opt %s --hetero-fuse-gradients="comm-alpha-ms=0" | FileCheck %s --check-prefix=BANDWIDTH
// RUN: hetero-opt %s --hetero-fuse-gradients="profile=%S/../Sim/Inputs/three-tensors.json" | FileCheck %s --check-prefix=PROFILE
// RUN: hetero-opt %s --hetero-fuse-gradients="comm-alpha-ms=100 strategy=per-tensor" | FileCheck %s --check-prefix=BANDWIDTH
// RUN: hetero-opt %s --hetero-fuse-gradients="comm-alpha-ms=0 strategy=one" | FileCheck %s --check-prefix=LATENCY
// RUN: hetero-opt %s --hetero-fuse-gradients="strategy=size bucket-mb=0.001" | FileCheck %s --check-prefix=SIZE

// Three gradients, produced %g0, %g1, %g2 and reduced in the opposite
// order. When each transfer costs 100 ms of latency, one bucket is best;
// with no latency, reducing each gradient as soon as it is ready overlaps
// the transfers with the remaining backprop. The profile of
// hetero-sim fusion (1, 2, 1 MB) gives [0-0] [1-2].
// LATENCY-LABEL: func.func @step
// LATENCY:      %[[G0:.*]] = arith.mulf %arg0, %arg0
// LATENCY-NEXT: %[[G1:.*]] = arith.mulf %arg1, %arg1
// LATENCY-NEXT: %[[G2:.*]] = arith.addf %arg0, %[[G0]]
// LATENCY-NEXT: %[[R:.*]]:3 = hetero.bucket %[[G0]], %[[G1]], %[[G2]] reduction = avg : tensor<256xf32>, tensor<512xf32>, tensor<256xf32>
// LATENCY-NOT:  hetero.all_reduce
// LATENCY:      return %[[R]]#2, %[[R]]#1, %[[R]]#0
// BANDWIDTH-LABEL: func.func @step
// BANDWIDTH-COUNT-3: hetero.all_reduce {{.*}} reduction = avg
// BANDWIDTH-NOT: hetero.bucket
// PROFILE-LABEL: func.func @step
// PROFILE:      %[[G0:.*]] = arith.mulf %arg0, %arg0
// PROFILE-NEXT: %[[G1:.*]] = arith.mulf %arg1, %arg1
// PROFILE-NEXT: %[[G2:.*]] = arith.addf %arg0, %[[G0]]
// PROFILE:      %[[A:.*]] = hetero.all_reduce %[[G0]] reduction = avg : tensor<256xf32>
// PROFILE:      %[[B:.*]]:2 = hetero.bucket %[[G1]], %[[G2]] reduction = avg : tensor<512xf32>, tensor<256xf32>
// PROFILE:      return %[[B]]#1, %[[B]]#0, %[[A]]
// The baselines ignore the costs: one all-reduce per gradient even when
// latency dominates, one bucket even when it costs nothing. DDP-style
// buckets of 0.001 MB (1,048 bytes) close after the gradient that reaches
// the size, in ready order: %g0 (1,024 bytes) and %g1, then %g2. Each
// stands where the program's first collective of the group stood.
// SIZE-LABEL: func.func @step
// SIZE:      %[[G0:.*]] = arith.mulf %arg0, %arg0
// SIZE-NEXT: %[[G1:.*]] = arith.mulf %arg1, %arg1
// SIZE-NEXT: %[[G2:.*]] = arith.addf %arg0, %[[G0]]
// SIZE-NEXT: %[[B:.*]]:2 = hetero.bucket %[[G0]], %[[G1]] reduction = avg : tensor<256xf32>, tensor<512xf32>
// SIZE-NEXT: %[[A:.*]] = hetero.all_reduce %[[G2]] reduction = avg : tensor<256xf32>
// SIZE:      return %[[A]], %[[B]]#1, %[[B]]#0
func.func @step(%x: tensor<256xf32>, %y: tensor<512xf32>) -> (tensor<256xf32>, tensor<512xf32>, tensor<256xf32>) {
  %g0 = arith.mulf %x, %x : tensor<256xf32>
  %g1 = arith.mulf %y, %y : tensor<512xf32>
  %g2 = arith.addf %x, %g0 : tensor<256xf32>
  %r2 = hetero.all_reduce %g2 reduction = avg : tensor<256xf32>
  %r1, %r0 = hetero.bucket %g1, %g0 reduction = avg : tensor<512xf32>, tensor<256xf32>
  return %r2, %r1, %r0 : tensor<256xf32>, tensor<512xf32>, tensor<256xf32>
}
