// The three products of one layer, resized, against the masked reference
// (and dW once more with `impute average`, against the kept rows' mean)
// (shared/seeds/000-zero-resizing.md invariants I1, I2, I7): integer-valued
// data, so every sum is exact and the comparison is bit for bit. Returns
// 100 x (the sum of the absolute differences) + the number of pruned
// columns. hetero-resize expands the prunable matmuls; the reference reads
// the layer's plan itself, which holds the same columns for the iteration.

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>
#all = affine_map<(d0, d1) -> ()>

func.func @check(%iteration: i64) -> f32 {
  %x = arith.constant dense<[[-1.0, -2.0, 0.0, 2.0, -3.0, -3.0, 3.0, 1.0], [-3.0, -1.0, 1.0, -3.0, 1.0, -2.0, -3.0, -3.0], [0.0, 0.0, -3.0, -2.0, -3.0, 1.0, 0.0, -3.0], [3.0, 1.0, -3.0, -2.0, 2.0, 2.0, 1.0, -3.0], [1.0, 1.0, 0.0, -3.0, -2.0, -3.0, 1.0, 3.0], [-2.0, -1.0, 0.0, -2.0, 1.0, -3.0, 1.0, -1.0]]> : tensor<6x8xf32>
  %w = arith.constant dense<[[1.0, 3.0, 2.0, -2.0], [-3.0, 1.0, 1.0, 2.0], [-2.0, -1.0, -3.0, 1.0], [2.0, -3.0, 1.0, -3.0], [1.0, -2.0, 0.0, 2.0], [1.0, 0.0, 3.0, -1.0], [0.0, 1.0, 0.0, -1.0], [-1.0, -2.0, 3.0, -2.0]]> : tensor<8x4xf32>
  %g = arith.constant dense<[[2.0, 3.0, -2.0, -3.0], [1.0, -1.0, 1.0, 0.0], [-1.0, 2.0, 0.0, -1.0], [1.0, -3.0, -3.0, 1.0], [0.0, -2.0, 3.0, -1.0], [-2.0, 0.0, 0.0, -3.0]]> : tensor<6x4xf32>
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e84 = tensor.empty() : tensor<8x4xf32>
  %e48 = tensor.empty() : tensor<4x8xf32>
  %e86 = tensor.empty() : tensor<8x6xf32>
  %e64 = tensor.empty() : tensor<6x4xf32>
  %e68 = tensor.empty() : tensor<6x8xf32>
  %wt = linalg.transpose ins(%w : tensor<8x4xf32>) outs(%e48 : tensor<4x8xf32>) permutation = [1, 0]
  %xt = linalg.transpose ins(%x : tensor<6x8xf32>) outs(%e86 : tensor<8x6xf32>) permutation = [1, 0]

  // The layer's three products.
  %y = hetero.prunable_matmul col %x, %w layer "l" tp = 1 : tensor<6x8xf32>, tensor<8x4xf32> -> tensor<6x4xf32>
  %dx = hetero.prunable_matmul col %g, %wt layer "l" tp = 1 product = grad_input : tensor<6x4xf32>, tensor<4x8xf32> -> tensor<6x8xf32>
  %dw = hetero.prunable_matmul col %xt, %g layer "l" tp = 1 product = grad_weight : tensor<8x6xf32>, tensor<6x4xf32> -> tensor<8x4xf32>
  %dwa = hetero.prunable_matmul col %xt, %g layer "l" tp = 1 product = grad_weight impute average : tensor<8x6xf32>, tensor<6x4xf32> -> tensor<8x4xf32>

  // The mask of the kept columns.
  %kept = hetero.prune_plan layer "l" columns = 8 : tensor<?xindex>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %count = tensor.dim %kept, %c0 : tensor<?xindex>
  %e8 = tensor.empty() : tensor<8xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
  %mask = scf.for %i = %c0 to %count step %c1 iter_args(%m = %zeros) -> (tensor<8xf32>) {
    %k = tensor.extract %kept[%i] : tensor<?xindex>
    %set = tensor.insert %one into %m[%k] : tensor<8xf32>
    scf.yield %set : tensor<8xf32>
  }

  // Y = (X masked by columns) W; dX = (G W^T) masked by columns;
  // dW = (X^T G) masked by rows.
  %xm = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mask : tensor<6x8xf32>, tensor<8xf32>) outs(%e68 : tensor<6x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<6x8xf32>
  %f64 = linalg.fill ins(%zero : f32) outs(%e64 : tensor<6x4xf32>) -> tensor<6x4xf32>
  %yref = linalg.matmul ins(%xm, %w : tensor<6x8xf32>, tensor<8x4xf32>) outs(%f64 : tensor<6x4xf32>) -> tensor<6x4xf32>
  %f68 = linalg.fill ins(%zero : f32) outs(%e68 : tensor<6x8xf32>) -> tensor<6x8xf32>
  %gw = linalg.matmul ins(%g, %wt : tensor<6x4xf32>, tensor<4x8xf32>) outs(%f68 : tensor<6x8xf32>) -> tensor<6x8xf32>
  %dxref = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gw, %mask : tensor<6x8xf32>, tensor<8xf32>) outs(%e68 : tensor<6x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<6x8xf32>
  %f84 = linalg.fill ins(%zero : f32) outs(%e84 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %xg = linalg.matmul ins(%xt, %g : tensor<8x6xf32>, tensor<6x4xf32>) outs(%f84 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %dwref = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%xg, %mask : tensor<8x4xf32>, tensor<8xf32>) outs(%e84 : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<8x4xf32>

  // dW imputed with the average: each pruned row is the mean of the kept
  // rows, column by column.
  %e4 = tensor.empty() : tensor<4xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %colsum = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%dwref : tensor<8x4xf32>) outs(%z4 : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %count64 = arith.index_cast %count : index to i64
  %countf = arith.sitofp %count64 : i64 to f32
  %dwaref = linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%dwref, %mask, %colsum : tensor<8x4xf32>, tensor<8xf32>, tensor<4xf32>) outs(%e84 : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %mean = arith.divf %c, %countf : f32
    %gap = arith.subf %one, %b : f32
    %fill = arith.mulf %gap, %mean : f32
    %v = arith.addf %a, %fill : f32
    linalg.yield %v : f32
  } -> tensor<8x4xf32>

  // The sums of the absolute differences.
  %s0 = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %d1 = linalg.generic {indexing_maps = [#id, #id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%y, %yref : tensor<6x4xf32>, tensor<6x4xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %m = math.absf %d : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %d2 = linalg.generic {indexing_maps = [#id, #id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%dx, %dxref : tensor<6x8xf32>, tensor<6x8xf32>) outs(%d1 : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %m = math.absf %d : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %d3 = linalg.generic {indexing_maps = [#id, #id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%dw, %dwref : tensor<8x4xf32>, tensor<8x4xf32>) outs(%d2 : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %m = math.absf %d : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %d4 = linalg.generic {indexing_maps = [#id, #id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%dwa, %dwaref : tensor<8x4xf32>, tensor<8x4xf32>) outs(%d3 : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %m = math.absf %d : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %difference = tensor.extract %d4[] : tensor<f32>
  %hundred = arith.constant 100.0 : f32
  %scaled = arith.mulf %difference, %hundred : f32
  %c8 = arith.constant 8 : index
  %pruned = arith.subi %c8, %count : index
  %pruned64 = arith.index_cast %pruned : index to i64
  %prunedf = arith.sitofp %pruned64 : i64 to f32
  %result = arith.addf %scaled, %prunedf : f32
  return %result : f32
}
