// hetero-partition-stages on a four-layer MLP written as one stage
// (Inputs/one-stage-mlp.mlir: ops 0..6 its products and tanh, 7..9 its
// loss), with measured op times (Inputs/one-stage-mlp-profile.json: 1 ms
// for ops 0..6, 0.1 ms for the loss's three) and a free link.

// Equal ranks: 4 ms and 3.3 ms.
// RUN: hetero-opt %S/Inputs/one-stage-mlp.mlir --mlir-print-op-on-diagnostic=false --hetero-partition-stages="stages=2 profile=%S/Inputs/one-stage-mlp-profile.json" 2>&1 | FileCheck %s --check-prefix=EVEN
// EVEN: remark: hetero-partition-stages: stage 0: ops 0..3 (linalg.matmul x2, linalg.generic x2), 2 parameters, predicted 4.000 ms (compute 4.000 ms, transfers in 0.000 ms), memory 3328 bytes
// EVEN: remark: hetero-partition-stages: stage 1: ops 4..9 (linalg.matmul x2, linalg.generic x4), 2 parameters, predicted 3.300 ms (compute 3.300 ms, transfers in 0.000 ms), memory 2880 bytes
// EVEN:      shard.grid @grid(shape = 2x2)
// EVEN:      func.func @model_stage0(%[[X:.*]]: tensor<4x8xf32>, %[[W0:.*]]: tensor<8x16xf32>, %[[W1:.*]]: tensor<16x16xf32>) -> tensor<4x16xf32> {
// EVEN-NEXT:   %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// EVEN-NEXT:   %[[E:.*]] = tensor.empty() : tensor<4x16xf32>
// EVEN-NEXT:   %[[F:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<4x16xf32>)
// EVEN-NEXT:   %[[Z0:.*]] = linalg.matmul ins(%[[X]], %[[W0]] : {{.*}}) outs(%[[F]] : tensor<4x16xf32>)
// EVEN-NEXT:   %[[H0:.*]] = linalg.generic {{.*}} ins(%[[Z0]] : tensor<4x16xf32>) outs(%[[E]] : tensor<4x16xf32>)
// EVEN:        %[[Z1:.*]] = linalg.matmul ins(%[[H0]], %[[W1]] : {{.*}}) outs(%[[F]] : tensor<4x16xf32>)
// EVEN-NEXT:   %[[H1:.*]] = linalg.generic {{.*}} ins(%[[Z1]] : tensor<4x16xf32>)
// EVEN:        return %[[H1]] : tensor<4x16xf32>
// The stage re-creates the constants, empty tensors and fills it needs.
// EVEN:      func.func @model_stage1(%[[H:.*]]: tensor<4x16xf32>, %[[W2:.*]]: tensor<16x16xf32>, %[[W3:.*]]: tensor<16x4xf32>, %[[T:.*]]: tensor<4x4xf32>) -> tensor<f32> {
// EVEN-NEXT:   arith.constant 0.000000e+00 : f32
// EVEN-NEXT:   tensor.empty() : tensor<4x16xf32>
// EVEN-NEXT:   linalg.fill
// EVEN-NEXT:   linalg.matmul ins(%[[H]], %[[W2]]
// EVEN:        arith.constant 6.250000e-02 : f32
// EVEN:        return
// EVEN-NOT:  func.func @model(
// EVEN:      hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data
// EVEN-NEXT:   hetero.stage 0 forward @model_stage0 params [@w0, @w1]
// EVEN-NEXT:   hetero.stage 1 forward @model_stage1 params [@w2, @w3]
// EVEN-NEXT: }

// Rank 1 at half speed takes ops 5..9: 2 x 2.3 ms against 5 ms.
// RUN: hetero-opt %S/Inputs/one-stage-mlp.mlir --mlir-print-op-on-diagnostic=false --hetero-partition-stages="stages=2 speeds=1,0.5 profile=%S/Inputs/one-stage-mlp-profile.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SLOW
// SLOW: stage 0: ops 0..4 (linalg.matmul x3, linalg.generic x2), 3 parameters, predicted 5.000 ms (compute 5.000 ms, transfers in 0.000 ms), memory 5376 bytes
// SLOW: stage 1: ops 5..9 (linalg.generic x4, linalg.matmul), 1 parameters, predicted 4.600 ms (compute 4.600 ms, transfers in 0.000 ms), memory 832 bytes

// A cap of 4000 bytes keeps w2 off rank 0 (its three products' weights,
// their gradient sums and two stashed inputs would be 5376 bytes).
// RUN: hetero-opt %S/Inputs/one-stage-mlp.mlir --mlir-print-op-on-diagnostic=false --hetero-partition-stages="stages=2 speeds=1,0.5 memory=4000 profile=%S/Inputs/one-stage-mlp-profile.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=CAPPED
// CAPPED: stage 0: ops 0..3 {{.*}}, predicted 4.000 ms {{.*}}, memory 3328 bytes
// CAPPED: stage 1: ops 4..9 {{.*}}, predicted 6.600 ms {{.*}}, memory 2880 bytes

// A cut given by hand: after ops 1 and 4.
// RUN: hetero-opt %S/Inputs/one-stage-mlp.mlir --mlir-print-op-on-diagnostic=false --hetero-partition-stages="stages=3 split-after=1,4" 2>/dev/null | FileCheck %s --check-prefix=HAND
// HAND:      shard.grid @grid(shape = 3x2)
// HAND:      func.func @model_stage0({{.*}}) -> tensor<4x16xf32>
// HAND:      func.func @model_stage1({{.*}}) -> tensor<4x16xf32>
// HAND:      func.func @model_stage2({{.*}}, %{{.*}}: tensor<4x4xf32>) -> tensor<f32>
// HAND:      hetero.pipeline @mlp stages = 3
// HAND-NEXT:   hetero.stage 0 forward @model_stage0 params [@w0]
// HAND-NEXT:   hetero.stage 1 forward @model_stage1 params [@w1, @w2]
// HAND-NEXT:   hetero.stage 2 forward @model_stage2 params [@w3]

// The stages' backwards are derived from the cut, and the step lowers.
// RUN: hetero-opt %S/Inputs/one-stage-mlp.mlir --hetero-partition-stages="stages=2" --hetero-derive-backward --hetero-lower-pipeline 2>/dev/null | FileCheck %s --check-prefix=STEP
// STEP: func.func @model_stage0_backward(
// STEP: func.func @model_stage1_backward(
// STEP: func.func @mlp_step(
