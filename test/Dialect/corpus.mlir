// RUN: hetero-opt %s | hetero-opt | FileCheck %s
// The training-data and text-generation ops round-trip.

// CHECK-LABEL: func.func @two_replica_batches
// CHECK: %{{.*}}, %{{.*}} = hetero.corpus_batch %arg0, %arg1, %arg2 vocab = 80 replicas = 2 : tensor<4x32xi32>
func.func @two_replica_batches(%step: i64, %replica: i64, %mb: i64) -> (tensor<4x32xi32>, tensor<4x32xi32>) {
  %tokens, %next = hetero.corpus_batch %step, %replica, %mb vocab = 80 replicas = 2 : tensor<4x32xi32>
  return %tokens, %next : tensor<4x32xi32>, tensor<4x32xi32>
}

// CHECK-LABEL: func.func @one_character_per_stream
// CHECK: hetero.sample_context vocab = 80 : tensor<2x16xi32>
// CHECK: hetero.sample_next %{{.*}} : tensor<32x80xf32>
func.func @one_character_per_stream(%logits: tensor<32x80xf32>) -> (tensor<2x16xi32>, f32) {
  %context = hetero.sample_context vocab = 80 : tensor<2x16xi32>
  %logp = hetero.sample_next %logits : tensor<32x80xf32>
  return %context, %logp : tensor<2x16xi32>, f32
}
