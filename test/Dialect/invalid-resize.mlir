// RUN: hetero-opt %s -split-input-file -verify-diagnostics

// ZERO-resizing's consistency constraint: a pruned value (hetero.select_cols)
// feeds matmuls only, and what stays pruned is restored by hetero.impute_cols
// before anything else sees it.

func.func @pruned_into_collective(%w: tensor<64x256xf32>, %k: tensor<?xindex>) -> tensor<64x?xf32> {
  // expected-error @+1 {{'hetero.select_cols' op prunes a value that reaches 'hetero.all_reduce' with its pruned axis 1; a pruned value may only feed a matmul, and what stays pruned must be restored to its unpruned shape by hetero.impute_cols first}}
  %s = hetero.select_cols %w[%k] axis = 1 : tensor<64x256xf32>, tensor<?xindex> -> tensor<64x?xf32>
  // expected-note @+1 {{pruned value used here}}
  %r = hetero.all_reduce %s : tensor<64x?xf32>
  return %r : tensor<64x?xf32>
}

// -----

func.func @pruned_returned(%w: tensor<64x256xf32>, %k: tensor<?xindex>) -> tensor<64x?xf32> {
  // expected-error @+1 {{'hetero.select_cols' op prunes a value that reaches 'func.return' with its pruned axis 1}}
  %s = hetero.select_cols %w[%k] axis = 1 : tensor<64x256xf32>, tensor<?xindex> -> tensor<64x?xf32>
  // expected-note @+1 {{pruned value used here}}
  return %s : tensor<64x?xf32>
}

// -----

// A product that keeps the pruned axis (dX = G W^T[:, P]) must be imputed.
func.func @product_stays_pruned(%g: tensor<16x64xf32>, %wt: tensor<64x256xf32>, %k: tensor<?xindex>) -> tensor<16x?xf32> {
  // expected-error @+1 {{'hetero.select_cols' op prunes a value that reaches 'func.return' with its pruned axis 1}}
  %ws = hetero.select_cols %wt[%k] axis = 1 : tensor<64x256xf32>, tensor<?xindex> -> tensor<64x?xf32>
  %part = hetero.prunable_matmul col %g, %ws layer "l" tp = 1 : tensor<16x64xf32>, tensor<64x?xf32> -> tensor<16x?xf32>
  // expected-note @+1 {{pruned value used here}}
  return %part : tensor<16x?xf32>
}

// -----

// Restoring along another axis than the pruned one does not restore it.
func.func @imputed_along_another_axis(%w: tensor<64x256xf32>, %k: tensor<?xindex>) -> tensor<64x256xf32> {
  // expected-error @+1 {{'hetero.select_cols' op prunes a value that reaches 'hetero.impute_cols' with its pruned axis 1}}
  %s = hetero.select_cols %w[%k] axis = 1 : tensor<64x256xf32>, tensor<?xindex> -> tensor<64x?xf32>
  %c = tensor.cast %s : tensor<64x?xf32> to tensor<?x?xf32>
  // expected-note @+1 {{pruned value used here}}
  %f = hetero.impute_cols zero %c[%k] axis = 0 : tensor<?x?xf32>, tensor<?xindex> -> tensor<64x256xf32>
  return %f : tensor<64x256xf32>
}

// -----

// An elementwise op on a pruned operand is neither a matmul nor a restore.
func.func @pruned_into_elementwise(%x: tensor<16x256xf32>, %k: tensor<?xindex>, %d: index) -> tensor<16x?xf32> {
  // expected-error @+1 {{'hetero.select_cols' op prunes a value that reaches 'linalg.exp' with its pruned axis 1}}
  %s = hetero.select_cols %x[%k] axis = 1 : tensor<16x256xf32>, tensor<?xindex> -> tensor<16x?xf32>
  %e = tensor.empty(%d) : tensor<16x?xf32>
  // expected-note @+1 {{pruned value used here}}
  %r = linalg.exp ins(%s : tensor<16x?xf32>) outs(%e : tensor<16x?xf32>) -> tensor<16x?xf32>
  return %r : tensor<16x?xf32>
}
