// RUN: hetero-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{'hetero.grid' expects a flat symbol reference, got "grid"}}
func.func @grid_is_a_symbol() attributes {hetero.grid = "grid"} {
  return
}

// -----

// expected-error @+1 {{'hetero.schedule' expects a flat symbol reference, got @a::@b}}
func.func @schedule_is_a_flat_symbol() attributes {hetero.schedule = @a::@b} {
  return
}

// -----

// expected-error @+1 {{'hetero.stages' expects a non-negative i64 integer, got -2 : i64}}
func.func @stages_are_counted() attributes {hetero.stages = -2 : i64} {
  return
}

// -----

// expected-error @+1 {{'hetero.peak_stash' expects a non-negative i64 integer, got 3 : i32}}
func.func @peak_stash_is_i64() attributes {hetero.peak_stash = 3 : i32} {
  return
}

// -----

// expected-error @+1 {{'hetero.peak_stash_bytes' expects a non-negative i64 integer, got -64 : i64}}
func.func @peak_stash_bytes_not_negative() attributes {hetero.peak_stash_bytes = -64 : i64} {
  return
}

// -----

// expected-error @+1 {{'hetero.plan_table' expects an array of dictionaries (one per plan), got [1]}}
func.func @plan_table_of_dictionaries() attributes {hetero.plan_table = [1]} {
  return
}

// -----

// expected-error @+1 {{unknown hetero attribute 'hetero.gird'; expected one of hetero.grid, hetero.pipeline, hetero.schedule, hetero.plan_table, hetero.stage, hetero.stages, hetero.peak_stash, hetero.peak_stash_bytes, hetero.density, hetero.shard_dim}}
func.func @misspelt() attributes {hetero.gird = @grid} {
  return
}

// -----

// expected-error @+1 {{'hetero.density' expects a float in [0, 1] (the fraction of non-zero elements), got 2.000000e+00 : f64}}
func.func @density_above_one() attributes {hetero.density = 2.0 : f64} {
  return
}

// -----

// expected-error @+1 {{'hetero.density' expects a float in [0, 1] (the fraction of non-zero elements), got 1 : i64}}
func.func @density_not_a_float() attributes {hetero.density = 1 : i64} {
  return
}

// -----

// The attributes hetero-lower-pipeline states verify.
func.func @valid() attributes {hetero.grid = @g, hetero.pipeline = @p, hetero.schedule = @s, hetero.plan_table = [{step = @a}], hetero.stage = 0 : i64, hetero.stages = 2 : i64, hetero.peak_stash = 1 : i64, hetero.peak_stash_bytes = 64 : i64, hetero.density = 1.000000e-02 : f64} {
  return
}

// -----

// expected-error @+1 {{'hetero.shard_dim' expects on a memref.global, an i64 dimension of it (the one the tensor-parallel ranks split), got 2 : i64}}
memref.global "private" @w : memref<4x8xf32> = uninitialized {hetero.shard_dim = 2 : i64}

// -----

// expected-error @+1 {{'hetero.shard_dim' expects on a memref.global, an i64 dimension of it (the one the tensor-parallel ranks split), got 1 : i64}}
func.func @not_a_global() attributes {hetero.shard_dim = 1 : i64} {
  return
}
