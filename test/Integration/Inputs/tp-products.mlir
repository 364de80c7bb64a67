// The three products of a col-mode and a row-mode layer of tp = TP (the
// test substitutes the degree) on integer data, against linalg.matmul of
// the global operands: every sum is exact, so hetero-partition-tp's shards
// and collectives must reproduce the products bit for bit. Returns the sum
// of the absolute differences over all six products.

#id = affine_map<(d0, d1) -> (d0, d1)>
#all = affine_map<(d0, d1) -> ()>

shard.grid @tp(shape = 1x1xTP)

func.func private @difference(%a: tensor<?x12xf32>, %b: tensor<?x12xf32>) -> f32 {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%a, %b : tensor<?x12xf32>, tensor<?x12xf32>) outs(%init : tensor<f32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %d = arith.subf %p, %q : f32
    %m = math.absf %d : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %value = tensor.extract %sum[] : tensor<f32>
  return %value : f32
}

func.func private @compare(%a: tensor<6x12xf32>, %b: tensor<6x12xf32>) -> f32 {
  %p = tensor.cast %a : tensor<6x12xf32> to tensor<?x12xf32>
  %q = tensor.cast %b : tensor<6x12xf32> to tensor<?x12xf32>
  %d = func.call @difference(%p, %q) : (tensor<?x12xf32>, tensor<?x12xf32>) -> f32
  return %d : f32
}

func.func private @compare_weights(%a: tensor<12x12xf32>, %b: tensor<12x12xf32>) -> f32 {
  %p = tensor.cast %a : tensor<12x12xf32> to tensor<?x12xf32>
  %q = tensor.cast %b : tensor<12x12xf32> to tensor<?x12xf32>
  %d = func.call @difference(%p, %q) : (tensor<?x12xf32>, tensor<?x12xf32>) -> f32
  return %d : f32
}

func.func @check(%iteration: i64) -> f32 {
  %x = arith.constant dense<[[3.0, 1.0, 1.0, 3.0, 1.0, 2.0, 2.0, -2.0, -3.0, -1.0, -2.0, 3.0], [3.0, -3.0, 0.0, 2.0, -3.0, 2.0, -3.0, 0.0, 2.0, -1.0, -1.0, -2.0], [2.0, -2.0, 3.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 3.0, 2.0, 2.0], [1.0, 1.0, -1.0, 3.0, 0.0, -2.0, 2.0, -2.0, 3.0, 1.0, -3.0, -3.0], [0.0, -3.0, -3.0, 0.0, 3.0, 0.0, 2.0, 3.0, 2.0, 1.0, 0.0, 0.0], [-2.0, 0.0, -1.0, -2.0, 3.0, -3.0, -3.0, -2.0, 3.0, 1.0, 3.0, -2.0]]> : tensor<6x12xf32>
  %w = arith.constant dense<[[2.0, -1.0, 0.0, -3.0, 1.0, 2.0, 1.0, -2.0, 0.0, -2.0, 3.0, 3.0], [-2.0, 0.0, 3.0, 2.0, 1.0, 1.0, -3.0, 2.0, 0.0, -3.0, -2.0, 0.0], [2.0, 0.0, 1.0, 3.0, 1.0, -1.0, 1.0, 1.0, -3.0, -3.0, 1.0, -1.0], [1.0, -1.0, -2.0, -2.0, -1.0, 2.0, -1.0, -1.0, 1.0, 3.0, -1.0, 1.0], [0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 3.0, -2.0, 0.0, 0.0, -1.0, -2.0], [-3.0, -1.0, 2.0, -3.0, -1.0, 3.0, 3.0, -2.0, -3.0, 1.0, -3.0, -1.0], [0.0, 3.0, -3.0, 1.0, 0.0, -3.0, 2.0, 2.0, 0.0, 3.0, 1.0, 3.0], [3.0, 0.0, -2.0, -2.0, 0.0, -2.0, 2.0, 3.0, -2.0, 0.0, -3.0, -2.0], [-1.0, 3.0, 3.0, 1.0, 1.0, 0.0, -3.0, -1.0, 3.0, -1.0, -2.0, -2.0], [1.0, -3.0, 3.0, 3.0, 0.0, 0.0, 2.0, 0.0, 0.0, -1.0, 0.0, 2.0], [-3.0, -3.0, 2.0, -1.0, 2.0, -3.0, 3.0, -3.0, -1.0, 3.0, -3.0, 1.0], [2.0, -1.0, -3.0, 0.0, 0.0, 3.0, 1.0, -1.0, -3.0, 1.0, -2.0, 1.0]]> : tensor<12x12xf32>
  %g = arith.constant dense<[[3.0, -1.0, 3.0, 0.0, 0.0, 2.0, 2.0, 3.0, 3.0, -2.0, -1.0, 3.0], [-1.0, -3.0, 1.0, 2.0, 2.0, 2.0, 1.0, -3.0, 2.0, -1.0, 2.0, 2.0], [3.0, -3.0, 3.0, 1.0, 0.0, 2.0, 3.0, 0.0, -3.0, 2.0, -2.0, -2.0], [-2.0, -2.0, 3.0, -1.0, -3.0, -2.0, -1.0, -1.0, -1.0, 3.0, 3.0, 1.0], [3.0, -1.0, -3.0, -2.0, -3.0, 3.0, -2.0, 0.0, -2.0, 3.0, -2.0, 0.0], [3.0, 0.0, 3.0, 3.0, 2.0, 2.0, 1.0, 1.0, 2.0, -1.0, 3.0, 3.0]]> : tensor<6x12xf32>
  %zero = arith.constant 0.0 : f32
  %e612 = tensor.empty() : tensor<6x12xf32>
  %e1212 = tensor.empty() : tensor<12x12xf32>
  %e126 = tensor.empty() : tensor<12x6xf32>
  %wt = linalg.transpose ins(%w : tensor<12x12xf32>) outs(%e1212 : tensor<12x12xf32>) permutation = [1, 0]
  %xt = linalg.transpose ins(%x : tensor<6x12xf32>) outs(%e126 : tensor<12x6xf32>) permutation = [1, 0]

  // The global products.
  %z612 = linalg.fill ins(%zero : f32) outs(%e612 : tensor<6x12xf32>) -> tensor<6x12xf32>
  %z1212 = linalg.fill ins(%zero : f32) outs(%e1212 : tensor<12x12xf32>) -> tensor<12x12xf32>
  %y = linalg.matmul ins(%x, %w : tensor<6x12xf32>, tensor<12x12xf32>) outs(%z612 : tensor<6x12xf32>) -> tensor<6x12xf32>
  %dx = linalg.matmul ins(%g, %wt : tensor<6x12xf32>, tensor<12x12xf32>) outs(%z612 : tensor<6x12xf32>) -> tensor<6x12xf32>
  %dw = linalg.matmul ins(%xt, %g : tensor<12x6xf32>, tensor<6x12xf32>) outs(%z1212 : tensor<12x12xf32>) -> tensor<12x12xf32>

  // Each layer's three products, sharded over the tensor-parallel axis.
  %cy = hetero.prunable_matmul col %x, %w layer "c" tp = TP : tensor<6x12xf32>, tensor<12x12xf32> -> tensor<6x12xf32>
  %cdx = hetero.prunable_matmul col %g, %wt layer "c" tp = TP product = grad_input : tensor<6x12xf32>, tensor<12x12xf32> -> tensor<6x12xf32>
  %cdw = hetero.prunable_matmul col %xt, %g layer "c" tp = TP product = grad_weight : tensor<12x6xf32>, tensor<6x12xf32> -> tensor<12x12xf32>
  %ry = hetero.prunable_matmul row %x, %w layer "r" tp = TP : tensor<6x12xf32>, tensor<12x12xf32> -> tensor<6x12xf32>
  %rdx = hetero.prunable_matmul row %g, %wt layer "r" tp = TP product = grad_input : tensor<6x12xf32>, tensor<12x12xf32> -> tensor<6x12xf32>
  %rdw = hetero.prunable_matmul row %xt, %g layer "r" tp = TP product = grad_weight : tensor<12x6xf32>, tensor<6x12xf32> -> tensor<12x12xf32>

  %d0 = func.call @compare(%cy, %y) : (tensor<6x12xf32>, tensor<6x12xf32>) -> f32
  %d1 = func.call @compare(%cdx, %dx) : (tensor<6x12xf32>, tensor<6x12xf32>) -> f32
  %d2 = func.call @compare_weights(%cdw, %dw) : (tensor<12x12xf32>, tensor<12x12xf32>) -> f32
  %d3 = func.call @compare(%ry, %y) : (tensor<6x12xf32>, tensor<6x12xf32>) -> f32
  %d4 = func.call @compare(%rdx, %dx) : (tensor<6x12xf32>, tensor<6x12xf32>) -> f32
  %d5 = func.call @compare_weights(%rdw, %dw) : (tensor<12x12xf32>, tensor<12x12xf32>) -> f32
  %s0 = arith.addf %d0, %d1 : f32
  %s1 = arith.addf %s0, %d2 : f32
  %s2 = arith.addf %s1, %d3 : f32
  %s3 = arith.addf %s2, %d4 : f32
  %s4 = arith.addf %s3, %d5 : f32
  return %s4 : f32
}
