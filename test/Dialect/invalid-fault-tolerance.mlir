// RUN: hetero-opt %s -split-input-file -verify-diagnostics

func.func @checkpoint_replicas_exceed_world(%w: tensor<8xf32>) {
  // expected-error @+1 {{'hetero.checkpoint' op asks for 9 replicas, but the world has only 8 machines}}
  hetero.checkpoint %w replicas = 9 of 8 placement = ring : tensor<8xf32>
  return
}

// -----

func.func @checkpoint_needs_a_replica(%w: tensor<8xf32>) {
  // expected-error @+1 {{'hetero.checkpoint' op attribute 'replicas' failed to satisfy constraint: 64-bit integer attribute whose value is positive}}
  hetero.checkpoint %w replicas = 0 of 8 placement = ring : tensor<8xf32>
  return
}

// -----

func.func @checkpoint_needs_a_machine(%w: tensor<8xf32>) {
  // expected-error @+1 {{'hetero.checkpoint' op attribute 'world' failed to satisfy constraint: 64-bit integer attribute whose value is positive}}
  hetero.checkpoint %w replicas = 1 of 0 placement = ring : tensor<8xf32>
  return
}

// -----

func.func @group_placement_must_divide_world(%w: tensor<8xf32>) {
  // expected-error @+1 {{'hetero.checkpoint' op group placement splits 8 machines into groups of 3, which does not divide them; use ring or mixed}}
  hetero.checkpoint %w replicas = 3 of 8 placement = group : tensor<8xf32>
  return
}

// -----

func.func @checkpoint_every_zero(%w: tensor<8xf32>) {
  // expected-error @+1 {{'hetero.checkpoint' op attribute 'every' failed to satisfy constraint: 64-bit integer attribute whose value is positive}}
  hetero.checkpoint %w replicas = 2 of 8 placement = group every = 0 : tensor<8xf32>
  return
}

// -----

func.func @checkpoint_needs_a_tensor() {
  // expected-error @+1 {{'hetero.checkpoint' op needs at least one tensor to checkpoint}}
  "hetero.checkpoint"() <{replicas = 1 : i64, world = 1 : i64, placement = 1 : i32}> : () -> ()
  return
}

// -----

func.func @ckpt_chunk_index_out_of_range(%w: tensor<8xf32>) {
  // expected-error @+1 {{'hetero.ckpt_chunk' op chunk 4 is outside 0..3}}
  hetero.ckpt_chunk %w chunk 4 of 4 to 1 : tensor<8xf32>
  return
}

// -----

func.func @ckpt_chunk_needs_a_chunk(%w: tensor<8xf32>) {
  // expected-error @+1 {{'hetero.ckpt_chunk' op attribute 'chunks' failed to satisfy constraint: 64-bit integer attribute whose value is positive}}
  hetero.ckpt_chunk %w chunk 0 of 0 to 1 : tensor<8xf32>
  return
}
