// RUN: hetero-opt %s --hetero-partition-tp -split-input-file | FileCheck %s
// RUN: hetero-opt %s --hetero-partition-tp=shard-parameters=false -split-input-file | FileCheck %s --check-prefix=REPLICATED
// RUN: hetero-opt %s --hetero-partition-tp=migration=true -split-input-file | FileCheck %s --check-prefix=MIGRATION

// Megatron's sharded parameters: @w (col, 8 x 16) and @v (row, 16 x 8) are
// read only by the products of their layers, through a call, a transpose,
// the gradient sums and an elementwise update, so each rank holds 8 x 4
// and 4 x 8 of them, and so do their gradient sums and optimizer state.
// The products read the slices without slicing, and the gradients stay
// the rank's slices (no all-gather). The full initial values stay in
// constants whose slices @__hetero_shard_init copies once; every public
// function calls it first.

shard.grid @g(shape = 1x1x4)

// CHECK-DAG: memref.global "private" constant @w_unsharded : memref<8x16xf32> = dense<{{.*}}>
// CHECK-DAG: memref.global "private" @w : memref<8x4xf32> = uninitialized {hetero.shard_dim = 1 : i64}
// CHECK-DAG: memref.global "private" @w_sum : memref<8x4xf32> = dense<0.000000e+00> {hetero.shard_dim = 1 : i64}
// CHECK-DAG: memref.global "private" @v : memref<4x8xf32> = dense<5.000000e-01> {hetero.shard_dim = 0 : i64}
// CHECK-DAG: memref.global "private" @v_sum : memref<4x8xf32> = dense<0.000000e+00> {hetero.shard_dim = 0 : i64}
memref.global "private" @w : memref<8x16xf32> = dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0]]>
memref.global "private" @w_sum : memref<8x16xf32> = dense<0.0>
memref.global "private" @v : memref<16x8xf32> = dense<0.5>
memref.global "private" @v_sum : memref<16x8xf32> = dense<0.0>

// CHECK-LABEL: func.func private @layers(
// CHECK-SAME:    %{{.*}}: tensor<2x8xf32>, %[[W:[a-z0-9]+]]: tensor<8x4xf32>, %[[V:[a-z0-9]+]]: tensor<4x8xf32>, %{{.*}}: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<8x4xf32>, tensor<4x8xf32>)
// CHECK-NOT:     tensor.extract_slice %[[W]]
// CHECK-NOT:     tensor.extract_slice %[[V]]
// CHECK:         hetero.prunable_matmul col %{{.*}}, %[[W]] layer "up" tp = 1 : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<2x4xf32>
// CHECK:         hetero.prunable_matmul row %{{.*}}, %[[V]] layer "down" tp = 1 : tensor<2x4xf32>, tensor<4x8xf32> -> tensor<2x8xf32>
// CHECK:         %[[VT:.*]] = linalg.transpose ins(%[[V]] : tensor<4x8xf32>) outs(%{{.*}} : tensor<8x4xf32>) permutation = [1, 0]
// CHECK:         hetero.prunable_matmul row %{{.*}}, %[[VT]] layer "down" tp = 1 product = grad_input : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<2x4xf32>
// CHECK:         %[[WT:.*]] = linalg.transpose ins(%[[W]] : tensor<8x4xf32>) outs(%{{.*}} : tensor<4x8xf32>) permutation = [1, 0]
// CHECK:         hetero.prunable_matmul col %{{.*}}, %[[WT]] layer "up" tp = 1 product = grad_input : tensor<2x4xf32>, tensor<4x8xf32> -> tensor<2x8xf32>
// CHECK:         %[[DW:.*]] = hetero.prunable_matmul col %{{.*}}, %{{.*}} layer "up" tp = 1 product = grad_weight : tensor<8x2xf32>, tensor<2x4xf32> -> tensor<8x4xf32>
// CHECK-NOT:     hetero.all_gather
// CHECK:         %[[DV:.*]] = hetero.prunable_matmul row %{{.*}}, %{{.*}} layer "down" tp = 1 product = grad_weight : tensor<4x2xf32>, tensor<2x8xf32> -> tensor<4x8xf32>
// CHECK-NOT:     hetero.all_gather
// CHECK:         return %{{.*}}, %[[DW]], %[[DV]]
// With migration the parameters stay sharded too. No rank holds another
// shard's slice of a weight, so while shard s migrates columns of a layer,
// s broadcasts the rows of its slice for the migrated columns only (root =
// s, one broadcast a shard and product, on every rank alike, sized by
// hetero.migrated_columns) and each receiver computes from its block of
// them, which starts at `first`.
// The migration plans count the columns of the shard's own product: the
// row layer's grad_input has 16/4 of them, not the weight's 16. A weight's
// gradient stays the rank's slice: while some shard migrates, the
// zero-padded sums are reduce-scattered, each rank receiving its window
// (along the columns, through a transpose that puts the shards first).
// MIGRATION-DAG: memref.global "private" @w : memref<8x4xf32> = uninitialized {hetero.shard_dim = 1 : i64}
// MIGRATION-DAG: memref.global "private" @v : memref<4x8xf32> = dense<5.000000e-01> {hetero.shard_dim = 0 : i64}
// MIGRATION-LABEL: func.func private @layers(
// MIGRATION-SAME:    %{{.*}}: tensor<2x8xf32>, %[[W:[a-z0-9]+]]: tensor<8x4xf32>, %[[V:[a-z0-9]+]]: tensor<4x8xf32>, %{{.*}}: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<8x4xf32>, tensor<4x8xf32>)
// MIGRATION-NOT:     tensor.extract_slice %[[W]]
// MIGRATION-NOT:     tensor.extract_slice %[[V]]
// MIGRATION-NOT:     unrealized_conversion_cast
// MIGRATION:         hetero.prunable_matmul col %{{.*}}, %[[W]] layer "up" tp = 1 : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<2x4xf32>
// MIGRATION:         %{{.*}}, %[[M0:.*]] = hetero.migration_plan layer "up" columns = 8 from %c0{{.*}} : tensor<?xindex>
// MIGRATION-NEXT:    scf.if %[[M0]] -> (tensor<2x16xf32>) {
// MIGRATION-NEXT:      %[[MOVED:.*]], %[[FIRST:.*]] = hetero.migrated_columns layer "up" columns = 8 from %c0{{.*}} : tensor<?xindex>
// MIGRATION-NEXT:      %[[ROWS:.*]] = hetero.select_cols %[[W]][%[[MOVED]]] axis = 0 : tensor<8x4xf32>, tensor<?xindex> -> tensor<?x4xf32>
// MIGRATION-NEXT:      %[[SENT:.*]] = hetero.broadcast %[[ROWS]] on @g axes = [2] root = 0 : tensor<?x4xf32>
// MIGRATION:           %[[BLOCK:.*]] = tensor.extract_slice %[[SENT]][%[[FIRST]], 0] [%{{.*}}, 4] [1, 1] : tensor<?x4xf32> to tensor<?x4xf32>
// MIGRATION-NEXT:      hetero.gemm_mark begin_migrated
// MIGRATION:           linalg.matmul ins(%{{.*}}, %[[BLOCK]] : tensor<2x?xf32>, tensor<?x4xf32>)
// MIGRATION:         } else {
// MIGRATION-NEXT:      scf.yield %{{.*}} : tensor<2x16xf32>
// MIGRATION:         hetero.broadcast %{{.*}} on @g axes = [2] root = 1 : tensor<?x4xf32>
// MIGRATION:         hetero.broadcast %{{.*}} on @g axes = [2] root = 2 : tensor<?x4xf32>
// MIGRATION:         hetero.broadcast %{{.*}} on @g axes = [2] root = 3 : tensor<?x4xf32>
// MIGRATION:         hetero.prunable_matmul row %{{.*}}, %[[V]] layer "down" tp = 1 : tensor<2x4xf32>, tensor<4x8xf32> -> tensor<2x8xf32>
// MIGRATION:         hetero.select_cols %[[V]][%{{.*}}] axis = 0 : tensor<4x8xf32>, tensor<?xindex> -> tensor<?x8xf32>
// MIGRATION-NEXT:    hetero.broadcast %{{.*}} on @g axes = [2] root = 0 : tensor<?x8xf32>
// MIGRATION:         %[[VT:.*]] = linalg.transpose ins(%[[V]] : tensor<4x8xf32>)
// MIGRATION:         hetero.prunable_matmul row %{{.*}}, %[[VT]] layer "down" tp = 1 product = grad_input : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<2x4xf32>
// MIGRATION:         hetero.migration_plan layer "down" columns = 4 from
// MIGRATION:         hetero.migrated_columns layer "down" columns = 4 from
// MIGRATION-NEXT:    hetero.select_cols %[[VT]][%{{.*}}] axis = 1 : tensor<8x4xf32>, tensor<?xindex> -> tensor<8x?xf32>
// MIGRATION-NEXT:    hetero.broadcast %{{.*}} on @g axes = [2] root = 0 : tensor<8x?xf32>
// MIGRATION:         %[[DW0:.*]] = hetero.prunable_matmul col %{{.*}}, %{{.*}} layer "up" tp = 1 product = grad_weight : tensor<8x2xf32>, tensor<2x4xf32> -> tensor<8x4xf32>
// MIGRATION:         %[[DW:.*]] = scf.if %{{.*}} -> (tensor<8x4xf32>) {
// MIGRATION:           %[[SPLIT:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [8, 4, 4] : tensor<8x16xf32> into tensor<8x4x4xf32>
// MIGRATION:           %[[LEADING:.*]] = linalg.transpose ins(%[[SPLIT]] : tensor<8x4x4xf32>) outs(%{{.*}} : tensor<4x8x4xf32>) permutation = [1, 0, 2]
// MIGRATION-NEXT:      %[[MINE:.*]] = hetero.reduce_scatter %[[LEADING]] on @g axes = [2] axis = 0 : tensor<4x8x4xf32> -> tensor<1x8x4xf32>
// MIGRATION-NEXT:      tensor.collapse_shape %[[MINE]] {{\[}}[0, 1], [2]] : tensor<1x8x4xf32> into tensor<8x4xf32>
// MIGRATION:         } else {
// MIGRATION-NEXT:      scf.yield %[[DW0]] : tensor<8x4xf32>
// MIGRATION:         %[[DV:.*]] = scf.if %{{.*}} -> (tensor<4x8xf32>) {
// MIGRATION:           %[[VMINE:.*]] = hetero.reduce_scatter %{{.*}} on @g axes = [2] axis = 0 : tensor<16x8xf32> -> tensor<4x8xf32>
// MIGRATION-NEXT:      scf.yield %[[VMINE]] : tensor<4x8xf32>
// MIGRATION-NOT:     hetero.all_gather
// MIGRATION:         return %{{.*}}, %[[DW]], %[[DV]] : tensor<2x8xf32>, tensor<8x4xf32>, tensor<4x8xf32>
func.func private @layers(%x: tensor<2x8xf32>, %w: tensor<8x16xf32>, %v: tensor<16x8xf32>, %g: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<8x16xf32>, tensor<16x8xf32>) {
  %h = hetero.prunable_matmul col %x, %w layer "up" tp = 4 : tensor<2x8xf32>, tensor<8x16xf32> -> tensor<2x16xf32>
  %y = hetero.prunable_matmul row %h, %v layer "down" tp = 4 : tensor<2x16xf32>, tensor<16x8xf32> -> tensor<2x8xf32>
  %vt0 = tensor.empty() : tensor<8x16xf32>
  %vt = linalg.transpose ins(%v : tensor<16x8xf32>) outs(%vt0 : tensor<8x16xf32>) permutation = [1, 0]
  %dh = hetero.prunable_matmul row %g, %vt layer "down" tp = 4 product = grad_input : tensor<2x8xf32>, tensor<8x16xf32> -> tensor<2x16xf32>
  %wt0 = tensor.empty() : tensor<16x8xf32>
  %wt = linalg.transpose ins(%w : tensor<8x16xf32>) outs(%wt0 : tensor<16x8xf32>) permutation = [1, 0]
  %dx = hetero.prunable_matmul col %dh, %wt layer "up" tp = 4 product = grad_input : tensor<2x16xf32>, tensor<16x8xf32> -> tensor<2x8xf32>
  %xt0 = tensor.empty() : tensor<8x2xf32>
  %xt = linalg.transpose ins(%x : tensor<2x8xf32>) outs(%xt0 : tensor<8x2xf32>) permutation = [1, 0]
  %dw = hetero.prunable_matmul col %xt, %dh layer "up" tp = 4 product = grad_weight : tensor<8x2xf32>, tensor<2x16xf32> -> tensor<8x16xf32>
  %ht0 = tensor.empty() : tensor<16x2xf32>
  %ht = linalg.transpose ins(%h : tensor<2x16xf32>) outs(%ht0 : tensor<16x2xf32>) permutation = [1, 0]
  %dv = hetero.prunable_matmul row %ht, %g layer "down" tp = 4 product = grad_weight : tensor<16x2xf32>, tensor<2x8xf32> -> tensor<16x8xf32>
  return %dx, %dw, %dv : tensor<2x8xf32>, tensor<8x16xf32>, tensor<16x8xf32>
}

// CHECK-LABEL: func.func @step(
// CHECK:         call @__hetero_shard_init() : () -> ()
// CHECK:         memref.get_global @w : memref<8x4xf32>
// CHECK:         call @layers(%{{.*}}) : (tensor<2x8xf32>, tensor<8x4xf32>, tensor<4x8xf32>, tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<8x4xf32>, tensor<4x8xf32>)
// CHECK:         linalg.add ins(%{{.*}} : memref<8x4xf32>, memref<8x4xf32>) outs(%{{.*}} : memref<8x4xf32>)
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : memref<4x8xf32>) outs(%{{.*}} : memref<4x8xf32>)
func.func @step(%x: tensor<2x8xf32>, %g: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %wm = memref.get_global @w : memref<8x16xf32>
  %w = bufferization.to_tensor %wm restrict : memref<8x16xf32> to tensor<8x16xf32>
  %vm = memref.get_global @v : memref<16x8xf32>
  %v = bufferization.to_tensor %vm restrict : memref<16x8xf32> to tensor<16x8xf32>
  %dx, %dw, %dv = call @layers(%x, %w, %v, %g) : (tensor<2x8xf32>, tensor<8x16xf32>, tensor<16x8xf32>, tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<8x16xf32>, tensor<16x8xf32>)
  %ws = memref.get_global @w_sum : memref<8x16xf32>
  %dwb = bufferization.to_buffer %dw read_only : tensor<8x16xf32> to memref<8x16xf32>
  linalg.add ins(%ws, %dwb : memref<8x16xf32>, memref<8x16xf32>) outs(%ws : memref<8x16xf32>)
  %vs = memref.get_global @v_sum : memref<16x8xf32>
  %dvb = bufferization.to_buffer %dv read_only : tensor<16x8xf32> to memref<16x8xf32>
  linalg.add ins(%vs, %dvb : memref<16x8xf32>, memref<16x8xf32>) outs(%vs : memref<16x8xf32>)
  // An SGD step on @v from its sum.
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%vs : memref<16x8xf32>) outs(%vm : memref<16x8xf32>) {
  ^bb0(%s: f32, %p: f32):
    %c = arith.constant 0.1 : f32
    %d = arith.mulf %s, %c : f32
    %n = arith.subf %p, %d : f32
    linalg.yield %n : f32
  }
  return %dx : tensor<2x8xf32>
}

// CHECK:       memref.global "private" @__hetero_shard_ready : memref<i64> = dense<0>
// CHECK-LABEL: func.func @__hetero_shard_init()
// CHECK:         %[[READY:.*]] = memref.get_global @__hetero_shard_ready : memref<i64>
// CHECK:         scf.if
// CHECK:           %[[T:.*]] = shard.process_multi_index on @g axes = [2] : index
// CHECK:           %[[FULL:.*]] = memref.get_global @w_unsharded : memref<8x16xf32>
// CHECK:           %[[OFF:.*]] = arith.muli %[[T]], %{{.*}} : index
// CHECK:           %[[SLICE:.*]] = memref.subview %[[FULL]][0, %[[OFF]]] [8, 4] [1, 1]
// CHECK:           %[[MINE:.*]] = memref.get_global @w : memref<8x4xf32>
// CHECK:           linalg.copy ins(%[[SLICE]] : {{.*}}) outs(%[[MINE]] : memref<8x4xf32>)
// CHECK:           memref.store %{{.*}}, %[[READY]][] : memref<i64>

// REPLICATED-NOT: hetero.shard_dim
// REPLICATED-NOT: __hetero_shard_init
// REPLICATED: memref.global "private" @w : memref<8x16xf32> = dense

// -----

// A parameter that something else reads stays whole: @e feeds an
// extract_slice besides its product, @u is split by columns in one layer
// and by rows in another, and @c is a constant.

shard.grid @g(shape = 1x1x2)

// CHECK-NOT: hetero.shard_dim
// CHECK-NOT: __hetero_shard_init
memref.global "private" @e : memref<4x8xf32> = dense<1.0>
memref.global "private" @u : memref<8x8xf32> = dense<1.0>
memref.global "private" constant @c : memref<4x8xf32> = dense<1.0>

// CHECK-LABEL: func.func @other_readers(
// CHECK:         tensor.extract_slice %{{.*}}[0, %{{.*}}] [4, 4] [1, 1] : tensor<4x8xf32> to tensor<4x4xf32>
// CHECK:         tensor.extract_slice %{{.*}}[0, %{{.*}}] [8, 4] [1, 1] : tensor<8x8xf32> to tensor<8x4xf32>
// CHECK:         tensor.extract_slice %{{.*}}[%{{.*}}, 0] [4, 8] [1, 1] : tensor<8x8xf32> to tensor<4x8xf32>
// CHECK:         tensor.extract_slice %{{.*}}[0, %{{.*}}] [4, 4] [1, 1] : tensor<4x8xf32> to tensor<4x4xf32>
func.func @other_readers(%x: tensor<2x4xf32>, %y: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<1x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %em = memref.get_global @e : memref<4x8xf32>
  %e = bufferization.to_tensor %em restrict : memref<4x8xf32> to tensor<4x8xf32>
  %p = hetero.prunable_matmul col %x, %e layer "e" tp = 2 : tensor<2x4xf32>, tensor<4x8xf32> -> tensor<2x8xf32>
  %row = tensor.extract_slice %e[0, 0] [1, 8] [1, 1] : tensor<4x8xf32> to tensor<1x8xf32>
  %um = memref.get_global @u : memref<8x8xf32>
  %u = bufferization.to_tensor %um restrict : memref<8x8xf32> to tensor<8x8xf32>
  %a = hetero.prunable_matmul col %y, %u layer "a" tp = 2 : tensor<2x8xf32>, tensor<8x8xf32> -> tensor<2x8xf32>
  %b = hetero.prunable_matmul row %y, %u layer "b" tp = 2 : tensor<2x8xf32>, tensor<8x8xf32> -> tensor<2x8xf32>
  %cm = memref.get_global @c : memref<4x8xf32>
  %c = bufferization.to_tensor %cm restrict : memref<4x8xf32> to tensor<4x8xf32>
  %d = hetero.prunable_matmul col %x, %c layer "c" tp = 2 : tensor<2x4xf32>, tensor<4x8xf32> -> tensor<2x8xf32>
  return %p, %row, %a, %b, %d : tensor<2x8xf32>, tensor<1x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}
