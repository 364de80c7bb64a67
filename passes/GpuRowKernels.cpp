//===- GpuRowKernels.cpp - one kernel for a chain of ops on the same rows -===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// A layer norm on buffers is three ops over the same rows: the mean and the
// variance (reductions along each row) and the normalised output (element
// by element); a softmax is a maximum, a sum and a quotient, and their
// adjoints are as many again. Fused element-wise code still launches one
// kernel for each, because a reduction's result is read by every element
// of its row. This pass, on buffers and before hetero-gpu-block-reductions,
// gives a chain of such ops one kernel: a thread block per row, whose
// threads run the chain's ops one after the other over the row, a barrier
// between each two:
//
//   gpu.launch blocks(%row) in (R) threads(%t) in (T)
//     scf.for %c = %t to C step T       (element-wise op at row %row, %c)
//     gpu.barrier
//     %p = scf.for %c = %t to K step T iter_args(%a = neutral)
//     %s = gpu.all_reduce add %p uniform
//     scf.if %t == 0 { out[%row] = out[%row] + %s }
//     gpu.barrier
//     ...
//
// The rows are the leading parallel loops all ops of the chain share (the
// same extents). Each op reads what the chain writes only in the row it
// writes it: every buffer an op of the chain writes is accessed by the
// chain through one value, indexed by the row loops first and by them
// nowhere else, so that a block reads only what it (or no one) wrote and
// the barriers order it. Within a row an op is one of
//   - a loop nest over its other parallel loops, a thread per output
//     element and its reduction loops (if any) sequential in the thread;
//   - a reduction with no other parallel loop and a combiner gpu.all_reduce
//     has (hetero-gpu-block-reductions' kind): the block reduces it.
// The chain is consecutive ops of a block: only ops without memory effects,
// allocations and waits for allocations may lie between them, and the
// kernel takes the place of the last. A linalg.fill of a reduction's output
// right before it in the chain is folded into its combine.
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

#include <optional>

namespace hetero {
#define GEN_PASS_DEF_HETEROGPUROWKERNELS
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;
using hetero::delinearize;
using hetero::extentOf;

namespace {

/// The fewest threads of a row's block: one warp.
constexpr int64_t kWarp = 32;

/// The most iterations one op of a chain may run per row: each thread of a
/// full block then runs 64 of them at most, and an op over few but long
/// rows stays a kernel of its own.
constexpr int64_t kMaxPerRow = 64 * 1024;

/// The leading loops of `op` that are parallel.
unsigned leadingParallel(linalg::LinalgOp op) {
  unsigned count = 0;
  for (utils::IteratorType iterator : op.getIteratorTypesArray()) {
    if (iterator != utils::IteratorType::parallel)
      break;
    ++count;
  }
  return count;
}

/// An op a chain may hold: one with static loops on buffers that writes
/// each output element once, and a leading parallel loop.
bool isCandidate(linalg::LinalgOp op) {
  return hetero::isStaticBufferOp(op) && leadingParallel(op) > 0;
}

/// Whether `map` indexes by the row loops 0 .. rows-1 first, in order, and
/// by them nowhere else.
bool rowAligned(AffineMap map, unsigned rows) {
  if (map.getNumResults() < rows)
    return false;
  for (auto [position, expr] : llvm::enumerate(map.getResults())) {
    if (position < rows) {
      if (expr != getAffineDimExpr(position, map.getContext()))
        return false;
      continue;
    }
    for (unsigned row = 0; row < rows; ++row)
      if (expr.isFunctionOfDim(row))
        return false;
  }
  return true;
}

/// How one op of a chain runs within its row.
struct Phase {
  linalg::LinalgOp op;
  /// Its loops after the rows: the parallel ones and the reduced ones.
  SmallVector<unsigned> parallelDims, reducedDims;
  /// Set when the block reduces the op together (no parallel loop is
  /// left): its combiner.
  std::optional<hetero::ReductionCombiner> combiner;
  /// The fill of the op's output this phase starts from instead, if any.
  linalg::FillOp fill;
  /// The iterations the threads share.
  int64_t work = 1;
};

/// `op`'s phase in a chain of `rows` row loops, if it can be one.
std::optional<Phase> phaseOf(linalg::LinalgOp op, unsigned rows) {
  Phase phase{op};
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  for (auto [dim, iterator] : llvm::enumerate(op.getIteratorTypesArray())) {
    if (dim < rows)
      continue;
    (iterator == utils::IteratorType::parallel ? phase.parallelDims
                                               : phase.reducedDims)
        .push_back(dim);
  }
  auto product = [&](ArrayRef<unsigned> dims) {
    int64_t total = 1;
    for (unsigned dim : dims)
      total *= ranges[dim];
    return total;
  };
  // A reduction walked in a thread carries each output's value.
  if (!phase.reducedDims.empty() &&
      llvm::any_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
        return op.getMatchingBlockArgument(&init).use_empty();
      }))
    return std::nullopt;
  if (phase.parallelDims.empty() && !phase.reducedDims.empty()) {
    // A reduction of the whole row: the block's, or none (one thread
    // would walk the row alone).
    phase.combiner = hetero::blockCombiner(op);
    if (!phase.combiner)
      return std::nullopt;
    phase.work = product(phase.reducedDims);
  } else {
    phase.work = product(phase.parallelDims);
  }
  if (product(phase.parallelDims) * product(phase.reducedDims) > kMaxPerRow)
    return std::nullopt;
  return phase;
}

/// A chain of ops over `rows` shared row loops, as phases.
struct Chain {
  SmallVector<Phase> phases;
  unsigned rows = 0;
  /// Whether some op has loops within the rows.
  bool columns = false;
};

/// The chain of `ops` on `rows` row loops, if they make one.
std::optional<Chain> chainOf(ArrayRef<linalg::LinalgOp> ops, unsigned rows) {
  Chain chain{{}, rows, false};
  // The buffers the chain writes, by root, and the value it writes each
  // through.
  DenseMap<Value, Value> written;
  for (linalg::LinalgOp op : ops)
    for (Value init : op.getDpsInits()) {
      auto [it, inserted] = written.try_emplace(hetero::rootBuffer(init), init);
      if (!inserted && it->second != init)
        return std::nullopt;
    }
  for (linalg::LinalgOp op : ops) {
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isa<MemRefType>(operand.get().getType()))
        continue;
      auto it = written.find(hetero::rootBuffer(operand.get()));
      if (it == written.end())
        continue;
      if (it->second != operand.get() ||
          !rowAligned(op.getMatchingIndexingMap(&operand), rows))
        return std::nullopt;
    }
    std::optional<Phase> phase = phaseOf(op, rows);
    if (!phase)
      return std::nullopt;
    chain.columns |= op.getNumLoops() > rows;
    chain.phases.push_back(std::move(*phase));
  }
  return chain;
}

/// The chain of `ops` with the most row loops, at least `fewest` and at
/// most as many as every op has leading parallel loops of the same
/// extents, such that some op works within the rows; failing that, with
/// the most row loops (a fill that a reduction will follow).
std::optional<Chain> bestChain(ArrayRef<linalg::LinalgOp> ops,
                               unsigned fewest) {
  if (hetero::kernelParameterBytes(ops) > hetero::kMaxKernelParameterBytes)
    return std::nullopt;
  linalg::LinalgOp first = ops.front();
  SmallVector<int64_t> shared = first.getStaticLoopRanges();
  shared.resize(leadingParallel(first));
  for (linalg::LinalgOp op : ops.drop_front()) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    unsigned common = 0;
    while (common < shared.size() && common < leadingParallel(op) &&
           shared[common] == ranges[common])
      ++common;
    shared.resize(common);
  }
  std::optional<Chain> flat;
  for (unsigned rows = shared.size(); rows >= std::max(fewest, 1u); --rows) {
    std::optional<Chain> chain = chainOf(ops, rows);
    if (chain && chain->columns)
      return chain;
    if (chain && !flat)
      flat = std::move(chain);
  }
  return flat;
}

/// Folds each fill of a reduction's output that right before it in the
/// chain into its combine, when the reduction does not read what it fills.
void foldFills(Chain &chain) {
  SmallVector<Phase> phases;
  for (Phase &phase : chain.phases) {
    if (!phases.empty() && phase.op.getNumReductionLoops() > 0 &&
        phase.op.getNumDpsInits() == 1) {
      auto fill = dyn_cast<linalg::FillOp>(*phases.back().op);
      Value out = phase.op.getDpsInits().front();
      bool readsOut = llvm::any_of(phase.op.getDpsInputs(), [&](Value input) {
        return isa<MemRefType>(input.getType()) &&
               hetero::rootBuffer(input) == hetero::rootBuffer(out);
      });
      if (fill && fill.getDpsInits().front() == out && !readsOut) {
        phases.pop_back();
        phase.fill = fill;
      }
    }
    phases.push_back(std::move(phase));
  }
  chain.phases = std::move(phases);
}

/// Emits `phase` within a row's block: `ivs` holds the row's indices, and
/// the block has `threads` threads, `thread` this one.
void emitPhase(OpBuilder &b, Location loc, const Phase &phase,
               ArrayRef<Value> rowIvs, Value thread, int64_t threads) {
  linalg::LinalgOp op = phase.op;
  SmallVector<Value> ranges;
  for (int64_t range : op.getStaticLoopRanges())
    ranges.push_back(arith::ConstantIndexOp::create(b, loc, range));
  SmallVector<Value> ivs(rowIvs);
  ivs.resize(ranges.size(), arith::ConstantIndexOp::create(b, loc, 0));
  linalg::FillOp fill = phase.fill;
  Value start = fill ? fill.getInputs().front() : Value();
  if (phase.combiner) {
    hetero::reduceAcrossBlock(b, loc, op, *phase.combiner, thread, threads,
                              phase.reducedDims, ranges, ivs, start);
    return;
  }
  // A thread per output element of the row, its reduction (if any) walked
  // in order.
  Value step = arith::ConstantIndexOp::create(b, loc, threads);
  Value count = extentOf(b, loc, phase.parallelDims, ranges);
  scf::ForOp::create(
      b, loc, thread, count, step, ValueRange{},
      [&](OpBuilder &nb, Location nloc, Value linear, ValueRange) {
        SmallVector<Value> at(ivs);
        delinearize(nb, nloc, linear, phase.parallelDims, ranges, at);
        // A folded fill's value is the one output's start.
        SmallVector<Value> outs = start ? SmallVector<Value>{start}
                                        : hetero::loadOutputs(nb, nloc, op, at);
        SmallVector<Value> results;
        if (phase.reducedDims.empty()) {
          results = hetero::cloneBodyAt(nb, nloc, op, at, outs);
        } else {
          Value zero = arith::ConstantIndexOp::create(nb, nloc, 0);
          Value one = arith::ConstantIndexOp::create(nb, nloc, 1);
          Value reduced = extentOf(nb, nloc, phase.reducedDims, ranges);
          auto loop = scf::ForOp::create(
              nb, nloc, zero, reduced, one, outs,
              [&](OpBuilder &ib, Location iloc, Value k, ValueRange carried) {
                SmallVector<Value> inner(at);
                delinearize(ib, iloc, k, phase.reducedDims, ranges, inner);
                scf::YieldOp::create(
                    ib, iloc,
                    hetero::cloneBodyAt(ib, iloc, op, inner, carried));
              });
          results = loop.getResults();
        }
        hetero::storeOutputs(nb, nloc, op, at, results);
        scf::YieldOp::create(nb, nloc);
      });
}

/// Replaces the chain's ops with one kernel, where its last op was.
void rewrite(const Chain &chain, int64_t maxThreads) {
  linalg::LinalgOp last = chain.phases.back().op;
  Location loc = last.getLoc();
  OpBuilder b(last);
  SmallVector<int64_t> ranges = last.getStaticLoopRanges();
  int64_t rows = 1;
  for (unsigned dim = 0; dim < chain.rows; ++dim)
    rows *= ranges[dim];
  int64_t widest = 1;
  for (const Phase &phase : chain.phases)
    widest = std::max(widest, phase.work);
  int64_t threads = hetero::blockThreads(widest, maxThreads);
  gpu::LaunchOp launch = hetero::createLaunch(
      b, loc, arith::ConstantIndexOp::create(b, loc, rows), threads);

  SmallVector<Value> rowRanges, rowIvs(chain.rows);
  SmallVector<unsigned> rowDims;
  for (unsigned dim = 0; dim < chain.rows; ++dim) {
    rowRanges.push_back(arith::ConstantIndexOp::create(b, loc, ranges[dim]));
    rowDims.push_back(dim);
  }
  delinearize(b, loc, launch.getBlockIds().x, rowDims, rowRanges, rowIvs);
  Value thread = launch.getThreadIds().x;
  for (auto [position, phase] : llvm::enumerate(chain.phases)) {
    if (position > 0)
      gpu::BarrierOp::create(b, loc);
    emitPhase(b, loc, phase, rowIvs, thread, threads);
  }
  for (Phase phase : chain.phases) {
    if (phase.fill)
      phase.fill->erase();
    phase.op->erase();
  }
}

struct GpuRowKernelsPass
    : hetero::impl::HeteroGpuRowKernelsBase<GpuRowKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    int64_t threads = threadsPerBlock;
    if (threads < kWarp || threads > 1024 || !llvm::isPowerOf2_64(threads)) {
      getOperation().emitError()
          << "hetero-gpu-row-kernels: threads-per-block must be a power of "
             "two from 32 to 1024; got "
          << threads;
      return signalPassFailure();
    }
    SmallVector<Chain> chains;
    getOperation().walk([&](Block *block) { collect(*block, chains); });
    for (const Chain &chain : chains)
      rewrite(chain, threads);
  }

  /// Appends the chains of `block` worth a kernel: two phases or more, one
  /// of them a reduction (independent element-wise ops are
  /// hetero-gpu-horizontal-fusion's).
  static void collect(Block &block, SmallVectorImpl<Chain> &chains) {
    SmallVector<linalg::LinalgOp> ops;
    std::optional<Chain> chain;
    auto finish = [&] {
      if (chain) {
        foldFills(*chain);
        if (chain->phases.size() >= 2 && chain->columns &&
            llvm::any_of(chain->phases, [](const Phase &phase) {
              return !phase.reducedDims.empty();
            }))
          chains.push_back(std::move(*chain));
      }
      ops.clear();
      chain.reset();
    };
    for (Operation &op : block) {
      auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      if (linalgOp && isCandidate(linalgOp)) {
        ops.push_back(linalgOp);
        // A chain of two or more ops keeps its rows as it grows.
        unsigned fewest = ops.size() > 2 ? chain->rows : 1;
        if (std::optional<Chain> longer = bestChain(ops, fewest)) {
          chain = std::move(longer);
          continue;
        }
        ops.pop_back();
        finish();
        ops.push_back(linalgOp);
        chain = bestChain(ops, 1);
        if (!chain)
          ops.clear();
        continue;
      }
      if (hetero::mayStandBetweenKernels(op))
        continue;
      finish();
    }
    finish();
  }
};

} // namespace
