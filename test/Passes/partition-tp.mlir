// RUN: hetero-opt %s --hetero-partition-tp -split-input-file | FileCheck %s

// col: the weight's columns are split. The forward and the weight gradient
// compute a column slice of their result, all-gathered (through the leading
// axis, then moved next to the columns); the input gradient contracts the
// split columns and is summed.

shard.grid @g(shape = 2x1x4)

// CHECK-LABEL: func.func @col(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: tensor<2x3x8xf32>, %[[W:[a-z0-9]+]]: tensor<8x16xf32>, %[[G:[a-z0-9]+]]: tensor<6x16xf32>, %[[WT:[a-z0-9]+]]: tensor<16x8xf32>, %[[XT:[a-z0-9]+]]: tensor<8x6xf32>
// CHECK:         %[[T:.*]] = shard.process_multi_index on @g axes = [2] : index
// CHECK-NOT:     shard.process_multi_index
// CHECK:         %[[OFF:.*]] = arith.muli %[[T]], %{{.*}} : index
// CHECK:         %[[WS:.*]] = tensor.extract_slice %[[W]][0, %[[OFF]]] [8, 4] [1, 1] : tensor<8x16xf32> to tensor<8x4xf32>
// CHECK:         %[[Y:.*]] = hetero.prunable_matmul col %[[X]], %[[WS]] layer "fc" tp = 1 : tensor<2x3x8xf32>, tensor<8x4xf32> -> tensor<2x3x4xf32>
// CHECK:         %[[YE:.*]] = tensor.expand_shape %[[Y]] {{\[}}[0, 1], [2], [3]] output_shape [1, 2, 3, 4]
// CHECK:         %[[YG:.*]] = hetero.all_gather %[[YE]] on @g axes = [2] axis = 0 : tensor<1x2x3x4xf32> -> tensor<4x2x3x4xf32>
// CHECK:         %[[YT:.*]] = linalg.transpose ins(%[[YG]] : tensor<4x2x3x4xf32>) outs(%{{.*}} : tensor<2x3x4x4xf32>) permutation = [1, 2, 0, 3]
// CHECK:         %[[YC:.*]] = tensor.collapse_shape %[[YT]] {{\[}}[0], [1], [2, 3]] : tensor<2x3x4x4xf32> into tensor<2x3x16xf32>
// CHECK:         %[[GS:.*]] = tensor.extract_slice %[[G]][0, %{{.*}}] [6, 4] [1, 1] : tensor<6x16xf32> to tensor<6x4xf32>
// CHECK:         %[[WTS:.*]] = tensor.extract_slice %[[WT]][%{{.*}}, 0] [4, 8] [1, 1] : tensor<16x8xf32> to tensor<4x8xf32>
// CHECK:         %[[DX:.*]] = hetero.prunable_matmul col %[[GS]], %[[WTS]] layer "fc" tp = 1 product = grad_input : tensor<6x4xf32>, tensor<4x8xf32> -> tensor<6x8xf32>
// CHECK:         %[[DXR:.*]] = hetero.all_reduce %[[DX]] on @g axes = [2] : tensor<6x8xf32>
// CHECK:         %[[GS2:.*]] = tensor.extract_slice %[[G]][0, %{{.*}}] [6, 4] [1, 1] : tensor<6x16xf32> to tensor<6x4xf32>
// CHECK:         %[[DW:.*]] = hetero.prunable_matmul col %[[XT]], %[[GS2]] layer "fc" tp = 1 product = grad_weight : tensor<8x6xf32>, tensor<6x4xf32> -> tensor<8x4xf32>
// CHECK:         %[[DWE:.*]] = tensor.expand_shape %[[DW]] {{\[}}[0, 1], [2]] output_shape [1, 8, 4]
// CHECK:         %[[DWG:.*]] = hetero.all_gather %[[DWE]] on @g axes = [2] axis = 0 : tensor<1x8x4xf32> -> tensor<4x8x4xf32>
// CHECK:         %[[DWT:.*]] = linalg.transpose ins(%[[DWG]] : tensor<4x8x4xf32>) outs(%{{.*}} : tensor<8x4x4xf32>) permutation = [1, 0, 2]
// CHECK:         %[[DWC:.*]] = tensor.collapse_shape %[[DWT]] {{\[}}[0], [1, 2]] : tensor<8x4x4xf32> into tensor<8x16xf32>
// CHECK:         return %[[YC]], %[[DXR]], %[[DWC]]
func.func @col(%x: tensor<2x3x8xf32>, %w: tensor<8x16xf32>, %g: tensor<6x16xf32>, %wt: tensor<16x8xf32>, %xt: tensor<8x6xf32>) -> (tensor<2x3x16xf32>, tensor<6x8xf32>, tensor<8x16xf32>) {
  %y = hetero.prunable_matmul col %x, %w layer "fc" tp = 4 : tensor<2x3x8xf32>, tensor<8x16xf32> -> tensor<2x3x16xf32>
  %dx = hetero.prunable_matmul col %g, %wt layer "fc" tp = 4 product = grad_input : tensor<6x16xf32>, tensor<16x8xf32> -> tensor<6x8xf32>
  %dw = hetero.prunable_matmul col %xt, %g layer "fc" tp = 4 product = grad_weight : tensor<8x6xf32>, tensor<6x16xf32> -> tensor<8x16xf32>
  return %y, %dx, %dw : tensor<2x3x16xf32>, tensor<6x8xf32>, tensor<8x16xf32>
}

// -----

// row: the weight's rows are split. The forward contracts them and is
// summed; the input gradient computes a column slice of dX and the weight
// gradient a row slice of dW, gathered along the leading axis directly.
// Other degrees use the grid whose axis 2 has that many ranks.

shard.grid @pipeline(shape = 2x2)
shard.grid @g(shape = 1x2x3)

// CHECK-LABEL: func.func @row(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: tensor<6x12xf32>, %[[W:[a-z0-9]+]]: tensor<12x4xf32>, %[[G:[a-z0-9]+]]: tensor<6x4xf32>, %[[WT:[a-z0-9]+]]: tensor<4x12xf32>, %[[XT:[a-z0-9]+]]: tensor<12x6xf32>
// CHECK:         %[[T:.*]] = shard.process_multi_index on @g axes = [2] : index
// CHECK:         %[[XS:.*]] = tensor.extract_slice %[[X]][0, %{{.*}}] [6, 4] [1, 1] : tensor<6x12xf32> to tensor<6x4xf32>
// CHECK:         %[[WS:.*]] = tensor.extract_slice %[[W]][%{{.*}}, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
// CHECK:         %[[Y:.*]] = hetero.prunable_matmul row %[[XS]], %[[WS]] layer "proj" tp = 1 : tensor<6x4xf32>, tensor<4x4xf32> -> tensor<6x4xf32>
// CHECK:         %[[YR:.*]] = hetero.all_reduce %[[Y]] on @g axes = [2] : tensor<6x4xf32>
// CHECK:         %[[WTS:.*]] = tensor.extract_slice %[[WT]][0, %{{.*}}] [4, 4] [1, 1] : tensor<4x12xf32> to tensor<4x4xf32>
// CHECK:         %[[DX:.*]] = hetero.prunable_matmul row %[[G]], %[[WTS]] layer "proj" tp = 1 product = grad_input : tensor<6x4xf32>, tensor<4x4xf32> -> tensor<6x4xf32>
// CHECK:         hetero.all_gather %{{.*}} on @g axes = [2] axis = 0 : tensor<1x6x4xf32> -> tensor<3x6x4xf32>
// CHECK:         %[[XTS:.*]] = tensor.extract_slice %[[XT]][%{{.*}}, 0] [4, 6] [1, 1] : tensor<12x6xf32> to tensor<4x6xf32>
// CHECK:         %[[DW:.*]] = hetero.prunable_matmul row %[[XTS]], %[[G]] layer "proj" tp = 1 product = grad_weight impute average : tensor<4x6xf32>, tensor<6x4xf32> -> tensor<4x4xf32>
// CHECK:         %[[DWG:.*]] = hetero.all_gather %[[DW]] on @g axes = [2] axis = 0 : tensor<4x4xf32> -> tensor<12x4xf32>
// CHECK:         return %[[YR]], %{{.*}}, %[[DWG]]
func.func @row(%x: tensor<6x12xf32>, %w: tensor<12x4xf32>, %g: tensor<6x4xf32>, %wt: tensor<4x12xf32>, %xt: tensor<12x6xf32>) -> (tensor<6x4xf32>, tensor<6x12xf32>, tensor<12x4xf32>) {
  %y = hetero.prunable_matmul row %x, %w layer "proj" tp = 3 : tensor<6x12xf32>, tensor<12x4xf32> -> tensor<6x4xf32>
  %dx = hetero.prunable_matmul row %g, %wt layer "proj" tp = 3 product = grad_input : tensor<6x4xf32>, tensor<4x12xf32> -> tensor<6x12xf32>
  %dw = hetero.prunable_matmul row %xt, %g layer "proj" tp = 3 product = grad_weight impute average : tensor<12x6xf32>, tensor<6x4xf32> -> tensor<12x4xf32>
  return %y, %dx, %dw : tensor<6x4xf32>, tensor<6x12xf32>, tensor<12x4xf32>
}

// -----

// Already a rank's own shard (tp = 1): nothing to do, and no grid needed.

// CHECK-LABEL: func.func @local(
// CHECK-NEXT:    hetero.prunable_matmul col %{{.*}}, %{{.*}} layer "fc" tp = 1
// CHECK-NEXT:    return
func.func @local(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %y = hetero.prunable_matmul col %x, %w layer "fc" tp = 1 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// The shard's product keeps the layer's block index.

shard.grid @blocks(shape = 1x1x2)

// CHECK-LABEL: func.func @block(
// CHECK-SAME:    %[[B:[a-z0-9]+]]: index
// CHECK:         hetero.prunable_matmul col %{{.*}}, %{{.*}} layer "block.fc" block %[[B]] tp = 1
func.func @block(%b: index, %x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %y = hetero.prunable_matmul col %x, %w layer "block.fc" block %b tp = 2 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
