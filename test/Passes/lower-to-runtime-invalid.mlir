// RUN: hetero-opt %s --hetero-lower-to-runtime -split-input-file -verify-diagnostics

func.func @all_gather_is_not_compressed(%g: tensor<64xf32>) -> tensor<128xf32> {
  // expected-error @+1 {{'hetero.all_gather' op with compressor 'fp16' cannot be lowered to the runtime yet; only all-reduces and buckets are compressed}}
  %0 = hetero.all_gather %g axis = 0 compress <fp16> : tensor<64xf32> -> tensor<128xf32>
  return %0 : tensor<128xf32>
}

// -----

func.func @compressed_all_reduce_needs_f32(%g: tensor<64xf64>) -> tensor<64xf64> {
  // expected-error @+1 {{'hetero.all_reduce' op compresses 'f64' gradients, but the runtime compresses f32 only}}
  %0 = hetero.all_reduce %g compress <topk, ratio = 0.1, scheme = allgather> : tensor<64xf64>
  return %0 : tensor<64xf64>
}

// -----

func.func @qsgd_levels_fit_the_runtime(%g: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'hetero.all_reduce' op uses qsgd with 256 levels; the runtime quantises to 1..127 levels}}
  %0 = hetero.all_reduce %g compress <qsgd, levels = 256, scheme = allgather> : tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

func.func @sparse_all_reduce_needs_f32(%g: tensor<64xf64>) -> tensor<64xf64> {
  // expected-error @+1 {{'hetero.all_reduce' op synchronises 'f64' gradients sparsely, but the runtime's sparse all-reduce takes f32 only}}
  %0 = hetero.all_reduce %g sparse = coo : tensor<64xf64>
  return %0 : tensor<64xf64>
}

// -----

func.func @element_type_of_the_runtime(%g: tensor<4xi16>) -> tensor<4xi16> {
  // expected-error @+1 {{'hetero.all_reduce' op moves elements of type 'i16', which the runtime does not support (f32, f64, f16, bf16, i8, i32, i64)}}
  %0 = hetero.all_reduce %g : tensor<4xi16>
  return %0 : tensor<4xi16>
}

// -----

shard.grid @dynamic(shape = 2x?)
func.func @grid_is_static(%g: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'hetero.all_reduce' op needs a static device grid of at most 4 dimensions to be lowered to the runtime, 'dynamic' is not}}
  %0 = hetero.all_reduce %g on @dynamic : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A checkpoint lowers once its chunks are placed, and only of state in
// globals.

func.func @checkpoint_needs_its_commit(%w: tensor<4xf32>, %step: i64) {
  // expected-error @+1 {{'hetero.checkpoint' op has no hetero.ckpt_commit: place its chunks with hetero-interleave-checkpoints before lowering to the runtime}}
  hetero.checkpoint %w at %step replicas = 1 of 2 placement = ring : tensor<4xf32>
  return
}

// -----

func.func @checkpoint_of_a_value(%w: tensor<4xf32>, %step: i64) {
  // expected-error @+1 {{'hetero.checkpoint' op checkpoints a tensor that is not read from a memref.global; training state lives in globals, which a recovered checkpoint is restored into}}
  hetero.checkpoint %w at %step replicas = 1 of 2 placement = ring : tensor<4xf32>
  hetero.ckpt_commit
  return
}

// -----

// The ops without a runtime lowering fail to legalize at their location.

func.func @prunable_matmul_is_expanded_first(%x: tensor<16x64xf32>, %w: tensor<64x256xf32>) -> tensor<16x256xf32> {
  // expected-error @+1 {{failed to legalize operation 'hetero.prunable_matmul' that was explicitly marked illegal}}
  %y = hetero.prunable_matmul col %x, %w layer "l0.fc1" tp = 4
      : tensor<16x64xf32>, tensor<64x256xf32> -> tensor<16x256xf32>
  return %y : tensor<16x256xf32>
}

// -----

// The column gathers and imputations are hetero-columns-to-linalg's.
func.func @select_cols_has_no_lowering(%w: tensor<64x256xf32>, %kept: tensor<?xindex>) -> tensor<64x256xf32> {
  // expected-error @+1 {{failed to legalize operation 'hetero.select_cols' that was explicitly marked illegal}}
  %ws = hetero.select_cols %w[%kept] axis = 1
      : tensor<64x256xf32>, tensor<?xindex> -> tensor<64x?xf32>
  %full = hetero.impute_cols zero %ws[%kept] axis = 1
      : tensor<64x?xf32>, tensor<?xindex> -> tensor<64x256xf32>
  return %full : tensor<64x256xf32>
}

// -----

func.func @impute_cols_has_no_lowering(%part: tensor<16x?xf32>, %kept: tensor<?xindex>) -> tensor<16x256xf32> {
  // expected-error @+1 {{failed to legalize operation 'hetero.impute_cols' that was explicitly marked illegal}}
  %full = hetero.impute_cols zero %part[%kept] axis = 1
      : tensor<16x?xf32>, tensor<?xindex> -> tensor<16x256xf32>
  return %full : tensor<16x256xf32>
}

// -----

shard.grid @grid(shape = 2x?)

func.func @group_sync_dynamic_grid(%w: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'hetero.group_sync' op needs a static (stage[, replica]) grid to be lowered to the runtime}}
  %s = hetero.group_sync %w on @grid <policy = dynamic> : tensor<64xf32>
  return %s : tensor<64xf32>
}

// -----

func.func @all_gather_needs_a_static_shape(%g: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'hetero.all_gather' op needs a static shape for its input to lower to the runtime, got 'tensor<?xf32>' (uncompressed all-reduces, broadcasts and reduces take dynamic shapes)}}
  %0 = hetero.all_gather %g axis = 0 : tensor<?xf32> -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @compressed_all_reduce_needs_a_static_shape(%g: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'hetero.all_reduce' op needs a static shape for its compressed gradient to lower to the runtime, got 'tensor<?xf32>'}}
  %0 = hetero.all_reduce %g compress <fp16> : tensor<?xf32>
  return %0 : tensor<?xf32>
}
