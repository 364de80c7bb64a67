// RUN: hetero-opt %s --hetero-lower-to-runtime | FileCheck %s
// The training-data and generation ops become hrt_mlir_ calls on fresh
// buffers; nothing else of the function changes.

// CHECK-DAG: func.func private @hrt_mlir_corpus_batch(!llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64)
// CHECK-DAG: func.func private @hrt_mlir_sample_context(!llvm.ptr, i64, i64, i64)
// CHECK-DAG: func.func private @hrt_mlir_sample_next(!llvm.ptr, i64, i64) -> f32

// CHECK-LABEL: func.func @data
// CHECK-SAME:    (%[[STEP:.*]]: i64, %[[REPLICA:.*]]: i64, %[[MB:.*]]: i64)
// CHECK-DAG:     %[[IN:.*]] = memref.alloc() : memref<4x32xi32>
// CHECK-DAG:     %[[OUT:.*]] = memref.alloc() : memref<4x32xi32>
// 4 sequences of 32 tokens, vocabulary 80, 2 replicas.
// CHECK-DAG:     %[[SEQUENCES:.*]] = arith.constant 4 : i64
// CHECK-DAG:     %[[TOKENS:.*]] = arith.constant 32 : i64
// CHECK-DAG:     %[[VOCAB:.*]] = arith.constant 80 : i64
// CHECK-DAG:     %[[REPLICAS:.*]] = arith.constant 2 : i64
// CHECK:         call @hrt_mlir_corpus_batch(%{{.*}}, %{{.*}}, %[[SEQUENCES]], %[[TOKENS]], %[[STEP]], %[[REPLICA]], %[[MB]], %[[VOCAB]], %[[REPLICAS]])
// CHECK-DAG:     %[[A:.*]] = bufferization.to_tensor %[[IN]] restrict writable
// CHECK-DAG:     %[[B:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK:         return %[[A]], %[[B]]
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4x32xi32>, tensor<4x32xi32>) {
  %tokens, %next = hetero.corpus_batch %step, %replica, %mb vocab = 80 replicas = 2 : tensor<4x32xi32>
  return %tokens, %next : tensor<4x32xi32>, tensor<4x32xi32>
}

// CHECK-LABEL: func.func @generate
// CHECK-SAME:    (%[[LOGITS:.*]]: tensor<32x80xf32>)
// CHECK:         %[[CONTEXT:.*]] = memref.alloc() : memref<2x16xi32>
// CHECK-DAG:     %[[STREAMS:.*]] = arith.constant 2 : i64
// CHECK-DAG:     %[[LENGTH:.*]] = arith.constant 16 : i64
// CHECK-DAG:     %[[V:.*]] = arith.constant 80 : i64
// CHECK:         call @hrt_mlir_sample_context(%{{.*}}, %[[STREAMS]], %[[LENGTH]], %[[V]])
// CHECK:         %[[BUF:.*]] = memref.alloc() : memref<32x80xf32>
// CHECK:         bufferization.materialize_in_destination %[[LOGITS]] in writable %[[BUF]]
// CHECK-DAG:     %[[ROWS:.*]] = arith.constant 32 : i64
// CHECK:         %[[P:.*]] = call @hrt_mlir_sample_next(%{{.*}}, %[[ROWS]], %{{.*}}) : (!llvm.ptr, i64, i64) -> f32
// CHECK:         return %{{.*}}, %[[P]]
func.func @generate(%logits: tensor<32x80xf32>) -> (tensor<2x16xi32>, f32) {
  %context = hetero.sample_context vocab = 80 : tensor<2x16xi32>
  %logp = hetero.sample_next %logits : tensor<32x80xf32>
  return %context, %logp : tensor<2x16xi32>, f32
}
