// Same imputation against a reference that keeps its own state
// (shared/seeds/000-zero-resizing.md invariant I8): dW = X^T G_i with
// G_i = G + i, so every iteration's gradient differs; hetero-resize imputes
// the pruned rows with the previous iteration's dW (0 in the first). The
// reference keeps the previous dW in a global of its own and takes, row by
// row, X^T G_i where the layer's plan keeps the row and its previous value
// elsewhere. Integer-valued data, so the comparison is bit for bit. Returns
// 100 x (the sum of the absolute differences) + the number of pruned rows.

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#all = affine_map<(d0, d1) -> ()>

memref.global "private" @previous : memref<8x4xf32> = dense<0.0>

func.func @check(%iteration: i64) -> f32 {
  %xt = arith.constant dense<[[-1.0, -3.0, 0.0, 3.0, 1.0, -2.0], [-2.0, -1.0, 0.0, 1.0, 1.0, -1.0], [0.0, 1.0, -3.0, -3.0, 0.0, 0.0], [2.0, -3.0, -2.0, -2.0, -3.0, -2.0], [-3.0, 1.0, -3.0, 2.0, -2.0, 1.0], [-3.0, -2.0, 1.0, 2.0, -3.0, -3.0], [3.0, -3.0, 0.0, 1.0, 1.0, 1.0], [1.0, -3.0, -3.0, -3.0, 3.0, -1.0]]> : tensor<8x6xf32>
  %g0 = arith.constant dense<[[2.0, 3.0, -2.0, -3.0], [1.0, -1.0, 1.0, 0.0], [-1.0, 2.0, 0.0, -1.0], [1.0, -3.0, -3.0, 1.0], [0.0, -2.0, 3.0, -1.0], [-2.0, 0.0, 0.0, -3.0]]> : tensor<6x4xf32>
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e64 = tensor.empty() : tensor<6x4xf32>
  %e84 = tensor.empty() : tensor<8x4xf32>
  %step = arith.sitofp %iteration : i64 to f32
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g0 : tensor<6x4xf32>) outs(%e64 : tensor<6x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %step : f32
    linalg.yield %s : f32
  } -> tensor<6x4xf32>

  %dw = hetero.prunable_matmul col %xt, %g layer "l" tp = 1 product = grad_weight impute same : tensor<8x6xf32>, tensor<6x4xf32> -> tensor<8x4xf32>

  // The mask of the kept rows.
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

  // The reference: kept rows computed, the others the previous reference.
  %f84 = linalg.fill ins(%zero : f32) outs(%e84 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %xg = linalg.matmul ins(%xt, %g : tensor<8x6xf32>, tensor<6x4xf32>) outs(%f84 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %global = memref.get_global @previous : memref<8x4xf32>
  %last = bufferization.to_tensor %global restrict : memref<8x4xf32> to tensor<8x4xf32>
  %ref = linalg.generic {indexing_maps = [#id, #row, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%xg, %mask, %last : tensor<8x4xf32>, tensor<8xf32>, tensor<8x4xf32>) outs(%e84 : tensor<8x4xf32>) {
  ^bb0(%a: f32, %m: f32, %p: f32, %o: f32):
    %computed = arith.mulf %a, %m : f32
    %gap = arith.subf %one, %m : f32
    %kept_prev = arith.mulf %p, %gap : f32
    %v = arith.addf %computed, %kept_prev : f32
    linalg.yield %v : f32
  } -> tensor<8x4xf32>

  %s0 = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %d = linalg.generic {indexing_maps = [#id, #id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%dw, %ref : tensor<8x4xf32>, tensor<8x4xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %diff = arith.subf %a, %b : f32
    %m = math.absf %diff : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %difference = tensor.extract %d[] : tensor<f32>
  bufferization.materialize_in_destination %ref in writable %global : (tensor<8x4xf32>, memref<8x4xf32>) -> ()
  %hundred = arith.constant 100.0 : f32
  %scaled = arith.mulf %difference, %hundred : f32
  %c8 = arith.constant 8 : index
  %pruned = arith.subi %c8, %count : index
  %pruned64 = arith.index_cast %pruned : index to i64
  %prunedf = arith.sitofp %pruned64 : i64 to f32
  %result = arith.addf %scaled, %prunedf : f32
  return %result : f32
}
