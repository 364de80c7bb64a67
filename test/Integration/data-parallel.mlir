// Data parallelism on 2 and 4 ranks: the all-reduce of every rank's
// gradient equals the sum that one process computes from all the ranks'
// gradients (float32, relative tolerance 1e-6), and so do the average, a
// fused bucket and the sparse all-reduce in COO and hash-bitmap form, as AGsparse and decided online. @check returns the number of mismatching elements.
//
// REQUIRES: mpi
// RUN: sed -e 's/@RANKS@/2/g' %s > %t.2.mlir
// RUN: %mpirun -np 2 hetero-run %t.2.mlir --entry check --iterations 3 | FileCheck %s
// RUN: sed -e 's/@RANKS@/4/g' %s > %t.4.mlir
// RUN: %mpirun -np 4 hetero-run %t.4.mlir --entry check --iterations 3 | FileCheck %s
//
// Regrouped by hetero-fuse-gradients (latency-bound: the sum and the bucket
// become one bucket of three gradients), the results are the same.
// RUN: hetero-opt %t.2.mlir --hetero-fuse-gradients="comm-alpha-ms=100" -o %t.fused.mlir
// RUN: FileCheck %s --check-prefix=FUSED < %t.fused.mlir
// RUN: %mpirun -np 2 hetero-run %t.fused.mlir --entry check --iterations 3 | FileCheck %s
// FUSED: hetero.bucket {{.*}} on @world : tensor<1000xf32>, tensor<1000xf32>, tensor<10x100xf32>
//
// CHECK: iteration 0: result 0,
// CHECK: iteration 1: result 0,
// CHECK: iteration 2: result 0,
//
// A NaN is a mismatch: with NaN gradients every element of all eight results
// is counted.
// RUN: sed -e 's/%%g = arith.mulf %%s, %%w : f32/%%g = arith.mulf %%nan, %%w : f32/' %t.2.mlir > %t.nan.mlir
// RUN: %mpirun -np 2 hetero-run %t.nan.mlir --entry check --iterations 1 | FileCheck %s --check-prefix=NAN
// NAN: iteration 0: result 8000,

shard.grid @world(shape = @RANKS@)

#map_i = affine_map<(i) -> (i)>
#map_ri = affine_map<(r, i) -> (r, i)>
#map_ri_i = affine_map<(r, i) -> (i)>

// The gradient of `rank` at `iteration`: sin(0.1 i + 1.7 rank + iteration) (rank + 1).
func.func private @gradient_element(%rank: index, %i: index, %iteration: i64) -> f32 {
  %ri = arith.index_cast %rank : index to i64
  %ii = arith.index_cast %i : index to i64
  %rf = arith.sitofp %ri : i64 to f32
  %if = arith.sitofp %ii : i64 to f32
  %tf = arith.sitofp %iteration : i64 to f32
  %a = arith.constant 0.1 : f32
  %b = arith.constant 1.7 : f32
  %one = arith.constant 1.0 : f32
  %x0 = arith.mulf %if, %a : f32
  %x1 = arith.mulf %rf, %b : f32
  %x2 = arith.addf %x0, %x1 : f32
  %x3 = arith.addf %x2, %tf : f32
  %s = math.sin %x3 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %w = arith.addf %rf, %one : f32
  %g = arith.mulf %s, %w : f32
  return %g : f32
}

func.func private @gradient(%rank: index, %iteration: i64) -> tensor<1000xf32> {
  %empty = tensor.empty() : tensor<1000xf32>
  %g = linalg.generic {indexing_maps = [#map_i], iterator_types = ["parallel"]}
      outs(%empty : tensor<1000xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %v = func.call @gradient_element(%rank, %i, %iteration) : (index, index, i64) -> f32
    linalg.yield %v : f32
  } -> tensor<1000xf32>
  return %g : tensor<1000xf32>
}

// The sum over all ranks, computed by this process alone.
func.func private @reference(%iteration: i64) -> tensor<1000xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1000xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1000xf32>) -> tensor<1000xf32>
  %ranks = tensor.empty() : tensor<@RANKS@x1000xf32>
  %sum = linalg.generic {indexing_maps = [#map_ri, #map_ri_i],
                         iterator_types = ["reduction", "parallel"]}
      ins(%ranks : tensor<@RANKS@x1000xf32>) outs(%init : tensor<1000xf32>) {
  ^bb0(%unused: f32, %acc: f32):
    %r = linalg.index 0 : index
    %i = linalg.index 1 : index
    %v = func.call @gradient_element(%r, %i, %iteration) : (index, index, i64) -> f32
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<1000xf32>
  return %sum : tensor<1000xf32>
}

// Elements where |got - want * scale| > 1e-6 max(1, |want * scale|) or
// either is NaN (an unordered comparison).
func.func private @mismatches(%got: tensor<1000xf32>, %want: tensor<1000xf32>, %scale: f32) -> i64 {
  %zero = arith.constant 0 : i64
  %init = tensor.from_elements %zero : tensor<i64>
  %count = linalg.generic {indexing_maps = [#map_i, #map_i, affine_map<(i) -> ()>],
                           iterator_types = ["reduction"]}
      ins(%got, %want : tensor<1000xf32>, tensor<1000xf32>) outs(%init : tensor<i64>) {
  ^bb0(%g: f32, %w: f32, %acc: i64):
    %one = arith.constant 1.0 : f32
    %tolerance = arith.constant 1.0e-6 : f32
    %ws = arith.mulf %w, %scale : f32
    %d = arith.subf %g, %ws : f32
    %ad = math.absf %d : f32
    %aw = math.absf %ws : f32
    %m = arith.maximumf %aw, %one : f32
    %limit = arith.mulf %m, %tolerance : f32
    %bad = arith.cmpf ugt, %ad, %limit : f32
    %bad64 = arith.extui %bad : i1 to i64
    %next = arith.addi %acc, %bad64 : i64
    linalg.yield %next : i64
  } -> tensor<i64>
  %n = tensor.extract %count[] : tensor<i64>
  return %n : i64
}

func.func @check(%iteration: i64) -> i64 {
  %rank = shard.process_linear_index on @world : index
  %g = func.call @gradient(%rank, %iteration) : (index, i64) -> tensor<1000xf32>
  %want = func.call @reference(%iteration) : (i64) -> tensor<1000xf32>

  %sum = hetero.all_reduce %g on @world : tensor<1000xf32>
  %avg = hetero.all_reduce %g on @world reduction = avg : tensor<1000xf32>
  // A bucket fuses the two halves of a reshaped gradient with a copy of it.
  %g2 = tensor.expand_shape %g [[0, 1]] output_shape [10, 100] : tensor<1000xf32> into tensor<10x100xf32>
  %fused:2 = hetero.bucket %g2, %g on @world : tensor<10x100xf32>, tensor<1000xf32>
  %fused0 = tensor.collapse_shape %fused#0 [[0, 1]] : tensor<10x100xf32> into tensor<1000xf32>
  // Zen's sparse all-reduce, in both wire formats.
  %coo = hetero.all_reduce %g on @world sparse = coo : tensor<1000xf32>
  %bitmap = hetero.all_reduce %g on @world reduction = avg sparse = hash_bitmap : tensor<1000xf32>
  // AGsparse, and the scheme the runtime picks from the measured non-zeros.
  %gathered = hetero.all_reduce %g on @world sparse = allgather : tensor<1000xf32>
  %online = hetero.all_reduce %g on @world reduction = avg sparse = online : tensor<1000xf32>

  %one = arith.constant 1.0 : f32
  %ranks = arith.constant @RANKS@.0 : f32
  %inverse = arith.divf %one, %ranks : f32
  %m0 = func.call @mismatches(%sum, %want, %one) : (tensor<1000xf32>, tensor<1000xf32>, f32) -> i64
  %m1 = func.call @mismatches(%avg, %want, %inverse) : (tensor<1000xf32>, tensor<1000xf32>, f32) -> i64
  %m2 = func.call @mismatches(%fused0, %want, %one) : (tensor<1000xf32>, tensor<1000xf32>, f32) -> i64
  %m3 = func.call @mismatches(%fused#1, %want, %one) : (tensor<1000xf32>, tensor<1000xf32>, f32) -> i64
  %s0 = arith.addi %m0, %m1 : i64
  %s1 = arith.addi %s0, %m2 : i64
  %s2 = arith.addi %s1, %m3 : i64
  %m4 = func.call @mismatches(%coo, %want, %one) : (tensor<1000xf32>, tensor<1000xf32>, f32) -> i64
  %m5 = func.call @mismatches(%bitmap, %want, %inverse) : (tensor<1000xf32>, tensor<1000xf32>, f32) -> i64
  %s3 = arith.addi %s2, %m4 : i64
  %s4 = arith.addi %s3, %m5 : i64
  %m6 = func.call @mismatches(%gathered, %want, %one) : (tensor<1000xf32>, tensor<1000xf32>, f32) -> i64
  %m7 = func.call @mismatches(%online, %want, %inverse) : (tensor<1000xf32>, tensor<1000xf32>, f32) -> i64
  %s5 = arith.addi %s4, %m6 : i64
  %s6 = arith.addi %s5, %m7 : i64
  return %s6 : i64
}
