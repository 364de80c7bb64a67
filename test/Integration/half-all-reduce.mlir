// 16-bit float all-reduces compiled and run on the MPI backend: rank r
// contributes 1.5 + r in f16 and in bf16; the average over 2 ranks is 2 and
// over 4 ranks 3 in both formats (exact), and the returned value is the sum
// of the two averages' first elements plus the f16 sum's.
//
// REQUIRES: mpi
// RUN: sed -e 's/@RANKS@/2/g' %s > %t.2.mlir
// RUN: %mpirun -np 2 hetero-run %t.2.mlir --entry check --iterations 1 | FileCheck %s --check-prefix=TWO
// RUN: sed -e 's/@RANKS@/4/g' %s > %t.4.mlir
// RUN: %mpirun -np 4 hetero-run %t.4.mlir --entry check --iterations 1 | FileCheck %s --check-prefix=FOUR
// TWO: iteration 0: loss 8,
// FOUR: iteration 0: loss 18,

shard.grid @world(shape = @RANKS@)

func.func @check(%iteration: i64) -> f32 {
  %rank = shard.process_linear_index on @world : index
  %ri = arith.index_cast %rank : index to i64
  %rf = arith.sitofp %ri : i64 to f32
  %offset = arith.constant 1.5 : f32
  %v = arith.addf %rf, %offset : f32
  %h = arith.truncf %v : f32 to f16
  %b = arith.truncf %v : f32 to bf16
  %th = tensor.from_elements %h, %h, %h : tensor<3xf16>
  %tb = tensor.from_elements %b, %b, %b : tensor<3xbf16>
  %ah = hetero.all_reduce %th on @world reduction = avg : tensor<3xf16>
  %ab = hetero.all_reduce %tb on @world reduction = avg : tensor<3xbf16>
  %sh = hetero.all_reduce %th on @world : tensor<3xf16>
  %c2 = arith.constant 2 : index
  %eh = tensor.extract %ah[%c2] : tensor<3xf16>
  %eb = tensor.extract %ab[%c2] : tensor<3xbf16>
  %es = tensor.extract %sh[%c2] : tensor<3xf16>
  %fh = arith.extf %eh : f16 to f32
  %fb = arith.extf %eb : bf16 to f32
  %fs = arith.extf %es : f16 to f32
  %r0 = arith.addf %fh, %fb : f32
  %r1 = arith.addf %r0, %fs : f32
  return %r1 : f32
}
