// RUN: hetero-opt %s --hetero-partition-tp -split-input-file | FileCheck %s
// RUN: hetero-opt %s --hetero-partition-tp=sharded-activations=false -split-input-file | FileCheck %s --check-prefix=GATHERED
// RUN: hetero-opt %s --hetero-partition-tp=migration=true -split-input-file | FileCheck %s --check-prefix=MIGRATION

// Megatron's col-row fusion: the col forward's output reaches the row
// forward only through elementwise ops, so it stays the rank's window of
// 8 columns: no all-gather, the bias and relu run on 4 x 8, and the row
// product reads the relu directly. The replicated bias is sliced to the
// window.

#id = affine_map<(d0, d1) -> (d0, d1)>
shard.grid @g(shape = 1x1x2)

// CHECK-LABEL: func.func @mlp(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: tensor<4x8xf32>, %[[W1:[a-z0-9]+]]: tensor<8x16xf32>, %[[W2:[a-z0-9]+]]: tensor<16x8xf32>, %[[B:[a-z0-9]+]]: tensor<4x16xf32>
// CHECK-NOT:     hetero.all_gather
// CHECK:         %[[T:.*]] = shard.process_multi_index on @g axes = [2] : index
// CHECK:         %[[UP:.*]] = hetero.prunable_matmul col %[[X]], %{{.*}} layer "up" tp = 1 : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
// CHECK:         %[[OFF:.*]] = arith.muli %[[T]], %{{.*}} : index
// CHECK:         %[[BS:.*]] = tensor.extract_slice %[[B]][0, %[[OFF]]] [4, 8] [1, 1] : tensor<4x16xf32> to tensor<4x8xf32>
// CHECK:         %[[BIASED:.*]] = linalg.add ins(%[[UP]], %[[BS]] : tensor<4x8xf32>, tensor<4x8xf32>) outs(%{{.*}} : tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK:         %[[ACT:.*]] = linalg.generic {{.*}} ins(%[[BIASED]] : tensor<4x8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK:           arith.maximumf
// CHECK:         %[[DOWN:.*]] = hetero.prunable_matmul row %[[ACT]], %{{.*}} layer "down" tp = 1 : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
// CHECK:         %[[SUM:.*]] = hetero.all_reduce %[[DOWN]] on @g axes = [2] : tensor<4x8xf32>
// CHECK-NOT:     tensor<4x16xf32> to tensor<4x8xf32>
// CHECK:         return %[[SUM]]

// GATHERED-LABEL: func.func @mlp(
// GATHERED:         hetero.all_gather %{{.*}} on @g axes = [2] axis = 0 : tensor<1x4x8xf32> -> tensor<2x4x8xf32>
// GATHERED:         linalg.add ins(%{{.*}}, %{{.*}} : tensor<4x16xf32>, tensor<4x16xf32>)
// GATHERED:         tensor.extract_slice %{{.*}}[0, %{{.*}}] [4, 8] [1, 1] : tensor<4x16xf32> to tensor<4x8xf32>
// GATHERED:         hetero.prunable_matmul row

// With migration, a receiver computes other shards' columns from their
// windows of the input, so the gathered values stay whole.
// MIGRATION-LABEL: func.func @mlp(
// MIGRATION:         linalg.add ins(%{{.*}}, %{{.*}} : tensor<4x16xf32>, tensor<4x16xf32>)
func.func @mlp(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %w2: tensor<16x8xf32>, %b: tensor<4x16xf32>) -> tensor<4x8xf32> {
  %up = hetero.prunable_matmul col %x, %w1 layer "up" tp = 2 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %biased = linalg.add ins(%up, %b : tensor<4x16xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %act = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%biased : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %in, %z : f32
    linalg.yield %m : f32
  } -> tensor<4x16xf32>
  %down = hetero.prunable_matmul row %act, %w2 layer "down" tp = 2 : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  return %down : tensor<4x8xf32>
}

// -----

// Broadcasts: a bias per column is read along the window's dimension and
// sliced to it (8 of 16); a scale per row is broadcast along it and read
// whole. A value kept along the rows of a transposing generic's input is
// kept along the result's columns.

#id = affine_map<(d0, d1) -> (d0, d1)>
#cols = affine_map<(d0, d1) -> (d1)>
#rows = affine_map<(d0, d1) -> (d0)>
shard.grid @g(shape = 1x1x2)

// CHECK-LABEL: func.func @broadcasts(
// CHECK-SAME:    %{{[a-z0-9]+}}: tensor<4x8xf32>, %{{[a-z0-9]+}}: tensor<8x16xf32>, %{{[a-z0-9]+}}: tensor<16x8xf32>, %[[BIAS:[a-z0-9]+]]: tensor<16xf32>, %[[SCALE:[a-z0-9]+]]: tensor<4xf32>
// CHECK-NOT:     hetero.all_gather
// CHECK:         %[[UP:.*]] = hetero.prunable_matmul col {{.*}} -> tensor<4x8xf32>
// CHECK:         %[[BS:.*]] = tensor.extract_slice %[[BIAS]][%{{.*}}] [8] [1] : tensor<16xf32> to tensor<8xf32>
// CHECK:         %[[ACT:.*]] = linalg.generic {{.*}} ins(%[[UP]], %[[BS]], %[[SCALE]] : tensor<4x8xf32>, tensor<8xf32>, tensor<4xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK:         hetero.prunable_matmul row %[[ACT]], {{.*}} : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
// CHECK-NOT:     hetero.all_gather
// CHECK:         return
func.func @broadcasts(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %w2: tensor<16x8xf32>, %bias: tensor<16xf32>, %scale: tensor<4xf32>) -> tensor<4x8xf32> {
  %up = hetero.prunable_matmul col %x, %w1 layer "up" tp = 2 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %act = linalg.generic {indexing_maps = [#id, #cols, #rows, #id], iterator_types = ["parallel", "parallel"]} ins(%up, %bias, %scale : tensor<4x16xf32>, tensor<16xf32>, tensor<4xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%in: f32, %b: f32, %s: f32, %out: f32):
    %sum = arith.addf %in, %b : f32
    %m = arith.mulf %sum, %s : f32
    linalg.yield %m : f32
  } -> tensor<4x16xf32>
  %down = hetero.prunable_matmul row %act, %w2 layer "down" tp = 2 : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  return %down : tensor<4x8xf32>
}

#swap = affine_map<(d0, d1) -> (d1, d0)>

// CHECK-LABEL: func.func @transposing(
// CHECK-NOT:     hetero.all_gather
// CHECK:         %[[DX:.*]] = hetero.prunable_matmul row {{.*}} product = grad_input {{.*}} -> tensor<4x8xf32>
// CHECK:         %[[T:.*]] = linalg.generic {{.*}} ins(%[[DX]] : tensor<4x8xf32>) outs(%{{.*}} : tensor<8x4xf32>)
// CHECK:         hetero.prunable_matmul row %[[T]], {{.*}} product = grad_weight : tensor<8x4xf32>, tensor<4x8xf32> -> tensor<8x8xf32>
func.func @transposing(%g: tensor<4x8xf32>, %wt: tensor<8x16xf32>, %g2: tensor<4x8xf32>) -> tensor<16x8xf32> {
  %dx = hetero.prunable_matmul row %g, %wt layer "down" tp = 2 product = grad_input : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %e = tensor.empty() : tensor<16x4xf32>
  %dxt = linalg.generic {indexing_maps = [#swap, #id], iterator_types = ["parallel", "parallel"]} ins(%dx : tensor<4x16xf32>) outs(%e : tensor<16x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<16x4xf32>
  %dw = hetero.prunable_matmul row %dxt, %g2 layer "next" tp = 2 product = grad_weight : tensor<16x4xf32>, tensor<4x8xf32> -> tensor<16x8xf32>
  return %dw : tensor<16x8xf32>
}

// -----

// A value another op reads whole keeps its all-gather: the relu is also
// returned, and the second generic reads linalg.index (the global column
// differs from the window's), so both run on 4 x 16 and the row products
// take their windows.

#id = affine_map<(d0, d1) -> (d0, d1)>
shard.grid @g(shape = 1x1x2)

// CHECK-LABEL: func.func @returned(
// CHECK:         hetero.all_gather %{{.*}} : tensor<1x4x8xf32> -> tensor<2x4x8xf32>
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<4x16xf32>) outs(%{{.*}} : tensor<4x16xf32>)
// CHECK:         tensor.extract_slice %{{.*}}[0, %{{.*}}] [4, 8] [1, 1] : tensor<4x16xf32> to tensor<4x8xf32>
// CHECK:         hetero.prunable_matmul row
func.func @returned(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %w2: tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<4x16xf32>) {
  %up = hetero.prunable_matmul col %x, %w1 layer "up" tp = 2 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %act = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%up : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %in, %z : f32
    linalg.yield %m : f32
  } -> tensor<4x16xf32>
  %down = hetero.prunable_matmul row %act, %w2 layer "down" tp = 2 : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  return %down, %act : tensor<4x8xf32>, tensor<4x16xf32>
}

// CHECK-LABEL: func.func @indexed(
// CHECK:         hetero.all_gather %{{.*}} : tensor<1x4x8xf32> -> tensor<2x4x8xf32>
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<4x16xf32>) outs(%{{.*}} : tensor<4x16xf32>)
// CHECK:           linalg.index 1
// CHECK:         tensor.extract_slice %{{.*}}[0, %{{.*}}] [4, 8] [1, 1] : tensor<4x16xf32> to tensor<4x8xf32>
func.func @indexed(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %w2: tensor<16x8xf32>) -> tensor<4x8xf32> {
  %up = hetero.prunable_matmul col %x, %w1 layer "up" tp = 2 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %masked = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%up : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %j = linalg.index 1 : index
    %c4 = arith.constant 4 : index
    %keep = arith.cmpi ult, %j, %c4 : index
    %z = arith.constant 0.0 : f32
    %m = arith.select %keep, %in, %z : f32
    linalg.yield %m : f32
  } -> tensor<4x16xf32>
  %down = hetero.prunable_matmul row %masked, %w2 layer "down" tp = 2 : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  return %down : tensor<4x8xf32>
}

// -----

// Through a transpose: the row grad_input's dX (columns split) transposed
// is split by rows, the window the row grad_weight reads. The transpose
// runs on the window; only dW, which is returned, is gathered.

shard.grid @g(shape = 1x1x2)

// CHECK-LABEL: func.func @transposed(
// CHECK:         %[[DX:.*]] = hetero.prunable_matmul row %{{.*}}, %{{.*}} layer "down" tp = 1 product = grad_input : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
// CHECK:         %[[DXT:.*]] = linalg.transpose ins(%[[DX]] : tensor<4x8xf32>) outs(%{{.*}} : tensor<8x4xf32>) permutation = [1, 0]
// CHECK:         hetero.prunable_matmul row %[[DXT]], %{{.*}} layer "next" tp = 1 product = grad_weight : tensor<8x4xf32>, tensor<4x8xf32> -> tensor<8x8xf32>
// CHECK:         hetero.all_gather %{{.*}} axis = 0 : tensor<8x8xf32> -> tensor<16x8xf32>
// CHECK-NOT:     hetero.all_gather
// CHECK:         return
func.func @transposed(%g: tensor<4x8xf32>, %wt: tensor<8x16xf32>, %g2: tensor<4x8xf32>) -> tensor<16x8xf32> {
  %dx = hetero.prunable_matmul row %g, %wt layer "down" tp = 2 product = grad_input : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %e = tensor.empty() : tensor<16x4xf32>
  %dxt = linalg.transpose ins(%dx : tensor<4x16xf32>) outs(%e : tensor<16x4xf32>) permutation = [1, 0]
  %dw = hetero.prunable_matmul row %dxt, %g2 layer "next" tp = 2 product = grad_weight : tensor<16x4xf32>, tensor<4x8xf32> -> tensor<16x8xf32>
  return %dw : tensor<16x8xf32>
}

// -----

// A tape: @forward returns its residuals packed into one flat tensor, which
// @step passes on to @backward. The relu's segment holds its window (32 of
// 64 elements) and the tape shrinks from 72 to 40; @backward unpacks the
// window and gives it to its row product, and the segment after it moves.

#id = affine_map<(d0, d1) -> (d0, d1)>
shard.grid @g(shape = 1x1x2)

// CHECK-LABEL: func.func private @forward(
// CHECK-SAME:    -> tensor<40xf32>
// CHECK-NOT:     hetero.all_gather
// CHECK:         %[[ACT:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4x8xf32>)
// CHECK:         %[[TAPE:.*]] = tensor.empty() : tensor<40xf32>
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[ACT]] {{\[}}[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
// CHECK:         %[[T1:.*]] = tensor.insert_slice %[[FLAT]] into %[[TAPE]][0] [32] [1] : tensor<32xf32> into tensor<40xf32>
// CHECK:         %[[T2:.*]] = tensor.insert_slice %{{.*}} into %[[T1]][32] [8] [1] : tensor<8xf32> into tensor<40xf32>
// CHECK:         return %[[T2]] : tensor<40xf32>
func.func private @forward(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %v: tensor<8xf32>) -> tensor<72xf32> {
  %up = hetero.prunable_matmul col %x, %w1 layer "up" tp = 2 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %act = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%up : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %in, %z : f32
    linalg.yield %m : f32
  } -> tensor<4x16xf32>
  %tape = tensor.empty() : tensor<72xf32>
  %flat = tensor.collapse_shape %act [[0, 1]] : tensor<4x16xf32> into tensor<64xf32>
  %t1 = tensor.insert_slice %flat into %tape[0] [64] [1] : tensor<64xf32> into tensor<72xf32>
  %t2 = tensor.insert_slice %v into %t1[64] [8] [1] : tensor<8xf32> into tensor<72xf32>
  return %t2 : tensor<72xf32>
}

// CHECK-LABEL: func.func private @backward(
// CHECK-SAME:    %[[TAPE:[a-z0-9]+]]: tensor<40xf32>
// CHECK:         %[[PART:.*]] = tensor.extract_slice %[[TAPE]][0] [32] [1] : tensor<40xf32> to tensor<32xf32>
// CHECK:         %[[ACT:.*]] = tensor.expand_shape %[[PART]] {{\[}}[0, 1]] output_shape [4, 8] : tensor<32xf32> into tensor<4x8xf32>
// CHECK:         %[[V:.*]] = tensor.extract_slice %[[TAPE]][32] [8] [1] : tensor<40xf32> to tensor<8xf32>
// CHECK:         hetero.prunable_matmul row %[[ACT]], %{{.*}} layer "down" tp = 1 : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
// CHECK:         return %{{.*}}, %[[V]]
func.func private @backward(%tape: tensor<72xf32>, %w2: tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>) {
  %a = tensor.extract_slice %tape[0] [64] [1] : tensor<72xf32> to tensor<64xf32>
  %act = tensor.expand_shape %a [[0, 1]] output_shape [4, 16] : tensor<64xf32> into tensor<4x16xf32>
  %v = tensor.extract_slice %tape[64] [8] [1] : tensor<72xf32> to tensor<8xf32>
  %down = hetero.prunable_matmul row %act, %w2 layer "down" tp = 2 : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  return %down, %v : tensor<4x8xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @step(
// CHECK:         %[[TAPE:.*]] = call @forward(%{{.*}}) : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<40xf32>
// CHECK:         call @backward(%[[TAPE]], %{{.*}}) : (tensor<40xf32>, tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>)
func.func @step(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %w2: tensor<16x8xf32>, %v: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>) {
  %tape = call @forward(%x, %w1, %v) : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<72xf32>
  %r:2 = call @backward(%tape, %w2) : (tensor<72xf32>, tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>)
  return %r#0, %r#1 : tensor<4x8xf32>, tensor<8xf32>
}

// -----

// A tape whose reader needs a segment whole (it returns the relu) keeps
// its layout, and the producer's all-gather stays: the relu runs on 4 x 16.

#id = affine_map<(d0, d1) -> (d0, d1)>
shard.grid @g(shape = 1x1x2)

// CHECK-LABEL: func.func private @forward(
// CHECK-SAME:    -> tensor<64xf32>
// CHECK:         hetero.all_gather
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<4x16xf32>)
// CHECK-LABEL: func.func private @backward(
// CHECK-SAME:    tensor<64xf32>
// CHECK:         tensor.extract_slice %{{.*}}[0, %{{.*}}] [4, 8] [1, 1] : tensor<4x16xf32> to tensor<4x8xf32>
func.func private @forward(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>) -> tensor<64xf32> {
  %up = hetero.prunable_matmul col %x, %w1 layer "up" tp = 2 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %act = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%up : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %in, %z : f32
    linalg.yield %m : f32
  } -> tensor<4x16xf32>
  %tape = tensor.empty() : tensor<64xf32>
  %flat = tensor.collapse_shape %act [[0, 1]] : tensor<4x16xf32> into tensor<64xf32>
  %t1 = tensor.insert_slice %flat into %tape[0] [64] [1] : tensor<64xf32> into tensor<64xf32>
  return %t1 : tensor<64xf32>
}

func.func private @backward(%tape: tensor<64xf32>, %w2: tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<4x16xf32>) {
  %a = tensor.extract_slice %tape[0] [64] [1] : tensor<64xf32> to tensor<64xf32>
  %act = tensor.expand_shape %a [[0, 1]] output_shape [4, 16] : tensor<64xf32> into tensor<4x16xf32>
  %down = hetero.prunable_matmul row %act, %w2 layer "down" tp = 2 : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  return %down, %act : tensor<4x8xf32>, tensor<4x16xf32>
}

func.func @step(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %w2: tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<4x16xf32>) {
  %tape = call @forward(%x, %w1) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<64xf32>
  %r:2 = call @backward(%tape, %w2) : (tensor<64xf32>, tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<4x16xf32>)
  return %r#0, %r#1 : tensor<4x8xf32>, tensor<4x16xf32>
}

// -----

// Chained tapes: @middle unpacks the relu of @first's tape, applies its own
// relu and writes it, beside the relu of its own col product, into the
// tape it returns for @last. Every reader is laid out before any producer
// writes a window: @middle writes what it unpacked.

#id = affine_map<(d0, d1) -> (d0, d1)>
shard.grid @g(shape = 1x1x2)

// CHECK-LABEL: func.func private @first(
// CHECK-SAME:    -> tensor<32xf32>
// CHECK-LABEL: func.func private @middle(
// CHECK-SAME:    %[[IN:[a-z0-9]+]]: tensor<32xf32>
// CHECK-SAME:    -> tensor<64xf32>
// CHECK-NOT:     hetero.all_gather
// CHECK:         tensor.extract_slice %[[IN]][0] [32] [1] : tensor<32xf32> to tensor<32xf32>
// CHECK:         tensor.insert_slice %{{.*}} into %{{.*}}[0] [32] [1] : tensor<32xf32> into tensor<64xf32>
// CHECK:         tensor.insert_slice %{{.*}} into %{{.*}}[32] [32] [1] : tensor<32xf32> into tensor<64xf32>
// CHECK-LABEL: func.func private @last(
// CHECK-SAME:    tensor<64xf32>
// CHECK-COUNT-2: hetero.prunable_matmul row %{{.*}}, %{{.*}} layer "down" tp = 1 : tensor<4x8xf32>
func.func private @first(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>) -> tensor<64xf32> {
  %up = hetero.prunable_matmul col %x, %w1 layer "up" tp = 2 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %act = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%up : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %in, %z : f32
    linalg.yield %m : f32
  } -> tensor<4x16xf32>
  %tape = tensor.empty() : tensor<64xf32>
  %flat = tensor.collapse_shape %act [[0, 1]] : tensor<4x16xf32> into tensor<64xf32>
  %t = tensor.insert_slice %flat into %tape[0] [64] [1] : tensor<64xf32> into tensor<64xf32>
  return %t : tensor<64xf32>
}

func.func private @middle(%in: tensor<64xf32>, %x: tensor<4x8xf32>, %w1: tensor<8x16xf32>) -> tensor<128xf32> {
  %a = tensor.extract_slice %in[0] [64] [1] : tensor<64xf32> to tensor<64xf32>
  %u = tensor.expand_shape %a [[0, 1]] output_shape [4, 16] : tensor<64xf32> into tensor<4x16xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %v = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%u : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%i: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %i, %z : f32
    linalg.yield %m : f32
  } -> tensor<4x16xf32>
  %up = hetero.prunable_matmul col %x, %w1 layer "up2" tp = 2 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %act = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%up : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%i: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %i, %z : f32
    linalg.yield %m : f32
  } -> tensor<4x16xf32>
  %tape = tensor.empty() : tensor<128xf32>
  %f0 = tensor.collapse_shape %v [[0, 1]] : tensor<4x16xf32> into tensor<64xf32>
  %t0 = tensor.insert_slice %f0 into %tape[0] [64] [1] : tensor<64xf32> into tensor<128xf32>
  %f1 = tensor.collapse_shape %act [[0, 1]] : tensor<4x16xf32> into tensor<64xf32>
  %t1 = tensor.insert_slice %f1 into %t0[64] [64] [1] : tensor<64xf32> into tensor<128xf32>
  return %t1 : tensor<128xf32>
}

func.func private @last(%tape: tensor<128xf32>, %w2: tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %a = tensor.extract_slice %tape[0] [64] [1] : tensor<128xf32> to tensor<64xf32>
  %p = tensor.expand_shape %a [[0, 1]] output_shape [4, 16] : tensor<64xf32> into tensor<4x16xf32>
  %b = tensor.extract_slice %tape[64] [64] [1] : tensor<128xf32> to tensor<64xf32>
  %q = tensor.expand_shape %b [[0, 1]] output_shape [4, 16] : tensor<64xf32> into tensor<4x16xf32>
  %y0 = hetero.prunable_matmul row %p, %w2 layer "down" tp = 2 : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  %y1 = hetero.prunable_matmul row %q, %w2 layer "down" tp = 2 : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  return %y0, %y1 : tensor<4x8xf32>, tensor<4x8xf32>
}

func.func @chain(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %w2: tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %t0 = call @first(%x, %w1) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<64xf32>
  %t1 = call @middle(%t0, %x, %w1) : (tensor<64xf32>, tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<128xf32>
  %r:2 = call @last(%t1, %w2) : (tensor<128xf32>, tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return %r#0, %r#1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Where the pass cannot tell the window it leaves the values gathered: a
// pointwise op with an input of dynamic shape, and a tape read that drops
// the segment's rank.

#id = affine_map<(d0, d1) -> (d0, d1)>
shard.grid @g(shape = 1x1x2)

// CHECK-LABEL: func.func @dynamic_input(
// CHECK:         hetero.all_gather
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<4x16xf32>)
func.func @dynamic_input(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %w2: tensor<16x8xf32>, %b: tensor<?x16xf32>) -> tensor<4x8xf32> {
  %up = hetero.prunable_matmul col %x, %w1 layer "up" tp = 2 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %act = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%up, %b : tensor<4x16xf32>, tensor<?x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %down = hetero.prunable_matmul row %act, %w2 layer "down" tp = 2 : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  return %down : tensor<4x8xf32>
}

// CHECK-LABEL: func.func private @packs(
// CHECK-SAME:    -> tensor<65xf32>
// CHECK:         hetero.all_gather
// CHECK-LABEL: func.func private @reads(
// CHECK:         tensor.extract_slice %{{.*}}[64] [1] [1] : tensor<65xf32> to tensor<f32>
func.func private @packs(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %s: tensor<1xf32>) -> tensor<65xf32> {
  %up = hetero.prunable_matmul col %x, %w1 layer "up" tp = 2 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %tape = tensor.empty() : tensor<65xf32>
  %flat = tensor.collapse_shape %up [[0, 1]] : tensor<4x16xf32> into tensor<64xf32>
  %t0 = tensor.insert_slice %flat into %tape[0] [64] [1] : tensor<64xf32> into tensor<65xf32>
  %t1 = tensor.insert_slice %s into %t0[64] [1] [1] : tensor<1xf32> into tensor<65xf32>
  return %t1 : tensor<65xf32>
}

func.func private @reads(%tape: tensor<65xf32>, %w2: tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<f32>) {
  %a = tensor.extract_slice %tape[0] [64] [1] : tensor<65xf32> to tensor<64xf32>
  %p = tensor.expand_shape %a [[0, 1]] output_shape [4, 16] : tensor<64xf32> into tensor<4x16xf32>
  %s = tensor.extract_slice %tape[64] [1] [1] : tensor<65xf32> to tensor<f32>
  %y = hetero.prunable_matmul row %p, %w2 layer "down" tp = 2 : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  return %y, %s : tensor<4x8xf32>, tensor<f32>
}

func.func @rank_dropping(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %w2: tensor<16x8xf32>, %s: tensor<1xf32>) -> (tensor<4x8xf32>, tensor<f32>) {
  %t = call @packs(%x, %w1, %s) : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<1xf32>) -> tensor<65xf32>
  %r:2 = call @reads(%t, %w2) : (tensor<65xf32>, tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<f32>)
  return %r#0, %r#1 : tensor<4x8xf32>, tensor<f32>
}

// -----

// A residual returned as it is: @forward returns the relu of its col
// product (as a derived forward's augmented part does), which @step passes
// on to @backward's row product. The relu stays the rank's window across
// the calls: @forward returns 4 x 8, @backward takes 4 x 8, no all-gather.
// A second result that @step also returns keeps its whole value.

#id = affine_map<(d0, d1) -> (d0, d1)>
shard.grid @g(shape = 1x1x2)

// CHECK-LABEL: func.func private @forward(
// CHECK-SAME:    -> (tensor<4x8xf32>, tensor<4x16xf32>)
// CHECK:         %[[UP:.*]] = hetero.prunable_matmul col
// CHECK:         %[[ACT:.*]] = linalg.generic {{.*}} ins(%[[UP]] : tensor<4x8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK:         %[[G:.*]] = hetero.all_gather
// CHECK:         return %[[ACT]], %{{.*}} : tensor<4x8xf32>, tensor<4x16xf32>
func.func private @forward(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %w3: tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %up = hetero.prunable_matmul col %x, %w1 layer "up" tp = 2 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %act = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%up : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %in, %z : f32
    linalg.yield %m : f32
  } -> tensor<4x16xf32>
  %side = hetero.prunable_matmul col %x, %w3 layer "side" tp = 2 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  return %act, %side : tensor<4x16xf32>, tensor<4x16xf32>
}

// CHECK-LABEL: func.func private @backward(
// CHECK-SAME:    %[[ACT:[a-z0-9]+]]: tensor<4x8xf32>
// CHECK-NOT:     tensor.extract_slice %[[ACT]]
// CHECK:         hetero.prunable_matmul row %[[ACT]], %{{.*}} layer "down" tp = 1 : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
func.func private @backward(%act: tensor<4x16xf32>, %w2: tensor<16x8xf32>) -> tensor<4x8xf32> {
  %down = hetero.prunable_matmul row %act, %w2 layer "down" tp = 2 : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  return %down : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @step(
// CHECK:         %[[R:.*]]:2 = call @forward(%{{.*}}) : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> (tensor<4x8xf32>, tensor<4x16xf32>)
// CHECK:         call @backward(%[[R]]#0, %{{.*}}) : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
func.func @step(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %w2: tensor<16x8xf32>, %w3: tensor<8x16xf32>) -> (tensor<4x8xf32>, tensor<4x16xf32>) {
  %r:2 = call @forward(%x, %w1, %w3) : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>)
  %down = call @backward(%r#0, %w2) : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  return %down, %r#1 : tensor<4x8xf32>, tensor<4x16xf32>
}
