// All-gathers, reduce-scatters and all-to-alls along an axis other than the
// outermost, compiled and run on 2 ranks. The runtime splits and
// concatenates along axis 0; hetero-lower-to-runtime moves the axis to the
// front and back (and, for an all-to-all that splits along one axis and
// concatenates along another, moves the received blocks next to the
// concatenation axis). Rank r holds x[i][j] = 100 r + 10 i + j; each entry
// returns the sum of its result's elements weighted by their row-major
// position plus 1, which any misplaced element changes. The expected sums
// are those of the definitions (python):
//   gather:   G[i][3p + j] = x_p[i][j]                        -> 5456
//   scatter:  rank r keeps columns 2r, 2r + 1 of sum_p y_p     -> 1152, 1192
//   exchange: O[i][3p + j] = z_p[2r + i][j]                    -> 5456, 7016
//   columns:  O[2p + i][j] = w_p[i][2r + j]                    -> 2840, 2912
//
// REQUIRES: mpi
// RUN: %mpirun -np 2 hetero-run %s --entry gather --all-ranks | sort | FileCheck %s --check-prefix=GATHER
// RUN: %mpirun -np 2 hetero-run %s --entry scatter --all-ranks | sort | FileCheck %s --check-prefix=SCATTER
// RUN: %mpirun -np 2 hetero-run %s --entry exchange --all-ranks | sort | FileCheck %s --check-prefix=EXCHANGE
// RUN: %mpirun -np 2 hetero-run %s --entry columns --all-ranks | sort | FileCheck %s --check-prefix=COLUMNS
// GATHER:        rank 0: iteration 0: loss 5456,
// GATHER-NEXT:   rank 1: iteration 0: loss 5456,
// SCATTER:       rank 0: iteration 0: loss 1152,
// SCATTER-NEXT:  rank 1: iteration 0: loss 1192,
// EXCHANGE:      rank 0: iteration 0: loss 5456,
// EXCHANGE-NEXT: rank 1: iteration 0: loss 7016,
// COLUMNS:       rank 0: iteration 0: loss 2840,
// COLUMNS-NEXT:  rank 1: iteration 0: loss 2912,

shard.grid @world(shape = 2)

#rowcol = affine_map<(i, j) -> (i, j)>

// v[i][j] = 100 * rank + 10 * i + j.
func.func private @ranked(%init: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %rank = shard.process_linear_index on @world : index
  %r = arith.index_cast %rank : index to i64
  %filled = linalg.generic {indexing_maps = [#rowcol], iterator_types = ["parallel", "parallel"]} outs(%init : tensor<?x?xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i64
    %jj = arith.index_cast %j : index to i64
    %c100 = arith.constant 100 : i64
    %c10 = arith.constant 10 : i64
    %a = arith.muli %r, %c100 : i64
    %b = arith.muli %ii, %c10 : i64
    %ab = arith.addi %a, %b : i64
    %v = arith.addi %ab, %jj : i64
    %f = arith.sitofp %v : i64 to f32
    linalg.yield %f : f32
  } -> tensor<?x?xf32>
  return %filled : tensor<?x?xf32>
}

// sum over i, j of t[i][j] * (i * columns + j + 1).
func.func private @weighted(%t: tensor<?x?xf32>) -> f32 {
  %c1 = arith.constant 1 : index
  %columns = tensor.dim %t, %c1 : tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %init = tensor.from_elements %zero : tensor<f32>
  %sum = linalg.generic {indexing_maps = [#rowcol, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%t : tensor<?x?xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %row = arith.muli %i, %columns : index
    %at = arith.addi %row, %j : index
    %position = arith.addi %at, %c1 : index
    %p = arith.index_cast %position : index to i64
    %w = arith.sitofp %p : i64 to f32
    %term = arith.mulf %in, %w : f32
    %next = arith.addf %acc, %term : f32
    linalg.yield %next : f32
  } -> tensor<f32>
  %value = tensor.extract %sum[] : tensor<f32>
  return %value : f32
}

func.func @gather(%iteration: i64) -> f32 {
  %empty = tensor.empty() : tensor<2x3xf32>
  %dynamic = tensor.cast %empty : tensor<2x3xf32> to tensor<?x?xf32>
  %filled = call @ranked(%dynamic) : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %x = tensor.cast %filled : tensor<?x?xf32> to tensor<2x3xf32>
  %g = hetero.all_gather %x on @world axis = 1 : tensor<2x3xf32> -> tensor<2x6xf32>
  %gd = tensor.cast %g : tensor<2x6xf32> to tensor<?x?xf32>
  %sum = call @weighted(%gd) : (tensor<?x?xf32>) -> f32
  return %sum : f32
}

func.func @scatter(%iteration: i64) -> f32 {
  %empty = tensor.empty() : tensor<2x4xf32>
  %dynamic = tensor.cast %empty : tensor<2x4xf32> to tensor<?x?xf32>
  %filled = call @ranked(%dynamic) : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %y = tensor.cast %filled : tensor<?x?xf32> to tensor<2x4xf32>
  %s = hetero.reduce_scatter %y on @world axis = 1 : tensor<2x4xf32> -> tensor<2x2xf32>
  %sd = tensor.cast %s : tensor<2x2xf32> to tensor<?x?xf32>
  %sum = call @weighted(%sd) : (tensor<?x?xf32>) -> f32
  return %sum : f32
}

func.func @exchange(%iteration: i64) -> f32 {
  %empty = tensor.empty() : tensor<4x3xf32>
  %dynamic = tensor.cast %empty : tensor<4x3xf32> to tensor<?x?xf32>
  %filled = call @ranked(%dynamic) : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %z = tensor.cast %filled : tensor<?x?xf32> to tensor<4x3xf32>
  %o = hetero.all_to_all %z on @world split_axis = 0 concat_axis = 1 : tensor<4x3xf32> -> tensor<2x6xf32>
  %od = tensor.cast %o : tensor<2x6xf32> to tensor<?x?xf32>
  %sum = call @weighted(%od) : (tensor<?x?xf32>) -> f32
  return %sum : f32
}

func.func @columns(%iteration: i64) -> f32 {
  %empty = tensor.empty() : tensor<2x4xf32>
  %dynamic = tensor.cast %empty : tensor<2x4xf32> to tensor<?x?xf32>
  %filled = call @ranked(%dynamic) : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %w = tensor.cast %filled : tensor<?x?xf32> to tensor<2x4xf32>
  %o = hetero.all_to_all %w on @world split_axis = 1 concat_axis = 0 : tensor<2x4xf32> -> tensor<4x2xf32>
  %od = tensor.cast %o : tensor<4x2xf32> to tensor<?x?xf32>
  %sum = call @weighted(%od) : (tensor<?x?xf32>) -> f32
  return %sum : f32
}
