// What hetero-rebatch refuses, each naming the op, the function and why.
// RUN: hetero-opt %s --split-input-file --verify-diagnostics --hetero-rebatch=sizes=8

// The weight is read per sample: a parameter shaped by the batch.
#map = affine_map<(i, j) -> (i, j)>
#rows = affine_map<(i, j) -> (i)>
#all = affine_map<(i, j) -> ()>
memref.global "private" @w : memref<4x8xf32> = dense<1.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %x, %x : tensor<4x8xf32>, tensor<4x8xf32>
}
func.func @model(%x: tensor<4x8xf32>, %w: tensor<4x8xf32>, %t: tensor<4x8xf32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{hetero-rebatch: cannot re-type 'linalg.add' in '@model' for 8 samples: no loop moves every operand that holds samples by one sample while leaving the others (constants, parameters) where they are: a constant shaped by the batch, or an index that mixes the samples}}
  %y = linalg.add ins(%x, %w : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#map, #map, #all], iterator_types = ["reduction", "reduction"]} ins(%y, %t : tensor<4x8xf32>, tensor<4x8xf32>) outs(%l0 : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %d = arith.mulf %a, %b : f32
    %s = arith.addf %d, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
hetero.pipeline @p stages = 1 microbatches = 2 data @data optimizer #hetero.sgd<lr = 0.1> {
  hetero.stage 0 forward @model params [@w]
}

// -----

// A transpose puts the samples last; the reshape then mixes them.
#map = affine_map<(i, j) -> (i, j)>
#rows = affine_map<(i, j) -> (i)>
#all = affine_map<(i, j) -> ()>
memref.global "private" @w : memref<4x8xf32> = dense<1.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %x, %x : tensor<4x8xf32>, tensor<4x8xf32>
}
func.func @model(%x: tensor<4x8xf32>, %w: tensor<4x8xf32>, %t: tensor<4x8xf32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %te = tensor.empty() : tensor<8x4xf32>
  %tr = linalg.transpose ins(%x : tensor<4x8xf32>) outs(%te : tensor<8x4xf32>) permutation = [1, 0]
  // expected-error @+1 {{hetero-rebatch: cannot re-type 'tensor.collapse_shape' in '@model' for 8 samples: it merges dimension 1, which holds the samples, into a dimension where they are not outermost}}
  %flat = tensor.collapse_shape %tr [[0, 1]] : tensor<8x4xf32> into tensor<32xf32>
  %y = tensor.expand_shape %flat [[0, 1]] output_shape [4, 8] : tensor<32xf32> into tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#map, #map, #all], iterator_types = ["reduction", "reduction"]} ins(%y, %t : tensor<4x8xf32>, tensor<4x8xf32>) outs(%l0 : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %d = arith.mulf %a, %b : f32
    %s = arith.addf %d, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
hetero.pipeline @p stages = 1 microbatches = 2 data @data optimizer #hetero.sgd<lr = 0.1> {
  hetero.stage 0 forward @model params [@w]
}

// -----

// The samples reduced by their maximum.
#map = affine_map<(i, j) -> (i, j)>
#rows = affine_map<(i, j) -> (i)>
#all = affine_map<(i, j) -> ()>
memref.global "private" @w : memref<4x8xf32> = dense<1.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %x, %x : tensor<4x8xf32>, tensor<4x8xf32>
}
func.func @model(%x: tensor<4x8xf32>, %w: tensor<4x8xf32>, %t: tensor<4x8xf32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %me = tensor.empty() : tensor<8xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%me : tensor<8xf32>) -> tensor<8xf32>
  // expected-error @+1 {{hetero-rebatch: cannot re-type 'linalg.generic' in '@model' for 8 samples: it reduces over the samples other than by a sum}}
  %m = linalg.generic {indexing_maps = [#map, affine_map<(i, j) -> (j)>], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%m0 : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %v = arith.maximumf %a, %acc : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %y = linalg.generic {indexing_maps = [#map, affine_map<(i, j) -> (j)>, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %m : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.subf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#map, #map, #all], iterator_types = ["reduction", "reduction"]} ins(%y, %t : tensor<4x8xf32>, tensor<4x8xf32>) outs(%l0 : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %d = arith.mulf %a, %b : f32
    %s = arith.addf %d, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
hetero.pipeline @p stages = 1 microbatches = 2 data @data optimizer #hetero.sgd<lr = 0.1> {
  hetero.stage 0 forward @model params [@w]
}

// -----

// The body reads the sample index.
#map = affine_map<(i, j) -> (i, j)>
#rows = affine_map<(i, j) -> (i)>
#all = affine_map<(i, j) -> ()>
memref.global "private" @w : memref<4x8xf32> = dense<1.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %x, %x : tensor<4x8xf32>, tensor<4x8xf32>
}
func.func @model(%x: tensor<4x8xf32>, %w: tensor<4x8xf32>, %t: tensor<4x8xf32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{hetero-rebatch: cannot re-type 'linalg.generic' in '@model' for 8 samples: its body reads the index of the sample loop 0}}
  %y = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    %v = arith.mulf %a, %f : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#map, #map, #all], iterator_types = ["reduction", "reduction"]} ins(%y, %t : tensor<4x8xf32>, tensor<4x8xf32>) outs(%l0 : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %d = arith.mulf %a, %b : f32
    %s = arith.addf %d, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
hetero.pipeline @p stages = 1 microbatches = 2 data @data optimizer #hetero.sgd<lr = 0.1> {
  hetero.stage 0 forward @model params [@w]
}

// -----

// A single element of the samples.
#map = affine_map<(i, j) -> (i, j)>
#rows = affine_map<(i, j) -> (i)>
#all = affine_map<(i, j) -> ()>
memref.global "private" @w : memref<4x8xf32> = dense<1.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %x, %x : tensor<4x8xf32>, tensor<4x8xf32>
}
func.func @model(%x: tensor<4x8xf32>, %w: tensor<4x8xf32>, %t: tensor<4x8xf32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{hetero-rebatch: cannot re-type 'tensor.extract' in '@model' for 8 samples: it reads single elements of a tensor that holds samples}}
  %v = tensor.extract %x[%c0, %c0] : tensor<4x8xf32>
  %l = tensor.from_elements %v : tensor<f32>
  return %l : tensor<f32>
}
hetero.pipeline @p stages = 1 microbatches = 2 data @data optimizer #hetero.sgd<lr = 0.1> {
  hetero.stage 0 forward @model params [@w]
}

// -----

// The loss is the square root of a sum over the samples.
#map = affine_map<(i, j) -> (i, j)>
#rows = affine_map<(i, j) -> (i)>
#all = affine_map<(i, j) -> ()>
memref.global "private" @w : memref<4x8xf32> = dense<1.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %x, %x : tensor<4x8xf32>, tensor<4x8xf32>
}
func.func @model(%x: tensor<4x8xf32>, %w: tensor<4x8xf32>, %t: tensor<4x8xf32>) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#map, #map, #all], iterator_types = ["reduction", "reduction"]} ins(%x, %t : tensor<4x8xf32>, tensor<4x8xf32>) outs(%l0 : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %d = arith.mulf %a, %b : f32
    %s = arith.addf %d, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %s = tensor.extract %l[] : tensor<f32>
  // expected-error @+1 {{hetero-rebatch: cannot re-type 'math.sqrt' in '@model' for 8 samples: it is not linear in a sum over the samples (only scaling, adding and negating keep the sum's meaning for more samples)}}
  %r = math.sqrt %s : f32
  %o = tensor.from_elements %r : tensor<f32>
  return %o : tensor<f32>
}
hetero.pipeline @p stages = 1 microbatches = 2 data @data optimizer #hetero.sgd<lr = 0.1> {
  hetero.stage 0 forward @model params [@w]
}

// -----

// Statistics of the batch: the mean over the samples subtracted.
#map = affine_map<(i, j) -> (i, j)>
#rows = affine_map<(i, j) -> (i)>
#all = affine_map<(i, j) -> ()>
memref.global "private" @w : memref<4x8xf32> = dense<1.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %x, %x : tensor<4x8xf32>, tensor<4x8xf32>
}
func.func @model(%x: tensor<4x8xf32>, %w: tensor<4x8xf32>, %t: tensor<4x8xf32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %ze = arith.constant 0.0 : f32
  %me = tensor.empty() : tensor<8xf32>
  %m0 = linalg.fill ins(%ze : f32) outs(%me : tensor<8xf32>) -> tensor<8xf32>
  %m = linalg.generic {indexing_maps = [#map, affine_map<(i, j) -> (j)>], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%m0 : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %v = arith.addf %a, %acc : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  // expected-error @+1 {{hetero-rebatch: cannot re-type 'linalg.generic' in '@model' for 8 samples: it combines a sum over the samples with values that hold samples (statistics of the batch change with its size)}}
  %y = linalg.generic {indexing_maps = [#map, affine_map<(i, j) -> (j)>, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %m : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.subf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#map, #map, #all], iterator_types = ["reduction", "reduction"]} ins(%y, %t : tensor<4x8xf32>, tensor<4x8xf32>) outs(%l0 : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %d = arith.mulf %a, %b : f32
    %s = arith.addf %d, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
hetero.pipeline @p stages = 1 microbatches = 2 data @data optimizer #hetero.sgd<lr = 0.1> {
  hetero.stage 0 forward @model params [@w]
}

// -----

// A name the copy would take is in use.
#map = affine_map<(i, j) -> (i, j)>
#rows = affine_map<(i, j) -> (i)>
#all = affine_map<(i, j) -> ()>
memref.global "private" @w : memref<4x8xf32> = dense<1.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %x, %x : tensor<4x8xf32>, tensor<4x8xf32>
}
// expected-error @+1 {{hetero-rebatch: the copy of '@model' for 8 samples would be named '@model_b8', which the module already uses}}
func.func @model(%x: tensor<4x8xf32>, %w: tensor<4x8xf32>, %t: tensor<4x8xf32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %y = linalg.add ins(%x, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#map, #map, #all], iterator_types = ["reduction", "reduction"]} ins(%y, %t : tensor<4x8xf32>, tensor<4x8xf32>) outs(%l0 : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %d = arith.mulf %a, %b : f32
    %s = arith.addf %d, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
func.func private @model_b8()
hetero.pipeline @p stages = 1 microbatches = 2 data @data optimizer #hetero.sgd<lr = 0.1> {
  hetero.stage 0 forward @model params [@w]
}

// -----

// Variants of 8 samples exist.
#map = affine_map<(i, j) -> (i, j)>
#rows = affine_map<(i, j) -> (i)>
#all = affine_map<(i, j) -> ()>
memref.global "private" @w : memref<4x8xf32> = dense<1.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %x, %x : tensor<4x8xf32>, tensor<4x8xf32>
}
func.func @model(%x: tensor<4x8xf32>, %w: tensor<4x8xf32>, %t: tensor<4x8xf32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %y = linalg.add ins(%x, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#map, #map, #all], iterator_types = ["reduction", "reduction"]} ins(%y, %t : tensor<4x8xf32>, tensor<4x8xf32>) outs(%l0 : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %d = arith.mulf %a, %b : f32
    %s = arith.addf %d, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
func.func @given(%x: tensor<8x8xf32>, %w: tensor<4x8xf32>, %t: tensor<8x8xf32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<8x8xf32>
  %y = linalg.add ins(%x, %x : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#map, #map, #all], iterator_types = ["reduction", "reduction"]} ins(%y, %t : tensor<8x8xf32>, tensor<8x8xf32>) outs(%l0 : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %d = arith.mulf %a, %b : f32
    %s = arith.addf %d, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
// expected-error @+1 {{hetero-rebatch: pipeline '@p' already has variants of 8 samples}}
hetero.pipeline @p stages = 1 microbatches = 2 data @data optimizer #hetero.sgd<lr = 0.1> {
  hetero.stage 0 forward @model params [@w]
  hetero.stage_variant 0 microbatch_size = 8 forward @given
}
