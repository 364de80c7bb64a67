// Chains of linalg ops over the same rows, on buffers, as a step's layer
// norms, softmaxes and their adjoints bufferize, and a loss. @main fills
// the inputs with sin(0.37 i + 0.11 j), runs @chains and prints every
// output. gpu-kernels-on-host.test runs it as the CPU lowering compiles it
// and with the GPU's kernels run on the host.
#x = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#all2 = affine_map<(d0, d1) -> ()>
#x3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#r3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#a3 = affine_map<(d0, d1, d2) -> (d0, d2)>
#w3 = affine_map<(d0, d1, d2) -> (d2, d1)>
#o3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#m3 = affine_map<(d0, d1, d2) -> (d0)>

func.func @chains(%x: memref<16x64xf32>, %g: memref<64xf32>,
                  %dy: memref<16x64xf32>, %s: memref<4x8x40xf32>,
                  %w: memref<64x24xf32>, %y: memref<16x64xf32>,
                  %dx: memref<16x64xf32>, %p: memref<4x8x40xf32>,
                  %z: memref<16x24xf32>, %loss: memref<f32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %n = arith.constant 64.0 : f32
  %eps = arith.constant 1.0e-5 : f32

  // Layer norm: mean, variance, the normalised and scaled rows.
  %mean = memref.alloc() : memref<16xf32>
  linalg.fill ins(%zero : f32) outs(%mean : memref<16xf32>)
  linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]} ins(%x : memref<16x64xf32>) outs(%mean : memref<16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %q = arith.divf %a, %n : f32
    %t = arith.addf %q, %acc : f32
    linalg.yield %t : f32
  }
  %var = memref.alloc() : memref<16xf32>
  linalg.fill ins(%zero : f32) outs(%var : memref<16xf32>)
  linalg.generic {indexing_maps = [#x, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%x, %mean : memref<16x64xf32>, memref<16xf32>) outs(%var : memref<16xf32>) {
  ^bb0(%a: f32, %m: f32, %acc: f32):
    %d = arith.subf %a, %m : f32
    %sq = arith.mulf %d, %d : f32
    %q = arith.divf %sq, %n : f32
    %t = arith.addf %q, %acc : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [#x, #row, #row, #col, #x], iterator_types = ["parallel", "parallel"]} ins(%x, %mean, %var, %g : memref<16x64xf32>, memref<16xf32>, memref<16xf32>, memref<64xf32>) outs(%y : memref<16x64xf32>) {
  ^bb0(%a: f32, %m: f32, %v: f32, %gg: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %ve = arith.addf %v, %eps : f32
    %r = math.rsqrt %ve : f32
    %t = arith.mulf %d, %r : f32
    %u = arith.mulf %t, %gg : f32
    linalg.yield %u : f32
  }

  // The layer norm's input adjoint: two row sums, then every element.
  %sum1 = memref.alloc() : memref<16xf32>
  linalg.fill ins(%zero : f32) outs(%sum1 : memref<16xf32>)
  linalg.generic {indexing_maps = [#x, #col, #row], iterator_types = ["parallel", "reduction"]} ins(%dy, %g : memref<16x64xf32>, memref<64xf32>) outs(%sum1 : memref<16xf32>) {
  ^bb0(%a: f32, %gg: f32, %acc: f32):
    %t = arith.mulf %a, %gg : f32
    %u = arith.addf %t, %acc : f32
    linalg.yield %u : f32
  }
  %sum2 = memref.alloc() : memref<16xf32>
  linalg.fill ins(%zero : f32) outs(%sum2 : memref<16xf32>)
  linalg.generic {indexing_maps = [#x, #col, #x, #row, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%dy, %g, %x, %mean, %var : memref<16x64xf32>, memref<64xf32>, memref<16x64xf32>, memref<16xf32>, memref<16xf32>) outs(%sum2 : memref<16xf32>) {
  ^bb0(%a: f32, %gg: f32, %xx: f32, %m: f32, %v: f32, %acc: f32):
    %d = arith.subf %xx, %m : f32
    %ve = arith.addf %v, %eps : f32
    %r = math.rsqrt %ve : f32
    %h = arith.mulf %d, %r : f32
    %t = arith.mulf %a, %gg : f32
    %th = arith.mulf %t, %h : f32
    %u = arith.addf %th, %acc : f32
    linalg.yield %u : f32
  }
  linalg.generic {indexing_maps = [#x, #col, #x, #row, #row, #row, #row, #x], iterator_types = ["parallel", "parallel"]} ins(%dy, %g, %x, %mean, %var, %sum1, %sum2 : memref<16x64xf32>, memref<64xf32>, memref<16x64xf32>, memref<16xf32>, memref<16xf32>, memref<16xf32>, memref<16xf32>) outs(%dx : memref<16x64xf32>) {
  ^bb0(%a: f32, %gg: f32, %xx: f32, %m: f32, %v: f32, %s1: f32, %s2: f32, %o: f32):
    %d = arith.subf %xx, %m : f32
    %ve = arith.addf %v, %eps : f32
    %r = math.rsqrt %ve : f32
    %h = arith.mulf %d, %r : f32
    %t = arith.mulf %a, %gg : f32
    %tn = arith.mulf %t, %n : f32
    %a1 = arith.subf %tn, %s1 : f32
    %hs = arith.mulf %h, %s2 : f32
    %a2 = arith.subf %a1, %hs : f32
    %rn = arith.divf %r, %n : f32
    %e = arith.mulf %a2, %rn : f32
    linalg.yield %e : f32
  }

  // A product of each centred row with %w: a thread per output, its
  // reduction walked in the thread.
  linalg.fill ins(%zero : f32) outs(%z : memref<16x24xf32>)
  linalg.generic {indexing_maps = [#a3, #m3, #w3, #o3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %mean, %w : memref<16x64xf32>, memref<16xf32>, memref<64x24xf32>) outs(%z : memref<16x24xf32>) {
  ^bb0(%a: f32, %m: f32, %ww: f32, %acc: f32):
    %d = arith.subf %a, %m : f32
    %t = arith.mulf %d, %ww : f32
    %u = arith.addf %t, %acc : f32
    linalg.yield %u : f32
  }

  // Softmax along the last of three dimensions: maximum, exponentials,
  // their sum, quotients.
  %max = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%ninf : f32) outs(%max : memref<4x8xf32>)
  linalg.generic {indexing_maps = [#x3, #r3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%s : memref<4x8x40xf32>) outs(%max : memref<4x8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.maximumf %a, %acc : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#x3, #r3, #x3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %max : memref<4x8x40xf32>, memref<4x8xf32>) outs(%p : memref<4x8x40xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  }
  %sum = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<4x8xf32>)
  linalg.generic {indexing_maps = [#x3, #r3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%p : memref<4x8x40xf32>) outs(%sum : memref<4x8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %a, %acc : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [#r3, #x3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sum : memref<4x8xf32>) outs(%p : memref<4x8x40xf32>) {
  ^bb0(%t: f32, %o: f32):
    %q = arith.divf %o, %t : f32
    linalg.yield %q : f32
  }

  // The loss: the sum of the squares of %y, a block of its own.
  linalg.fill ins(%zero : f32) outs(%loss : memref<f32>)
  linalg.generic {indexing_maps = [#x, #all2], iterator_types = ["reduction", "reduction"]} ins(%y : memref<16x64xf32>) outs(%loss : memref<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %t = arith.addf %sq, %acc : f32
    linalg.yield %t : f32
  }
  memref.dealloc %mean : memref<16xf32>
  memref.dealloc %var : memref<16xf32>
  memref.dealloc %sum1 : memref<16xf32>
  memref.dealloc %sum2 : memref<16xf32>
  memref.dealloc %max : memref<4x8xf32>
  memref.dealloc %sum : memref<4x8xf32>
  return
}

func.func private @printMemrefF32(memref<*xf32>)

/// sin(0.37 i + 0.11 j + offset) at each (i, j) of `buffer` viewed as rows
/// of its last dimension.
func.func @init2(%buffer: memref<?x?xf32>, %offset: f32) {
  linalg.generic {indexing_maps = [#x], iterator_types = ["parallel", "parallel"]} outs(%buffer : memref<?x?xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %jj = arith.index_cast %j : index to i32
    %fi = arith.sitofp %ii : i32 to f32
    %fj = arith.sitofp %jj : i32 to f32
    %ci = arith.constant 0.37 : f32
    %cj = arith.constant 0.11 : f32
    %a = arith.mulf %fi, %ci : f32
    %b = arith.mulf %fj, %cj : f32
    %c = arith.addf %a, %b : f32
    %d = arith.addf %c, %offset : f32
    %e = math.sin %d : f32
    linalg.yield %e : f32
  }
  return
}

func.func @main() {
  %x = memref.alloc() : memref<16x64xf32>
  %g = memref.alloc() : memref<1x64xf32>
  %dy = memref.alloc() : memref<16x64xf32>
  %s = memref.alloc() : memref<32x40xf32>
  %w = memref.alloc() : memref<64x24xf32>
  %c0 = arith.constant 0.0 : f32
  %c1 = arith.constant 1.0 : f32
  %c2 = arith.constant 2.0 : f32
  %c3 = arith.constant 3.0 : f32
  %c4 = arith.constant 4.0 : f32
  %xd = memref.cast %x : memref<16x64xf32> to memref<?x?xf32>
  %gd = memref.cast %g : memref<1x64xf32> to memref<?x?xf32>
  %dyd = memref.cast %dy : memref<16x64xf32> to memref<?x?xf32>
  %sd = memref.cast %s : memref<32x40xf32> to memref<?x?xf32>
  %wd = memref.cast %w : memref<64x24xf32> to memref<?x?xf32>
  call @init2(%xd, %c0) : (memref<?x?xf32>, f32) -> ()
  call @init2(%gd, %c1) : (memref<?x?xf32>, f32) -> ()
  call @init2(%dyd, %c2) : (memref<?x?xf32>, f32) -> ()
  call @init2(%sd, %c3) : (memref<?x?xf32>, f32) -> ()
  call @init2(%wd, %c4) : (memref<?x?xf32>, f32) -> ()
  %g1 = memref.collapse_shape %g [[0, 1]] : memref<1x64xf32> into memref<64xf32>
  %s3 = memref.expand_shape %s [[0, 1], [2]] output_shape [4, 8, 40] : memref<32x40xf32> into memref<4x8x40xf32>
  %y = memref.alloc() : memref<16x64xf32>
  %dx = memref.alloc() : memref<16x64xf32>
  %p = memref.alloc() : memref<4x8x40xf32>
  %z = memref.alloc() : memref<16x24xf32>
  %loss = memref.alloc() : memref<f32>
  call @chains(%x, %g1, %dy, %s3, %w, %y, %dx, %p, %z, %loss) : (memref<16x64xf32>, memref<64xf32>, memref<16x64xf32>, memref<4x8x40xf32>, memref<64x24xf32>, memref<16x64xf32>, memref<16x64xf32>, memref<4x8x40xf32>, memref<16x24xf32>, memref<f32>) -> ()
  %yu = memref.cast %y : memref<16x64xf32> to memref<*xf32>
  %dxu = memref.cast %dx : memref<16x64xf32> to memref<*xf32>
  %pu = memref.cast %p : memref<4x8x40xf32> to memref<*xf32>
  %zu = memref.cast %z : memref<16x24xf32> to memref<*xf32>
  %lu = memref.cast %loss : memref<f32> to memref<*xf32>
  call @printMemrefF32(%yu) : (memref<*xf32>) -> ()
  call @printMemrefF32(%dxu) : (memref<*xf32>) -> ()
  call @printMemrefF32(%pu) : (memref<*xf32>) -> ()
  call @printMemrefF32(%zu) : (memref<*xf32>) -> ()
  call @printMemrefF32(%lu) : (memref<*xf32>) -> ()
  return
}
