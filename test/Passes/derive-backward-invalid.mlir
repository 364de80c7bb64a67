// What hetero-derive-backward refuses, each with the op, the function and
// why.
// RUN: hetero-opt %s --split-input-file --verify-diagnostics --hetero-derive-backward

#id = affine_map<(i) -> (i)>
memref.global "private" @w : memref<4xf32> = dense<1.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}
func.func @loss(%x: tensor<4xf32>, %w: tensor<4xf32>, %t: tensor<4xf32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    // expected-error @+1 {{hetero-derive-backward: cannot differentiate 'math.sin' in function '@loss': in the body of a linalg op: it has no derivative rule}}
    %v = math.sin %m : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%s : tensor<4xf32>) outs(%l0 : tensor<f32>) dimensions = [0]
    (%a: f32, %acc: f32) {
      %r = arith.addf %a, %acc : f32
      linalg.yield %r : f32
    }
  return %l : tensor<f32>
}
hetero.pipeline @p stages = 1 microbatches = 1 data @data optimizer #hetero.sgd<lr = 1.0e-01> {
  // expected-error @+1 {{stage 0: cannot derive the backward of '@loss'}}
  hetero.stage 0 forward @loss params [@w]
}

// -----

// A product reduction's accumulator is not a sum, maximum or minimum.
memref.global "private" @w : memref<4xf32> = dense<1.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}
func.func @loss(%x: tensor<4xf32>, %w: tensor<4xf32>, %t: tensor<4xf32>) -> tensor<f32> {
  %one = arith.constant 1.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%one : f32) outs(%le : tensor<f32>) -> tensor<f32>
  // expected-error @+1 {{hetero-derive-backward: cannot differentiate 'linalg.reduce' in function '@loss': it reduces, but its body is not the sum, maximum or minimum of its accumulator and a term}}
  %l = linalg.reduce ins(%w : tensor<4xf32>) outs(%l0 : tensor<f32>) dimensions = [0]
    (%a: f32, %acc: f32) {
      %r = arith.mulf %a, %acc : f32
      linalg.yield %r : f32
    }
  return %l : tensor<f32>
}
hetero.pipeline @p stages = 1 microbatches = 1 data @data optimizer #hetero.sgd<lr = 1.0e-01> {
  // expected-error @+1 {{stage 0: cannot derive the backward of '@loss'}}
  hetero.stage 0 forward @loss params [@w]
}

// -----

// A call of a public function: its body may change after this pass.
memref.global "private" @w : memref<4xf32> = dense<1.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}
func.func @sum(%w: tensor<4xf32>) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%w : tensor<4xf32>) outs(%l0 : tensor<f32>) dimensions = [0]
    (%a: f32, %acc: f32) {
      %r = arith.addf %a, %acc : f32
      linalg.yield %r : f32
    }
  return %l : tensor<f32>
}
func.func @loss(%x: tensor<4xf32>, %w: tensor<4xf32>, %t: tensor<4xf32>) -> tensor<f32> {
  // expected-error @+1 {{hetero-derive-backward: cannot differentiate 'func.call' in function '@loss': it calls '@sum', which is not a private function with a body}}
  %l = func.call @sum(%w) : (tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
hetero.pipeline @p stages = 1 microbatches = 1 data @data optimizer #hetero.sgd<lr = 1.0e-01> {
  // expected-error @+1 {{stage 0: cannot derive the backward of '@loss'}}
  hetero.stage 0 forward @loss params [@w]
}

// -----

// The derivative's name is taken.
memref.global "private" @w : memref<4xf32> = dense<1.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}
// expected-error @+1 {{hetero-derive-backward: cannot name the derivative of '@loss' '@loss_backward': the module already defines it}}
func.func @loss(%x: tensor<4xf32>, %w: tensor<4xf32>, %t: tensor<4xf32>) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%w : tensor<4xf32>) outs(%l0 : tensor<f32>) dimensions = [0]
    (%a: f32, %acc: f32) {
      %r = arith.addf %a, %acc : f32
      linalg.yield %r : f32
    }
  return %l : tensor<f32>
}
func.func private @loss_backward()
hetero.pipeline @p stages = 1 microbatches = 1 data @data optimizer #hetero.sgd<lr = 1.0e-01> {
  // expected-error @+1 {{stage 0: cannot derive the backward of '@loss'}}
  hetero.stage 0 forward @loss params [@w]
}
