//===- GpuLaunchesToLoops.cpp - kernels run as loops on the host ----------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The kernels hetero builds by hand (hetero-gpu-block-reductions,
// hetero-gpu-row-kernels) are gpu.launch ops whose threads synchronise at
// gpu.barrier and gpu.all_reduce. To check what they compute on a machine
// without a device, this pass runs each launch as loops on the host: a loop
// over the blocks, and within a block, the body cut at its barriers and
// all-reduces into segments, each a loop over the threads, the last thread
// first (so that what thread 0 alone writes, the others read before it
// exists unless a barrier orders it). A value one
// segment computes and a later one reads is kept per thread in a buffer;
// an all-reduce combines its operand over the block's threads in thread
// order, between its segments. Every thread thus finishes a segment before
// any starts the next, as a barrier guarantees; code that needs a barrier
// it lacks reads what no thread has written yet.
//
//===----------------------------------------------------------------------===//

#include "hetero/Passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Utils/GPUUtils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

namespace hetero {
#define GEN_PASS_DEF_HETEROGPULAUNCHESTOLOOPS
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;

namespace {

/// Why `launch` cannot run as loops, or "" when it can.
std::string unsupported(gpu::LaunchOp launch) {
  if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty())
    return "an asynchronous launch";
  if (launch.getDynamicSharedMemorySize() || launch.getClusterSizeX() ||
      !launch.getWorkgroupAttributions().empty() ||
      !launch.getPrivateAttributions().empty())
    return "shared memory, clusters or attributions";
  if (!launch.getBody().hasOneBlock())
    return "a body of several blocks";
  std::string reason;
  launch.getBody().walk([&](Operation *op) {
    if (!isa<gpu::GPUDialect>(op->getDialect()) || isa<gpu::TerminatorOp>(op))
      return WalkResult::advance();
    if (auto allReduce = dyn_cast<gpu::AllReduceOp>(op);
        allReduce && !allReduce.getOp()) {
      reason = "a gpu.all_reduce with a region";
      return WalkResult::interrupt();
    }
    if (auto allReduce = dyn_cast<gpu::AllReduceOp>(op)) {
      Operation *def = allReduce.getValue().getDefiningOp();
      if (!def || !launch.getBody().front().findAncestorOpInBlock(*def) ||
          isa<gpu::AllReduceOp>(def)) {
        reason = "a gpu.all_reduce of a value no op of its body computes";
        return WalkResult::interrupt();
      }
    }
    if (isa<gpu::BarrierOp, gpu::AllReduceOp>(op)) {
      if (op->getParentOp() != launch) {
        reason = "a " + op->getName().getStringRef().str() +
                 " nested in control flow";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    }
    reason = "a " + op->getName().getStringRef().str();
    return WalkResult::interrupt();
  });
  return reason;
}

/// Loops over the three dimensions of `extents` (z outermost); `body`
/// receives the builder inside and the indices (x, y, z), from the last
/// when `reversed`.
void nest3(OpBuilder &b, Location loc, ArrayRef<Value> extents, bool reversed,
           function_ref<void(OpBuilder &, ArrayRef<Value>)> body) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto z = scf::ForOp::create(b, loc, zero, extents[2], one);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(z.getBody());
  auto y = scf::ForOp::create(b, loc, zero, extents[1], one);
  b.setInsertionPointToStart(y.getBody());
  auto x = scf::ForOp::create(b, loc, zero, extents[0], one);
  b.setInsertionPointToStart(x.getBody());
  SmallVector<Value> ivs = {x.getInductionVar(), y.getInductionVar(),
                            z.getInductionVar()};
  if (reversed)
    for (auto [iv, extent] : llvm::zip_equal(ivs, extents))
      iv = arith::SubIOp::create(
          b, loc, arith::SubIOp::create(b, loc, extent, one), iv);
  body(b, ivs);
}

void emulate(gpu::LaunchOp launch) {
  Location loc = launch.getLoc();
  OpBuilder b(launch);
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  SmallVector<Value> gridExtents = {grid.x, grid.y, grid.z};
  SmallVector<Value> blockExtents = {block.x, block.y, block.z};
  Value threads = arith::MulIOp::create(
      b, loc, arith::MulIOp::create(b, loc, block.x, block.y), block.z);

  // The segments: the body's top-level ops, cut at each barrier and after
  // each all-reduce, which ends its segment.
  struct Segment {
    SmallVector<Operation *> ops;
    gpu::AllReduceOp allReduce;
  };
  Block &body = launch.getBody().front();
  SmallVector<Segment> segments(1);
  DenseMap<Operation *, unsigned> segmentOf;
  for (Operation &op : body.without_terminator()) {
    if (auto allReduce = dyn_cast<gpu::AllReduceOp>(op))
      segments.back().allReduce = allReduce;
    else if (!isa<gpu::BarrierOp>(op))
      segments.back().ops.push_back(&op);
    segmentOf[&op] = segments.size() - 1;
    if (isa<gpu::AllReduceOp, gpu::BarrierOp>(op))
      segments.emplace_back();
  }
  // The segment of the op of the body that defines `value`, if any (an
  // all-reduce's result is the same for every thread, and not kept).
  auto segmentOfValue = [&](Value value) -> std::optional<unsigned> {
    Operation *def = value.getDefiningOp();
    Operation *top = def ? body.findAncestorOpInBlock(*def) : nullptr;
    if (!top || isa<gpu::AllReduceOp>(top))
      return std::nullopt;
    return segmentOf.lookup(top);
  };

  // The values a later segment reads, and each all-reduce's operand, kept
  // per thread.
  llvm::MapVector<Value, Value> kept;
  auto keep = [&](Value value) {
    if (!kept.contains(value))
      kept[value] = memref::AllocOp::create(
          b, loc, MemRefType::get({ShapedType::kDynamic}, value.getType()),
          ValueRange{threads});
  };
  for (auto [index, segment] : llvm::enumerate(segments)) {
    for (Operation *op : segment.ops)
      op->walk([&](Operation *user) {
        for (Value operand : user->getOperands())
          if (std::optional<unsigned> from = segmentOfValue(operand);
              from && *from < index)
            keep(operand);
      });
    if (segment.allReduce)
      keep(segment.allReduce.getValue());
  }

  IRMapping uniform;
  nest3(
      b, loc, gridExtents, /*reversed=*/false,
      [&](OpBuilder &gb, ArrayRef<Value> blockIds) {
        gpu::KernelDim3 ids = launch.getBlockIds();
        gpu::KernelDim3 gridSize = launch.getGridSize();
        gpu::KernelDim3 blockSize = launch.getBlockSize();
        SmallVector<Value> arguments = {ids.x,       ids.y,       ids.z,
                                        gridSize.x,  gridSize.y,  gridSize.z,
                                        blockSize.x, blockSize.y, blockSize.z};
        SmallVector<Value> values = {blockIds[0], blockIds[1], blockIds[2],
                                     grid.x,      grid.y,      grid.z,
                                     block.x,     block.y,     block.z};
        uniform.map(arguments, values);
        for (auto [index, segment] : llvm::enumerate(segments)) {
          nest3(gb, loc, blockExtents, /*reversed=*/true,
                [&](OpBuilder &tb, ArrayRef<Value> tids) {
                  IRMapping mapping = uniform;
                  gpu::KernelDim3 threadIds = launch.getThreadIds();
                  mapping.map(threadIds.x, tids[0]);
                  mapping.map(threadIds.y, tids[1]);
                  mapping.map(threadIds.z, tids[2]);
                  // (z * Y + y) * X + x.
                  Value linear = arith::AddIOp::create(
                      tb, loc,
                      arith::MulIOp::create(
                          tb, loc,
                          arith::AddIOp::create(
                              tb, loc,
                              arith::MulIOp::create(tb, loc, tids[2], block.y),
                              tids[1]),
                          block.x),
                      tids[0]);
                  for (auto [value, buffer] : kept)
                    if (*segmentOfValue(value) < index)
                      mapping.map(value,
                                  memref::LoadOp::create(tb, loc, buffer,
                                                         ValueRange{linear}));
                  for (Operation *op : segment.ops)
                    tb.clone(*op, mapping);
                  for (auto [value, buffer] : kept)
                    if (*segmentOfValue(value) == index)
                      memref::StoreOp::create(tb, loc, mapping.lookup(value),
                                              buffer, ValueRange{linear});
                });
          if (!segment.allReduce)
            continue;
          // The all-reduce that ends the segment, over the threads in order.
          Value buffer = kept.lookup(segment.allReduce.getValue());
          Value zero = arith::ConstantIndexOp::create(gb, loc, 0);
          Value one = arith::ConstantIndexOp::create(gb, loc, 1);
          Value first =
              memref::LoadOp::create(gb, loc, buffer, ValueRange{zero});
          gpu::AllReduceOperation kind = *segment.allReduce.getOp();
          auto fold = scf::ForOp::create(
              gb, loc, one, threads, one, ValueRange{first},
              [&](OpBuilder &fb, Location floc, Value t, ValueRange acc) {
                Value next =
                    memref::LoadOp::create(fb, floc, buffer, ValueRange{t});
                scf::YieldOp::create(
                    fb, floc,
                    vector::makeArithReduction(fb, floc,
                                               gpu::convertReductionKind(kind),
                                               acc.front(), next));
              });
          uniform.map(segment.allReduce.getResult(), fold.getResult(0));
        }
      });
  for (auto [value, buffer] : kept)
    memref::DeallocOp::create(b, loc, buffer);
  launch->erase();
}

struct GpuLaunchesToLoopsPass
    : hetero::impl::HeteroGpuLaunchesToLoopsBase<GpuLaunchesToLoopsPass> {
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk(
        [&](gpu::LaunchOp launch) { launches.push_back(launch); });
    for (gpu::LaunchOp launch : launches) {
      if (std::string reason = unsupported(launch); !reason.empty()) {
        launch.emitError() << "hetero-gpu-launches-to-loops: cannot run "
                              "this launch on the host: it has "
                           << reason;
        return signalPassFailure();
      }
      emulate(launch);
    }
  }
};

} // namespace
