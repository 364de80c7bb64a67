// RUN: hetero-opt %s -split-input-file -verify-diagnostics

func.func @checkpoint_replicas_exceed_world(%w: tensor<8xf32>, %step: i64) {
  // expected-error @+1 {{'hetero.checkpoint' op asks for 9 replicas, but the world has only 8 machines}}
  hetero.checkpoint %w at %step replicas = 9 of 8 placement = ring : tensor<8xf32>
  return
}

// -----

func.func @checkpoint_needs_a_replica(%w: tensor<8xf32>, %step: i64) {
  // expected-error @+1 {{'hetero.checkpoint' op attribute 'replicas' failed to satisfy constraint: 64-bit integer attribute whose value is positive}}
  hetero.checkpoint %w at %step replicas = 0 of 8 placement = ring : tensor<8xf32>
  return
}

// -----

func.func @checkpoint_needs_a_machine(%w: tensor<8xf32>, %step: i64) {
  // expected-error @+1 {{'hetero.checkpoint' op attribute 'world' failed to satisfy constraint: 64-bit integer attribute whose value is positive}}
  hetero.checkpoint %w at %step replicas = 1 of 0 placement = ring : tensor<8xf32>
  return
}

// -----

func.func @group_placement_must_divide_world(%w: tensor<8xf32>, %step: i64) {
  // expected-error @+1 {{'hetero.checkpoint' op group placement splits 8 machines into groups of 3, which does not divide them; use ring or mixed}}
  hetero.checkpoint %w at %step replicas = 3 of 8 placement = group : tensor<8xf32>
  return
}

// -----

func.func @checkpoint_every_zero(%w: tensor<8xf32>, %step: i64) {
  // expected-error @+1 {{'hetero.checkpoint' op attribute 'every' failed to satisfy constraint: 64-bit integer attribute whose value is positive}}
  hetero.checkpoint %w at %step replicas = 2 of 8 placement = group every = 0 : tensor<8xf32>
  return
}

// -----

func.func @checkpoint_needs_a_tensor(%step: i64) {
  // expected-error @+1 {{'hetero.checkpoint' op needs at least one tensor to checkpoint}}
  "hetero.checkpoint"(%step) <{replicas = 1 : i64, world = 1 : i64, placement = 1 : i32}> {operandSegmentSizes = array<i32: 0, 1>} : (i64) -> ()
  return
}

// -----

func.func @checkpoint_needs_static_shapes(%w: tensor<?xf32>, %step: i64) {
  // expected-error @+1 {{'hetero.checkpoint' op operand #0 must be variadic of statically shaped tensor of integer or floating-point values, but got 'tensor<?xf32>'}}
  hetero.checkpoint %w at %step replicas = 2 of 2 placement = group : tensor<?xf32>
  return
}

// -----

func.func @checkpoint_needs_numbers(%w: tensor<8xindex>, %step: i64) {
  // expected-error @+1 {{'hetero.checkpoint' op operand #0 must be variadic of statically shaped tensor of integer or floating-point values, but got 'tensor<8xindex>'}}
  hetero.checkpoint %w at %step replicas = 2 of 2 placement = group : tensor<8xindex>
  return
}

// -----

func.func @ckpt_chunk_needs_numbers(%w: tensor<8xindex>) {
  // expected-error @+1 {{'hetero.ckpt_chunk' op operand #0 must be statically shaped tensor of integer or floating-point values, but got 'tensor<8xindex>'}}
  hetero.ckpt_chunk %w offset 0 bytes 4 copy 0 span 0 : tensor<8xindex>
  return
}

// -----

func.func @ckpt_chunk_past_the_tensor(%w: tensor<8xf32>, %step: i64) {
  hetero.checkpoint %w at %step replicas = 2 of 2 placement = group : tensor<8xf32>
  // expected-error @+1 {{'hetero.ckpt_chunk' op sends 16 bytes from offset 24 of a tensor of 32 bytes}}
  hetero.ckpt_chunk %w offset 24 bytes 16 copy 0 span 0 : tensor<8xf32>
  hetero.ckpt_commit
  return
}

// -----

func.func @ckpt_chunk_needs_bytes(%w: tensor<8xf32>, %step: i64) {
  hetero.checkpoint %w at %step replicas = 2 of 2 placement = group : tensor<8xf32>
  // expected-error @+1 {{'hetero.ckpt_chunk' op attribute 'bytes' failed to satisfy constraint: 64-bit integer attribute whose value is positive}}
  hetero.ckpt_chunk %w offset 0 bytes 0 copy 0 span 0 : tensor<8xf32>
  return
}

// -----

func.func @ckpt_chunk_of_no_checkpoint(%w: tensor<8xf32>, %v: tensor<8xf32>, %step: i64) {
  hetero.checkpoint %w at %step replicas = 2 of 2 placement = group : tensor<8xf32>
  // expected-error @+1 {{'hetero.ckpt_chunk' op sends a tensor that no hetero.checkpoint before it in the block checkpoints}}
  hetero.ckpt_chunk %v offset 0 bytes 4 copy 0 span 0 : tensor<8xf32>
  return
}

// -----

func.func @ckpt_chunk_before_its_checkpoint(%w: tensor<8xf32>, %step: i64) {
  // expected-error @+1 {{'hetero.ckpt_chunk' op sends a tensor that no hetero.checkpoint before it in the block checkpoints}}
  hetero.ckpt_chunk %w offset 0 bytes 4 copy 0 span 0 : tensor<8xf32>
  hetero.checkpoint %w at %step replicas = 2 of 2 placement = group : tensor<8xf32>
  return
}

// -----

func.func @ckpt_chunk_copy_out_of_range(%w: tensor<8xf32>, %step: i64) {
  hetero.checkpoint %w at %step replicas = 2 of 4 placement = group : tensor<8xf32>
  // expected-error @+1 {{'hetero.ckpt_chunk' op sends remote copy 1, but its checkpoint keeps 2 replicas: remote copies 0..0}}
  hetero.ckpt_chunk %w offset 0 bytes 4 copy 1 span 0 : tensor<8xf32>
  return
}

// -----

func.func @ckpt_commit_without_checkpoint() {
  // expected-error @+1 {{'hetero.ckpt_commit' op has no hetero.checkpoint before it in the block to complete}}
  hetero.ckpt_commit
  return
}

// -----

func.func @ckpt_commit_before_a_chunk(%w: tensor<8xf32>, %step: i64) {
  hetero.checkpoint %w at %step replicas = 2 of 2 placement = group : tensor<8xf32>
  // expected-error @+1 {{'hetero.ckpt_commit' op comes before a hetero.ckpt_chunk of its checkpoint; every chunk is sent before the commit}}
  hetero.ckpt_commit
  hetero.ckpt_chunk %w offset 0 bytes 4 copy 0 span 0 : tensor<8xf32>
  return
}

// -----

// expected-error @+1 {{checkpoint replicas must be >= 1 (the local copy counts), got 0}}
func.func private @replicas_zero() attributes {c = #hetero.checkpoint<replicas = 0>}

// -----

// expected-error @+1 {{checkpoint every must be >= 1 steps, got 0}}
func.func private @every_zero() attributes {c = #hetero.checkpoint<replicas = 2, every = 0>}

// -----

// expected-error @+2 {{expected one of [group, ring, mixed] for where checkpoint replicas live, got: star}}
// expected-error @+1 {{failed to parse Hetero_CheckpointAttr parameter 'placement' which is to be a `::hetero::ReplicaPlacement`}}
func.func private @unknown_placement() attributes {c = #hetero.checkpoint<replicas = 2, placement = star>}

// -----

shard.grid @grid(shape = 2x2)
func.func private @data(i64, i64, i64) -> (tensor<2x4xf32>, tensor<2x4xf32>)
func.func private @fwd(tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<f32>
func.func private @bwd(tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// expected-error @+1 {{'hetero.pipeline' op keeps 5 checkpoint replicas, but runs on only 4 ranks; replicas must be at most the ranks}}
hetero.pipeline @p stages = 2 microbatches = 2 on @grid data @data optimizer #hetero.sgd<lr = 1.0e-01> checkpoint #hetero.checkpoint<replicas = 5> {
  hetero.stage 0 forward @fwd backward @bwd
  hetero.stage 1 forward @fwd backward @bwd
}

// -----

shard.grid @grid(shape = 2x3)
func.func private @data(i64, i64, i64) -> (tensor<2x4xf32>, tensor<2x4xf32>)
func.func private @fwd(tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<f32>
func.func private @bwd(tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// expected-error @+1 {{'hetero.pipeline' op places checkpoints in groups of 4, which do not divide its 6 ranks; use placement = mixed or ring}}
hetero.pipeline @p stages = 2 microbatches = 2 on @grid data @data optimizer #hetero.sgd<lr = 1.0e-01> checkpoint #hetero.checkpoint<replicas = 4, placement = group> {
  hetero.stage 0 forward @fwd backward @bwd
  hetero.stage 1 forward @fwd backward @bwd
}

// -----

func.func private @fwd(tensor<2x4xf32>) -> tensor<2x4xf32>
func.func private @bwd(tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// expected-error @+1 {{'hetero.pipeline' op keeps checkpoints, but names no data function and optimizer: only an executable pipeline has training state}}
hetero.pipeline @p stages = 1 microbatches = 2 checkpoint #hetero.checkpoint<replicas = 1> {
  hetero.stage 0 forward @fwd backward @bwd
}
