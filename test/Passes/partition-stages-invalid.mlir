// What hetero-partition-stages refuses, each naming the pipeline, the op
// or the stage, and why.
// RUN: hetero-opt %s --split-input-file --verify-diagnostics --hetero-partition-stages="stages=2 split-after=1 memory=100000"

// The loss reads the target before the cut.
memref.global "private" @w : memref<4xf32> = dense<1.0>
memref.global "private" @v : memref<4xf32> = dense<2.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}
func.func @model(%x: tensor<4xf32>, %w: tensor<4xf32>, %v: tensor<4xf32>, %t: tensor<4xf32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.mul ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{hetero-partition-stages: pipeline '@p' cannot split after op 1 (the end of stage 0): the target is used before it}}
  %b = linalg.mul ins(%a, %t : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %c = linalg.mul ins(%b, %v : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%c : tensor<4xf32>) outs(%l0 : tensor<f32>) dimensions = [0]
    (%ra: f32, %acc: f32) {
      %r = arith.addf %ra, %acc : f32
      linalg.yield %r : f32
    }
  return %l : tensor<f32>
}
hetero.pipeline @p stages = 1 microbatches = 2 data @data optimizer #hetero.sgd<lr = 0.1> {
  hetero.stage 0 forward @model params [@w, @v]
}

// -----

// The model input is read after the cut.
memref.global "private" @w : memref<4xf32> = dense<1.0>
memref.global "private" @v : memref<4xf32> = dense<2.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}
func.func @model(%x: tensor<4xf32>, %w: tensor<4xf32>, %v: tensor<4xf32>, %t: tensor<4xf32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.mul ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{hetero-partition-stages: pipeline '@p' cannot split after op 1 (the end of stage 0): the model's input is used after it}}
  %b = linalg.mul ins(%a, %v : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %c = linalg.mul ins(%b, %x : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%c : tensor<4xf32>) outs(%l0 : tensor<f32>) dimensions = [0]
    (%ra: f32, %acc: f32) {
      %r = arith.addf %ra, %acc : f32
      linalg.yield %r : f32
    }
  return %l : tensor<f32>
}
hetero.pipeline @p stages = 1 microbatches = 2 data @data optimizer #hetero.sgd<lr = 0.1> {
  hetero.stage 0 forward @model params [@w, @v]
}

// -----

// A parameter read on both sides of the cut.
memref.global "private" @w : memref<4xf32> = dense<1.0>
memref.global "private" @v : memref<4xf32> = dense<2.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}
func.func @model(%x: tensor<4xf32>, %w: tensor<4xf32>, %v: tensor<4xf32>, %t: tensor<4xf32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.mul ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{hetero-partition-stages: pipeline '@p' cannot split after op 1 (the end of stage 0): parameter @w is used on both sides}}
  %b = linalg.mul ins(%a, %v : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %c = linalg.mul ins(%b, %w : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%c : tensor<4xf32>) outs(%l0 : tensor<f32>) dimensions = [0]
    (%ra: f32, %acc: f32) {
      %r = arith.addf %ra, %acc : f32
      linalg.yield %r : f32
    }
  return %l : tensor<f32>
}
hetero.pipeline @p stages = 1 microbatches = 2 data @data optimizer #hetero.sgd<lr = 0.1> {
  hetero.stage 0 forward @model params [@w, @v]
}

// -----

// Two values cross the cut.
memref.global "private" @w : memref<4xf32> = dense<1.0>
memref.global "private" @v : memref<4xf32> = dense<2.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}
func.func @model(%x: tensor<4xf32>, %w: tensor<4xf32>, %v: tensor<4xf32>, %t: tensor<4xf32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.mul ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{hetero-partition-stages: pipeline '@p' cannot split after op 1 (the end of stage 0): 2 values are live across it}}
  %b = linalg.mul ins(%a, %v : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %c = linalg.mul ins(%b, %a : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%c : tensor<4xf32>) outs(%l0 : tensor<f32>) dimensions = [0]
    (%ra: f32, %acc: f32) {
      %r = arith.addf %ra, %acc : f32
      linalg.yield %r : f32
    }
  return %l : tensor<f32>
}
hetero.pipeline @p stages = 1 microbatches = 2 data @data optimizer #hetero.sgd<lr = 0.1> {
  hetero.stage 0 forward @model params [@w, @v]
}

// -----

// An integer tensor crosses the cut.
memref.global "private" @w : memref<4xf32> = dense<1.0>
memref.global "private" @v : memref<4xf32> = dense<2.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}
func.func @model(%x: tensor<4xf32>, %w: tensor<4xf32>, %v: tensor<4xf32>, %t: tensor<4xf32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<4xf32>
  %ei = tensor.empty() : tensor<4xi32>
  %a = linalg.mul ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{hetero-partition-stages: pipeline '@p' cannot split after op 1 (the end of stage 0): the value live across it is not a floating-point tensor of static shape}}
  %i = arith.fptosi %a : tensor<4xf32> to tensor<4xi32>
  %b = arith.sitofp %i : tensor<4xi32> to tensor<4xf32>
  %c = linalg.mul ins(%b, %v : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%c : tensor<4xf32>) outs(%l0 : tensor<f32>) dimensions = [0]
    (%ra: f32, %acc: f32) {
      %r = arith.addf %ra, %acc : f32
      linalg.yield %r : f32
    }
  return %l : tensor<f32>
}
hetero.pipeline @p stages = 1 microbatches = 2 data @data optimizer #hetero.sgd<lr = 0.1> {
  hetero.stage 0 forward @model params [@w, @v]
}

// -----

// The chain has two ops: no op follows op 1.
memref.global "private" @w : memref<4xf32> = dense<1.0>
memref.global "private" @v : memref<4xf32> = dense<2.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}
func.func @model(%x: tensor<4xf32>, %w: tensor<4xf32>, %t: tensor<4xf32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.mul ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%a : tensor<4xf32>) outs(%l0 : tensor<f32>) dimensions = [0]
    (%ra: f32, %acc: f32) {
      %r = arith.addf %ra, %acc : f32
      linalg.yield %r : f32
    }
  return %l : tensor<f32>
}
// expected-error @+1 {{hetero-partition-stages: pipeline '@p' cannot split after op 1: the forward '@model' has ops 0..1 and stage 1 would hold no op}}
hetero.pipeline @p stages = 1 microbatches = 2 data @data optimizer #hetero.sgd<lr = 0.1> {
  hetero.stage 0 forward @model params [@w]
}

// -----

// Stage 1 holds a parameter of 400 KB, over the cap.
memref.global "private" @w : memref<4xf32> = dense<1.0>
memref.global "private" @v : memref<100000xf32> = dense<2.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}
func.func @model(%x: tensor<4xf32>, %w: tensor<4xf32>, %v: tensor<100000xf32>, %t: tensor<4xf32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.mul ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %b = linalg.mul ins(%a, %a : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %s = tensor.extract_slice %v[0] [4] [1] : tensor<100000xf32> to tensor<4xf32>
  %d = linalg.mul ins(%b, %s : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %c = linalg.mul ins(%d, %t : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%c : tensor<4xf32>) outs(%l0 : tensor<f32>) dimensions = [0]
    (%ra: f32, %acc: f32) {
      %r = arith.addf %ra, %acc : f32
      linalg.yield %r : f32
    }
  return %l : tensor<f32>
}
// expected-error @+1 {{hetero-partition-stages: pipeline '@p' split-after: stage 1 would hold 800032 bytes, over its cap of 100000}}
hetero.pipeline @p stages = 1 microbatches = 2 data @data optimizer #hetero.sgd<lr = 0.1> {
  hetero.stage 0 forward @model params [@w, @v]
}

// -----

// The name of stage 0's function is taken.
memref.global "private" @w : memref<4xf32> = dense<1.0>
memref.global "private" @v : memref<4xf32> = dense<2.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}
func.func @model(%x: tensor<4xf32>, %w: tensor<4xf32>, %v: tensor<4xf32>, %t: tensor<4xf32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.mul ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %b = linalg.mul ins(%a, %v : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%b : tensor<4xf32>) outs(%l0 : tensor<f32>) dimensions = [0]
    (%ra: f32, %acc: f32) {
      %r = arith.addf %ra, %acc : f32
      linalg.yield %r : f32
    }
  return %l : tensor<f32>
}
func.func private @model_stage0()
// expected-error @+1 {{hetero-partition-stages: pipeline '@p' would name stage 0's forward '@model_stage0', which the module already uses}}
hetero.pipeline @p stages = 1 microbatches = 2 data @data optimizer #hetero.sgd<lr = 0.1> {
  hetero.stage 0 forward @model params [@w, @v]
}

// -----

// Already two stages.
memref.global "private" @w : memref<4xf32> = dense<1.0>
memref.global "private" @v : memref<4xf32> = dense<2.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}
func.func @model(%x: tensor<4xf32>, %w: tensor<4xf32>, %t: tensor<4xf32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.mul ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%a : tensor<4xf32>) outs(%l0 : tensor<f32>) dimensions = [0]
    (%ra: f32, %acc: f32) {
      %r = arith.addf %ra, %acc : f32
      linalg.yield %r : f32
    }
  return %l : tensor<f32>
}
func.func @second(%x: tensor<4xf32>, %v: tensor<4xf32>, %t: tensor<4xf32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.mul ins(%x, %v : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%a : tensor<4xf32>) outs(%l0 : tensor<f32>) dimensions = [0]
    (%ra: f32, %acc: f32) {
      %r = arith.addf %ra, %acc : f32
      linalg.yield %r : f32
    }
  return %l : tensor<f32>
}
func.func @first(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.mul ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}
// expected-error @+1 {{hetero-partition-stages: pipeline '@p' has 2 stages; the pass cuts a pipeline of one stage whose forward is the whole model}}
hetero.pipeline @p stages = 2 microbatches = 2 data @data optimizer #hetero.sgd<lr = 0.1> {
  hetero.stage 0 forward @first params [@w]
  hetero.stage 1 forward @second params [@v]
}

// -----

// The stage has its backward.
memref.global "private" @w : memref<4xf32> = dense<1.0>
memref.global "private" @v : memref<4xf32> = dense<2.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}
func.func @model(%x: tensor<4xf32>, %w: tensor<4xf32>, %t: tensor<4xf32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.mul ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%a : tensor<4xf32>) outs(%l0 : tensor<f32>) dimensions = [0]
    (%ra: f32, %acc: f32) {
      %r = arith.addf %ra, %acc : f32
      linalg.yield %r : f32
    }
  return %l : tensor<f32>
}
func.func @model_bwd(%x: tensor<4xf32>, %w: tensor<4xf32>, %t: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  return %x, %w : tensor<4xf32>, tensor<4xf32>
}
hetero.pipeline @p stages = 1 microbatches = 2 data @data optimizer #hetero.sgd<lr = 0.1> {
  // expected-error @+1 {{hetero-partition-stages: pipeline '@p' has a stage with a backward; the pass cuts the forward only (run hetero-derive-backward after it)}}
  hetero.stage 0 forward @model backward @model_bwd params [@w]
}

// -----

// A schedule before the cut.
memref.global "private" @w : memref<4xf32> = dense<1.0>
memref.global "private" @v : memref<4xf32> = dense<2.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}
func.func @model(%x: tensor<4xf32>, %w: tensor<4xf32>, %t: tensor<4xf32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.mul ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%a : tensor<4xf32>) outs(%l0 : tensor<f32>) dimensions = [0]
    (%ra: f32, %acc: f32) {
      %r = arith.addf %ra, %acc : f32
      linalg.yield %r : f32
    }
  return %l : tensor<f32>
}
hetero.pipeline @p stages = 1 microbatches = 2 data @data optimizer #hetero.sgd<lr = 0.1> {
  hetero.stage 0 forward @model params [@w]
}
// expected-error @+1 {{hetero-partition-stages: pipeline '@p' has 'hetero.schedule'; cut the model before scheduling it}}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    hetero.fwd 0
    hetero.bwd 0
    hetero.fwd 1
    hetero.bwd 1
  }
}

// -----

// A stage variant before the cut.
memref.global "private" @w : memref<4xf32> = dense<1.0>
func.func @data(%step: i64, %replica: i64, %mb: i64) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.fill ins(%c : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}
func.func @model(%x: tensor<4xf32>, %w: tensor<4xf32>, %t: tensor<4xf32>) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%x : tensor<4xf32>) outs(%l0 : tensor<f32>) dimensions = [0]
    (%ra: f32, %acc: f32) {
      %r = arith.addf %ra, %acc : f32
      linalg.yield %r : f32
    }
  return %l : tensor<f32>
}
func.func @model_b8(%x: tensor<8xf32>, %w: tensor<4xf32>, %t: tensor<8xf32>) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%x : tensor<8xf32>) outs(%l0 : tensor<f32>) dimensions = [0]
    (%ra: f32, %acc: f32) {
      %r = arith.addf %ra, %acc : f32
      linalg.yield %r : f32
    }
  return %l : tensor<f32>
}
hetero.pipeline @p stages = 1 microbatches = 2 data @data optimizer #hetero.sgd<lr = 0.1> {
  hetero.stage 0 forward @model params [@w]
  // expected-error @+1 {{hetero-partition-stages: pipeline '@p' holds 'hetero.stage_variant'; cut the model before adding stage variants (run hetero-rebatch after the cut)}}
  hetero.stage_variant 0 microbatch_size = 8 forward @model_b8
}
