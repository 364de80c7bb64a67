// RUN: hetero-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{sync window must be >= 0 (a fraction of the iteration time), got -1}}
func.func private @window_negative() attributes {s = #hetero.sync<policy = dynamic, window = -1.0>}

// -----

// expected-error @+1 {{sync period must be >= 1, got 0}}
func.func private @period_zero() attributes {s = #hetero.sync<policy = dynamic, period = 0>}

// -----

// expected-error @+1 {{sync_every_microbatches must be >= 1, got 0}}
func.func private @every_zero() attributes {s = #hetero.sync<policy = dynamic, sync_every_microbatches = 0>}

// -----

// expected-error @+1 {{sync parameter 'period' needs policy = dynamic}}
func.func private @allreduce_period() attributes {s = #hetero.sync<policy = allreduce, period = 4>}

// -----

// expected-error @+1 {{sync parameter 'window' needs policy = dynamic}}
func.func private @allreduce_window() attributes {s = #hetero.sync<policy = allreduce, window = 0.5>}

// -----

// expected-error @+1 {{sync parameter 'semantics' needs policy = dynamic}}
func.func private @allreduce_semantics() attributes {s = #hetero.sync<policy = allreduce, semantics = periodic>}

// -----

// expected-error @+1 {{sync parameter 'lock' needs policy = dynamic}}
func.func private @allreduce_lock() attributes {s = #hetero.sync<policy = allreduce, lock = false>}

// -----

// expected-error @+1 {{sync parameter 'sync_every_microbatches' needs policy = dynamic}}
func.func private @allreduce_every() attributes {s = #hetero.sync<policy = allreduce, sync_every_microbatches = 2>}

// -----

// expected-error @+1 {{sync parameter 'adam_var_rescale' needs policy = dynamic}}
func.func private @allreduce_rescale() attributes {s = #hetero.sync<policy = allreduce, adam_var_rescale = true>}

// -----

// expected-error @+1 {{sync needs a policy (policy = allreduce or policy = dynamic)}}
func.func private @no_policy() attributes {s = #hetero.sync<period = 4>}

// -----

// expected-error @+1 {{unknown policy 'pairs', expected allreduce or dynamic}}
func.func private @unknown_policy() attributes {s = #hetero.sync<policy = pairs>}

// -----

// expected-error @+1 {{unknown semantics 'rolling', expected sliding or periodic}}
func.func private @unknown_semantics() attributes {s = #hetero.sync<policy = dynamic, semantics = rolling>}

// -----

// expected-error @+1 {{unknown lock 'yes', expected true or false}}
func.func private @lock_not_bool() attributes {s = #hetero.sync<policy = dynamic, lock = yes>}

// -----

// expected-error @+1 {{unknown sync parameter 'group', expected policy, window, period, semantics, lock, sync_every_microbatches or adam_var_rescale}}
func.func private @unknown_key() attributes {s = #hetero.sync<policy = dynamic, group = 2>}

// -----

// expected-error @+1 {{'period' is given twice}}
func.func private @twice() attributes {s = #hetero.sync<policy = dynamic, period = 2, period = 3>}

// -----

shard.grid @grid(shape = 2x2)

func.func @needs_a_tensor() {
  // expected-error @+1 {{'hetero.group_sync' op needs at least one parameter tensor}}
  "hetero.group_sync"() <{grid = @grid, sync = #hetero.sync<policy = dynamic>}> : () -> ()
  return
}

// -----

shard.grid @grid(shape = 2x2)

func.func @integer_params(%w: tensor<8xi32>) {
  // expected-error @+1 {{'hetero.group_sync' op averages f32 or f64 parameters, but parameter 0 holds 'i32'}}
  %0 = hetero.group_sync %w on @grid <policy = dynamic> : tensor<8xi32>
  return
}

// -----

shard.grid @grid(shape = 2x2)

func.func @dynamic_shape(%w: tensor<8xf32>, %v: tensor<?xf32>) {
  // expected-error @+1 {{'hetero.group_sync' op needs statically shaped parameters, but parameter 1 is 'tensor<?xf32>'}}
  %0:2 = hetero.group_sync %w, %v on @grid <policy = dynamic> : tensor<8xf32>, tensor<?xf32>
  return
}

// -----

func.func @no_grid(%w: tensor<8xf32>) {
  // expected-error @+1 {{'hetero.group_sync' op 'grid' does not name a shard.grid}}
  %0 = hetero.group_sync %w on @grid <policy = dynamic> : tensor<8xf32>
  return
}

// -----

shard.grid @grid(shape = 2x2x2)

func.func @three_axes(%w: tensor<8xf32>) {
  // expected-error @+1 {{'hetero.group_sync' op runs on grid 'grid' of 3 axes; expected (stage) or (stage, replica)}}
  %0 = hetero.group_sync %w on @grid <policy = dynamic> : tensor<8xf32>
  return
}

// -----

func.func private @data(i64, i64, i64) -> (tensor<2x4xf32>, tensor<2x4xf32>)
func.func private @fwd(tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<f32>
func.func private @bwd(tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// expected-error @+1 {{'hetero.pipeline' op syncs every 3 micro-batches, but a step has only 2; sync_every_microbatches must be at most the pipeline's micro-batches}}
hetero.pipeline @p stages = 1 microbatches = 2 data @data optimizer #hetero.sgd<lr = 1.0e-01> sync #hetero.sync<policy = dynamic, sync_every_microbatches = 3> {
  hetero.stage 0 forward @fwd backward @bwd
}

// -----

func.func private @data(i64, i64, i64) -> (tensor<2x4xf32>, tensor<2x4xf32>)
func.func private @fwd(tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<f32>
func.func private @bwd(tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// expected-error @+1 {{'hetero.pipeline' op rescales Adam's second moment (adam_var_rescale = true), but its optimizer is not #hetero.adam}}
hetero.pipeline @p stages = 1 microbatches = 2 data @data optimizer #hetero.sgd<lr = 1.0e-01> sync #hetero.sync<policy = dynamic, adam_var_rescale = true> {
  hetero.stage 0 forward @fwd backward @bwd
}

// -----

func.func private @fwd(tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<f32>
func.func private @bwd(tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// expected-error @+1 {{'hetero.pipeline' op rescales Adam's second moment (adam_var_rescale = true), but its optimizer is not given}}
hetero.pipeline @p stages = 1 microbatches = 2 sync #hetero.sync<policy = dynamic, adam_var_rescale = true> {
  hetero.stage 0 forward @fwd backward @bwd
}
