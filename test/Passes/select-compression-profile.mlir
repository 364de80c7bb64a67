// Decisions from a measured profile on 4 ranks: a small gradient ready
// after 1 ms, then a 64 MB embedding gradient after 30 ms more. The small
// one's all-reduce is hidden behind the embedding's backprop and stays
// dense; the large one is compressed on the GPU, divisibly (all-to-all:
// each rank decompresses a quarter of the payloads all-gather would give).
// RUN: hetero-opt %s --hetero-select-compression="profile=%S/Inputs/espresso-profile.json compressor=dgc ratio=0.01" | FileCheck %s
// RUN: hetero-opt %s --hetero-select-compression="profile=%S/Inputs/espresso-profile.json compressor=dgc ratio=0.01 strategy=dense" | FileCheck %s --check-prefix=DENSE
// RUN: hetero-opt %s --hetero-select-compression="profile=%S/Inputs/espresso-profile.json compressor=dgc ratio=0.01 strategy=compressed" | FileCheck %s --check-prefix=COMPRESSED
// RUN: not hetero-opt %s --hetero-select-compression="strategy=some" 2>&1 | FileCheck %s --check-prefix=STRATEGY
// RUN: %python -c "import json,sys; p=json.load(open(sys.argv[1])); print(json.dumps({'sets': [p]}))" %S/Inputs/espresso-profile.json > %t.one-set.json
// RUN: hetero-opt %s --hetero-select-compression="profile=%t.one-set.json compressor=dgc ratio=0.01" | FileCheck %s
// RUN: %python -c "import json,sys; p=json.load(open(sys.argv[1])); print(json.dumps({'sets': [p, p]}))" %S/Inputs/espresso-profile.json > %t.two-sets.json
// RUN: not hetero-opt %s --hetero-select-compression="profile=%t.two-sets.json" 2>&1 | FileCheck %s --check-prefix=SETS
// RUN: not hetero-opt %s --hetero-select-compression="compressor=zstd" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not hetero-opt %s --hetero-select-compression="ratio=0" 2>&1 | FileCheck %s --check-prefix=RATIO
// RUN: echo '{"tensors": [{"bytes": 4, "backward_ms": 1}], "link": {"alpha_ms": 0, "beta_ms_per_mb": 1}}' > %t.nogpu.json
// RUN: not hetero-opt %s --hetero-select-compression="profile=%t.nogpu.json" 2>&1 | FileCheck %s --check-prefix=NOGPU
// RUN: echo '{"tensors": [{"bytes": 4, "backward_ms": 1}], "link": {"alpha_ms": 0, "beta_ms_per_mb": 1}, "gpu": {"compress": {"alpha_ms": 0, "beta_ms_per_mb": 0}, "decompress": {"alpha_ms": 0, "beta_ms_per_mb": 0}}, "cpu": {"compress": {"alpha_ms": 0, "beta_ms_per_mb": 0}, "decompress": {"alpha_ms": 0, "beta_ms_per_mb": 0}}}' > %t.one.json
// RUN: not hetero-opt %s --hetero-select-compression="profile=%t.one.json" 2>&1 | FileCheck %s --check-prefix=COUNT

// CHECK: hetero.all_reduce %arg0 reduction = avg : tensor<1024xf32>
// CHECK: hetero.all_reduce %arg1 reduction = avg compress <dgc, ratio = 1.000000e-02, error_feedback, scheme = alltoall> : tensor<16777216xf32>
// The baselines: all dense, and the one option that is best for all
// (the bias is compressed too, which costs 0.45 ms: hetero-sim espresso).
// DENSE-NOT: compress
// COMPRESSED: hetero.all_reduce %arg0 reduction = avg compress <dgc, ratio = 1.000000e-02, error_feedback, scheme = alltoall> : tensor<1024xf32>
// COMPRESSED: hetero.all_reduce %arg1 reduction = avg compress <dgc, ratio = 1.000000e-02, error_feedback, scheme = alltoall> : tensor<16777216xf32>
// SETS: error: hetero-select-compression: the profile describes the collectives of 2 blocks, but the module has 1 blocks of them
// STRATEGY: error: hetero-select-compression: unknown strategy 'some'; expected espresso, dense or compressed
// UNKNOWN: error: hetero-select-compression: unknown compressor 'zstd'; expected fp16, bf16, topk, dgc, randomk, efsignsgd, onebit or qsgd
// RATIO: error: hetero-select-compression: ratio must be in (0, 1], ranks and node-size at least 1 and density in [0, 1]
// NOGPU: error: hetero-select-compression: {{.*}}nogpu.json: $: missing "gpu"
// COUNT: error: hetero-select-compression: the profile lists 1 tensors, but this block has 2 dense f32 collectives
func.func @step(%bias: tensor<1024xf32>, %embedding: tensor<16777216xf32>) -> (tensor<1024xf32>, tensor<16777216xf32>) {
  %0 = hetero.all_reduce %bias reduction = avg : tensor<1024xf32>
  %1 = hetero.all_reduce %embedding reduction = avg : tensor<16777216xf32>
  return %0, %1 : tensor<1024xf32>, tensor<16777216xf32>
}
