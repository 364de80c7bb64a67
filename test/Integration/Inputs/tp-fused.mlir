// A col forward read only by a pointwise op (a bias per column, a scale
// per row), itself read only by a row forward, at tp = TP (the test
// substitutes the degree), on integer data: hetero-partition-tp keeps the
// values between the two products sharded (sharded-activations), so each
// rank applies the bias and scale to its window. Returns the sum of the
// absolute differences from the global computation, which every sum keeps
// exact.

#id = affine_map<(d0, d1) -> (d0, d1)>
#all = affine_map<(d0, d1) -> ()>
#cols = affine_map<(d0, d1) -> (d1)>
#rows = affine_map<(d0, d1) -> (d0)>

shard.grid @tp(shape = 1x1xTP)

func.func @check(%iteration: i64) -> f32 {
  %x = arith.constant dense<[[3.0, 1.0, 1.0, 3.0, 1.0, 2.0, 2.0, -2.0, -3.0, -1.0, -2.0, 3.0], [3.0, -3.0, 0.0, 2.0, -3.0, 2.0, -3.0, 0.0, 2.0, -1.0, -1.0, -2.0], [2.0, -2.0, 3.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 3.0, 2.0, 2.0], [1.0, 1.0, -1.0, 3.0, 0.0, -2.0, 2.0, -2.0, 3.0, 1.0, -3.0, -3.0]]> : tensor<4x12xf32>
  %w1 = arith.constant dense<[[2.0, -1.0, 0.0, -3.0, 1.0, 2.0, 1.0, -2.0, 0.0, -2.0, 3.0, 3.0], [-2.0, 0.0, 3.0, 2.0, 1.0, 1.0, -3.0, 2.0, 0.0, -3.0, -2.0, 0.0], [2.0, 0.0, 1.0, 3.0, 1.0, -1.0, 1.0, 1.0, -3.0, -3.0, 1.0, -1.0], [1.0, -1.0, -2.0, -2.0, -1.0, 2.0, -1.0, -1.0, 1.0, 3.0, -1.0, 1.0], [0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 3.0, -2.0, 0.0, 0.0, -1.0, -2.0], [-3.0, -1.0, 2.0, -3.0, -1.0, 3.0, 3.0, -2.0, -3.0, 1.0, -3.0, -1.0], [0.0, 3.0, -3.0, 1.0, 0.0, -3.0, 2.0, 2.0, 0.0, 3.0, 1.0, 3.0], [3.0, 0.0, -2.0, -2.0, 0.0, -2.0, 2.0, 3.0, -2.0, 0.0, -3.0, -2.0], [-1.0, 3.0, 3.0, 1.0, 1.0, 0.0, -3.0, -1.0, 3.0, -1.0, -2.0, -2.0], [1.0, -3.0, 3.0, 3.0, 0.0, 0.0, 2.0, 0.0, 0.0, -1.0, 0.0, 2.0], [-3.0, -3.0, 2.0, -1.0, 2.0, -3.0, 3.0, -3.0, -1.0, 3.0, -3.0, 1.0], [2.0, -1.0, -3.0, 0.0, 0.0, 3.0, 1.0, -1.0, -3.0, 1.0, -2.0, 1.0]]> : tensor<12x12xf32>
  %w2 = arith.constant dense<[[1.0, 2.0, -1.0], [0.0, -2.0, 3.0], [2.0, 1.0, 0.0], [-3.0, 1.0, 1.0], [1.0, 0.0, -2.0], [2.0, -1.0, 1.0], [0.0, 3.0, -3.0], [-1.0, 1.0, 2.0], [3.0, 0.0, 1.0], [1.0, -3.0, 0.0], [-2.0, 2.0, 2.0], [0.0, 1.0, -1.0]]> : tensor<12x3xf32>
  %bias = arith.constant dense<[1.0, -2.0, 0.0, 3.0, -1.0, 2.0, 1.0, 0.0, -3.0, 2.0, 1.0, -1.0]> : tensor<12xf32>
  %scale = arith.constant dense<[1.0, 2.0, -1.0, 3.0]> : tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %e412 = tensor.empty() : tensor<4x12xf32>
  %z412 = linalg.fill ins(%zero : f32) outs(%e412 : tensor<4x12xf32>) -> tensor<4x12xf32>
  %e43 = tensor.empty() : tensor<4x3xf32>
  %z43 = linalg.fill ins(%zero : f32) outs(%e43 : tensor<4x3xf32>) -> tensor<4x3xf32>

  // The global computation.
  %y = linalg.matmul ins(%x, %w1 : tensor<4x12xf32>, tensor<12x12xf32>) outs(%z412 : tensor<4x12xf32>) -> tensor<4x12xf32>
  %act = linalg.generic {indexing_maps = [#id, #cols, #rows, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y, %bias, %scale : tensor<4x12xf32>, tensor<12xf32>, tensor<4xf32>) outs(%e412 : tensor<4x12xf32>) {
  ^bb0(%v: f32, %b: f32, %c: f32, %o: f32):
    %sum = arith.addf %v, %b : f32
    %scaled = arith.mulf %sum, %c : f32
    linalg.yield %scaled : f32
  } -> tensor<4x12xf32>
  %out = linalg.matmul ins(%act, %w2 : tensor<4x12xf32>, tensor<12x3xf32>) outs(%z43 : tensor<4x3xf32>) -> tensor<4x3xf32>

  // The same, sharded.
  %sy = hetero.prunable_matmul col %x, %w1 layer "up" tp = TP : tensor<4x12xf32>, tensor<12x12xf32> -> tensor<4x12xf32>
  %sact = linalg.generic {indexing_maps = [#id, #cols, #rows, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sy, %bias, %scale : tensor<4x12xf32>, tensor<12xf32>, tensor<4xf32>) outs(%e412 : tensor<4x12xf32>) {
  ^bb0(%v: f32, %b: f32, %c: f32, %o: f32):
    %sum = arith.addf %v, %b : f32
    %scaled = arith.mulf %sum, %c : f32
    linalg.yield %scaled : f32
  } -> tensor<4x12xf32>
  %sout = hetero.prunable_matmul row %sact, %w2 layer "down" tp = TP : tensor<4x12xf32>, tensor<12x3xf32> -> tensor<4x3xf32>

  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %difference = linalg.generic {indexing_maps = [#id, #id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%sout, %out : tensor<4x3xf32>, tensor<4x3xf32>) outs(%init : tensor<f32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %d = arith.subf %p, %q : f32
    %m = math.absf %d : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %value = tensor.extract %difference[] : tensor<f32>
  return %value : f32
}
