// RUN: hetero-opt %s -split-input-file -verify-diagnostics

func.func @topk_all_reduce_not_linear(%g: tensor<64xf32>) {
  // expected-error @+1 {{'hetero.all_reduce' op compressor 'topk' is not linear: its compressed tensors cannot be summed by an all-reduce; use scheme = allgather or scheme = alltoall}}
  %0 = hetero.all_reduce %g compress <topk, ratio = 0.01> : tensor<64xf32>
  return
}

// -----

func.func @randomk_all_reduce_not_linear(%g: tensor<64xf32>) {
  // expected-error @+1 {{'hetero.all_reduce' op compressor 'randomk' is not linear}}
  %0 = hetero.all_reduce %g compress <randomk, ratio = 0.1> : tensor<64xf32>
  return
}

// -----

func.func @dgc_all_reduce_not_linear(%g: tensor<64xf32>) {
  // expected-error @+1 {{'hetero.all_reduce' op compressor 'dgc' is not linear}}
  %0 = hetero.all_reduce %g compress <dgc, ratio = 0.1> : tensor<64xf32>
  return
}

// -----

func.func @efsignsgd_all_reduce_not_linear(%g: tensor<64xf32>) {
  // expected-error @+1 {{'hetero.all_reduce' op compressor 'efsignsgd' is not linear}}
  %0 = hetero.all_reduce %g compress <efsignsgd> : tensor<64xf32>
  return
}

// -----

func.func @onebit_all_reduce_not_linear(%g: tensor<64xf32>) {
  // expected-error @+1 {{'hetero.all_reduce' op compressor 'onebit' is not linear}}
  %0 = hetero.all_reduce %g compress <onebit> : tensor<64xf32>
  return
}

// -----

func.func @qsgd_all_reduce_not_linear(%g: tensor<64xf32>) {
  // expected-error @+1 {{'hetero.all_reduce' op compressor 'qsgd' is not linear}}
  %0 = hetero.all_reduce %g compress <qsgd> : tensor<64xf32>
  return
}

// -----

func.func @compressed_reduction_must_sum(%g: tensor<64xf32>) {
  // expected-error @+1 {{'hetero.all_reduce' op a compressed reduction must be sum or avg, not max}}
  %0 = hetero.all_reduce %g reduction = max compress <fp16> : tensor<64xf32>
  return
}

// -----

func.func @sparse_excludes_compressor(%g: tensor<64xf32>) {
  // expected-error @+1 {{'hetero.all_reduce' op sparse format 'coo' cannot be combined with a compressor}}
  %0 = hetero.all_reduce %g compress <fp16> sparse = coo : tensor<64xf32>
  return
}

// -----

func.func @sparse_reduction_must_sum(%g: tensor<64xf32>) {
  // expected-error @+1 {{'hetero.all_reduce' op sparse format 'hash_bitmap' needs a sum or avg reduction, not min}}
  %0 = hetero.all_reduce %g reduction = min sparse = hash_bitmap : tensor<64xf32>
  return
}

// -----

func.func @compression_ratio_above_one(%g: tensor<64xf32>) {
  // expected-error @+1 {{compression ratio must be in (0, 1], got 1.5}}
  %0 = hetero.all_reduce %g compress <topk, ratio = 1.5, scheme = allgather> : tensor<64xf32>
  return
}

// -----

func.func @compression_ratio_zero(%g: tensor<64xf32>) {
  // expected-error @+1 {{compression ratio must be in (0, 1], got 0}}
  %0 = hetero.all_reduce %g compress <topk, ratio = 0.0, scheme = allgather> : tensor<64xf32>
  return
}

// -----

func.func @ratio_only_for_sparsifiers(%g: tensor<64xf32>) {
  // expected-error @+1 {{'ratio' applies only to topk, dgc and randomk, not to 'fp16'}}
  %0 = hetero.all_reduce %g compress <fp16, ratio = 0.5> : tensor<64xf32>
  return
}

// -----

func.func @qsgd_needs_a_level(%g: tensor<64xf32>) {
  // expected-error @+1 {{qsgd needs at least 1 quantisation level, got 0}}
  %0 = hetero.all_reduce %g compress <qsgd, levels = 0, scheme = alltoall> : tensor<64xf32>
  return
}

// -----

func.func @levels_only_for_qsgd(%g: tensor<64xf32>) {
  // expected-error @+1 {{'levels' applies only to qsgd, not to 'onebit'}}
  %0 = hetero.all_reduce %g compress <onebit, levels = 4, scheme = allgather> : tensor<64xf32>
  return
}

// -----

func.func @error_feedback_needs_compressor(%g: tensor<64xf32>) {
  // expected-error @+1 {{error feedback needs a compressor}}
  %0 = hetero.all_reduce %g compress <none, error_feedback> : tensor<64xf32>
  return
}

// -----

func.func @unknown_compressor(%g: tensor<64xf32>) {
  // expected-error @+1 {{unknown compressor 'zip', expected one of none, fp16, bf16, topk, dgc, randomk, efsignsgd, onebit, qsgd}}
  %0 = hetero.all_reduce %g compress <zip> : tensor<64xf32>
  return
}

// -----

func.func @node_size_zero(%g: tensor<64xf32>) {
  // expected-error @+1 {{node_size must be at least 1, got 0}}
  %0 = hetero.all_reduce %g compress <fp16, node_size = 0> : tensor<64xf32>
  return
}

// -----

func.func @unknown_compression_parameter(%g: tensor<64xf32>) {
  // expected-error @+1 {{unknown compression parameter 'speed', expected ratio, levels, error_feedback, placement, scheme or node_size}}
  %0 = hetero.all_reduce %g compress <fp16, speed = 2> : tensor<64xf32>
  return
}

// -----

func.func @placement_given_twice(%g: tensor<64xf32>) {
  // expected-error @+1 {{'placement' is given twice}}
  %0 = hetero.all_reduce %g compress <fp16, placement = cpu, placement = gpu> : tensor<64xf32>
  return
}

// -----

func.func @unknown_placement(%g: tensor<64xf32>) {
  // expected-error @+1 {{unknown placement 'tpu', expected cpu or gpu}}
  %0 = hetero.all_reduce %g compress <fp16, placement = tpu> : tensor<64xf32>
  return
}

// -----

func.func @unknown_scheme(%g: tensor<64xf32>) {
  // expected-error @+1 {{unknown scheme 'ring', expected allreduce, allgather or alltoall}}
  %0 = hetero.all_reduce %g compress <fp16, scheme = ring> : tensor<64xf32>
  return
}

// -----

func.func @all_reduce_unknown_grid(%g: tensor<64xf32>) {
  // expected-error @+1 {{'hetero.all_reduce' op 'nowhere' does not name a shard.grid}}
  %0 = hetero.all_reduce %g on @nowhere : tensor<64xf32>
  return
}

// -----

shard.grid @g(shape = 2x4)
func.func @grid_axis_out_of_range(%x: tensor<64xf32>) {
  // expected-error @+1 {{'hetero.all_reduce' op grid axis 2 is outside grid 'g' of rank 2}}
  %0 = hetero.all_reduce %x on @g axes = [2] : tensor<64xf32>
  return
}

// -----

shard.grid @g(shape = 2x4)
func.func @grid_axis_named_twice(%x: tensor<64xf32>) {
  // expected-error @+1 {{'hetero.all_reduce' op grid axis 1 is named twice}}
  %0 = hetero.all_reduce %x on @g axes = [1, 1] : tensor<64xf32>
  return
}

// -----

func.func @grid_axes_without_grid(%x: tensor<64xf32>) {
  // expected-error @+1 {{'hetero.all_reduce' op names grid axes but no grid}}
  %0 = "hetero.all_reduce"(%x) <{grid_axes = array<i16: 0>}> : (tensor<64xf32>) -> tensor<64xf32>
  return
}

// -----

func.func @all_gather_size_not_multiple(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'hetero.all_gather' op dimension 0 of 'tensor<10x8xf32>' is not a multiple of the 4 of 'tensor<4x8xf32>'}}
  %0 = hetero.all_gather %x axis = 0 : tensor<4x8xf32> -> tensor<10x8xf32>
  return
}

// -----

shard.grid @g(shape = 2x4)
func.func @all_gather_size_mismatches_group(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'hetero.all_gather' op expects dimension 0 to be 4 x 4 ranks = 16, got 8}}
  %0 = hetero.all_gather %x on @g axes = [1] axis = 0 : tensor<4x8xf32> -> tensor<8x8xf32>
  return
}

// -----

func.func @all_gather_other_dim_differs(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'hetero.all_gather' op dimension 1 differs: 'tensor<4x8xf32>' vs 'tensor<8x4xf32>'}}
  %0 = hetero.all_gather %x axis = 0 : tensor<4x8xf32> -> tensor<8x4xf32>
  return
}

// -----

func.func @all_gather_axis_out_of_range(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'hetero.all_gather' op axis 3 is not a dimension of 'tensor<4x8xf32>'}}
  %0 = hetero.all_gather %x axis = 3 : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

shard.grid @g(shape = 8)
func.func @reduce_scatter_size_mismatches_group(%x: tensor<16x8xf32>) {
  // expected-error @+1 {{'hetero.reduce_scatter' op expects dimension 0 to be 4 x 8 ranks = 32, got 16}}
  %0 = hetero.reduce_scatter %x on @g axis = 0 : tensor<16x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @topk_reduce_scatter_not_linear(%x: tensor<16x8xf32>) {
  // expected-error @+1 {{'hetero.reduce_scatter' op compressor 'topk' is not linear}}
  %0 = hetero.reduce_scatter %x axis = 0 compress <topk, ratio = 0.5> : tensor<16x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @all_to_all_split_uneven(%x: tensor<16x8xf32>) {
  // expected-error @+1 {{'hetero.all_to_all' op splits dimension 0 of size 16 into 2 slices of 4, which do not add up}}
  %0 = hetero.all_to_all %x split_axis = 0 concat_axis = 1 : tensor<16x8xf32> -> tensor<4x16xf32>
  return
}

// -----

func.func @all_to_all_concat_not_multiple(%x: tensor<16x8xf32>) {
  // expected-error @+1 {{'hetero.all_to_all' op concat_axis size 12 is not a multiple of 8}}
  %0 = hetero.all_to_all %x split_axis = 0 concat_axis = 1 : tensor<16x8xf32> -> tensor<4x12xf32>
  return
}

// -----

shard.grid @g(shape = 4)
func.func @all_to_all_slices_mismatch_group(%x: tensor<16x8xf32>) {
  // expected-error @+1 {{'hetero.all_to_all' op concatenates 2 slices, but the group has 4 ranks}}
  %0 = hetero.all_to_all %x on @g split_axis = 0 concat_axis = 1 : tensor<16x8xf32> -> tensor<8x16xf32>
  return
}

// -----

func.func @all_to_all_split_axis_out_of_range(%x: tensor<16x8xf32>) {
  // expected-error @+1 {{'hetero.all_to_all' op split_axis 2 is not a dimension of 'tensor<16x8xf32>'}}
  %0 = hetero.all_to_all %x split_axis = 2 concat_axis = 1 : tensor<16x8xf32> -> tensor<16x8xf32>
  return
}

// -----

func.func @all_to_all_other_dim_differs(%x: tensor<16x8xf32>) {
  // expected-error @+1 {{'hetero.all_to_all' op dimension 0 differs: 'tensor<16x8xf32>' vs 'tensor<8x8xf32>'}}
  %0 = hetero.all_to_all %x split_axis = 0 concat_axis = 0 : tensor<16x8xf32> -> tensor<8x8xf32>
  return
}

// -----

shard.grid @g(shape = 4)
func.func @broadcast_root_outside_group(%x: tensor<8xf32>) {
  // expected-error @+1 {{'hetero.broadcast' op root 4 is outside the group of 4 ranks}}
  %0 = hetero.broadcast %x on @g root = 4 : tensor<8xf32>
  return
}

// -----

func.func @reduce_root_negative(%x: tensor<8xf32>) {
  // expected-error @+1 {{'hetero.reduce' op attribute 'root' failed to satisfy constraint: 64-bit integer attribute whose value is non-negative}}
  %0 = hetero.reduce %x root = -1 : tensor<8xf32>
  return
}

// -----

shard.grid @g(shape = 2)
func.func @reduce_root_outside_group(%x: tensor<8xf32>) {
  // expected-error @+1 {{'hetero.reduce' op root 2 is outside the group of 2 ranks}}
  %0 = hetero.reduce %x on @g root = 2 : tensor<8xf32>
  return
}

// -----

func.func @send_peer_negative(%x: tensor<8xf32>) {
  // expected-error @+1 {{'hetero.send' op peer must be a rank >= 0, got -1}}
  hetero.send %x to -1 : tensor<8xf32>
  return
}

// -----

shard.grid @g(shape = 2x2)
func.func @send_peer_outside_group(%x: tensor<8xf32>) {
  // expected-error @+1 {{'hetero.send' op peer 2 is outside the group of 2 ranks}}
  hetero.send %x to 2 on @g axes = [0] : tensor<8xf32>
  return
}

// -----

func.func @recv_peer_negative() {
  // expected-error @+1 {{'hetero.recv' op peer must be a rank >= 0, got -3}}
  %0 = hetero.recv from -3 : tensor<8xf32>
  return
}

// -----

shard.grid @g(shape = 3)
func.func @recv_peer_outside_group() {
  // expected-error @+1 {{'hetero.recv' op peer 3 is outside the group of 3 ranks}}
  %0 = hetero.recv from 3 on @g : tensor<8xf32>
  return
}

// -----

func.func @recv_needs_static_shape() {
  // expected-error @+1 {{'hetero.recv' op result #0 must be statically shaped tensor of any type values, but got 'tensor<?xf32>'}}
  %0 = hetero.recv from 0 : tensor<?xf32>
  return
}

// -----

func.func @bucket_needs_one_element_type(%a: tensor<8xf32>, %b: tensor<8xf16>) {
  // expected-error @+1 {{'hetero.bucket' op fuses tensors into one buffer, so they need one element type: operand 1 is 'tensor<8xf16>', operand 0 has 'f32'}}
  %0:2 = hetero.bucket %a, %b : tensor<8xf32>, tensor<8xf16>
  return
}

// -----

func.func @bucket_needs_static_shape(%a: tensor<?xf32>) {
  // expected-error @+1 {{'hetero.bucket' op operand 0 ('tensor<?xf32>') needs a static shape to be fused}}
  %0 = hetero.bucket %a : tensor<?xf32>
  return
}

// -----

func.func @bucket_needs_a_gradient() {
  // expected-error @+1 {{'hetero.bucket' op needs at least one gradient}}
  "hetero.bucket"() : () -> ()
  return
}

// -----

func.func @onebit_bucket_not_linear(%a: tensor<8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'hetero.bucket' op compressor 'onebit' is not linear}}
  %0:2 = hetero.bucket %a, %b compress <onebit> : tensor<8xf32>, tensor<8xf32>
  return
}
