// RUN: hetero-opt %s -split-input-file -verify-diagnostics

func.func @vocab_of_one(%s: i64) {
  // expected-error @+1 {{'hetero.corpus_batch' op vocab must be between 2 and 256 (character-level token ids), got 1}}
  %a, %b = hetero.corpus_batch %s, %s, %s vocab = 1 replicas = 1 : tensor<1x8xi32>
  return
}

// -----

func.func @vocab_above_bytes(%s: i64) {
  // expected-error @+1 {{'hetero.corpus_batch' op vocab must be between 2 and 256 (character-level token ids), got 300}}
  %a, %b = hetero.corpus_batch %s, %s, %s vocab = 300 replicas = 1 : tensor<1x8xi32>
  return
}

// -----

func.func @no_replicas(%s: i64) {
  // expected-error @+1 {{'hetero.corpus_batch' op attribute 'replicas' failed to satisfy constraint: 64-bit integer attribute whose value is positive}}
  %a, %b = hetero.corpus_batch %s, %s, %s vocab = 80 replicas = 0 : tensor<1x8xi32>
  return
}

// -----

func.func @flat_batch(%s: i64) {
  // expected-error @+1 {{'hetero.corpus_batch' op the batch has type 'tensor<8xi32>', expected a non-empty 2-D tensor (sequences x tokens)}}
  %a, %b = hetero.corpus_batch %s, %s, %s vocab = 80 replicas = 1 : tensor<8xi32>
  return
}

// -----

func.func @float_tokens(%s: i64) {
  // expected-error @+1 {{'hetero.corpus_batch' op result #0 must be statically shaped tensor of 32-bit signless integer values, but got 'tensor<1x8xf32>'}}
  %a, %b = hetero.corpus_batch %s, %s, %s vocab = 80 replicas = 1 : tensor<1x8xf32>
  return
}

// -----

func.func @empty_context() {
  // expected-error @+1 {{'hetero.sample_context' op the context has type 'tensor<0x8xi32>', expected a non-empty 2-D tensor (sequences x tokens)}}
  %c = hetero.sample_context vocab = 80 : tensor<0x8xi32>
  return
}

// -----

func.func @context_vocab() {
  // expected-error @+1 {{'hetero.sample_context' op vocab must be between 2 and 256 (character-level token ids), got 0}}
  %c = hetero.sample_context vocab = 0 : tensor<1x8xi32>
  return
}

// -----

func.func @logits_as_vector(%l: tensor<80xf32>) {
  // expected-error @+1 {{'hetero.sample_next' op logits have type 'tensor<80xf32>', expected a non-empty 2-D tensor of f32 (positions x vocabulary)}}
  %p = hetero.sample_next %l : tensor<80xf32>
  return
}

// -----

func.func @logits_wider_than_bytes(%l: tensor<8x300xf32>) {
  // expected-error @+1 {{'hetero.sample_next' op vocab must be between 2 and 256 (character-level token ids), got 300}}
  %p = hetero.sample_next %l : tensor<8x300xf32>
  return
}
