// Espresso's per-gradient decisions, and Zen's sparse path.
// RUN: hetero-opt %s --hetero-select-compression="link-beta-ms-per-mb=10" | FileCheck %s --check-prefix=SLOW
// RUN: hetero-opt %s --hetero-select-compression="link-alpha-ms=0.01 link-beta-ms-per-mb=0.01" | FileCheck %s --check-prefix=FAST
// RUN: hetero-opt %s --hetero-select-compression="density=0.001 ranks=4" | FileCheck %s --check-prefix=SPARSE
// RUN: hetero-opt %s --hetero-select-compression="density=0.5 ranks=4 link-alpha-ms=0.01 link-beta-ms-per-mb=0.01" | FileCheck %s --check-prefix=DENSE
// RUN: hetero-opt %s --hetero-select-compression="density=0.01 ranks=16 link-alpha-ms=0.001" | FileCheck %s --check-prefix=ZEN
// RUN: hetero-opt %s --hetero-select-compression="density=0.001 ranks=4 online-sparse=1" | FileCheck %s --check-prefix=ONLINE
// RUN: sed -e 's/reduction = avg : tensor<1048576xf32>/reduction = avg {hetero.density = 5.000000e-01 : f64} : tensor<1048576xf32>/' %s | hetero-opt --hetero-select-compression="density=0.001 ranks=4" | FileCheck %s --check-prefix=PERTENSOR
// RUN: hetero-opt %s --hetero-select-compression="link-beta-ms-per-mb=10 ranks=8 node-size=4 intra-beta-ms-per-mb=0.1" | FileCheck %s --check-prefix=NODES

// On a 10 ms/MB link the two large gradients are compressed with top-k
// (error feedback on); the first one's compression moves to the CPU (Alg
// 4.2), which is idle while the GPU runs the 16 MB tensor's backprop. The
// 64-byte gradient stays dense. Its fp16 compression is replaced.
// SLOW: hetero.all_reduce %arg0 reduction = avg compress <topk, ratio = 1.000000e-02, error_feedback, placement = cpu, scheme = allgather>
// SLOW: hetero.all_reduce %arg1 reduction = avg : tensor<16xf32>
// SLOW: hetero.all_reduce %arg2 reduction = avg compress <topk, ratio = 1.000000e-02, error_feedback, scheme = allgather>

// On a fast link nothing pays for its compression.
// FAST-COUNT-3: hetero.all_reduce %arg{{[0-9]}} reduction = avg : tensor

// At 0.1% density the sparse schemes send far fewer bytes than a dense
// all-reduce. On 4 ranks with 0.5 ms a message, AGsparse (3 messages and
// a small all-reduce) beats Zen (two small all-reduces, push and pull).
// The 16-element bias is latency-bound: not sparse.
// SPARSE: %arg0 reduction = avg sparse = allgather : tensor<1048576xf32>
// SPARSE-NOT: sparse = {{.*}}tensor<16xf32>
// SPARSE: %arg2 reduction = avg sparse = allgather : tensor<4194304xf32>

// 16 ranks at 1% density on a low-latency link: the ranks' indices
// overlap, AGsparse would move every rank's pairs to every rank, and Zen
// with the hash-bitmap pull (M/8 bytes in all) is cheapest.
// ZEN: %arg0 reduction = avg sparse = hash_bitmap : tensor<1048576xf32>
// ZEN: %arg2 reduction = avg sparse = hash_bitmap : tensor<4194304xf32>

// online-sparse leaves the choice to the runtime's measurement.
// ONLINE: %arg0 reduction = avg sparse = online : tensor<1048576xf32>
// ONLINE: %arg2 reduction = avg sparse = online : tensor<4194304xf32>

// A per-tensor density (a profile's) overrides the pass's: half dense
// stays dense, the other stays sparse.
// PERTENSOR-NOT: sparse = {{.*}}tensor<1048576xf32>
// PERTENSOR: %arg2 reduction = avg sparse = allgather : tensor<4194304xf32>

// At 50% density it does not, and on a fast link nothing is compressed.
// DENSE-COUNT-3: hetero.all_reduce %arg{{[0-9]}} reduction = avg : tensor
// DENSE-NOT: sparse

// 8 ranks in nodes of 4 with a 100x faster link inside a node: the
// compressed collectives run among the 2 nodes.
// NODES: hetero.all_reduce %arg0 {{.*}}scheme = allgather, node_size = 4>
// NODES: hetero.all_reduce %arg1 reduction = avg : tensor<16xf32>
// NODES: hetero.all_reduce %arg2 {{.*}}scheme = allgather, node_size = 4>
func.func @step(%a: tensor<1048576xf32>, %b: tensor<16xf32>, %c: tensor<4194304xf32>) -> (tensor<1048576xf32>, tensor<16xf32>, tensor<4194304xf32>) {
  %0 = hetero.all_reduce %a reduction = avg : tensor<1048576xf32>
  %1 = hetero.all_reduce %b reduction = avg : tensor<16xf32>
  %2 = hetero.all_reduce %c reduction = avg compress <fp16> : tensor<4194304xf32>
  return %0, %1, %2 : tensor<1048576xf32>, tensor<16xf32>, tensor<4194304xf32>
}
