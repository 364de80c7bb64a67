// The work of a training step in the shapes hetero-lower-to-gpu sees after
// bufferization, on dynamic sizes so that one build runs every shape:
// a product (the layers' GEMMs), a fused element-wise chain (GELU, as a
// block's activation) and a row reduction (a softmax or layer-norm
// statistic). @layer is written on tensors, as a model is: bufferization
// gives it temporaries (the product, the activation), which the pipeline
// allocates in device memory. bench/gpu.sh lowers it with matmul=cublas and matmul=kernel;
// gpu-bench.c calls the functions on device buffers.

#id = affine_map<(i) -> (i)>
#rows = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>

func.func @matmul(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<?x?xf32>)
  linalg.matmul ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>)
  return
}

// y = 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
func.func @gelu(%x: memref<?xf32>, %y: memref<?xf32>) {
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %scale = arith.constant 0.797884583 : f32
  %cubic = arith.constant 0.044715 : f32
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<?xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%v: f32, %out: f32):
    %v2 = arith.mulf %v, %v : f32
    %v3 = arith.mulf %v2, %v : f32
    %t = arith.mulf %v3, %cubic : f32
    %u = arith.addf %v, %t : f32
    %w = arith.mulf %u, %scale : f32
    %th = math.tanh %w : f32
    %p = arith.addf %th, %one : f32
    %h = arith.mulf %v, %half : f32
    %r = arith.mulf %h, %p : f32
    linalg.yield %r : f32
  }
  return
}

func.func @rowsum(%x: memref<?x?xf32>, %y: memref<?xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<?xf32>)
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x?xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// relu(x w) into %out, through two temporaries.
func.func @layer(%x: tensor<?x?xf32>, %w: tensor<?x?xf32>, %out: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %m = tensor.dim %x, %c0 : tensor<?x?xf32>
  %n = tensor.dim %w, %c1 : tensor<?x?xf32>
  %empty = tensor.empty(%m, %n) : tensor<?x?xf32>
  %filled = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x?xf32>) -> tensor<?x?xf32>
  %h = linalg.matmul ins(%x, %w : tensor<?x?xf32>, tensor<?x?xf32>) outs(%filled : tensor<?x?xf32>) -> tensor<?x?xf32>
  %activations = tensor.empty(%m, %n) : tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<?x?xf32>) outs(%activations : tensor<?x?xf32>) {
  ^bb0(%v: f32, %o: f32):
    %p = arith.maximumf %v, %zero : f32
    linalg.yield %p : f32
  } -> tensor<?x?xf32>
  bufferization.materialize_in_destination %r in restrict writable %out : (tensor<?x?xf32>, memref<?x?xf32>) -> ()
  return
}

// The row sum on tensors, as a model writes it: hetero-gpu-split-reductions
// spreads each long row over several threads before bufferization.
func.func @rowsum_tensor(%x: tensor<8192x8192xf32>, %out: memref<8192xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8192xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<8192xf32>) -> tensor<8192xf32>
  %sum = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8192x8192xf32>) outs(%init : tensor<8192xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8192xf32>
  bufferization.materialize_in_destination %sum in restrict writable %out : (tensor<8192xf32>, memref<8192xf32>) -> ()
  return
}
