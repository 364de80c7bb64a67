//===- FuseGradients.cpp - Cupcake's optimal gradient buckets -------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "PassOutput.h"
#include "hetero/Dialect/Hetero.h"
#include "hetero/Dialect/Utils.h"
#include "hetero/Fusion/Fusion.h"
#include "hetero/Passes/Passes.h"
#include "hetero/Profile/FusionProfile.h"
#include "hetero/Support/WireSize.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

#include <cmath>

namespace hetero {
#define GEN_PASS_DEF_HETEROFUSEGRADIENTS
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;
using namespace hetero;

namespace {

/// A gradient of a fusion set: the value reduced and the result that stood
/// for it.
struct Gradient {
  /// The collective's operand: read through it, since rewriting another
  /// set may replace the value it holds (a gradient reduced twice).
  OpOperand *operand;
  Value reduced;
  Value input() const { return operand->get(); }
};

/// The collectives of one block that may be fused together, and what they
/// share.
struct FusionSet {
  Block *block;
  FlatSymbolRefAttr grid;
  DenseI16ArrayAttr axes;
  ReductionAttr reduction;
  CompressAttr compress;
  SmallVector<Operation *> collectives;
  SmallVector<Gradient> gradients;
};

/// What a fusion set has in common: group, reduction, compression and
/// element type.
using SetKey =
    std::tuple<Block *, Attribute, Attribute, Attribute, Attribute, Type>;

/// The position of the op defining `value` in `block` (-1: before it).
int64_t readyPosition(Value value, Block *block,
                      const DenseMap<Operation *, int64_t> &positions) {
  Operation *def = value.getDefiningOp();
  if (!def)
    return -1;
  Operation *inBlock = block->findAncestorOpInBlock(*def);
  return inBlock ? positions.lookup(inBlock) : -1;
}

struct HeteroFuseGradientsPass
    : public hetero::impl::HeteroFuseGradientsBase<HeteroFuseGradientsPass> {
  using Base::Base;

  /// The fusion sets of the module with more than one gradient, in program
  /// order.
  SmallVector<FusionSet> collectSets(ModuleOp module) {
    llvm::MapVector<SetKey, FusionSet> sets;
    module.walk([&](Operation *op) {
      auto add = [&](MutableArrayRef<OpOperand> inputs, ValueRange results,
                     FlatSymbolRefAttr grid, DenseI16ArrayAttr axes,
                     ReductionAttr reduction, CompressAttr compress) {
        Type element = cast<RankedTensorType>(inputs.front().get().getType())
                           .getElementType();
        SetKey key{op->getBlock(), grid, axes, reduction, compress, element};
        FusionSet &set = sets[key];
        set.block = op->getBlock();
        set.grid = grid;
        set.axes = axes;
        set.reduction = reduction;
        set.compress = compress;
        set.collectives.push_back(op);
        for (auto [input, result] : llvm::zip(inputs, results))
          set.gradients.push_back({&input, result});
      };
      if (auto reduce = dyn_cast<AllReduceOp>(op)) {
        if (reduce.getSparse() == SparseFormat::dense)
          add(reduce->getOpOperands(), reduce->getResults(),
              reduce.getGridAttr(), reduce.getGridAxesAttr(),
              reduce.getReductionAttr(), reduce.getCompressAttr());
      } else if (auto bucket = dyn_cast<BucketOp>(op)) {
        if (!bucket.getInputs().empty())
          add(bucket.getInputsMutable(), bucket.getResults(),
              bucket.getGridAttr(), bucket.getGridAxesAttr(),
              bucket.getReductionAttr(), bucket.getCompressAttr());
      }
    });
    // A lone gradient (or a step's loss) has no grouping to choose.
    SmallVector<FusionSet> result;
    for (auto &entry : sets)
      if (entry.second.gradients.size() > 1)
        result.push_back(std::move(entry.second));
    return result;
  }

  /// The built-in cost model of a set, its gradients in ready order.
  fusion::Problem builtinProblem(const FusionSet &set) {
    CompressAttr compress = set.compress;
    fusion::Problem problem;
    for (const Gradient &gradient : set.gradients) {
      int64_t bytes = tensorBytes(gradient.input().getType());
      problem.tensors.push_back(
          {"", bytes, backwardMsPerMb * double(bytes) / fusion::kBytesPerMB});
    }
    if (compress) {
      problem.compress = {compressAlphaMs, compressBetaMsPerMb, compressMinMs};
      // A group left uncompressed moves all of its bytes.
      problem.dense = fusion::LinearCost{commAlphaMs, commBetaMsPerMb};
    }
    // Transfers move the compressed bytes.
    double wireFraction = hetero::wireFraction(
        compress, getElementTypeOrSelf(set.gradients.front().input()));
    problem.comm = {commAlphaMs, commBetaMsPerMb * wireFraction};
    return problem;
  }

  /// Replaces the collectives of `set` by one per group of `plan`, without
  /// compression where the plan leaves a group uncompressed; `positions`
  /// numbers the ops of the set's block.
  LogicalResult rewrite(FusionSet &set, const fusion::Plan &plan,
                        const DenseMap<Operation *, int64_t> &positions) {
    FlatSymbolRefAttr grid = set.grid;
    DenseI16ArrayAttr axes = set.axes;
    ReductionAttr reduction = set.reduction;
    Block *block = set.block;

    Operation *placedLast = nullptr;
    for (auto [index, group] : llvm::enumerate(plan.groups)) {
      CompressAttr compress = plan.compressed.empty() || plan.compressed[index]
                                  ? set.compress
                                  : CompressAttr();
      ArrayRef<Gradient> members(set.gradients.begin() + group.first,
                                 set.gradients.begin() + group.last + 1);
      // Where the group's first collective stood when every input is ready
      // there (the program's own choice, such as after a pipeline stage's
      // last send), else right after the last input is produced; never
      // after the first use of any member's result. The lowering waits
      // for a dense all-reduce only before the first use of its result.
      Operation *insertBefore =
          block->mightHaveTerminator() ? block->getTerminator() : nullptr;
      int64_t lastInput = -1;
      Operation *lastProducer = nullptr, *firstCollective = nullptr;
      for (const Gradient &member : members) {
        Operation *collective =
            block->findAncestorOpInBlock(*member.reduced.getDefiningOp());
        if (collective &&
            (!firstCollective ||
             positions.lookup(collective) < positions.lookup(firstCollective)))
          firstCollective = collective;
        int64_t ready = readyPosition(member.input(), block, positions);
        if (ready > lastInput) {
          lastInput = ready;
          lastProducer =
              block->findAncestorOpInBlock(*member.input().getDefiningOp());
        }
        for (Operation *user : member.reduced.getUsers()) {
          Operation *inBlock = block->findAncestorOpInBlock(*user);
          if (inBlock && (!insertBefore || positions.lookup(inBlock) <
                                               positions.lookup(insertBefore)))
            insertBefore = inBlock;
        }
      }
      if (insertBefore && lastInput >= positions.lookup(insertBefore))
        return insertBefore->emitError()
               << "hetero-fuse-gradients: this op uses the reduced gradient "
                  "of group ["
               << group.first << "-" << group.last
               << "] before the group's last gradient is produced; the "
                  "grouping cannot be placed";
      OpBuilder builder =
          firstCollective && positions.lookup(firstCollective) > lastInput
              ? OpBuilder(firstCollective)
          : lastProducer
              ? OpBuilder(block, std::next(lastProducer->getIterator()))
              : OpBuilder::atBlockBegin(block);
      // Groups stay in plan order.
      if (placedLast) {
        Block::iterator point = builder.getInsertionPoint();
        if (point != block->end() && point->isBeforeInBlock(placedLast))
          builder.setInsertionPointAfter(placedLast);
      }
      SmallVector<Value> inputs;
      for (const Gradient &member : members)
        inputs.push_back(member.input());
      Location loc = set.collectives.front()->getLoc();
      ValueRange results;
      if (inputs.size() == 1) {
        auto single = AllReduceOp::create(builder, loc, inputs.front(), grid,
                                          axes, reduction.getValue(), compress);
        results = single->getResults();
        placedLast = single;
      } else {
        auto fused = BucketOp::create(builder, loc, grid, axes, inputs,
                                      reduction, compress);
        results = fused->getResults();
        placedLast = fused;
      }
      for (auto [member, result] : llvm::zip(members, results)) {
        Value reduced = member.reduced;
        reduced.replaceAllUsesWith(result);
      }
    }
    for (Operation *old : set.collectives)
      old->erase();
    return success();
  }

  /// The grouping `strategy` names.
  fusion::Plan planFor(const fusion::Problem &problem) {
    if (strategy == "joint" && problem.dense)
      return fusion::jointPlan(problem);
    if (strategy == "per-tensor")
      return fusion::perTensorPlan(problem);
    if (strategy == "one")
      return fusion::singleGroupPlan(problem);
    if (strategy == "size")
      return fusion::thresholdPlan(
          problem, int64_t(std::llround(bucketMb * fusion::kBytesPerMB)));
    return fusion::optimalPlan(problem);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (strategy != "optimal" && strategy != "per-tensor" &&
        strategy != "one" && strategy != "size" && strategy != "joint") {
      module.emitError() << "hetero-fuse-gradients: unknown strategy '"
                         << strategy
                         << "'; expected optimal, per-tensor, one, size or "
                            "joint";
      return signalPassFailure();
    }
    if (!(bucketMb > 0.0)) {
      module.emitError() << "hetero-fuse-gradients: bucket-mb must be "
                            "positive, got "
                         << bucketMb;
      return signalPassFailure();
    }
    SmallVector<FusionSet> sets = collectSets(module);
    // A profile describes each fusion set, in program order.
    std::vector<fusion::Problem> profiled;
    if (!profile.empty()) {
      if (failed(readPassProfiles(module, "hetero-fuse-gradients", profile,
                                  profile::parseFusionProfile, profiled)))
        return signalPassFailure();
      size_t count = profiled.size();
      if (count != sets.size()) {
        module.emitError() << "hetero-fuse-gradients: the profile describes "
                           << count << " fusion set" << (count == 1 ? "" : "s")
                           << ", but the module has " << sets.size()
                           << " (collectives differing in block, group, "
                              "reduction, compression or element type)";
        return signalPassFailure();
      }
    }
    for (auto [setIndex, set] : llvm::enumerate(sets)) {
      Block *block = set.block;
      DenseMap<Operation *, int64_t> positions;
      int64_t index = 0;
      for (Operation &op : *block)
        positions[&op] = index++;
      // Gradient-ready order: the order the block produces them.
      llvm::stable_sort(set.gradients,
                        [&](const Gradient &a, const Gradient &b) {
                          return readyPosition(a.input(), block, positions) <
                                 readyPosition(b.input(), block, positions);
                        });
      fusion::Problem problem =
          profiled.empty() ? builtinProblem(set) : profiled[setIndex];
      if (problem.tensors.size() != set.gradients.size()) {
        set.collectives.front()->emitError()
            << "hetero-fuse-gradients: the profile lists "
            << problem.tensors.size()
            << " tensors, but this fusion set reduces " << set.gradients.size()
            << " gradients";
        return signalPassFailure();
      }
      // Joint decisions need the cost of a group sent uncompressed.
      if (strategy == "joint" && set.compress && !problem.dense) {
        set.collectives.front()->emitError()
            << "hetero-fuse-gradients: strategy=joint decides which buckets "
               "to compress, but the profile gives no \"dense_comm\" (the "
               "cost of an uncompressed transfer); expected one";
        return signalPassFailure();
      }
      if (failed(rewrite(set, planFor(problem), positions)))
        return signalPassFailure();
    }
  }
};

} // namespace
