// Plans per block (hetero.prune_plan ... block %b): the runtime keys a
// block's layer by the layer's hash moved by the block index, so blocks 0
// and 1 of one layer draw different columns, and block 0 draws those of the
// layer without a block. Returns 1 when block 0's kept columns equal the
// plain layer's, plus 2 when block 1's differ from block 0's.

func.func private @mask(%kept: tensor<?xindex>) -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i64
  %zero = arith.constant 0 : i64
  %count = tensor.dim %kept, %c0 : tensor<?xindex>
  %bits = scf.for %i = %c0 to %count step %c1 iter_args(%m = %zero) -> (i64) {
    %k = tensor.extract %kept[%i] : tensor<?xindex>
    %k64 = arith.index_cast %k : index to i64
    %bit = arith.shli %one, %k64 : i64
    %set = arith.ori %m, %bit : i64
    scf.yield %set : i64
  }
  return %bits : i64
}

func.func @check(%iteration: i64) -> f32 {
  %b0 = arith.constant 0 : index
  %b1 = arith.constant 1 : index
  %plain = hetero.prune_plan layer "l" columns = 16 : tensor<?xindex>
  %first = hetero.prune_plan layer "l" block %b0 columns = 16 : tensor<?xindex>
  %second = hetero.prune_plan layer "l" block %b1 columns = 16 : tensor<?xindex>
  %mp = func.call @mask(%plain) : (tensor<?xindex>) -> i64
  %m0 = func.call @mask(%first) : (tensor<?xindex>) -> i64
  %m1 = func.call @mask(%second) : (tensor<?xindex>) -> i64
  %same = arith.cmpi eq, %m0, %mp : i64
  %differ = arith.cmpi ne, %m0, %m1 : i64
  %s = arith.extui %same : i1 to i64
  %d = arith.extui %differ : i1 to i64
  %two = arith.constant 2 : i64
  %d2 = arith.muli %d, %two : i64
  %sum = arith.addi %s, %d2 : i64
  %result = arith.sitofp %sum : i64 to f32
  return %result : f32
}
