// The stages of test/Integration/Inputs/mlp-pipeline.mlir compiled for
// micro-batches of 8 samples (twice the pipeline's 4), as a frontend
// exports a model once per batch size. Appended to that file without its
// last line, it closes the pipeline's body:
//   sed '$d' mlp-pipeline.mlir > m.mlir && cat mlp-variants.mlir >> m.mlir
  hetero.stage_variant 0 microbatch_size = 8 forward @s0_fwd_b8 backward @s0_bwd_b8
  hetero.stage_variant 1 microbatch_size = 8 forward @s1_fwd_b8 backward @s1_bwd_b8
}

// z = x w0; h = tanh(z)
func.func @s0_fwd_b8(%x: tensor<8x8xf32>, %w0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %z = linalg.matmul ins(%x, %w0 : tensor<8x8xf32>, tensor<8x16xf32>) outs(%f : tensor<8x16xf32>) -> tensor<8x16xf32>
  %h = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%z : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.tanh %in : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  return %h : tensor<8x16xf32>
}

// dz = dh (1 - h^2); dw0 = x^T dz; dx = dz w0^T
func.func @s0_bwd_b8(%x: tensor<8x8xf32>, %w0: tensor<8x16xf32>, %dh: tensor<8x16xf32>) -> (tensor<8x8xf32>, tensor<8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %h = func.call @s0_fwd_b8(%x, %w0) : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %e = tensor.empty() : tensor<8x16xf32>
  %dz = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%h, %dh : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%hv: f32, %g: f32, %out: f32):
    %sq = arith.mulf %hv, %hv : f32
    %d = arith.subf %one, %sq : f32
    %v = arith.mulf %g, %d : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  %xte = tensor.empty() : tensor<8x8xf32>
  %xt = linalg.transpose ins(%x : tensor<8x8xf32>) outs(%xte : tensor<8x8xf32>) permutation = [1, 0]
  %dwe = tensor.empty() : tensor<8x16xf32>
  %dwf = linalg.fill ins(%zero : f32) outs(%dwe : tensor<8x16xf32>) -> tensor<8x16xf32>
  %dw0 = linalg.matmul ins(%xt, %dz : tensor<8x8xf32>, tensor<8x16xf32>) outs(%dwf : tensor<8x16xf32>) -> tensor<8x16xf32>
  %wte = tensor.empty() : tensor<16x8xf32>
  %wt = linalg.transpose ins(%w0 : tensor<8x16xf32>) outs(%wte : tensor<16x8xf32>) permutation = [1, 0]
  %dxe = tensor.empty() : tensor<8x8xf32>
  %dxf = linalg.fill ins(%zero : f32) outs(%dxe : tensor<8x8xf32>) -> tensor<8x8xf32>
  %dx = linalg.matmul ins(%dz, %wt : tensor<8x16xf32>, tensor<16x8xf32>) outs(%dxf : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %dx, %dw0 : tensor<8x8xf32>, tensor<8x16xf32>
}

// y = h w1; loss = mean((y - t)^2) over the 8 x 4 outputs
func.func @s1_fwd_b8(%h: tensor<8x16xf32>, %w1: tensor<16x4xf32>, %t: tensor<8x4xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.03125 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %y = linalg.matmul ins(%h, %w1 : tensor<8x16xf32>, tensor<16x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
  %le = tensor.empty() : tensor<f32>
  %lf = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#map, #map, #reduce], iterator_types = ["reduction", "reduction"]} ins(%y, %t : tensor<8x4xf32>, tensor<8x4xf32>) outs(%lf : tensor<f32>) {
  ^bb0(%yv: f32, %tv: f32, %acc: f32):
    %d = arith.subf %yv, %tv : f32
    %sq = arith.mulf %d, %d : f32
    %w = arith.mulf %sq, %scale : f32
    %s = arith.addf %acc, %w : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %loss : tensor<f32>
}

// dy = (y - t) / 16; dw1 = h^T dy; dh = dy w1^T
func.func @s1_bwd_b8(%h: tensor<8x16xf32>, %w1: tensor<16x4xf32>, %t: tensor<8x4xf32>) -> (tensor<8x16xf32>, tensor<16x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.0625 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %y = linalg.matmul ins(%h, %w1 : tensor<8x16xf32>, tensor<16x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
  %dy = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%y, %t : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%yv: f32, %tv: f32, %out: f32):
    %d = arith.subf %yv, %tv : f32
    %v = arith.mulf %d, %scale : f32
    linalg.yield %v : f32
  } -> tensor<8x4xf32>
  %hte = tensor.empty() : tensor<16x8xf32>
  %ht = linalg.transpose ins(%h : tensor<8x16xf32>) outs(%hte : tensor<16x8xf32>) permutation = [1, 0]
  %dwe = tensor.empty() : tensor<16x4xf32>
  %dwf = linalg.fill ins(%zero : f32) outs(%dwe : tensor<16x4xf32>) -> tensor<16x4xf32>
  %dw1 = linalg.matmul ins(%ht, %dy : tensor<16x8xf32>, tensor<8x4xf32>) outs(%dwf : tensor<16x4xf32>) -> tensor<16x4xf32>
  %wte = tensor.empty() : tensor<4x16xf32>
  %wt = linalg.transpose ins(%w1 : tensor<16x4xf32>) outs(%wte : tensor<4x16xf32>) permutation = [1, 0]
  %dhe = tensor.empty() : tensor<8x16xf32>
  %dhf = linalg.fill ins(%zero : f32) outs(%dhe : tensor<8x16xf32>) -> tensor<8x16xf32>
  %dh = linalg.matmul ins(%dy, %wt : tensor<8x4xf32>, tensor<4x16xf32>) outs(%dhf : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %dh, %dw1 : tensor<8x16xf32>, tensor<16x4xf32>
}
