// A two-stage MLP in the stage ABI (docs/execution.md), written by hand,
// backward functions included: stage 0 computes h = tanh(x w0), stage 1
// the mean squared error of h w1 against the target. The RUN lines of the
// tests that use it swap the grid shape and the optimizer.

shard.grid @grid(shape = 2x2)

memref.global "private" @w0 : memref<8x16xf32> = dense<[[0.1182, 0.3980, 0.0406, -0.3819, -0.1929, 0.3049, 0.3145, -0.1794, -0.3861, 0.0254, 0.3962, 0.1326, -0.3433, -0.2696, 0.2358, 0.3636], [0.3387, 0.2760, -0.2286, -0.3672, 0.0821, 0.4000, 0.0774, -0.3691, -0.2247, 0.2795, 0.3361, -0.1454, -0.3941, -0.0118, 0.3894, 0.1672], [0.3956, 0.0206, -0.3873, -0.1751, 0.3175, 0.3018, -0.1971, -0.3804, 0.0454, 0.3985, 0.1136, -0.3532, -0.2545, 0.2517, 0.3549, -0.1101], [0.2612, -0.2447, -0.3588, 0.1016, 0.3994, 0.0577, -0.3764, -0.2078, 0.2934, 0.3249, -0.1638, -0.3903, 0.0082, 0.3935, 0.1488, -0.3342], [0.0006, -0.3918, -0.1569, 0.3292, 0.2883, -0.2142, -0.3737, 0.0652, 0.3997, 0.0943, -0.3621, -0.2387, 0.2669, 0.3452, -0.1292, -0.3967], [-0.2603, -0.3496, 0.1208, 0.3978, 0.0379, -0.3827, -0.1905, 0.3067, 0.3128, -0.1819, -0.3854, 0.0282, 0.3966, 0.1301, -0.3447, -0.2676], [-0.3954, -0.1384, 0.3402, 0.2741, -0.2309, -0.3661, 0.0848, 0.4000, 0.0747, -0.3702, -0.2224, 0.2814, 0.3347, -0.1479, -0.3937, -0.0091], [-0.3394, 0.1397, 0.3951, 0.0179, -0.3880, -0.1727, 0.3191, 0.3000, -0.1995, -0.3795, 0.0481, 0.3987, 0.1110, -0.3544, -0.2524, 0.2538]]>
memref.global "private" @w1 : memref<16x4xf32> = dense<[[0.1182, 0.3108, 0.3984, 0.3512], [0.3960, 0.3603, 0.2028, -0.0233], [0.2197, -0.0034, -0.2253, -0.3711], [-0.2085, -0.3632, -0.3950, -0.2933], [-0.3977, -0.3066, -0.1118, 0.1208], [-0.1308, 0.1016, 0.2997, 0.3964], [0.2861, 0.3932, 0.3675, 0.2175], [0.3749, 0.2340, 0.0139, -0.2109], [0.0339, -0.1936, -0.3556, -0.3974], [-0.3460, -0.3992, -0.3174, -0.1282], [-0.3291, -0.1470, 0.0848, 0.2880], [0.0652, 0.2737, 0.3897, 0.3740], [0.3847, 0.3806, 0.2478, 0.0312], [0.2631, 0.0510, -0.1783, -0.3474], [-0.1602, -0.3370, -0.3999, -0.3276], [-0.3998, -0.3386, -0.1629, 0.0678]]>

#map = affine_map<(i, j) -> (i, j)>
#transpose = affine_map<(i, j) -> (j, i)>
#reduce = affine_map<(i, j) -> ()>

// x[i][j] = sin(0.37 i + 0.91 j + 1.3 mb + 2.1 replica + 0.17 step)
// t[i][j] = cos(0.53 i + 0.29 j + 0.7 mb + 1.7 replica + 0.11 step)
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4x8xf32>, tensor<4x4xf32>) {
  %stepf = arith.sitofp %step : i64 to f32
  %replicaf = arith.sitofp %replica : i64 to f32
  %mbf = arith.sitofp %mb : i64 to f32
  %c037 = arith.constant 0.37 : f32
  %c091 = arith.constant 0.91 : f32
  %c13 = arith.constant 1.3 : f32
  %c21 = arith.constant 2.1 : f32
  %c017 = arith.constant 0.17 : f32
  %c053 = arith.constant 0.53 : f32
  %c029 = arith.constant 0.29 : f32
  %c07 = arith.constant 0.7 : f32
  %c17 = arith.constant 1.7 : f32
  %c011 = arith.constant 0.11 : f32
  %xo0 = arith.mulf %mbf, %c13 : f32
  %xo1 = arith.mulf %replicaf, %c21 : f32
  %xo2 = arith.mulf %stepf, %c017 : f32
  %xo3 = arith.addf %xo0, %xo1 : f32
  %xoffset = arith.addf %xo3, %xo2 : f32
  %to0 = arith.mulf %mbf, %c07 : f32
  %to1 = arith.mulf %replicaf, %c17 : f32
  %to2 = arith.mulf %stepf, %c011 : f32
  %to3 = arith.addf %to0, %to1 : f32
  %toffset = arith.addf %to3, %to2 : f32
  %xe = tensor.empty() : tensor<4x8xf32>
  %x = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel"]} outs(%xe : tensor<4x8xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i64
    %jj = arith.index_cast %j : index to i64
    %if = arith.sitofp %ii : i64 to f32
    %jf = arith.sitofp %jj : i64 to f32
    %a = arith.mulf %if, %c037 : f32
    %b = arith.mulf %jf, %c091 : f32
    %ab = arith.addf %a, %b : f32
    %arg = arith.addf %ab, %xoffset : f32
    %v = math.sin %arg : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %te = tensor.empty() : tensor<4x4xf32>
  %t = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel"]} outs(%te : tensor<4x4xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i64
    %jj = arith.index_cast %j : index to i64
    %if = arith.sitofp %ii : i64 to f32
    %jf = arith.sitofp %jj : i64 to f32
    %a = arith.mulf %if, %c053 : f32
    %b = arith.mulf %jf, %c029 : f32
    %ab = arith.addf %a, %b : f32
    %arg = arith.addf %ab, %toffset : f32
    %v = math.cos %arg : f32
    linalg.yield %v : f32
  } -> tensor<4x4xf32>
  return %x, %t : tensor<4x8xf32>, tensor<4x4xf32>
}

// z = x w0; h = tanh(z)
func.func @s0_fwd(%x: tensor<4x8xf32>, %w0: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %z = linalg.matmul ins(%x, %w0 : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %h = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%z : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.tanh %in : f32
    linalg.yield %v : f32
  } -> tensor<4x16xf32>
  return %h : tensor<4x16xf32>
}

// dz = dh (1 - h^2); dw0 = x^T dz; dx = dz w0^T
func.func @s0_bwd(%x: tensor<4x8xf32>, %w0: tensor<8x16xf32>, %dh: tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %h = func.call @s0_fwd(%x, %w0) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %dz = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%h, %dh : tensor<4x16xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%hv: f32, %g: f32, %out: f32):
    %sq = arith.mulf %hv, %hv : f32
    %d = arith.subf %one, %sq : f32
    %v = arith.mulf %g, %d : f32
    linalg.yield %v : f32
  } -> tensor<4x16xf32>
  %xte = tensor.empty() : tensor<8x4xf32>
  %xt = linalg.transpose ins(%x : tensor<4x8xf32>) outs(%xte : tensor<8x4xf32>) permutation = [1, 0]
  %dwe = tensor.empty() : tensor<8x16xf32>
  %dwf = linalg.fill ins(%zero : f32) outs(%dwe : tensor<8x16xf32>) -> tensor<8x16xf32>
  %dw0 = linalg.matmul ins(%xt, %dz : tensor<8x4xf32>, tensor<4x16xf32>) outs(%dwf : tensor<8x16xf32>) -> tensor<8x16xf32>
  %wte = tensor.empty() : tensor<16x8xf32>
  %wt = linalg.transpose ins(%w0 : tensor<8x16xf32>) outs(%wte : tensor<16x8xf32>) permutation = [1, 0]
  %dxe = tensor.empty() : tensor<4x8xf32>
  %dxf = linalg.fill ins(%zero : f32) outs(%dxe : tensor<4x8xf32>) -> tensor<4x8xf32>
  %dx = linalg.matmul ins(%dz, %wt : tensor<4x16xf32>, tensor<16x8xf32>) outs(%dxf : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %dx, %dw0 : tensor<4x8xf32>, tensor<8x16xf32>
}

// y = h w1; loss = mean((y - t)^2)
func.func @s1_fwd(%h: tensor<4x16xf32>, %w1: tensor<16x4xf32>, %t: tensor<4x4xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.0625 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %y = linalg.matmul ins(%h, %w1 : tensor<4x16xf32>, tensor<16x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %le = tensor.empty() : tensor<f32>
  %lf = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#map, #map, #reduce], iterator_types = ["reduction", "reduction"]} ins(%y, %t : tensor<4x4xf32>, tensor<4x4xf32>) outs(%lf : tensor<f32>) {
  ^bb0(%yv: f32, %tv: f32, %acc: f32):
    %d = arith.subf %yv, %tv : f32
    %sq = arith.mulf %d, %d : f32
    %w = arith.mulf %sq, %scale : f32
    %s = arith.addf %acc, %w : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %loss : tensor<f32>
}

// dy = (y - t) / 8; dw1 = h^T dy; dh = dy w1^T
func.func @s1_bwd(%h: tensor<4x16xf32>, %w1: tensor<16x4xf32>, %t: tensor<4x4xf32>) -> (tensor<4x16xf32>, tensor<16x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.125 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %y = linalg.matmul ins(%h, %w1 : tensor<4x16xf32>, tensor<16x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %dy = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%y, %t : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%yv: f32, %tv: f32, %out: f32):
    %d = arith.subf %yv, %tv : f32
    %v = arith.mulf %d, %scale : f32
    linalg.yield %v : f32
  } -> tensor<4x4xf32>
  %hte = tensor.empty() : tensor<16x4xf32>
  %ht = linalg.transpose ins(%h : tensor<4x16xf32>) outs(%hte : tensor<16x4xf32>) permutation = [1, 0]
  %dwe = tensor.empty() : tensor<16x4xf32>
  %dwf = linalg.fill ins(%zero : f32) outs(%dwe : tensor<16x4xf32>) -> tensor<16x4xf32>
  %dw1 = linalg.matmul ins(%ht, %dy : tensor<16x4xf32>, tensor<4x4xf32>) outs(%dwf : tensor<16x4xf32>) -> tensor<16x4xf32>
  %wte = tensor.empty() : tensor<4x16xf32>
  %wt = linalg.transpose ins(%w1 : tensor<16x4xf32>) outs(%wte : tensor<4x16xf32>) permutation = [1, 0]
  %dhe = tensor.empty() : tensor<4x16xf32>
  %dhf = linalg.fill ins(%zero : f32) outs(%dhe : tensor<4x16xf32>) -> tensor<4x16xf32>
  %dh = linalg.matmul ins(%dy, %wt : tensor<4x4xf32>, tensor<4x16xf32>) outs(%dhf : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %dh, %dw1 : tensor<4x16xf32>, tensor<16x4xf32>
}

hetero.pipeline @mlp stages = 2 microbatches = 4 on @grid data @data optimizer #hetero.sgd<lr = 5.0e-02> {
  hetero.stage 0 forward @s0_fwd backward @s0_bwd params [@w0]
  hetero.stage 1 forward @s1_fwd backward @s1_bwd params [@w1]
}
