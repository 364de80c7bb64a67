// RUN: hetero-opt %s -split-input-file -verify-diagnostics

func.func @col_sharding_must_divide_columns(%x: tensor<16x64xf32>, %w: tensor<64x250xf32>) {
  // expected-error @+1 {{'hetero.prunable_matmul' op col-mode sharding splits the 250 output columns of the weight over tp = 4 ranks, which does not divide them}}
  %y = hetero.prunable_matmul col %x, %w layer "fc" tp = 4 : tensor<16x64xf32>, tensor<64x250xf32> -> tensor<16x250xf32>
  return
}

// -----

func.func @row_sharding_must_divide_rows(%x: tensor<16x66xf32>, %w: tensor<66x256xf32>) {
  // expected-error @+1 {{'hetero.prunable_matmul' op row-mode sharding splits the 66 rows of the weight over tp = 4 ranks, which does not divide them}}
  %y = hetero.prunable_matmul row %x, %w layer "fc" tp = 4 : tensor<16x66xf32>, tensor<66x256xf32> -> tensor<16x256xf32>
  return
}

// -----

// The input gradient holds the weight transposed (N x K): a col-mode layer
// splits its rows here.
func.func @grad_input_col_sharding(%g: tensor<16x250xf32>, %wt: tensor<250x64xf32>) {
  // expected-error @+1 {{'hetero.prunable_matmul' op col-mode sharding splits the 250 output columns of the weight over tp = 4 ranks, which does not divide them}}
  %dx = hetero.prunable_matmul col %g, %wt layer "fc" tp = 4 product = grad_input : tensor<16x250xf32>, tensor<250x64xf32> -> tensor<16x64xf32>
  return
}

// -----

// The weight gradient (K x N) takes its K from the transposed input.
func.func @grad_weight_row_sharding(%xt: tensor<66x16xf32>, %g: tensor<16x256xf32>) {
  // expected-error @+1 {{'hetero.prunable_matmul' op row-mode sharding splits the 66 rows of the weight over tp = 4 ranks, which does not divide them}}
  %dw = hetero.prunable_matmul row %xt, %g layer "fc" tp = 4 product = grad_weight : tensor<66x16xf32>, tensor<16x256xf32> -> tensor<66x256xf32>
  return
}

// -----

func.func @grad_weight_batched_lhs(%xt: tensor<2x64x16xf32>, %g: tensor<16x256xf32>) {
  // expected-error @+1 {{'hetero.prunable_matmul' op computes a weight gradient, which expects a rank-2 lhs (the layer input transposed, tokens flattened), got 'tensor<2x64x16xf32>'}}
  %dw = hetero.prunable_matmul col %xt, %g layer "fc" tp = 1 product = grad_weight : tensor<2x64x16xf32>, tensor<16x256xf32> -> tensor<2x64x256xf32>
  return
}

// -----

func.func @unknown_product(%x: tensor<16x64xf32>, %w: tensor<64x256xf32>) {
  // expected-error @+1 {{custom op 'hetero.prunable_matmul' expected string or keyword containing one of the following enum values for attribute 'product' [forward, grad_input, grad_weight]}}
  %y = hetero.prunable_matmul col %x, %w layer "fc" tp = 1 product = backward : tensor<16x64xf32>, tensor<64x256xf32> -> tensor<16x256xf32>
  return
}

// -----

func.func @matmul_contraction_mismatch(%x: tensor<16x64xf32>, %w: tensor<32x256xf32>) {
  // expected-error @+1 {{'hetero.prunable_matmul' op contraction sizes differ: lhs 'tensor<16x64xf32>' has 64, rhs 'tensor<32x256xf32>' has 32}}
  %y = hetero.prunable_matmul col %x, %w layer "fc" tp = 1 : tensor<16x64xf32>, tensor<32x256xf32> -> tensor<16x256xf32>
  return
}

// -----

func.func @matmul_result_type_mismatch(%x: tensor<16x64xf32>, %w: tensor<64x256xf32>) {
  // expected-error @+1 {{'hetero.prunable_matmul' op result 'tensor<16x128xf32>' does not match 'tensor<16x64xf32>' x 'tensor<64x256xf32>'}}
  %y = hetero.prunable_matmul col %x, %w layer "fc" tp = 1 : tensor<16x64xf32>, tensor<64x256xf32> -> tensor<16x128xf32>
  return
}

// -----

func.func @matmul_lhs_rank_too_low(%x: tensor<64xf32>, %w: tensor<64x256xf32>) {
  // expected-error @+1 {{'hetero.prunable_matmul' op expects an lhs of rank >= 2 and a rank-2 rhs, got 'tensor<64xf32>' and 'tensor<64x256xf32>'}}
  %y = hetero.prunable_matmul col %x, %w layer "fc" tp = 1 : tensor<64xf32>, tensor<64x256xf32> -> tensor<256xf32>
  return
}

// -----

func.func @matmul_tp_zero(%x: tensor<16x64xf32>, %w: tensor<64x256xf32>) {
  // expected-error @+1 {{'hetero.prunable_matmul' op attribute 'tp' failed to satisfy constraint: 64-bit integer attribute whose value is positive}}
  %y = hetero.prunable_matmul col %x, %w layer "fc" tp = 0 : tensor<16x64xf32>, tensor<64x256xf32> -> tensor<16x256xf32>
  return
}

// -----

func.func @matmul_needs_layer_key(%x: tensor<16x64xf32>, %w: tensor<64x256xf32>) {
  // expected-error @+1 {{'hetero.prunable_matmul' op needs a non-empty layer key}}
  %y = hetero.prunable_matmul col %x, %w layer "" tp = 1 : tensor<16x64xf32>, tensor<64x256xf32> -> tensor<16x256xf32>
  return
}

// -----

func.func @matmul_element_type_mismatch(%x: tensor<16x64xf32>, %w: tensor<64x256xf16>) {
  // expected-error @+1 {{'hetero.prunable_matmul' op failed to verify that all of {lhs, rhs, result} have same element type}}
  %y = hetero.prunable_matmul col %x, %w layer "fc" tp = 1 : tensor<16x64xf32>, tensor<64x256xf16> -> tensor<16x256xf32>
  return
}

// -----

func.func @prune_plan_columns_zero() {
  // expected-error @+1 {{'hetero.prune_plan' op attribute 'columns' failed to satisfy constraint: 64-bit integer attribute whose value is positive}}
  %k = hetero.prune_plan layer "fc" columns = 0 : tensor<?xindex>
  return
}

// -----

func.func @prune_plan_keeps_too_many() {
  // expected-error @+1 {{'hetero.prune_plan' op keeps 9 of only 8 columns}}
  %k = hetero.prune_plan layer "fc" columns = 8 : tensor<9xindex>
  return
}

// -----

func.func @observe_weight_dynamic_rows(%w: tensor<?x16xf32>) {
  // expected-error @+1 {{'hetero.observe_weight' op observes a weight with a dynamic number of rows; expected one static row per contraction column}}
  hetero.observe_weight %w layer "fc" : tensor<?x16xf32>
  return
}

// -----

func.func @observe_weight_rows_differ(%w: tensor<32x16xf32>) {
  // expected-note @+1 {{the plan}}
  %k = hetero.prune_plan layer "fc" columns = 64 : tensor<?xindex>
  // expected-error @+1 {{'hetero.observe_weight' op observes 32 rows of layer 'fc', whose hetero.prune_plan plans 64 columns; expected one row per column}}
  hetero.observe_weight %w layer "fc" : tensor<32x16xf32>
  return
}

// -----

func.func @observe_weight_not_f32(%w: tensor<32x16xf16>) {
  // expected-error @+1 {{'hetero.observe_weight' op operand #0 must be 2D tensor of 32-bit float values, but got 'tensor<32x16xf16>'}}
  hetero.observe_weight %w layer "fc" : tensor<32x16xf16>
  return
}

// -----

func.func @select_cols_axis_out_of_range(%w: tensor<64x256xf32>, %k: tensor<?xindex>) {
  // expected-error @+1 {{'hetero.select_cols' op axis 2 is not a dimension of 'tensor<64x256xf32>'}}
  %s = hetero.select_cols %w[%k] axis = 2 : tensor<64x256xf32>, tensor<?xindex> -> tensor<64x?xf32>
  return
}

// -----

func.func @select_cols_other_dim_differs(%w: tensor<64x256xf32>, %k: tensor<?xindex>) {
  // expected-error @+1 {{'hetero.select_cols' op dimension 0 differs: 'tensor<32x?xf32>' vs 'tensor<64x256xf32>'}}
  %s = hetero.select_cols %w[%k] axis = 1 : tensor<64x256xf32>, tensor<?xindex> -> tensor<32x?xf32>
  return
}

// -----

func.func @select_cols_index_count_mismatch(%w: tensor<64x256xf32>, %k: tensor<4xindex>) {
  // expected-error @+1 {{'hetero.select_cols' op has 4 indices but 5 slices along axis 1}}
  %s = hetero.select_cols %w[%k] axis = 1 : tensor<64x256xf32>, tensor<4xindex> -> tensor<64x5xf32>
  return
}

// -----

func.func @select_cols_more_slices_than_source(%w: tensor<64x4xf32>, %k: tensor<5xindex>) {
  // expected-error @+1 {{'hetero.select_cols' op moves 5 slices along axis 1 of a tensor that has only 4}}
  %s = hetero.select_cols %w[%k] axis = 1 : tensor<64x4xf32>, tensor<5xindex> -> tensor<64x5xf32>
  return
}

// -----

func.func @select_cols_rank_mismatch(%w: tensor<64x256xf32>, %k: tensor<?xindex>) {
  // expected-error @+1 {{'hetero.select_cols' op expects 'tensor<64x?x1xf32>' and 'tensor<64x256xf32>' to have the same rank}}
  %s = hetero.select_cols %w[%k] axis = 1 : tensor<64x256xf32>, tensor<?xindex> -> tensor<64x?x1xf32>
  return
}

// -----

func.func @impute_cols_index_count_mismatch(%p: tensor<16x4xf32>, %k: tensor<3xindex>) {
  // expected-error @+1 {{'hetero.impute_cols' op has 3 indices but 4 slices along axis 1}}
  %s = hetero.impute_cols zero %p[%k] axis = 1 : tensor<16x4xf32>, tensor<3xindex> -> tensor<16x256xf32>
  return
}

// -----

func.func @impute_cols_needs_integer_indices(%p: tensor<16x4xf32>, %k: tensor<4xf32>) {
  // expected-error @+1 {{'hetero.impute_cols' op operand #1 must be 1D tensor of index or signless integer values, but got 'tensor<4xf32>'}}
  %s = hetero.impute_cols zero %p[%k] axis = 1 : tensor<16x4xf32>, tensor<4xf32> -> tensor<16x256xf32>
  return
}

// -----

func.func @impute_average_needs_floats(%p: tensor<16x4xi32>, %k: tensor<4xindex>) {
  // expected-error @+1 {{'hetero.impute_cols' op imputes averages, which needs floating-point elements, got 'i32'}}
  %s = hetero.impute_cols average %p[%k] axis = 1 : tensor<16x4xi32>, tensor<4xindex> -> tensor<16x256xi32>
  return
}

// -----

func.func @migration_plan_receives_too_many(%source: index) {
  // expected-error @+1 {{'hetero.migration_plan' op receives 9 of only 8 columns}}
  %r, %m = hetero.migration_plan layer "fc" columns = 8 from %source : tensor<9xindex>
  return
}

// -----

func.func @migration_plan_columns_zero(%source: index) {
  // expected-error @+1 {{'hetero.migration_plan' op attribute 'columns' failed to satisfy constraint: 64-bit integer attribute whose value is positive}}
  %r, %m = hetero.migration_plan layer "fc" columns = 0 from %source : tensor<?xindex>
  return
}

// -----

func.func @same_needs_previous(%p: tensor<16x4xf32>, %k: tensor<4xindex>) {
  // expected-error @+1 {{'hetero.impute_cols' op imputes the previous iteration's values (same) but has no 'previous' operand; expected the result of a hetero.previous_product}}
  %s = hetero.impute_cols same %p[%k] axis = 1 : tensor<16x4xf32>, tensor<4xindex> -> tensor<16x256xf32>
  return
}

// -----

func.func @previous_without_same(%p: tensor<16x4xf32>, %k: tensor<4xindex>, %last: tensor<16x256xf32>) {
  // expected-error @+1 {{'hetero.impute_cols' op has a 'previous' operand but imputes zero; only same imputation reads one}}
  %s = hetero.impute_cols zero %p[%k] axis = 1 previous %last : tensor<16x4xf32>, tensor<4xindex> -> tensor<16x256xf32>
  return
}

// -----

func.func @previous_of_forward() {
  // expected-error @+1 {{'hetero.previous_product' op keeps a forward product; only grad_input and grad_weight are imputed}}
  %last = hetero.previous_product layer "l" product = forward : tensor<16x256xf32>
  return
}

// -----

func.func @keep_bits(%v: tensor<16x256xi1>) {
  // expected-error @+1 {{'hetero.keep_product' op keeps elements of type 'i1'; expected integers or floats of a whole number of bytes}}
  hetero.keep_product %v layer "l" product = grad_weight : tensor<16x256xi1>
  return
}

// -----

func.func @keep_dynamic(%v: tensor<16x?xf32>) {
  // expected-error @+1 {{'hetero.keep_product' op operand #0 must be statically shaped tensor of any type values, but got 'tensor<16x?xf32>'}}
  hetero.keep_product %v layer "l" product = grad_weight : tensor<16x?xf32>
  return
}

// -----

func.func @migrated_columns_too_many(%source: index) {
  // expected-error @+1 {{'hetero.migrated_columns' op migrates 9 of only 8 columns}}
  %m, %f = hetero.migrated_columns layer "fc" columns = 8 from %source : tensor<9xindex>
  return
}

// -----

func.func @migrated_columns_columns_zero(%source: index) {
  // expected-error @+1 {{'hetero.migrated_columns' op attribute 'columns' failed to satisfy constraint: 64-bit integer attribute whose value is positive}}
  %m, %f = hetero.migrated_columns layer "fc" columns = 0 from %source : tensor<?xindex>
  return
}
