// RUN: hetero-opt %s --split-input-file --hetero-fuse-gradients="comm-alpha-ms=100" -verify-diagnostics
// RUN: not hetero-opt %s --split-input-file --hetero-fuse-gradients="profile=%S/../Sim/Inputs/three-tensors.json" 2>&1 | FileCheck %s --check-prefix=PROFILE
// RUN: not hetero-opt %s --hetero-fuse-gradients="profile=%t.missing.json" 2>&1 | FileCheck %s --check-prefix=NOFILE
// RUN: not hetero-opt %s --hetero-fuse-gradients="strategy=greedy" 2>&1 | FileCheck %s --check-prefix=STRATEGY
// RUN: not hetero-opt %s --hetero-fuse-gradients="strategy=size bucket-mb=0" 2>&1 | FileCheck %s --check-prefix=BUCKET
// STRATEGY: error: hetero-fuse-gradients: unknown strategy 'greedy'; expected optimal, per-tensor, one, size or joint
// BUCKET: error: hetero-fuse-gradients: bucket-mb must be positive, got 0
// RUN: echo '{"tensors": 3}' > %t.bad.json
// RUN: not hetero-opt %s --hetero-fuse-gradients="profile=%t.bad.json" 2>&1 | FileCheck %s --check-prefix=BADFILE

// The reduced %g0 feeds the computation of %g1, so the two cannot share a
// bucket, which one-bucket-is-best asks for.
func.func @chained(%x: tensor<64xf32>) -> tensor<64xf32> {
  %g0 = arith.mulf %x, %x : tensor<64xf32>
  %r0 = hetero.all_reduce %g0 : tensor<64xf32>
  // expected-error @+1 {{hetero-fuse-gradients: this op uses the reduced gradient of group [0-1] before the group's last gradient is produced; the grouping cannot be placed}}
  %g1 = arith.addf %r0, %x : tensor<64xf32>
  %r1 = hetero.all_reduce %g1 : tensor<64xf32>
  return %r1 : tensor<64xf32>
}

// -----

func.func @two(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = hetero.all_reduce %a : tensor<8xf32>
  %1 = hetero.all_reduce %b : tensor<8xf32>
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}

// -----

func.func @two_sets(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %0 = hetero.all_reduce %a : tensor<8xf32>
  %1 = hetero.all_reduce %b reduction = avg : tensor<8xf32>
  %2 = hetero.all_reduce %b : tensor<8xf32>
  %3 = hetero.all_reduce %a reduction = avg : tensor<8xf32>
  return %0, %1, %2, %3 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// PROFILE: error: hetero-fuse-gradients: the profile lists 3 tensors, but this fusion set reduces 2 gradients
// PROFILE: error: hetero-fuse-gradients: the profile describes 1 fusion set, but the module has 2 (collectives differing in block, group, reduction, compression or element type)
// NOFILE: error: hetero-fuse-gradients: cannot open input file
// BADFILE: error: hetero-fuse-gradients: {{.*}}bad.json: $.tensors: expected a non-empty array of tensors
