// What hetero-derive-backward refuses beyond derive-backward-invalid.mlir:
// the op, the function and why, then the stage.
// RUN: hetero-opt %s --split-input-file --verify-diagnostics --hetero-derive-backward

// A fill of a value that carries a gradient.
memref.global "private" @w : memref<4xf32> = dense<1.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}
func.func @loss(%x: tensor<4xf32>, %w: tensor<4xf32>, %t: tensor<4xf32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %a = tensor.extract %w[%c0] : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{hetero-derive-backward: cannot differentiate 'linalg.fill' in function '@loss': it fills with a value that carries a gradient; broadcast a tensor instead}}
  %f = linalg.fill ins(%a : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%f : tensor<4xf32>) outs(%l0 : tensor<f32>) dimensions = [0]
    (%elem: f32, %acc: f32) {
      %r = arith.addf %elem, %acc : f32
      linalg.yield %r : f32
    }
  return %l : tensor<f32>
}
hetero.pipeline @p stages = 1 microbatches = 1 data @data optimizer #hetero.sgd<lr = 1.0e-01> {
  // expected-error @+1 {{stage 0: cannot derive the backward of '@loss'}}
  hetero.stage 0 forward @loss params [@w]
}

// -----

// A scalar operand of a linalg op that carries a gradient.
memref.global "private" @w : memref<4xf32> = dense<1.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}
#id = affine_map<(i) -> (i)>
#scalar = affine_map<(i) -> ()>
func.func @loss(%x: tensor<4xf32>, %w: tensor<4xf32>, %t: tensor<4xf32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %a = tensor.extract %w[%c0] : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{hetero-derive-backward: cannot differentiate 'linalg.generic' in function '@loss': a scalar operand carries a gradient; pass it as a tensor}}
  %s = linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel"]} ins(%x, %a : tensor<4xf32>, f32) outs(%e : tensor<4xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %m = arith.mulf %u, %v : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%s : tensor<4xf32>) outs(%l0 : tensor<f32>) dimensions = [0]
    (%elem: f32, %acc: f32) {
      %r = arith.addf %elem, %acc : f32
      linalg.yield %r : f32
    }
  return %l : tensor<f32>
}
hetero.pipeline @p stages = 1 microbatches = 1 data @data optimizer #hetero.sgd<lr = 1.0e-01> {
  // expected-error @+1 {{stage 0: cannot derive the backward of '@loss'}}
  hetero.stage 0 forward @loss params [@w]
}

// -----

// A body that reads a value from outside that carries a gradient.
memref.global "private" @w : memref<4xf32> = dense<1.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}
#id = affine_map<(i) -> (i)>
func.func @loss(%x: tensor<4xf32>, %w: tensor<4xf32>, %t: tensor<4xf32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %a = tensor.extract %w[%c0] : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{hetero-derive-backward: cannot differentiate 'linalg.generic' in function '@loss': its body reads a value from outside that carries a gradient; pass it as an operand}}
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%u: f32, %o: f32):
    %m = arith.mulf %u, %a : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%s : tensor<4xf32>) outs(%l0 : tensor<f32>) dimensions = [0]
    (%elem: f32, %acc: f32) {
      %r = arith.addf %elem, %acc : f32
      linalg.yield %r : f32
    }
  return %l : tensor<f32>
}
hetero.pipeline @p stages = 1 microbatches = 1 data @data optimizer #hetero.sgd<lr = 1.0e-01> {
  // expected-error @+1 {{stage 0: cannot derive the backward of '@loss'}}
  hetero.stage 0 forward @loss params [@w]
}

// -----

// A reduction whose term reads its accumulator.
memref.global "private" @w : memref<4xf32> = dense<1.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}
#id = affine_map<(i) -> (i)>
#reduce = affine_map<(i) -> ()>
func.func @loss(%x: tensor<4xf32>, %w: tensor<4xf32>, %t: tensor<4xf32>) -> tensor<f32> {
  %z = arith.constant 1.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  // expected-error @+1 {{hetero-derive-backward: cannot differentiate 'linalg.generic' in function '@loss': the reduction's term reads the accumulator}}
  %l = linalg.generic {indexing_maps = [#id, #reduce], iterator_types = ["reduction"]} ins(%w : tensor<4xf32>) outs(%l0 : tensor<f32>) {
  ^bb0(%u: f32, %acc: f32):
    %m = arith.mulf %u, %acc : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
hetero.pipeline @p stages = 1 microbatches = 1 data @data optimizer #hetero.sgd<lr = 1.0e-01> {
  // expected-error @+1 {{stage 0: cannot derive the backward of '@loss'}}
  hetero.stage 0 forward @loss params [@w]
}

// -----

// Loops of dynamic bounds.
memref.global "private" @w : memref<4xf32> = dense<1.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}
#id = affine_map<(i) -> (i)>
#reduce = affine_map<(i) -> ()>
func.func @loss(%x: tensor<4xf32>, %w: tensor<4xf32>, %t: tensor<4xf32>) -> tensor<f32> {
  %wd = tensor.cast %w : tensor<4xf32> to tensor<?xf32>
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  // expected-error @+1 {{hetero-derive-backward: cannot differentiate 'linalg.generic' in function '@loss': its loops have dynamic bounds}}
  %l = linalg.generic {indexing_maps = [#id, #reduce], iterator_types = ["reduction"]} ins(%wd : tensor<?xf32>) outs(%l0 : tensor<f32>) {
  ^bb0(%u: f32, %acc: f32):
    %r = arith.addf %acc, %u : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
hetero.pipeline @p stages = 1 microbatches = 1 data @data optimizer #hetero.sgd<lr = 1.0e-01> {
  // expected-error @+1 {{stage 0: cannot derive the backward of '@loss'}}
  hetero.stage 0 forward @loss params [@w]
}

// -----

// A linalg op of several results.
memref.global "private" @w : memref<4xf32> = dense<1.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}
#id = affine_map<(i) -> (i)>
func.func @loss(%x: tensor<4xf32>, %w: tensor<4xf32>, %t: tensor<4xf32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{hetero-derive-backward: cannot differentiate 'linalg.generic' in function '@loss': it has several results}}
  %s:2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%w : tensor<4xf32>) outs(%e, %e : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%u: f32, %o: f32, %p: f32):
    %m = arith.mulf %u, %u : f32
    linalg.yield %m, %u : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%s#0 : tensor<4xf32>) outs(%l0 : tensor<f32>) dimensions = [0]
    (%elem: f32, %acc: f32) {
      %r = arith.addf %elem, %acc : f32
      linalg.yield %r : f32
    }
  return %l : tensor<f32>
}
hetero.pipeline @p stages = 1 microbatches = 1 data @data optimizer #hetero.sgd<lr = 1.0e-01> {
  // expected-error @+1 {{stage 0: cannot derive the backward of '@loss'}}
  hetero.stage 0 forward @loss params [@w]
}

// -----

// A gradient product in a forward.
memref.global "private" @w : memref<4x4xf32> = dense<1.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}
func.func @loss(%x: tensor<4xf32>, %w: tensor<4x4xf32>, %t: tensor<4xf32>) -> tensor<f32> {
  %xm = tensor.expand_shape %x [[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
  // expected-error @+1 {{hetero-derive-backward: cannot differentiate 'hetero.prunable_matmul' in function '@loss': it is a gradient product, not a forward one}}
  %y = hetero.prunable_matmul col %xm, %w layer "fc" tp = 1 product = grad_input : tensor<1x4xf32>, tensor<4x4xf32> -> tensor<1x4xf32>
  %yv = tensor.collapse_shape %y [[0, 1]] : tensor<1x4xf32> into tensor<4xf32>
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%yv : tensor<4xf32>) outs(%l0 : tensor<f32>) dimensions = [0]
    (%elem: f32, %acc: f32) {
      %r = arith.addf %elem, %acc : f32
      linalg.yield %r : f32
    }
  return %l : tensor<f32>
}
hetero.pipeline @p stages = 1 microbatches = 1 data @data optimizer #hetero.sgd<lr = 1.0e-01> {
  // expected-error @+1 {{stage 0: cannot derive the backward of '@loss'}}
  hetero.stage 0 forward @loss params [@w]
}

// -----

// A function that calls itself.
memref.global "private" @w : memref<4xf32> = dense<1.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}
func.func private @twice(%v: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @-1 {{hetero-derive-backward: cannot differentiate function '@twice': it calls itself, directly or not}}
  %r = func.call @twice(%v) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func @loss(%x: tensor<4xf32>, %w: tensor<4xf32>, %t: tensor<4xf32>) -> tensor<f32> {
  %s = func.call @twice(%w) : (tensor<4xf32>) -> tensor<4xf32>
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%s : tensor<4xf32>) outs(%l0 : tensor<f32>) dimensions = [0]
    (%elem: f32, %acc: f32) {
      %r = arith.addf %elem, %acc : f32
      linalg.yield %r : f32
    }
  return %l : tensor<f32>
}
hetero.pipeline @p stages = 1 microbatches = 1 data @data optimizer #hetero.sgd<lr = 1.0e-01> {
  // expected-error @+1 {{stage 0: cannot derive the backward of '@loss'}}
  hetero.stage 0 forward @loss params [@w]
}

// -----

// A parameter that is not floating-point.
memref.global "private" @k : memref<4xi32> = dense<1>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}
// expected-error @+1 {{hetero-derive-backward: argument 1 of function '@loss' has type 'tensor<4xi32>', expected a floating-point tensor to differentiate}}
func.func @loss(%x: tensor<4xf32>, %k: tensor<4xi32>, %t: tensor<4xf32>) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%x : tensor<4xf32>) outs(%l0 : tensor<f32>) dimensions = [0]
    (%elem: f32, %acc: f32) {
      %r = arith.addf %elem, %acc : f32
      linalg.yield %r : f32
    }
  return %l : tensor<f32>
}
hetero.pipeline @p stages = 1 microbatches = 1 data @data optimizer #hetero.sgd<lr = 1.0e-01> {
  // expected-error @+1 {{stage 0: cannot derive the backward of '@loss'}}
  hetero.stage 0 forward @loss params [@k]
}
