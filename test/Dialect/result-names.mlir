// RUN: hetero-opt %s | FileCheck %s

// Results print under readable names: collectives after the op, a pack of
// several as one name, pruning results after what they hold, the corpus's
// after its results.

// CHECK-LABEL: func.func @names
// CHECK: %all_reduce = hetero.all_reduce
// CHECK: %all_gather = hetero.all_gather
// CHECK: %recv = hetero.recv
// CHECK: %bucket:2 = hetero.bucket
// CHECK: %kept = hetero.prune_plan
// CHECK: %selected = hetero.select_cols
// CHECK: %imputed = hetero.impute_cols
// CHECK: %input, %target = hetero.corpus_batch
func.func @names(%g: tensor<8xf32>, %w: tensor<4x8xf32>, %i: i64) {
  %0 = hetero.all_reduce %g : tensor<8xf32>
  %1 = hetero.all_gather %g axis = 0 : tensor<8xf32> -> tensor<16xf32>
  %2 = hetero.recv from 0 : tensor<8xf32>
  %3:2 = hetero.bucket %g, %w : tensor<8xf32>, tensor<4x8xf32>
  %4 = hetero.prune_plan layer "l" columns = 8 : tensor<?xindex>
  %5 = hetero.select_cols %w[%4] axis = 1 : tensor<4x8xf32>, tensor<?xindex> -> tensor<4x?xf32>
  %6 = hetero.impute_cols zero %5[%4] axis = 1 : tensor<4x?xf32>, tensor<?xindex> -> tensor<4x8xf32>
  %7:2 = hetero.corpus_batch %i, %i, %i vocab = 80 replicas = 2 : tensor<4x32xi32>
  return
}
