//===- SelectCompression.cpp - Espresso and Zen decisions per gradient ----===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "PassOutput.h"
#include "hetero/Compression/Espresso.h"
#include "hetero/Dialect/Hetero.h"
#include "hetero/Dialect/Utils.h"
#include "hetero/Passes/Passes.h"
#include "hetero/Profile/EspressoProfile.h"
#include "hetero/Sparse/SparseCost.h"
#include "hetero/Support/WireSize.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"

#include <cmath>

namespace hetero {
#define GEN_PASS_DEF_HETEROSELECTCOMPRESSION
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;
using namespace hetero;

namespace {

/// The collectives the pass decides for: f32 all-reduces and buckets of
/// statically shaped tensors (the cost of a dynamic one is unknown until
/// it runs, so it stays dense).
bool isCandidate(Operation *op) {
  if (!isa<AllReduceOp, BucketOp>(op) || op->getNumOperands() == 0)
    return false;
  return llvm::all_of(op->getOperandTypes(), [](Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    return tensor && tensor.hasStaticShape() && tensor.getElementType().isF32();
  });
}

/// Elements the collective reduces over all its operands.
int64_t inputElements(Operation *op) {
  int64_t elements = 0;
  for (Value input : op->getOperands())
    elements += cast<RankedTensorType>(input.getType()).getNumElements();
  return elements;
}

/// Ranks in the collective's group: its grid along its axes; `worldRanks`
/// for the world and for a dynamic grid, whose size is known at run time
/// only.
int64_t groupSize(Operation *op, int64_t worldRanks) {
  std::optional<int64_t> size =
      cast<CollectiveOpInterface>(op).getStaticGroupSize();
  return size ? std::max<int64_t>(*size, 1) : worldRanks;
}

struct HeteroSelectCompressionPass
    : public hetero::impl::HeteroSelectCompressionBase<
          HeteroSelectCompressionPass> {
  using Base::Base;

  /// The non-zero fraction of `op`'s gradient: its `hetero.density`
  /// attribute (a profile's per-tensor measurement), else the pass's.
  double densityOf(Operation *op) {
    if (FloatAttr attr = getHeteroDialect(op->getContext())
                             .getDensityAttrHelper()
                             .getAttr(op))
      return attr.getValueAsDouble();
    return density;
  }

  /// The cheapest way Zen's cost model (hetero/Sparse/SparseCost.h) sends
  /// `op`'s gradient, with latency: AGsparse, or Zen with a COO or
  /// hash-bitmap pull; none when the dense all-reduce is cheapest.
  std::optional<SparseFormat> sparseFormat(Operation *op) {
    double fraction = densityOf(op);
    if (fraction <= 0.0)
      return std::nullopt;
    sparse::SparseShape shape;
    shape.ranks = groupSize(op, ranks);
    shape.elements = inputElements(op);
    shape.maxNonZeros = int64_t(std::ceil(fraction * double(shape.elements)));
    shape.totalNonZeros = shape.ranks * shape.maxNonZeros;
    shape.unionNonZeros =
        sparse::expectedUnion(shape.elements, shape.maxNonZeros, shape.ranks);
    sparse::SparseLink link{linkAlphaMs, linkBetaMsPerMb / fusion::kBytesPerMB};
    switch (sparse::chooseSparseScheme(shape, link)) {
    case sparse::SparseScheme::AllGather:
      return onlineSparse ? SparseFormat::online : SparseFormat::allgather;
    case sparse::SparseScheme::ZenCoo:
      return onlineSparse ? SparseFormat::online : SparseFormat::coo;
    case sparse::SparseScheme::ZenBitmap:
      return onlineSparse ? SparseFormat::online : SparseFormat::hash_bitmap;
    default:
      return std::nullopt;
    }
  }

  espresso::Problem builtinProblem(ArrayRef<Operation *> ops,
                                   double wireFraction) {
    espresso::Problem problem;
    problem.ranks = groupSize(ops.front(), ranks);
    problem.wireFraction = wireFraction;
    for (Operation *op : ops) {
      int64_t bytes = 4 * inputElements(op);
      problem.tensors.push_back(
          {"", bytes, backwardMsPerMb * double(bytes) / fusion::kBytesPerMB});
    }
    problem.link = {linkAlphaMs, linkBetaMsPerMb};
    problem.nodeSize = nodeSize;
    problem.intraLink = {linkAlphaMs / 10.0, intraBetaMsPerMb};
    // A GPU compresses at tens of GB/s, a CPU core at a few.
    problem.gpu = {{0.02, 0.05}, {0.02, 0.02}};
    problem.cpu = {{0.05, 0.5}, {0.05, 0.2}};
    return problem;
  }

  void apply(Operation *op, const espresso::Lowered &decision,
             CompressAttr compress, int64_t ranksPerNode) {
    MLIRContext *context = op->getContext();
    auto collective = cast<CollectiveOpInterface>(op);
    if (decision.scheme == espresso::Scheme::Dense) {
      collective.setCompression({});
      return;
    }
    collective.setCompression(CompressAttr::get(
        context, compress.getCompressor(), compress.getRatio(),
        compress.getLevels(), compress.getErrorFeedback(),
        decision.device == espresso::Device::Gpu ? Placement::gpu
                                                 : Placement::cpu,
        decision.scheme == espresso::Scheme::AllGather
            ? CollectiveScheme::allgather
            : CollectiveScheme::alltoall,
        decision.hierarchical ? ranksPerNode : 1));
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    std::optional<Compressor> kind = symbolizeCompressor(compressor);
    if (!kind || *kind == Compressor::none) {
      module.emitError() << "hetero-select-compression: unknown compressor '"
                         << compressor << "'; expected "
                         << enumCaseNames(stringifyCompressor,
                                          getMaxEnumValForCompressor(),
                                          {Compressor::none}, " or ");
      return signalPassFailure();
    }
    if (strategy != "espresso" && strategy != "dense" &&
        strategy != "compressed") {
      module.emitError() << "hetero-select-compression: unknown strategy '"
                         << strategy
                         << "'; expected espresso, dense or compressed";
      return signalPassFailure();
    }
    if (!(ratio > 0.0 && ratio <= 1.0) || ranks < 1 || !(density >= 0.0) ||
        density > 1.0 || nodeSize < 1) {
      module.emitError() << "hetero-select-compression: ratio must be in "
                            "(0, 1], ranks and node-size at least 1 and "
                            "density in [0, 1]";
      return signalPassFailure();
    }
    // Error feedback keeps what a lossy compressor drops.
    bool lossy = *kind != Compressor::fp16 && *kind != Compressor::bf16;
    auto compress = CompressAttr::get(
        context, *kind, ratio, lossy,
        *kind == Compressor::qsgd ? 16 : CompressAttr::kDefaultLevels);
    double wireFraction =
        hetero::wireFraction(compress, Float32Type::get(context));

    // The candidate collectives of each block, in block order.
    llvm::MapVector<Block *, SmallVector<Operation *>> blocks;
    // A tensor the compressor cannot shrink (a scalar loss, say) stays
    // dense.
    auto shrinks = [&](Operation *op) {
      int64_t elements = inputElements(op);
      return wire::compressedBytes(elements, 4, compress.getWireCompression()) <
             4 * elements;
    };
    module.walk([&](Operation *op) {
      if (isCandidate(op) && shrinks(op))
        blocks[op->getBlock()].push_back(op);
    });
    // A profile describes each block's collectives, in program order.
    std::vector<espresso::Problem> profiled;
    if (!profile.empty()) {
      if (failed(readPassProfiles(module, "hetero-select-compression", profile,
                                  profile::parseEspressoProfile, profiled)))
        return signalPassFailure();
      size_t count = profiled.size();
      if (count != blocks.size()) {
        module.emitError()
            << "hetero-select-compression: the profile describes the "
               "collectives of "
            << count << " block" << (count == 1 ? "" : "s")
            << ", but the module has " << blocks.size() << " blocks of them";
        return signalPassFailure();
      }
    }
    size_t blockIndex = 0;
    for (auto &[block, ops] : blocks) {
      SmallVector<Operation *> dense;
      for (Operation *op : ops) {
        auto reduce = dyn_cast<AllReduceOp>(op);
        std::optional<SparseFormat> format;
        if (reduce)
          format = sparseFormat(op);
        if (format) {
          reduce.removeCompressAttr();
          reduce.setSparse(*format);
        } else if (!reduce || reduce.getSparse() == SparseFormat::dense) {
          dense.push_back(op);
        }
      }
      size_t index = blockIndex++;
      if (dense.empty())
        continue;
      espresso::Problem problem = profiled.empty()
                                      ? builtinProblem(dense, wireFraction)
                                      : profiled[index];
      if (problem.tensors.size() != dense.size()) {
        dense.front()->emitError()
            << "hetero-select-compression: the profile lists "
            << problem.tensors.size() << " tensors, but this block has "
            << dense.size() << " dense f32 collectives";
        return signalPassFailure();
      }
      // The search runs over the options the runtime's collectives
      // execute.
      std::vector<espresso::Decision> space =
          espresso::lowerableOptions(problem);
      espresso::Plan plan;
      if (strategy == "dense")
        plan.decisions.assign(dense.size(), espresso::Decision());
      else if (strategy == "compressed")
        plan = espresso::allCompressedPlan(problem, space);
      else
        plan = espresso::searchPlan(problem, space);
      for (auto [op, decision] : llvm::zip(dense, plan.decisions))
        apply(op, *espresso::lowered(decision), compress, problem.nodeSize);
    }
  }
};

} // namespace
