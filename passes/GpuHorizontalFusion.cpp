//===- GpuHorizontalFusion.cpp - independent element-wise ops, one kernel -===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// A pipeline's backward task adds each parameter's gradient into its sum,
// its update applies Adam to each parameter, its step zeroes each sum: one
// small element-wise op per parameter, none reading what another writes,
// each a kernel launch. This pass, on buffers, gives a run of such ops one
// kernel (horizontal fusion, as multi-tensor kernels do): the grid is the
// ops' blocks one after the other, and a block runs its op's iterations
//
//   gpu.launch blocks(%b) in (B0 + B1 + ...) threads(%t) in (T)
//     scf.if %b in [0, B0)  { i = (%b - 0) * T + %t;  if i < N0: op 0 at i }
//     scf.if %b in [B0, B0 + B1) { ... op 1 ... }
//
// The ops are consecutive linalg ops of a block with static loops and no
// reduction loop that write each output element once (only ops without
// memory effects, allocations and waits for allocations between them);
// no op may access a buffer another op of the run writes, so that they
// may run at once, and the kernel's parameters must fit in what ptxas
// takes. The kernel takes the place of the last.
//
//===----------------------------------------------------------------------===//

#include "GpuKernels.h"
#include "hetero/Passes/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/MathExtras.h"

namespace hetero {
#define GEN_PASS_DEF_HETEROGPUHORIZONTALFUSION
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;

namespace {

/// An op a run may hold.
bool isCandidate(linalg::LinalgOp op) {
  return op.getNumReductionLoops() == 0 && hetero::isStaticBufferOp(op);
}

/// The buffers a run writes and those it reads, by root.
struct Accesses {
  llvm::SmallDenseSet<Value> writes, reads;

  void add(linalg::LinalgOp op) {
    for (Value init : op.getDpsInits())
      writes.insert(hetero::rootBuffer(init));
    for (Value input : op.getDpsInputs())
      if (isa<MemRefType>(input.getType()))
        reads.insert(hetero::rootBuffer(input));
  }

  /// Whether `op` may run at once with the run: it touches no buffer the
  /// run writes, and writes no buffer the run reads.
  bool independent(linalg::LinalgOp op) const {
    for (Value init : op.getDpsInits()) {
      Value root = hetero::rootBuffer(init);
      if (writes.contains(root) || reads.contains(root))
        return false;
    }
    for (Value input : op.getDpsInputs())
      if (isa<MemRefType>(input.getType()) &&
          writes.contains(hetero::rootBuffer(input)))
        return false;
    return true;
  }
};

/// The iterations of `op`.
int64_t iterations(linalg::LinalgOp op) {
  int64_t total = 1;
  for (int64_t range : op.getStaticLoopRanges())
    total *= range;
  return total;
}

/// Replaces the ops of `run` with one kernel, where the last was.
void rewrite(ArrayRef<linalg::LinalgOp> run, int64_t maxThreads) {
  // Blocks as wide as the widest op needs, from a warp to maxThreads.
  int64_t widest = 1;
  for (linalg::LinalgOp op : run)
    widest = std::max(widest, iterations(op));
  int64_t threads = hetero::blockThreads(widest, maxThreads);
  linalg::LinalgOp last = run.back();
  Location loc = last.getLoc();
  OpBuilder b(last);
  SmallVector<int64_t> starts;
  int64_t blocks = 0;
  for (linalg::LinalgOp op : run) {
    starts.push_back(blocks);
    blocks += llvm::divideCeil(iterations(op), threads);
  }
  gpu::LaunchOp launch = hetero::createLaunch(
      b, loc, arith::ConstantIndexOp::create(b, loc, blocks), threads);
  Value block = launch.getBlockIds().x;
  Value thread = launch.getThreadIds().x;
  Value width = arith::ConstantIndexOp::create(b, loc, threads);

  for (auto [position, start] : llvm::enumerate(starts)) {
    linalg::LinalgOp op = run[position];
    OpBuilder::InsertionGuard guard(b);
    int64_t count = iterations(op);
    Value first = arith::ConstantIndexOp::create(b, loc, start);
    Value end = arith::ConstantIndexOp::create(
        b, loc, start + llvm::divideCeil(count, threads));
    Value fromFirst =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, block, first);
    Value beforeEnd =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, block, end);
    Value mine = arith::AndIOp::create(b, loc, fromFirst, beforeEnd);
    auto ofOp = scf::IfOp::create(b, loc, mine, /*withElseRegion=*/false);
    b.setInsertionPointToStart(&ofOp.getThenRegion().front());
    Value linear = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(
            b, loc, arith::SubIOp::create(b, loc, block, first), width),
        thread);
    Value inBounds =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, linear,
                              arith::ConstantIndexOp::create(b, loc, count));
    auto inside = scf::IfOp::create(b, loc, inBounds, /*withElseRegion=*/false);
    b.setInsertionPointToStart(&inside.getThenRegion().front());

    SmallVector<Value> ranges;
    SmallVector<unsigned> dims;
    for (auto [dim, range] : llvm::enumerate(op.getStaticLoopRanges())) {
      ranges.push_back(arith::ConstantIndexOp::create(b, loc, range));
      dims.push_back(dim);
    }
    SmallVector<Value> ivs(ranges.size());
    hetero::delinearize(b, loc, linear, dims, ranges, ivs);
    hetero::storeOutputs(
        b, loc, op, ivs,
        hetero::cloneBodyAt(b, loc, op, ivs,
                            hetero::loadOutputs(b, loc, op, ivs)));
  }
  for (linalg::LinalgOp op : run)
    op->erase();
}

struct GpuHorizontalFusionPass
    : hetero::impl::HeteroGpuHorizontalFusionBase<GpuHorizontalFusionPass> {
  using Base::Base;

  void runOnOperation() override {
    int64_t threads = threadsPerBlock;
    if (threads < 32 || threads > 1024 || !llvm::isPowerOf2_64(threads)) {
      getOperation().emitError()
          << "hetero-gpu-horizontal-fusion: threads-per-block must be a "
             "power of two from 32 to 1024; got "
          << threads;
      return signalPassFailure();
    }
    SmallVector<SmallVector<linalg::LinalgOp>> runs;
    getOperation().walk([&](Block *block) { collect(*block, runs); });
    for (ArrayRef<linalg::LinalgOp> run : runs)
      rewrite(run, threads);
  }

  /// Appends the runs of two ops or more of `block`.
  static void collect(Block &block,
                      SmallVectorImpl<SmallVector<linalg::LinalgOp>> &runs) {
    SmallVector<linalg::LinalgOp> run;
    Accesses accesses;
    auto finish = [&] {
      if (run.size() >= 2)
        runs.push_back(run);
      run.clear();
      accesses = Accesses();
    };
    for (Operation &op : block) {
      auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      if (linalgOp && isCandidate(linalgOp)) {
        run.push_back(linalgOp);
        bool fits = hetero::kernelParameterBytes(run) <=
                    hetero::kMaxKernelParameterBytes;
        run.pop_back();
        if (!fits || !accesses.independent(linalgOp))
          finish();
        run.push_back(linalgOp);
        accesses.add(linalgOp);
        continue;
      }
      if (!hetero::mayStandBetweenKernels(op))
        finish();
    }
    finish();
  }
};

} // namespace
