// RUN: hetero-opt %s --hetero-fuse-gradients="comm-alpha-ms=100" | FileCheck %s
// RUN: echo '{"sets": [{"tensors": [{"bytes": 32, "backward_ms": 1}, {"bytes": 32, "backward_ms": 1}], "comm": {"alpha_ms": 100, "beta_ms_per_mb": 1}}, {"tensors": [{"bytes": 32, "backward_ms": 1}, {"bytes": 32, "backward_ms": 1}], "comm": {"alpha_ms": 0, "beta_ms_per_mb": 1}}]}' > %t.sets.json
// RUN: hetero-opt %s --hetero-fuse-gradients="profile=%t.sets.json" | FileCheck %s --check-prefix=PROFILES
// RUN: echo '{"sets": [{"tensors": [{"bytes": 32, "backward_ms": 1}, {"bytes": 32, "backward_ms": 1}], "comm": {"alpha_ms": 100, "beta_ms_per_mb": 1}}, {"tensors": 2}]}' > %t.bad.json
// RUN: not hetero-opt %s --hetero-fuse-gradients="profile=%t.bad.json" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: echo '{"sets": []}' > %t.empty.json
// RUN: not hetero-opt %s --hetero-fuse-gradients="profile=%t.empty.json" 2>&1 | FileCheck %s --check-prefix=EMPTY

// A profile of {"sets": [...]} describes each fusion set in program order:
// the first (avg), whose transfers cost 100 ms of latency, becomes one
// bucket; the second, without latency, one all-reduce per gradient.
// PROFILES-LABEL: func.func @sets
// PROFILES:      hetero.bucket %{{.*}}, %{{.*}} reduction = avg
// PROFILES-NOT:  hetero.bucket
// PROFILES-COUNT-2: hetero.all_reduce %{{.*}} : tensor<8xf32>
// BAD: error: hetero-fuse-gradients: {{.*}}bad.json: $.sets[1]: $.tensors: expected a non-empty array of tensors
// EMPTY: error: hetero-fuse-gradients: {{.*}}empty.json: $.sets: expected at least one profile

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
