// RUN: hetero-opt %s --hetero-lower-to-runtime -split-input-file | FileCheck %s

// CHECK-DAG: func.func private @hrt_mlir_group(i64, i64, i64, i64, i64, i64) -> !llvm.ptr
// CHECK-DAG: func.func private @hrt_mlir_all_reduce_start(!llvm.ptr, !llvm.ptr, i64, i32, i32) -> !llvm.ptr
// CHECK-DAG: func.func private @hrt_mlir_wait(!llvm.ptr)
// CHECK-NOT: shard.grid
shard.grid @grid(shape = 2x4)

// CHECK-LABEL: func.func @all_reduce
// CHECK-SAME:    (%[[G:.*]]: tensor<4x8xf32>)
// The group: a 2-D grid (2, 4, 1, 1) along axis 1 (mask 2).
// CHECK-DAG:     %[[NDIMS:.*]] = arith.constant 2 : i64
// CHECK-DAG:     %[[D1:.*]] = arith.constant 4 : i64
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i64
// CHECK:         %[[COMM:.*]] = call @hrt_mlir_group(%[[NDIMS]], %{{.*}}, %[[D1]], %[[ONE]], %{{.*}}, %{{.*}})
// avg is hrt reduction 4.
// CHECK-DAG:     %[[AVG:.*]] = arith.constant 4 : i32
// CHECK-DAG:     %[[BUF:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK:         bufferization.materialize_in_destination %[[G]] in writable %[[BUF]]
// CHECK:         %[[ADDR:.*]] = memref.extract_aligned_pointer_as_index %[[BUF]]
// CHECK:         %[[I64:.*]] = arith.index_cast %[[ADDR]] : index to i64
// CHECK:         %[[PTR:.*]] = llvm.inttoptr %[[I64]] : i64 to !llvm.ptr
// f32 is hrt dtype 0; 32 elements.
// CHECK-DAG:     %[[COUNT:.*]] = arith.constant 32 : i64
// CHECK-DAG:     %[[F32:.*]] = arith.constant 0 : i32
// CHECK:         %[[REQUEST:.*]] = call @hrt_mlir_all_reduce_start(%[[COMM]], %[[PTR]], %[[COUNT]], %[[F32]], %[[AVG]])
// CHECK:         call @hrt_mlir_wait(%[[REQUEST]])
// CHECK:         %[[R:.*]] = bufferization.to_tensor %[[BUF]] restrict writable
// CHECK:         return %[[R]]
func.func @all_reduce(%g: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = hetero.all_reduce %g on @grid axes = [1] reduction = avg : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A bucket is one all-reduce of its operands flattened and concatenated.
// CHECK-LABEL: func.func @bucket
// CHECK-SAME:    (%[[A:.*]]: tensor<8xf64>, %[[B:.*]]: tensor<2x3xf64>)
// CHECK:         %[[FA:.*]] = tensor.collapse_shape %[[A]] {{\[\[}}0]] : tensor<8xf64> into tensor<8xf64>
// CHECK:         %[[FB:.*]] = tensor.collapse_shape %[[B]] {{\[\[}}0, 1]] : tensor<2x3xf64> into tensor<6xf64>
// CHECK:         %[[CAT:.*]] = tensor.concat dim(0) %[[FA]], %[[FB]] : (tensor<8xf64>, tensor<6xf64>) -> tensor<14xf64>
// CHECK:         %[[WORLD:.*]] = call @hrt_mlir_world()
// CHECK:         %[[SUMOP:.*]] = arith.constant 0 : i32
// CHECK:         %[[BUFFER:.*]] = memref.alloc() : memref<14xf64>
// CHECK:         bufferization.materialize_in_destination %[[CAT]] in writable %[[BUFFER]]
// CHECK:         %[[COUNT:.*]] = arith.constant 14 : i64
// CHECK:         %[[F64:.*]] = arith.constant 1 : i32
// CHECK:         %[[REQUEST:.*]] = call @hrt_mlir_all_reduce_start(%[[WORLD]], %{{.*}}, %[[COUNT]], %[[F64]], %[[SUMOP]])
// CHECK:         call @hrt_mlir_wait(%[[REQUEST]])
// CHECK:         %[[SUM:.*]] = bufferization.to_tensor %[[BUFFER]]
// CHECK:         %[[SA:.*]] = tensor.extract_slice %[[SUM]][0] [8] [1]
// CHECK:         %[[RA:.*]] = tensor.expand_shape %[[SA]] {{\[\[}}0]] output_shape [8]
// CHECK:         %[[SB:.*]] = tensor.extract_slice %[[SUM]][8] [6] [1]
// CHECK:         %[[RB:.*]] = tensor.expand_shape %[[SB]] {{\[\[}}0, 1]] output_shape [2, 3]
// CHECK:         return %[[RA]], %[[RB]]
func.func @bucket(%a: tensor<8xf64>, %b: tensor<2x3xf64>) -> (tensor<8xf64>, tensor<2x3xf64>) {
  %0:2 = hetero.bucket %a, %b : tensor<8xf64>, tensor<2x3xf64>
  return %0#0, %0#1 : tensor<8xf64>, tensor<2x3xf64>
}

// -----

// The runtime only reads what it sends: the tensor's own buffer, no copy.
// CHECK-LABEL: func.func @gather_and_p2p
// CHECK-SAME:    (%[[X:.*]]: tensor<4x2xi32>,
// CHECK:         %[[IN:.*]] = bufferization.to_buffer %[[X]] read_only : tensor<4x2xi32> to memref<4x2xi32>
// CHECK:         %[[OUT:.*]] = memref.alloc() : memref<8x2xi32>
// CHECK:         memref.extract_aligned_pointer_as_index %[[IN]]
// CHECK:         memref.extract_aligned_pointer_as_index %[[OUT]]
// CHECK:         call @hrt_mlir_all_gather(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
// CHECK:         %[[SENT:.*]] = bufferization.to_buffer %[[X]] read_only
// CHECK:         memref.extract_aligned_pointer_as_index %[[SENT]]
// CHECK:         call @hrt_mlir_send(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
// CHECK:         %[[RECV:.*]] = memref.alloc() : memref<3xbf16>
// CHECK:         call @hrt_mlir_recv
// CHECK:         call @hrt_mlir_broadcast
// CHECK:         call @hrt_mlir_reduce(
// CHECK:         call @hrt_mlir_reduce_scatter
// CHECK:         call @hrt_mlir_size
// CHECK:         arith.divsi
// CHECK:         call @hrt_mlir_all_to_all
// CHECK:         call @hrt_mlir_rank
func.func @gather_and_p2p(%x: tensor<4x2xi32>, %h: tensor<3xbf16>, %y: tensor<8x2xf32>) -> index {
  %0 = hetero.all_gather %x axis = 0 : tensor<4x2xi32> -> tensor<8x2xi32>
  hetero.send %x to 1 tag = 5 : tensor<4x2xi32>
  %1 = hetero.recv from 0 tag = 5 : tensor<3xbf16>
  %2 = hetero.broadcast %h root = 0 : tensor<3xbf16>
  %3 = hetero.reduce %y root = 1 reduction = max : tensor<8x2xf32>
  %4 = hetero.reduce_scatter %y axis = 0 : tensor<8x2xf32> -> tensor<4x2xf32>
  %5 = hetero.all_to_all %y split_axis = 0 concat_axis = 0 : tensor<8x2xf32> -> tensor<8x2xf32>
  %i = shard.process_linear_index on @g : index
  return %i : index
}
shard.grid @g(shape = 2)

// -----

// The runtime gathers, scatters and exchanges along axis 0: another axis
// moves to the front and back. An all-to-all that splits along one axis
// and concatenates along another receives [blocks][rows][columns], and the
// block index moves next to the concatenation axis, which it joins.
// CHECK-LABEL: func.func @other_axes
// CHECK:         %[[FRONT:.*]] = linalg.transpose ins(%arg0 : tensor<4x8xf32>) outs(%{{.*}} : tensor<8x4xf32>) permutation = [1, 0]
// CHECK:         call @hrt_mlir_all_gather
// CHECK:         %[[GATHERED:.*]] = bufferization.to_tensor %{{.*}} : memref<16x4xf32> to tensor<16x4xf32>
// CHECK:         linalg.transpose ins(%[[GATHERED]] : tensor<16x4xf32>) outs(%{{.*}} : tensor<4x16xf32>) permutation = [1, 0]
// CHECK:         call @hrt_mlir_reduce_scatter
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<8x2xf32>) outs(%{{.*}} : tensor<2x8xf32>) permutation = [1, 0]
// CHECK-NOT:     linalg.transpose
// CHECK:         call @hrt_mlir_all_to_all
// CHECK:         %[[BLOCKS:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [2, 8, 8] : tensor<16x8xf32> into tensor<2x8x8xf32>
// CHECK:         %[[PLACED:.*]] = linalg.transpose ins(%[[BLOCKS]] : tensor<2x8x8xf32>) outs(%{{.*}} : tensor<8x2x8xf32>) permutation = [1, 0, 2]
// CHECK:         tensor.collapse_shape %[[PLACED]] {{\[\[}}0], [1, 2]] : tensor<8x2x8xf32> into tensor<8x16xf32>
shard.grid @pair(shape = 2)
func.func @other_axes(%g: tensor<4x8xf32>, %h: tensor<2x16xf32>, %e: tensor<16x8xf32>) -> (tensor<4x16xf32>, tensor<2x8xf32>, tensor<8x16xf32>) {
  %0 = hetero.all_gather %g on @pair axis = 1 : tensor<4x8xf32> -> tensor<4x16xf32>
  %1 = hetero.reduce_scatter %h on @pair axis = 1 : tensor<2x16xf32> -> tensor<2x8xf32>
  %2 = hetero.all_to_all %e on @pair split_axis = 0 concat_axis = 1 : tensor<16x8xf32> -> tensor<8x16xf32>
  return %0, %1, %2 : tensor<4x16xf32>, tensor<2x8xf32>, tensor<8x16xf32>
}

// -----

// The linear index is the rank's place in the whole grid: its rank in the
// grid's group (mask 0: every axis), which checks the job's size.
// CHECK-LABEL: func.func @linear_index
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : i64
// CHECK-DAG:     %[[THREE:.*]] = arith.constant 3 : i64
// CHECK-DAG:     %[[ALL:.*]] = arith.constant 0 : i64
// CHECK:         %[[GRID:.*]] = call @hrt_mlir_group(%[[TWO]], %{{.*}}, %[[THREE]], %{{.*}}, %{{.*}}, %[[ALL]])
// CHECK-NEXT:    %[[RANK:.*]] = call @hrt_mlir_rank(%[[GRID]])
// CHECK-NEXT:    %[[INDEX:.*]] = arith.index_cast %[[RANK]] : i64 to index
// CHECK-NEXT:    return %[[INDEX]]
shard.grid @g2x3(shape = 2x3)
func.func @linear_index() -> index {
  %i = shard.process_linear_index on @g2x3 : index
  return %i : index
}

// -----

// The structural ops are gone afterwards.
// CHECK-NOT: hetero.pipeline
// CHECK-NOT: hetero.schedule
// CHECK-LABEL: func.func @stage
func.func @stage(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
hetero.pipeline @p stages = 1 microbatches = 2 {
  hetero.stage 0 forward @stage backward @stage
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    hetero.fwd 0
    hetero.bwd 0
  }
}

// -----

// Compressed all-reduces call the runtime's compressed all-reduce with the
// compressor (topk = 3, qsgd = 8), ratio, levels, scheme (allgather = 1,
// alltoall = 2), error feedback, node size, placement (gpu = 1, cpu = 0)
// and the op's number in the module; a compressed bucket is one compressed
// all-reduce of the fused buffer. Each is started where it stands (the
// runtime compresses and communicates on its communication thread) and
// waited for before the first use of its result: here, the return.
// CHECK-LABEL: func.func @compressed
// CHECK:         %[[RATIO:.*]] = arith.constant 1.000000e-01 : f64
// CHECK-NEXT:    %[[TOPK:.*]] = arith.constant 3 : i32
// CHECK-NEXT:    arith.constant 127 : i64
// CHECK-NEXT:    %[[GATHER:.*]] = arith.constant 1 : i32
// CHECK-NEXT:    %[[FEEDBACK:.*]] = arith.constant 1 : i32
// CHECK-NEXT:    arith.constant 1 : i64
// CHECK-NEXT:    %[[GPU:.*]] = arith.constant 1 : i32
// CHECK-NEXT:    %[[SITE0:.*]] = arith.constant 0 : i64
// CHECK:         %[[R0:.*]] = call @hrt_mlir_compressed_all_reduce_start(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[TOPK]], %[[RATIO]], %{{.*}}, %[[GATHER]], %[[FEEDBACK]], %{{.*}}, %[[GPU]], %[[SITE0]])
// CHECK:         %[[QSGD:.*]] = arith.constant 8 : i32
// CHECK-NEXT:    %[[LEVELS:.*]] = arith.constant 16 : i64
// CHECK-NEXT:    %[[TOALL:.*]] = arith.constant 2 : i32
// CHECK-NEXT:    %[[NOFEEDBACK:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[NODES:.*]] = arith.constant 4 : i64
// CHECK-NEXT:    %[[CPU:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[SITE1:.*]] = arith.constant 1 : i64
// CHECK:         %[[R1:.*]] = call @hrt_mlir_compressed_all_reduce_start(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[QSGD]], %{{.*}}, %[[LEVELS]], %[[TOALL]], %[[NOFEEDBACK]], %[[NODES]], %[[CPU]], %[[SITE1]])
// CHECK:         tensor.concat
// CHECK:         %[[R2:.*]] = call @hrt_mlir_compressed_all_reduce_start
// CHECK-NOT:     hetero.
// CHECK-DAG:     call @hrt_mlir_wait(%[[R0]])
// CHECK-DAG:     call @hrt_mlir_wait(%[[R1]])
// CHECK-DAG:     call @hrt_mlir_wait(%[[R2]])
// CHECK:         return
func.func @compressed(%g: tensor<64xf32>, %h: tensor<8xf32>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<8xf32>) {
  %0 = hetero.all_reduce %g compress <topk, ratio = 0.1, error_feedback, scheme = allgather> : tensor<64xf32>
  %1 = hetero.all_reduce %g reduction = avg compress <qsgd, levels = 16, placement = cpu, scheme = alltoall, node_size = 4> : tensor<64xf32>
  %2:2 = hetero.bucket %g, %h compress <fp16> : tensor<64xf32>, tensor<8xf32>
  return %0, %1, %2#0, %2#1 : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<8xf32>
}

// -----

// QSGD without `levels` quantises to the most levels the runtime holds.
// CHECK-LABEL: func.func @qsgd_default_levels
// CHECK:         %[[QSGD:.*]] = arith.constant 8 : i32
// CHECK-NEXT:    %[[LEVELS:.*]] = arith.constant 127 : i64
// CHECK:         call @hrt_mlir_compressed_all_reduce_start(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[QSGD]], %{{.*}}, %[[LEVELS]],
func.func @qsgd_default_levels(%g: tensor<64xf32>) -> tensor<64xf32> {
  %0 = hetero.all_reduce %g reduction = avg compress <qsgd, scheme = allgather> : tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

// Sparse all-reduces call Zen's sparse all-reduce with the format (coo = 1,
// hash_bitmap = 2).
// CHECK-LABEL: func.func @sparse
// CHECK-DAG:     %[[COO:.*]] = arith.constant 1 : i32
// CHECK:         call @hrt_mlir_sparse_all_reduce(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[COO]])
// CHECK-DAG:     %[[BITMAP:.*]] = arith.constant 2 : i32
// CHECK:         call @hrt_mlir_sparse_all_reduce(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[BITMAP]])
func.func @sparse(%g: tensor<1024x16xf32>) -> (tensor<1024x16xf32>, tensor<1024x16xf32>) {
  %0 = hetero.all_reduce %g sparse = coo : tensor<1024x16xf32>
  %1 = hetero.all_reduce %g reduction = avg sparse = hash_bitmap : tensor<1024x16xf32>
  return %0, %1 : tensor<1024x16xf32>, tensor<1024x16xf32>
}

// -----

// A step that only asks for its grid coordinates still creates the groups of
// every grid of its size on entry, in module order (@rows, then @line),
// before the coordinates' own group.
// CHECK-LABEL: func.func @coordinates_only
// CHECK:         call @hrt_mlir_group(
// CHECK:         %[[FOUR:.*]] = arith.constant 4 : i64
// CHECK:         call @hrt_mlir_group(%{{.*}}, %[[FOUR]],
// CHECK:         call @hrt_mlir_group(
// CHECK:         call @hrt_mlir_rank
shard.grid @rows(shape = 2x2)
shard.grid @line(shape = 4)
func.func @coordinates_only() -> index attributes {hetero.grid = @rows} {
  %i:2 = shard.process_multi_index on @rows : index, index
  return %i#1 : index
}

// -----

// hetero.prune_plan: the runtime fills a buffer of every column and returns
// how many it keeps; the layer is named by the FNV-1a hash of its key.
// CHECK-LABEL: func.func @prune_plan
// CHECK:         %[[BUF:.*]] = memref.alloc() : memref<256xi64>
// CHECK-DAG:     %[[HASH:.*]] = arith.constant 3199128708861464181 : i64
// CHECK-DAG:     %[[COLS:.*]] = arith.constant 256 : i64
// CHECK:         %[[COUNT:.*]] = call @hrt_mlir_prune_plan(%[[HASH]], %[[COLS]], %{{.*}}) : (i64, i64, !llvm.ptr) -> i64
// CHECK:         %[[CLAMPED:.*]] = arith.maxsi %[[COUNT]], %{{.*}} : i64
// CHECK:         %[[N:.*]] = arith.index_cast %[[CLAMPED]] : i64 to index
// CHECK:         %[[ALL:.*]] = bufferization.to_tensor %[[BUF]]
// CHECK:         %[[KEPT:.*]] = tensor.extract_slice %[[ALL]][0] [%[[N]]] [1] : tensor<256xi64> to tensor<?xi64>
// CHECK:         %[[IDX:.*]] = arith.index_cast %[[KEPT]] : tensor<?xi64> to tensor<?xindex>
// CHECK:         return %[[IDX]] : tensor<?xindex>
func.func @prune_plan() -> tensor<?xindex> {
  %kept = hetero.prune_plan layer "l0.fc1" columns = 256 : tensor<?xindex>
  return %kept : tensor<?xindex>
}

// -----

// hetero.migration_plan: the same buffer protocol with the source shard;
// a negative answer says the source migrates nothing (and receives none).
// CHECK-LABEL: func.func @migration_plan
// CHECK-SAME:    %[[SRC:[a-z0-9]+]]: index
// CHECK:         %[[S:.*]] = arith.index_cast %[[SRC]] : index to i64
// CHECK:         %[[ANSWER:.*]] = call @hrt_mlir_migration_plan(%{{.*}}, %{{.*}}, %[[S]], %{{.*}}) : (i64, i64, i64, !llvm.ptr) -> i64
// CHECK:         %[[CLAMPED:.*]] = arith.maxsi %[[ANSWER]], %{{.*}} : i64
// CHECK:         %[[N:.*]] = arith.index_cast %[[CLAMPED]] : i64 to index
// CHECK:         %[[RECEIVED:.*]] = tensor.extract_slice %{{.*}}[0] [%[[N]]] [1] : tensor<128xi64> to tensor<?xi64>
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK:         %[[MIGRATES:.*]] = arith.cmpi sge, %[[ANSWER]], %[[ZERO]] : i64
// CHECK:         %[[IDX:.*]] = arith.index_cast %[[RECEIVED]] : tensor<?xi64> to tensor<?xindex>
// CHECK:         return %[[IDX]], %[[MIGRATES]] : tensor<?xindex>, i1
func.func @migration_plan(%source: index) -> (tensor<?xindex>, i1) {
  %received, %migrates = hetero.migration_plan layer "l0.fc1" columns = 128 from %source : tensor<?xindex>
  return %received, %migrates : tensor<?xindex>, i1
}

// -----

// hetero.observe_weight: the runtime reads the weight in place, with its
// rows (the layer's columns) and width.
// CHECK-LABEL: func.func @observe_weight
// CHECK-SAME:    %[[W:[a-z0-9]+]]: tensor<64x?xf32>
// CHECK-DAG:     %[[HASH:.*]] = arith.constant 3199128708861464181 : i64
// CHECK-DAG:     %[[ROWS:.*]] = arith.constant 64 : i64
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK:         %[[DIM:.*]] = tensor.dim %[[W]], %[[ONE]] : tensor<64x?xf32>
// CHECK:         %[[WIDTH:.*]] = arith.index_cast %[[DIM]] : index to i64
// CHECK:         %[[BUF:.*]] = bufferization.to_buffer %[[W]] read_only : tensor<64x?xf32> to memref<64x?xf32>
// CHECK:         %[[ADDR:.*]] = memref.extract_aligned_pointer_as_index %[[BUF]]
// CHECK:         %[[I:.*]] = arith.index_cast %[[ADDR]] : index to i64
// CHECK:         %[[PTR:.*]] = llvm.inttoptr %[[I]] : i64 to !llvm.ptr
// CHECK:         call @hrt_mlir_observe_weight(%[[HASH]], %[[ROWS]], %[[WIDTH]], %[[PTR]]) : (i64, i64, i64, !llvm.ptr) -> ()
func.func @observe_weight(%w: tensor<64x?xf32>) {
  hetero.observe_weight %w layer "l0.fc1" : tensor<64x?xf32>
  return
}

// -----

// A block's layer: its key moves along the blocks' Weyl sequence, the
// layer's hash plus the block index times 0x9E3779B97F4A7C15.
// CHECK-LABEL: func.func @block_plan
// CHECK-SAME:    %[[B:[a-z0-9]+]]: index
// CHECK-DAG:     %[[HASH:.*]] = arith.constant 3199128708861464181 : i64
// CHECK-DAG:     %[[STRIDE:.*]] = arith.constant -7046029254386353131 : i64
// CHECK:         %[[BI:.*]] = arith.index_cast %[[B]] : index to i64
// CHECK:         %[[STEP:.*]] = arith.muli %[[BI]], %[[STRIDE]] : i64
// CHECK:         %[[KEY:.*]] = arith.addi %[[HASH]], %[[STEP]] : i64
// CHECK:         call @hrt_mlir_prune_plan(%[[KEY]],
func.func @block_plan(%b: index) -> tensor<?xindex> {
  %kept = hetero.prune_plan layer "l0.fc1" block %b columns = 256 : tensor<?xindex>
  return %kept : tensor<?xindex>
}

// -----

// Same imputation: the runtime fills a fresh buffer with the previous
// product (layer, product 2 = grad_weight, 64 x 16 x 4 bytes) and copies the
// kept one from the tensor's own buffer.
// CHECK-LABEL: func.func @kept_products
// CHECK-SAME:    %[[V:[a-z0-9]+]]: tensor<64x16xf32>
// CHECK-DAG:     %[[HASH:.*]] = arith.constant 3199128708861464181 : i64
// CHECK-DAG:     %[[PRODUCT:.*]] = arith.constant 2 : i64
// CHECK-DAG:     %[[BYTES:.*]] = arith.constant 4096 : i64
// CHECK-DAG:     %[[FRESH:.*]] = memref.alloc() : memref<64x16xf32>
// CHECK:         %[[ADDR:.*]] = memref.extract_aligned_pointer_as_index %[[FRESH]]
// CHECK:         %[[PTR:.*]] = llvm.inttoptr
// CHECK:         call @hrt_mlir_previous_product(%[[HASH]], %[[PRODUCT]], %[[BYTES]], %[[PTR]]) : (i64, i64, i64, !llvm.ptr) -> ()
// CHECK:         %[[LAST:.*]] = bufferization.to_tensor %[[FRESH]] restrict writable : memref<64x16xf32> to tensor<64x16xf32>
// CHECK:         %[[BUF:.*]] = bufferization.to_buffer %[[V]] read_only : tensor<64x16xf32> to memref<64x16xf32>
// CHECK:         memref.extract_aligned_pointer_as_index %[[BUF]]
// CHECK:         %[[VPTR:.*]] = llvm.inttoptr
// CHECK:         call @hrt_mlir_keep_product(%{{.*}}, %{{.*}}, %{{.*}}, %[[VPTR]]) : (i64, i64, i64, !llvm.ptr) -> ()
// CHECK:         return %[[LAST]]
func.func @kept_products(%v: tensor<64x16xf32>) -> tensor<64x16xf32> {
  %last = hetero.previous_product layer "l0.fc1" product = grad_weight : tensor<64x16xf32>
  hetero.keep_product %v layer "l0.fc1" product = grad_weight : tensor<64x16xf32>
  return %last : tensor<64x16xf32>
}

// -----

// hetero.gemm_mark: the event's number.
// CHECK-LABEL: func.func @gemm_marks
// CHECK:         %[[BEGIN:.*]] = arith.constant 0 : i32
// CHECK:         call @hrt_mlir_gemm_mark(%[[BEGIN]]) : (i32) -> ()
// CHECK:         %[[END:.*]] = arith.constant 1 : i32
// CHECK:         call @hrt_mlir_gemm_mark(%[[END]]) : (i32) -> ()
// CHECK:         %[[MBEGIN:.*]] = arith.constant 2 : i32
// CHECK:         call @hrt_mlir_gemm_mark(%[[MBEGIN]]) : (i32) -> ()
// CHECK:         %[[MEND:.*]] = arith.constant 3 : i32
// CHECK:         call @hrt_mlir_gemm_mark(%[[MEND]]) : (i32) -> ()
func.func @gemm_marks() {
  hetero.gemm_mark begin
  hetero.gemm_mark end
  hetero.gemm_mark begin_migrated
  hetero.gemm_mark end_migrated
  return
}

// -----

// hetero.migrated_columns: the columns in the buffer protocol, and where
// this rank's block starts in a one-element buffer.
// CHECK-LABEL: func.func @migrated_columns
// CHECK-SAME:    %[[SRC:[a-z0-9]+]]: index
// CHECK:         %[[FIRST_BUFFER:.*]] = memref.alloc() : memref<1xi64>
// CHECK:         %[[S:.*]] = arith.index_cast %[[SRC]] : index to i64
// CHECK:         %[[COUNT:.*]] = call @hrt_mlir_migrated_columns(%{{.*}}, %{{.*}}, %[[S]], %{{.*}}, %{{.*}}) : (i64, i64, i64, !llvm.ptr, !llvm.ptr) -> i64
// CHECK:         %[[N:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK:         %[[MIGRATED:.*]] = tensor.extract_slice %{{.*}}[0] [%[[N]]] [1] : tensor<128xi64> to tensor<?xi64>
// CHECK:         %[[FIRST:.*]] = memref.load %[[FIRST_BUFFER]][%{{.*}}] : memref<1xi64>
// CHECK:         %[[IDX:.*]] = arith.index_cast %[[MIGRATED]] : tensor<?xi64> to tensor<?xindex>
// CHECK:         %[[FIRST_IDX:.*]] = arith.index_cast %[[FIRST]] : i64 to index
// CHECK:         return %[[IDX]], %[[FIRST_IDX]] : tensor<?xindex>, index
func.func @migrated_columns(%source: index) -> (tensor<?xindex>, index) {
  %migrated, %first = hetero.migrated_columns layer "l0.fc1" columns = 128 from %source : tensor<?xindex>
  return %migrated, %first : tensor<?xindex>, index
}

// -----

// An in-place collective of dynamic shape: the buffer takes its sizes and
// the call its element count from the tensor.
// CHECK-LABEL: func.func @dynamic_broadcast
// CHECK-SAME:    %[[X:[a-z0-9]+]]: tensor<?x4xf32>
// CHECK:         %[[ROWS:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x4xf32>
// CHECK:         %[[BUFFER:.*]] = memref.alloc(%[[ROWS]]) : memref<?x4xf32>
// CHECK:         bufferization.materialize_in_destination %[[X]] in writable %[[BUFFER]]
// CHECK:         %[[DIM:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x4xf32>
// CHECK:         %[[DIM64:.*]] = arith.index_cast %[[DIM]] : index to i64
// CHECK:         %[[PARTIAL:.*]] = arith.muli %{{.*}}, %[[DIM64]] : i64
// CHECK:         %[[COUNT:.*]] = arith.muli %[[PARTIAL]], %{{.*}} : i64
// CHECK:         call @hrt_mlir_broadcast(%{{.*}}, %{{.*}}, %[[COUNT]], %{{.*}}, %{{.*}})
// CHECK:         bufferization.to_tensor %[[BUFFER]]
shard.grid @tp(shape = 4)
func.func @dynamic_broadcast(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = hetero.broadcast %x on @tp axes = [0] root = 2 : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
