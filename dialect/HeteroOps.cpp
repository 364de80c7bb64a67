//===- HeteroOps.cpp - hetero operation verifiers and canonicalizers ------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Dialect/Hetero.h"
#include "hetero/Dialect/Utils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/Support/InterleavedRange.h"
#include "llvm/Support/MathExtras.h"

#include <limits>
#include <map>

using namespace mlir;
using namespace hetero;

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

/// Checks that `stageId` names a stage of a pipeline with `numStages` stages.
static LogicalResult verifyStageInRange(Operation *op, StringRef what,
                                        int64_t stageId, int64_t numStages,
                                        StringRef plural = "stages") {
  if (stageId >= 0 && stageId < numStages)
    return success();
  return op->emitOpError() << what << " " << stageId
                           << " is outside the pipeline (" << plural << " 0.."
                           << numStages - 1 << ")";
}

/// Checks that the ops of `region` have one id each, covering 0..count-1
/// exactly once; `StageLikeOp` has a `getStageId()`, the id of a stage, or
/// of a rank when `noun` is "rank".
template <typename StageLikeOp>
static LogicalResult verifyStageCover(Operation *owner, Region &region,
                                      int64_t count, StringRef kind,
                                      StringRef noun = "stage") {
  llvm::SmallDenseMap<int64_t, StageLikeOp> byId;
  for (auto op : region.getOps<StageLikeOp>()) {
    int64_t id = op.getStageId();
    if (failed(verifyStageInRange(op, noun, id, count, (noun + "s").str())))
      return failure();
    auto [it, inserted] = byId.try_emplace(id, op);
    if (!inserted)
      return op.emitOpError() << noun << " " << id << " already has a '" << kind
                              << "' in this " << owner->getName();
  }
  for (int64_t id = 0; id < count; ++id)
    if (!byId.count(id))
      return owner->emitOpError() << noun << " " << id << " of " << count
                                  << " has no '" << kind << "'";
  return success();
}

/// Checks that every op in `region` is one of `OpTys`.
template <typename... OpTys>
static LogicalResult verifyOnlyContains(Operation *owner, Region &region,
                                        StringRef expected) {
  for (Operation &op : region.getOps())
    if (!isa<OpTys...>(op))
      return owner->emitOpError() << "may only contain " << expected
                                  << ", found '" << op.getName() << "'";
  return success();
}

/// A compressor whose outputs cannot be summed needs an all-gather or an
/// all-to-all aggregation scheme, and compressed reductions are sums.
static LogicalResult verifyCompressedReduction(Operation *op,
                                               CompressAttr compress,
                                               Reduction reduction) {
  if (!compress || compress.getCompressor() == Compressor::none)
    return success();
  if (!compress.isLinear() &&
      compress.getScheme() == CollectiveScheme::allreduce)
    return op->emitOpError()
           << "compressor '" << stringifyCompressor(compress.getCompressor())
           << "' is not linear: its compressed tensors cannot be summed by "
              "an all-reduce; use scheme = allgather or scheme = alltoall";
  if (reduction != Reduction::sum && reduction != Reduction::avg)
    return op->emitOpError() << "a compressed reduction must be sum or avg, "
                                "not "
                             << stringifyReduction(reduction);
  return success();
}

/// Checks that `axis` is a dimension of `type`.
static LogicalResult verifyAxis(Operation *op, StringRef name, int64_t axis,
                                RankedTensorType type) {
  if (axis >= 0 && axis < type.getRank())
    return success();
  return op->emitOpError() << name << " " << axis << " is not a dimension of "
                           << type;
}

/// Checks that `a` and `b` agree on every static dimension except the
/// listed ones.
static LogicalResult verifySameDimsExcept(Operation *op, RankedTensorType a,
                                          RankedTensorType b,
                                          ArrayRef<int64_t> except) {
  if (a.getRank() != b.getRank())
    return op->emitOpError()
           << "expects " << a << " and " << b << " to have the same rank";
  for (int64_t dim = 0; dim < a.getRank(); ++dim) {
    if (llvm::is_contained(except, dim))
      continue;
    int64_t x = a.getDimSize(dim), y = b.getDimSize(dim);
    if (!ShapedType::isDynamic(x) && !ShapedType::isDynamic(y) && x != y)
      return op->emitOpError()
             << "dimension " << dim << " differs: " << a << " vs " << b;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Process groups of collectives
//===----------------------------------------------------------------------===//

/// Resolves the grid of a collective and checks its axes. Returns the static
/// number of ranks in the group, or std::nullopt when it is only known at run
/// time (no grid: the whole world; or a dynamic grid dimension).
static FailureOr<std::optional<int64_t>>
verifyGroup(Operation *op, FlatSymbolRefAttr gridName, ArrayRef<int16_t> axes,
            SymbolTableCollection &symbolTable) {
  if (!gridName) {
    if (!axes.empty())
      return op->emitOpError() << "names grid axes but no grid";
    return std::optional<int64_t>();
  }
  auto grid = symbolTable.lookupNearestSymbolFrom<shard::GridOp>(op, gridName);
  if (!grid)
    return op->emitOpError()
           << "'" << gridName.getValue() << "' does not name a shard.grid";
  ArrayRef<int64_t> shape = grid.getShape();
  llvm::SmallSet<int16_t, 4> seen;
  for (int16_t axis : axes) {
    if (axis < 0 || axis >= static_cast<int64_t>(shape.size()))
      return op->emitOpError()
             << "grid axis " << axis << " is outside grid '"
             << gridName.getValue() << "' of rank " << shape.size();
    if (!seen.insert(axis).second)
      return op->emitOpError() << "grid axis " << axis << " is named twice";
  }
  return gridGroupSize(shape, axes);
}

/// Checks a rank number against a static group size.
static LogicalResult verifyRankInGroup(Operation *op, StringRef what,
                                       int64_t rank,
                                       std::optional<int64_t> groupSize) {
  if (rank < 0)
    return op->emitOpError() << what << " must be a rank >= 0, got " << rank;
  if (groupSize && rank >= *groupSize)
    return op->emitOpError()
           << what << " " << rank << " is outside the group of " << *groupSize
           << " ranks";
  return success();
}

template <typename OpTy>
static FailureOr<std::optional<int64_t>>
verifyGroupOf(OpTy op, SymbolTableCollection &symbolTable) {
  return verifyGroup(op, op.getGridAttr(), op.getGridAxes(), symbolTable);
}

/// Checks a root or peer rank against the static size of the op's group.
template <typename OpTy>
static LogicalResult
verifyRankAgainstGroup(OpTy op, StringRef what, int64_t rank,
                       SymbolTableCollection &symbolTable) {
  FailureOr<std::optional<int64_t>> size = verifyGroupOf(op, symbolTable);
  if (failed(size))
    return failure();
  return verifyRankInGroup(op, what, rank, *size);
}

//===----------------------------------------------------------------------===//
// PipelineOp
//===----------------------------------------------------------------------===//

/// The value of `placement = ...`: `loop`, `v` or `[0, 1, 1, 0]`.
static ParseResult parseStagePlacement(OpAsmParser &parser,
                                       Attribute &placement) {
  if (succeeded(parser.parseOptionalKeyword("loop"))) {
    placement = parser.getBuilder().getStringAttr("loop");
    return success();
  }
  if (succeeded(parser.parseOptionalKeyword("v"))) {
    placement = parser.getBuilder().getStringAttr("v");
    return success();
  }
  SmallVector<int64_t> ranks;
  if (failed(parser.parseOptionalLSquare()))
    return parser.emitError(parser.getCurrentLocation(),
                            "expected a placement: loop, v, or a list of one "
                            "rank per stage such as [0, 1, 1, 0]");
  if (parser.parseCommaSeparatedList(
          [&] { return parser.parseInteger(ranks.emplace_back()); }) ||
      parser.parseRSquare())
    return failure();
  placement = parser.getBuilder().getDenseI64ArrayAttr(ranks);
  return success();
}

static void printStagePlacement(OpAsmPrinter &printer, Operation *,
                                Attribute placement) {
  if (auto kind = dyn_cast<StringAttr>(placement))
    printer << kind.getValue();
  else
    printer << "[" << cast<DenseI64ArrayAttr>(placement).asArrayRef() << "]";
}

int64_t PipelineOp::getNumRanks() {
  if (FlatSymbolRefAttr gridName = getGridAttr())
    if (auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
            *this, gridName))
      if (!grid.getShape().empty())
        return grid.getShape()[0];
  Attribute placement = getPlacementAttr();
  if (!placement)
    return getNumStages();
  if (auto ranks = dyn_cast<DenseI64ArrayAttr>(placement)) {
    int64_t most = -1;
    for (int64_t rank : ranks.asArrayRef())
      most = std::max(most, rank);
    return most + 1;
  }
  if (cast<StringAttr>(placement).getValue() == "v")
    return getNumStages() / 2;
  return 0; // loop: the ranks are the grid's
}

schedule::Placement PipelineOp::getStagePlacement() {
  int64_t ranks = getNumRanks();
  Attribute placement = getPlacementAttr();
  if (!placement)
    return schedule::Placement::identity(getNumStages());
  if (auto list = dyn_cast<DenseI64ArrayAttr>(placement)) {
    schedule::Placement result;
    result.rankOf.assign(list.asArrayRef().begin(), list.asArrayRef().end());
    result.ranks = ranks;
    return result;
  }
  if (cast<StringAttr>(placement).getValue() == "v")
    return schedule::Placement::vShape(ranks);
  return schedule::Placement::loop(getNumStages(), ranks);
}

/// The placement's stage-to-rank map must fit the pipeline's stages and
/// ranks.
static LogicalResult verifyPlacement(PipelineOp pipeline) {
  Attribute placement = pipeline.getPlacementAttr();
  if (!placement)
    return success();
  int64_t stages = pipeline.getNumStages();
  int64_t ranks = pipeline.getNumRanks();
  if (auto kind = dyn_cast<StringAttr>(placement)) {
    if (kind.getValue() != "loop" && kind.getValue() != "v")
      return pipeline.emitOpError()
             << "has placement '" << kind.getValue()
             << "', expected loop, v, or a list of one rank per stage";
    if (ranks == 0)
      return pipeline.emitOpError()
             << "places its stages in a loop over the ranks of its grid, "
                "but names no grid";
    if (kind.getValue() == "v" && stages != 2 * ranks)
      return pipeline.emitOpError()
             << "places its " << stages << " stages in a V over " << ranks
             << " ranks; a V needs twice as many stages as ranks";
    if (kind.getValue() == "loop" && stages < ranks)
      return pipeline.emitOpError()
             << "places its " << stages << " stages in a loop over " << ranks
             << " ranks, which leaves ranks without a stage";
    return success();
  }
  auto list = cast<DenseI64ArrayAttr>(placement);
  if (int64_t(list.size()) != stages)
    return pipeline.emitOpError()
           << "places " << list.size() << " stages, but has " << stages
           << "; the list names one rank per stage";
  std::string problem = schedule::Placement::check(
      std::vector<int64_t>(list.asArrayRef().begin(), list.asArrayRef().end()),
      ranks);
  if (!problem.empty())
    return pipeline.emitOpError() << problem;
  return success();
}

StageOp PipelineOp::getStage(int64_t stageId) {
  for (auto stage : getBody().getOps<StageOp>())
    if (stage.getStageId() == stageId)
      return stage;
  return {};
}

StageVariantOp PipelineOp::getStageVariant(int64_t stageId,
                                           int64_t microbatchSize) {
  for (auto variant : getBody().getOps<StageVariantOp>())
    if (variant.getStageId() == stageId &&
        variant.getMicrobatchSize() == microbatchSize)
      return variant;
  return {};
}

SmallVector<int64_t> PipelineOp::getVariantSizes() {
  SmallVector<int64_t> sizes;
  for (auto variant : getBody().getOps<StageVariantOp>())
    sizes.push_back(variant.getMicrobatchSize());
  llvm::sort(sizes);
  sizes.erase(llvm::unique(sizes), sizes.end());
  return sizes;
}

/// Micro-batches per iteration beyond kMaxMicrobatches are a mistake.
static LogicalResult verifyMicrobatchLimit(Operation *op, int64_t count) {
  if (count <= kMaxMicrobatches)
    return success();
  return op->emitOpError() << "has " << count
                           << " micro-batches, above the limit of "
                           << kMaxMicrobatches << " per iteration";
}

LogicalResult PipelineOp::verify() {
  if (getNumStages() > kMaxPipelineStages)
    return emitOpError() << "has " << getNumStages()
                         << " stages, above the limit of "
                         << kMaxPipelineStages;
  if (failed(verifyMicrobatchLimit(*this, getNumMicrobatches())))
    return failure();
  SyncAttr sync = getSyncAttr();
  if (!sync)
    return success();
  if (sync.getSyncEveryMicrobatches() > getNumMicrobatches())
    return emitOpError() << "syncs every " << sync.getSyncEveryMicrobatches()
                         << " micro-batches, but a step has only "
                         << getNumMicrobatches()
                         << "; sync_every_microbatches must be at most the "
                            "pipeline's micro-batches";
  if (sync.getAdamVarRescale() &&
      !isa_and_nonnull<AdamAttr>(getOptimizerAttr()))
    return emitOpError() << "rescales Adam's second moment "
                            "(adam_var_rescale = true), but its optimizer is "
                         << (getOptimizerAttr() ? "not #hetero.adam"
                                                : "not given");
  return success();
}

LogicalResult PipelineOp::verifyRegions() {
  if (failed(verifyOnlyContains<StageOp, StageVariantOp>(
          *this, getBody(), "'hetero.stage' and 'hetero.stage_variant'")))
    return failure();
  if (failed(verifyStageCover<StageOp>(*this, getBody(), getNumStages(),
                                       "hetero.stage")))
    return failure();
  // Each variant size covers every stage once.
  std::map<int64_t, llvm::SmallDenseMap<int64_t, StageVariantOp>> bySize;
  for (auto variant : getBody().getOps<StageVariantOp>()) {
    int64_t id = variant.getStageId();
    if (failed(verifyStageInRange(variant, "stage", id, getNumStages())))
      return failure();
    if (!bySize[variant.getMicrobatchSize()].try_emplace(id, variant).second)
      return variant.emitOpError()
             << "stage " << id << " already has a variant for micro-batches "
             << "of " << variant.getMicrobatchSize() << " samples";
  }
  for (auto &[size, variants] : bySize)
    for (int64_t id = 0; id < getNumStages(); ++id)
      if (!variants.count(id))
        return emitOpError() << "has stage variants for micro-batches of "
                             << size << " samples, but none for stage " << id
                             << "; a variant size must cover every stage";
  return success();
}

/// Resolves a stage function of `stage` (a hetero.stage or
/// hetero.stage_variant) and reports what is wrong with it.
static func::FuncOp lookupStageFunction(Operation *stage, StringRef role,
                                        FlatSymbolRefAttr name,
                                        SymbolTableCollection &symbolTable) {
  Operation *found = symbolTable.lookupNearestSymbolFrom(stage, name);
  auto function = dyn_cast_or_null<func::FuncOp>(found);
  if (!function) {
    stage->emitOpError() << role << " function '" << name.getValue() << "' "
                         << (found ? "is not a func.func" : "is not defined");
    return {};
  }
  return function;
}

namespace {
/// The functions a hetero.stage or hetero.stage_variant names; null where
/// it names none.
struct StageFunctions {
  func::FuncOp forward, augmented, backward, backwardInput, backwardWeight;
};
} // namespace

/// The functions of a hetero.stage or hetero.stage_variant; failure after
/// a diagnostic.
template <typename StageLikeOp>
static FailureOr<StageFunctions>
lookupStageFunctions(StageLikeOp stage, SymbolTableCollection &symbolTable) {
  StageFunctions functions;
  functions.forward = lookupStageFunction(stage, "forward",
                                          stage.getForwardAttr(), symbolTable);
  if (!functions.forward)
    return failure();
  std::pair<FlatSymbolRefAttr, func::FuncOp *> optional[] = {
      {stage.getAugmentedAttr(), &functions.augmented},
      {stage.getBackwardAttr(), &functions.backward},
      {stage.getBackwardInputAttr(), &functions.backwardInput},
      {stage.getBackwardWeightAttr(), &functions.backwardWeight}};
  const char *roles[] = {"augmented", "backward", "backward_input",
                         "backward_weight"};
  for (auto [entry, role] : llvm::zip_equal(optional, roles)) {
    if (!entry.first)
      continue;
    *entry.second = lookupStageFunction(stage, role, entry.first, symbolTable);
    if (!*entry.second)
      return failure();
  }
  if (bool(functions.backwardInput) != bool(functions.backwardWeight))
    return stage.emitOpError()
           << "names a "
           << (functions.backwardInput ? "backward_input" : "backward_weight")
           << " function but no "
           << (functions.backwardInput ? "backward_weight" : "backward_input")
           << "; a split backward names both";
  if (functions.backward && functions.backwardInput)
    return stage.emitOpError()
           << "names both a backward function and a split backward "
              "(backward_input, backward_weight); expected one of them";
  if (functions.augmented && !functions.backward && !functions.backwardInput)
    return stage.emitOpError()
           << "names an augmented forward but no backward to take its "
              "residuals";
  return functions;
}

SmallVector<FlatSymbolRefAttr> StageOp::getParamSymbols() {
  SmallVector<FlatSymbolRefAttr> symbols;
  if (ArrayAttr params = getParamsAttr())
    for (Attribute param : params)
      symbols.push_back(cast<FlatSymbolRefAttr>(param));
  return symbols;
}

namespace {
/// One expected input or result of a stage-ABI function: its type and what
/// it carries, for messages.
struct Slot {
  Type type;
  std::string role;
};
} // namespace

/// Checks `function`'s inputs and results against the stage ABI; `owner`
/// reports, `what` names the function ("stage 1 backward function").
static LogicalResult verifySignature(Operation *owner, StringRef what,
                                     func::FuncOp function,
                                     ArrayRef<Slot> inputs,
                                     ArrayRef<Slot> results) {
  FunctionType type = function.getFunctionType();
  auto describe = [](ArrayRef<Slot> slots) {
    std::string text;
    for (const Slot &slot : slots)
      text += (text.empty() ? "" : ", ") + slot.role;
    return text.empty() ? std::string("nothing") : text;
  };
  if (type.getNumInputs() != inputs.size())
    return owner->emitOpError()
           << what << " '" << function.getSymName() << "' takes "
           << type.getNumInputs() << " arguments, expected " << inputs.size()
           << " (" << describe(inputs) << ")";
  if (type.getNumResults() != results.size())
    return owner->emitOpError()
           << what << " '" << function.getSymName() << "' returns "
           << type.getNumResults() << " values, expected " << results.size()
           << " (" << describe(results) << ")";
  for (auto [index, slot] : llvm::enumerate(inputs))
    if (type.getInput(index) != slot.type)
      return owner->emitOpError()
             << what << " '" << function.getSymName() << "' argument " << index
             << " (" << slot.role << ") has type " << type.getInput(index)
             << ", expected " << slot.type;
  for (auto [index, slot] : llvm::enumerate(results))
    if (type.getResult(index) != slot.type)
      return owner->emitOpError()
             << what << " '" << function.getSymName() << "' result " << index
             << " (" << slot.role << ") has type " << type.getResult(index)
             << ", expected " << slot.type;
  return success();
}

/// Checks the functions of one stage (or stage variant) against the stage
/// ABI: the forward `inputs -> outputs`; the augmented forward `inputs ->
/// (outputs..., residuals...)`; the backward `(inputs..., residuals...,
/// outputGradient...) -> gradients`, or the split pair `backward_input:
/// (inputs..., residuals..., outputGradient...) -> (input gradient...,
/// saved...)` and `backward_weight: (inputs..., saved...) -> parameter
/// gradients`. `gradients` starts with the input gradient when
/// `inputGradient`. `what` names the stage in messages ("stage 1").
static LogicalResult
verifyStageFunctions(Operation *owner, StringRef what,
                     const StageFunctions &functions, ArrayRef<Slot> inputs,
                     ArrayRef<Slot> outputs, ArrayRef<Slot> outputGradient,
                     ArrayRef<Slot> gradients, bool inputGradient) {
  std::string name = what.str();
  if (failed(verifySignature(owner, name + " forward function",
                             functions.forward, inputs, outputs)))
    return failure();
  // Values handed from one function to another through the step's stash:
  // tensors of static shape, so that their bytes are known.
  auto extraSlots = [&](func::FuncOp function, TypeRange types, size_t skip,
                        StringRef role, StringRef where,
                        SmallVectorImpl<Slot> &slots) -> LogicalResult {
    for (auto [index, type] : llvm::enumerate(types.drop_front(skip))) {
      std::string slotRole = (role + " " + Twine(index)).str();
      if (!isStashable(type))
        return owner->emitOpError()
               << name << " " << where << " '" << function.getSymName() << "' "
               << slotRole << " (result " << skip + index << ") has type "
               << type
               << ", expected a tensor of static shape with integer or "
                  "floating-point elements";
      slots.push_back({type, slotRole});
    }
    return success();
  };
  SmallVector<Slot> residuals;
  if (func::FuncOp augmented = functions.augmented) {
    if (augmented.getNumResults() < outputs.size())
      return owner->emitOpError()
             << name << " augmented forward function '"
             << augmented.getSymName() << "' returns "
             << augmented.getNumResults() << " values, expected "
             << outputs.size() << " outputs and then the residuals";
    if (failed(extraSlots(augmented, augmented.getResultTypes(), outputs.size(),
                          "residual", "augmented forward function", residuals)))
      return failure();
    SmallVector<Slot> results(outputs);
    llvm::append_range(results, residuals);
    if (failed(verifySignature(owner, name + " augmented forward function",
                               augmented, inputs, results)))
      return failure();
  }
  SmallVector<Slot> backwardInputs(inputs);
  llvm::append_range(backwardInputs, residuals);
  llvm::append_range(backwardInputs, outputGradient);
  if (functions.backward)
    return verifySignature(owner, name + " backward function",
                           functions.backward, backwardInputs, gradients);
  if (!functions.backwardInput)
    return success();
  func::FuncOp backwardInput = functions.backwardInput;
  size_t inputGradients = inputGradient ? 1 : 0;
  if (backwardInput.getNumResults() < inputGradients)
    return owner->emitOpError()
           << name << " backward_input function '" << backwardInput.getSymName()
           << "' returns nothing, expected the input gradient and then what "
              "the weight gradient needs";
  SmallVector<Slot> saved;
  if (failed(extraSlots(backwardInput, backwardInput.getResultTypes(),
                        inputGradients, "saved value",
                        "backward_input function", saved)))
    return failure();
  SmallVector<Slot> inputResults(gradients.take_front(inputGradients));
  llvm::append_range(inputResults, saved);
  if (failed(verifySignature(owner, name + " backward_input function",
                             backwardInput, backwardInputs, inputResults)))
    return failure();
  SmallVector<Slot> weightInputs(inputs);
  llvm::append_range(weightInputs, saved);
  return verifySignature(owner, name + " backward_weight function",
                         functions.backwardWeight, weightInputs,
                         gradients.drop_front(inputGradients));
}

/// The tensor type of a parameter global, or a diagnostic on `stage`.
static FailureOr<RankedTensorType>
lookupParameter(StageOp stage, FlatSymbolRefAttr name,
                SymbolTableCollection &symbolTable) {
  Operation *found = symbolTable.lookupNearestSymbolFrom(stage, name);
  auto global = dyn_cast_or_null<memref::GlobalOp>(found);
  if (!global)
    return stage.emitOpError()
           << "parameter '" << name.getValue() << "' "
           << (found ? "is not a memref.global" : "is not defined");
  MemRefType type = global.getType();
  if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
      type.getMemorySpace())
    return stage.emitOpError()
           << "parameter '" << name.getValue() << "' has type " << type
           << ", expected a memref of static shape with the identity layout";
  // hetero-partition-tp copies a sharded parameter's slice in on entry.
  bool sharded = getHeteroDialect(stage.getContext())
                     .getShardDimAttrHelper()
                     .isAttrPresent(global);
  if (global.isExternal() || (global.isUninitialized() && !sharded))
    return stage.emitOpError()
           << "parameter '" << name.getValue() << "' needs an initial value";
  if (global.getConstant())
    return stage.emitOpError() << "parameter '" << name.getValue()
                               << "' is a constant global; training writes it";
  return RankedTensorType::get(type.getShape(), type.getElementType());
}

/// `type` with its first dimension (the samples) `factor` times larger;
/// null for a type without one, or one that would overflow.
static RankedTensorType withMoreSamples(Type type, int64_t factor) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || tensor.getRank() == 0)
    return {};
  SmallVector<int64_t> shape(tensor.getShape());
  if (llvm::MulOverflow(shape[0], factor, shape[0]))
    return {};
  return RankedTensorType::get(shape, tensor.getElementType());
}

/// Verifies the hetero.stage_variant ops of an executable pipeline whose
/// stages passed the stage ABI: each variant's functions take the stage's
/// parameters and, where the stage's functions take or return samples,
/// tensors with n times as many. `stageInputs[s]` and `stageOutputs[s]`
/// are the types stage s takes and returns (the loss on the last).
static LogicalResult
verifyStageVariants(PipelineOp pipeline, func::FuncOp data,
                    ArrayRef<Type> stageInputs, ArrayRef<Type> stageOutputs,
                    ArrayRef<SmallVector<Slot>> paramSlots,
                    ArrayRef<SmallVector<Slot>> paramGradients,
                    SymbolTableCollection &symbolTable) {
  Type input = data.getFunctionType().getResult(0);
  Type target = data.getFunctionType().getResult(1);
  auto inputType = cast<RankedTensorType>(input);
  int64_t base = inputType.getRank() > 0 ? inputType.getDimSize(0) : 0;
  int64_t last = pipeline.getNumStages() - 1;
  for (auto variant : pipeline.getBody().getOps<StageVariantOp>()) {
    int64_t size = variant.getMicrobatchSize(), s = variant.getStageId();
    if (base <= 0 || size % base != 0 || size == base)
      return variant.emitOpError()
             << "takes micro-batches of " << size
             << " samples, expected a multiple of the pipeline's " << base
             << " (the first dimension of data function '" << data.getSymName()
             << "''s input) larger than it";
    int64_t stepSamples;
    if (llvm::MulOverflow(base, pipeline.getNumMicrobatches(), stepSamples))
      stepSamples = std::numeric_limits<int64_t>::max();
    if (size > stepSamples)
      return variant.emitOpError()
             << "takes micro-batches of " << size << " samples, more than "
             << "the " << stepSamples << " of a whole step ("
             << pipeline.getNumMicrobatches() << " micro-batches of " << base
             << ")";
    int64_t factor = size / base;
    // What holds samples grows with the micro-batch; the loss does not.
    auto scaled = [&](Type type, const std::string &role,
                      Slot &slot) -> LogicalResult {
      RankedTensorType grown = withMoreSamples(type, factor);
      if (!grown)
        return variant.emitOpError()
               << "cannot take more samples: " << role << " has type " << type
               << ", which has no first dimension to hold them";
      slot = {grown, role};
      return success();
    };
    SmallVector<Slot> inputs(1), outputs(1), outputGradient, gradients;
    if (failed(scaled(stageInputs[s],
                      s == 0
                          ? "the micro-batch input"
                          : "the activation of stage " + std::to_string(s - 1),
                      inputs[0])))
      return failure();
    llvm::append_range(inputs, paramSlots[s]);
    if (s == last) {
      inputs.emplace_back();
      if (failed(scaled(target, "the target", inputs.back())))
        return failure();
      outputs[0] = {stageOutputs[s], "the micro-batch loss"};
    } else if (failed(
                   scaled(stageOutputs[s],
                          "the activation for stage " + std::to_string(s + 1),
                          outputs[0]))) {
      return failure();
    }
    if (s != last)
      outputGradient.push_back(
          {outputs[0].type, "the gradient of the stage's output"});
    if (hasInputGradient(stageInputs[s]))
      gradients.push_back({inputs[0].type, "the input gradient"});
    llvm::append_range(gradients, paramGradients[s]);

    auto functions = lookupStageFunctions(variant, symbolTable);
    if (failed(functions))
      return failure();
    std::string what = "stage " + std::to_string(s) + " variant of " +
                       std::to_string(size) + " samples";
    if (failed(verifyStageFunctions(variant, what, *functions, inputs, outputs,
                                    outputGradient, gradients,
                                    hasInputGradient(stageInputs[s]))))
      return failure();
  }
  return success();
}

/// Verifies the stage ABI of an executable pipeline (see the op's
/// description): parameters, data function and every stage function.
static LogicalResult verifyStageAbi(PipelineOp pipeline,
                                    ArrayRef<StageFunctions> functions,
                                    SymbolTableCollection &symbolTable) {
  if (FlatSymbolRefAttr gridName = pipeline.getGridAttr()) {
    auto grid =
        symbolTable.lookupNearestSymbolFrom<shard::GridOp>(pipeline, gridName);
    ArrayRef<int64_t> shape = grid.getShape();
    if (llvm::any_of(shape, ShapedType::isDynamic))
      return pipeline.emitOpError() << "runs on grid '" << gridName.getValue()
                                    << "', which has a dynamic size";
    if (shape.empty() || shape.size() > 3 ||
        (!pipeline.getPlacementAttr() && shape[0] != pipeline.getNumStages()))
      return pipeline.emitOpError()
             << "runs on grid '" << gridName.getValue() << "' of shape "
             << llvm::interleaved(shape, "x") << ", expected axis 0 of size "
             << pipeline.getNumStages()
             << " (the stages), optionally axis 1 (the data-parallel "
                "replicas) and axis 2 (the tensor-parallel shards)";
    if (*gridGroupSize(shape, {}) > std::numeric_limits<int32_t>::max())
      return pipeline.emitOpError()
             << "runs on grid '" << gridName.getValue() << "' of shape "
             << llvm::interleaved(shape, "x") << ", expected at most "
             << std::numeric_limits<int32_t>::max()
             << " ranks (MPI's rank numbers)";
  }

  Operation *found =
      symbolTable.lookupNearestSymbolFrom(pipeline, pipeline.getDataAttr());
  auto data = dyn_cast_or_null<func::FuncOp>(found);
  if (!data)
    return pipeline.emitOpError()
           << "data function '" << pipeline.getDataAttr().getValue() << "' "
           << (found ? "is not a func.func" : "is not defined");
  FunctionType dataType = data.getFunctionType();
  if (dataType.getNumResults() != 2)
    return pipeline.emitOpError()
           << "data function '" << data.getSymName() << "' returns "
           << dataType.getNumResults()
           << " values, expected 2 (the input and the target of a "
              "micro-batch)";
  // What crosses between stages and ranks must have a static shape.
  const char *roles[] = {"input", "target"};
  for (auto [index, role] : llvm::enumerate(roles)) {
    auto type = dyn_cast<RankedTensorType>(dataType.getResult(index));
    if (!type || !type.hasStaticShape())
      return pipeline.emitOpError()
             << "data function '" << data.getSymName() << "' result " << index
             << " (the " << role << ") has type " << dataType.getResult(index)
             << ", expected a tensor of static shape";
  }
  Builder builder(pipeline.getContext());
  Type i64 = builder.getI64Type();
  if (failed(verifySignature(
          pipeline, "data function", data,
          {{i64, "the step"}, {i64, "the replica"}, {i64, "the micro-batch"}},
          {{dataType.getResult(0), "the input"},
           {dataType.getResult(1), "the target"}})))
    return failure();

  llvm::DenseMap<Attribute, int64_t> owners;
  int64_t last = pipeline.getNumStages() - 1;
  Type activation = dataType.getResult(0);
  // Per stage, what variants repeat with more samples: the activation it
  // takes, its parameters' slots and gradients' slots, and what it returns.
  SmallVector<Type> stageInputs, stageOutputs;
  SmallVector<SmallVector<Slot>> paramSlots, paramGradients;
  for (int64_t s = 0; s <= last; ++s) {
    StageOp stage = pipeline.getStage(s);
    SmallVector<Slot> inputs = {
        {activation, s == 0
                         ? "the micro-batch input"
                         : "the activation of stage " + std::to_string(s - 1)}};
    SmallVector<Slot> gradients;
    if (hasInputGradient(activation))
      gradients.push_back({activation, "the input gradient"});
    stageInputs.push_back(activation);
    paramSlots.emplace_back();
    paramGradients.emplace_back();
    for (FlatSymbolRefAttr param : stage.getParamSymbols()) {
      auto [it, inserted] = owners.try_emplace(param.getAttr(), s);
      if (!inserted)
        return stage.emitOpError()
               << "parameter '" << param.getValue() << "' is already "
               << (it->second == s
                       ? "listed by this stage"
                       : "a parameter of stage " + std::to_string(it->second));
      FailureOr<RankedTensorType> type =
          lookupParameter(stage, param, symbolTable);
      if (failed(type))
        return failure();
      paramSlots.back().push_back(
          {*type, "parameter " + param.getValue().str()});
      paramGradients.back().push_back(
          {*type, "the gradient of " + param.getValue().str()});
    }
    llvm::append_range(inputs, paramSlots.back());
    llvm::append_range(gradients, paramGradients.back());
    func::FuncOp forward = functions[s].forward;
    FunctionType forwardType = forward.getFunctionType();
    SmallVector<Slot> outputs;
    if (s == last) {
      inputs.push_back({dataType.getResult(1), "the target"});
      outputs.push_back({RankedTensorType::get({}, builder.getF32Type()),
                         "the micro-batch loss"});
    } else {
      if (forwardType.getNumResults() != 1)
        return stage.emitOpError()
               << "forward function '" << forward.getSymName() << "' returns "
               << forwardType.getNumResults()
               << " values, expected 1 (the activation for stage " << s + 1
               << ")";
      auto activationType =
          dyn_cast<RankedTensorType>(forwardType.getResult(0));
      if (!activationType || !activationType.hasStaticShape())
        return stage.emitOpError()
               << "forward function '" << forward.getSymName()
               << "' result 0 (the activation for stage " << s + 1
               << ") has type " << forwardType.getResult(0)
               << ", expected a tensor of static shape";
      // The gradient of the next stage's input flows back through it.
      if (!hasInputGradient(activationType))
        return stage.emitOpError()
               << "forward function '" << forward.getSymName()
               << "' result 0 (the activation for stage " << s + 1
               << ") has type " << activationType
               << ", expected floating-point elements: the gradient flows "
                  "back through it";
      outputs.push_back({forwardType.getResult(0),
                         "the activation for stage " + std::to_string(s + 1)});
    }
    SmallVector<Slot> outputGradient;
    if (s != last)
      outputGradient.push_back(
          {outputs.front().type, "the gradient of the stage's output"});
    if (failed(verifyStageFunctions(
            stage, "stage " + std::to_string(s), functions[s], inputs, outputs,
            outputGradient, gradients, hasInputGradient(stageInputs.back()))))
      return failure();
    activation = outputs.front().type;
    stageOutputs.push_back(activation);
  }
  return verifyStageVariants(pipeline, data, stageInputs, stageOutputs,
                             paramSlots, paramGradients, symbolTable);
}

/// The checkpoint's replicas must fit the ranks the pipeline runs on: its
/// grid, or one rank per stage without one.
static LogicalResult verifyCheckpointWorld(PipelineOp pipeline,
                                           shard::GridOp grid) {
  CheckpointAttr checkpoint = pipeline.getCheckpointAttr();
  if (!checkpoint)
    return success();
  int64_t world = pipeline.getNumRanks();
  if (grid) {
    std::optional<int64_t> size = gridGroupSize(grid.getShape(), {});
    // A dynamic grid is reported by the stage ABI's checks.
    if (!size)
      return success();
    world = *size;
  }
  if (checkpoint.getReplicas() > world)
    return pipeline.emitOpError()
           << "keeps " << checkpoint.getReplicas()
           << " checkpoint replicas, but runs on only " << world
           << " ranks; replicas must be at most the ranks";
  if (checkpoint.getPlacement() == ReplicaPlacement::group &&
      world % checkpoint.getReplicas() != 0)
    return pipeline.emitOpError()
           << "places checkpoints in groups of " << checkpoint.getReplicas()
           << ", which do not divide its " << world
           << " ranks; use placement = mixed or ring";
  return success();
}

LogicalResult PipelineOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  shard::GridOp gridOp;
  if (FlatSymbolRefAttr grid = getGridAttr()) {
    gridOp = symbolTable.lookupNearestSymbolFrom<shard::GridOp>(*this, grid);
    if (!gridOp)
      return emitOpError() << "'" << grid.getValue()
                           << "' does not name a shard.grid";
  }
  if (failed(verifyPlacement(*this)))
    return failure();
  if (failed(verifyCheckpointWorld(*this, gridOp)))
    return failure();
  if (getCheckpointAttr() && !isExecutable())
    return emitOpError() << "keeps checkpoints, but names no data function "
                            "and optimizer: only an executable pipeline has "
                            "training state";
  if (bool(getDataAttr()) != bool(getOptimizerAttr()))
    return emitOpError() << "names "
                         << (getDataAttr() ? "a data function" : "an optimizer")
                         << " but no "
                         << (getDataAttr() ? "optimizer" : "data function")
                         << "; an executable pipeline names both";

  SmallVector<StageFunctions> functions(getNumStages());
  SmallVector<func::FuncOp> forwards(getNumStages());
  for (auto stage : getBody().getOps<StageOp>()) {
    auto found = lookupStageFunctions(stage, symbolTable);
    if (failed(found))
      return failure();
    functions[stage.getStageId()] = *found;
    forwards[stage.getStageId()] = found->forward;
    if (stage.getParamsAttr() && !isExecutable())
      return stage.emitOpError()
             << "lists parameters, but its pipeline names no data function "
                "and optimizer";
  }
  auto variants = getBody().getOps<StageVariantOp>();
  if (!isExecutable() && !variants.empty())
    return (*variants.begin()).emitOpError()
           << "needs an executable pipeline: its micro-batch size counts "
              "the samples of the data function, and the pipeline names "
              "no data function and optimizer";
  if (isExecutable())
    return verifyStageAbi(*this, functions, symbolTable);
  // Consecutive stages agree on the activation they exchange.
  for (int64_t s = 0; s + 1 < getNumStages(); ++s) {
    FunctionType producer = forwards[s].getFunctionType();
    FunctionType consumer = forwards[s + 1].getFunctionType();
    if (producer.getNumResults() == 0)
      return getStage(s).emitOpError()
             << "forward function '" << forwards[s].getSymName()
             << "' returns nothing, but stage " << s + 1
             << " needs its activation";
    if (consumer.getNumInputs() == 0)
      return getStage(s + 1).emitOpError()
             << "forward function '" << forwards[s + 1].getSymName()
             << "' takes no activation from stage " << s;
    if (producer.getResult(0) != consumer.getInput(0))
      return getStage(s + 1).emitOpError()
             << "takes an activation of type " << consumer.getInput(0)
             << ", but stage " << s << " produces " << producer.getResult(0);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ScheduleOp
//===----------------------------------------------------------------------===//

/// A schedule has one program per rank of its pipeline (per stage when each
/// rank holds one).
static LogicalResult verifyRankCover(ScheduleOp schedule, int64_t ranks,
                                     bool onePerRank) {
  return verifyStageCover<StageProgramOp>(schedule, schedule.getBody(), ranks,
                                          "hetero.stage_program",
                                          onePerRank ? "stage" : "rank");
}

LogicalResult ScheduleOp::verify() {
  if (std::optional<int64_t> count = getMicrobatches())
    return verifyMicrobatchLimit(*this, *count);
  return success();
}

LogicalResult ScheduleOp::verifyRegions() {
  return verifyOnlyContains<StageProgramOp>(*this, getBody(),
                                            "'hetero.stage_program'");
}

LogicalResult StageProgramOp::verifyRegions() {
  for (Operation &op : getBody().getOps())
    if (!isa<TaskOpInterface>(op))
      return emitOpError() << "may only contain tasks (ops of the task "
                              "interface: 'hetero.fwd', 'hetero.bwd', "
                              "'hetero.bwd_input', 'hetero.bwd_weight', "
                              "'hetero.send_task', 'hetero.recv_task'), found '"
                           << op.getName() << "'";
  return success();
}

//===----------------------------------------------------------------------===//
// Tasks
//===----------------------------------------------------------------------===//

/// The stage a task names; -1 when it runs the rank's one stage.
template <typename TaskOp> static int64_t stageOf(TaskOp task) {
  std::optional<int64_t> stage = task.getStage();
  return stage ? *stage : -1;
}

schedule::Action FwdOp::getAction() {
  return {schedule::Action::Forward, getMicrobatch(), -1, stageOf(*this)};
}

schedule::Action BwdOp::getAction() {
  return {schedule::Action::Backward, getMicrobatch(), -1, stageOf(*this)};
}

schedule::Action BwdInputOp::getAction() {
  return {schedule::Action::BackwardInput, getMicrobatch(), -1, stageOf(*this)};
}

schedule::Action BwdWeightOp::getAction() {
  return {schedule::Action::BackwardWeight, getMicrobatch(), -1,
          stageOf(*this)};
}

schedule::Action SendTaskOp::getAction() {
  return {getPayload() == Payload::activation ? schedule::Action::SendActivation
                                              : schedule::Action::SendGradient,
          getMicrobatch(), getPeer(), stageOf(*this)};
}

schedule::Action RecvTaskOp::getAction() {
  return {getPayload() == Payload::activation ? schedule::Action::RecvActivation
                                              : schedule::Action::RecvGradient,
          getMicrobatch(), getPeer(), stageOf(*this)};
}

/// Checks the stage of a task of rank `rank`: one the placement puts there
/// (the rank's one stage when the task names none), and for a transfer a
/// peer on another rank in the direction of the data flow.
static LogicalResult verifyTaskStage(TaskOpInterface task, int64_t rank,
                                     const schedule::Placement &placement) {
  schedule::Action action = task.getAction();
  int64_t numStages = placement.stages();
  std::vector<int64_t> local = placement.stagesOf(rank);
  int64_t stage = action.stage;
  if (stage < 0) {
    if (local.size() != 1)
      return task->emitOpError()
             << "names no stage, but rank " << rank << " holds stages "
             << schedule::formatPlacement(local)
             << "; name one with `stage <s>`";
    stage = local.front();
  } else {
    if (failed(verifyStageInRange(task, "stage", stage, numStages)))
      return failure();
    if (placement.rankOf[stage] != rank)
      return task->emitOpError()
             << "runs stage " << stage << " in the program of rank " << rank
             << ", but the pipeline places stage " << stage << " on rank "
             << placement.rankOf[stage];
  }
  bool isSend = schedule::isSend(action.kind);
  if (!isSend && !schedule::isReceive(action.kind))
    return success();
  bool activation = schedule::carriesActivation(action.kind);
  int64_t peer = action.peer;
  if (failed(verifyStageInRange(task, "peer stage", peer, numStages)))
    return failure();
  // Activations flow to higher stages, gradients to lower ones.
  int64_t downstream = activation ? 1 : -1;
  int64_t expected = isSend ? stage + downstream : stage - downstream;
  if (peer != expected)
    return task->emitOpError()
           << "stage " << stage << " " << (isSend ? "sends" : "receives") << " "
           << (activation ? "activations" : "gradients") << " "
           << (isSend ? "to" : "from") << " stage " << expected
           << ", not stage " << peer;
  if (placement.rankOf[peer] == rank)
    return task->emitOpError()
           << "transfers between stages " << stage << " and " << peer
           << ", which are both on rank " << rank
           << "; neighbouring stages on one rank need no transfer";
  return success();
}

LogicalResult ScheduleOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto pipeline =
      symbolTable.lookupNearestSymbolFrom<PipelineOp>(*this, getPipelineAttr());
  if (!pipeline)
    return emitOpError() << "'" << getPipeline()
                         << "' does not name a hetero.pipeline";
  int64_t numMicrobatches = getMicrobatchCount(pipeline);
  schedule::Placement placement = pipeline.getStagePlacement();
  // A placement the pipeline's verifier rejects is reported there.
  if (!schedule::Placement::check(placement.rankOf, placement.ranks).empty())
    return success();
  if (failed(verifyRankCover(*this, placement.ranks, placement.onePerRank())))
    return failure();

  for (auto program : getBody().getOps<StageProgramOp>()) {
    int64_t rank = program.getStageId();
    for (auto task : program.getBody().getOps<TaskOpInterface>()) {
      int64_t microbatch = task.getMicrobatch();
      if (microbatch >= numMicrobatches)
        return task->emitOpError()
               << "names micro-batch " << microbatch << ", but "
               << (getMicrobatches()
                       ? "the schedule runs "
                       : "pipeline '" + getPipeline().str() + "' has ")
               << numMicrobatches << " micro-batches";
      if (failed(verifyTaskStage(task, rank, placement)))
        return failure();
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// PlanSetOp
//===----------------------------------------------------------------------===//

LogicalResult PlanSetOp::verify() {
  if (getPlans().empty())
    return emitOpError() << "needs at least one plan";
  llvm::SmallDenseSet<Attribute> seen;
  for (Attribute plan : getPlans())
    if (!seen.insert(plan).second)
      return emitOpError() << "lists plan " << cast<FlatSymbolRefAttr>(plan)
                           << " twice";
  if (!seen.contains(getDefaultPlanAttr()))
    return emitOpError() << "default plan " << getDefaultPlanAttr()
                         << " is not one of its plans";
  return success();
}

LogicalResult PlanSetOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  if (!symbolTable.lookupNearestSymbolFrom<PipelineOp>(*this,
                                                       getPipelineAttr()))
    return emitOpError() << "'" << getPipeline()
                         << "' does not name a hetero.pipeline";
  auto pipeline =
      symbolTable.lookupNearestSymbolFrom<PipelineOp>(*this, getPipelineAttr());
  // The first plan that states its micro-batch size, and its samples.
  ScheduleOp sized;
  int64_t samples = 0;
  for (auto plan : getPlans().getAsRange<FlatSymbolRefAttr>()) {
    auto schedule =
        symbolTable.lookupNearestSymbolFrom<ScheduleOp>(*this, plan);
    if (!schedule)
      return emitOpError() << "plan '" << plan.getValue()
                           << "' does not name a hetero.schedule";
    if (schedule.getPipeline() != getPipeline())
      return emitOpError() << "plan '" << plan.getValue()
                           << "' schedules pipeline '" << schedule.getPipeline()
                           << "', not '" << getPipeline() << "'";
    std::optional<int64_t> size = schedule.getMicrobatchSize();
    if (!size)
      continue;
    int64_t covered = *size * schedule.getMicrobatchCount(pipeline);
    if (!sized) {
      sized = schedule;
      samples = covered;
    } else if (covered != samples) {
      return emitOpError() << "plan '" << plan.getValue() << "' covers "
                           << covered << " samples per step, but plan '"
                           << sized.getSymName() << "' covers " << samples;
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Tensor parallelism
//===----------------------------------------------------------------------===//

LogicalResult PrunableMatmulOp::verify() {
  RankedTensorType lhs = getLhs().getType(), rhs = getRhs().getType();
  RankedTensorType result = getResult().getType();
  if (getLayer().empty())
    return emitOpError() << "needs a non-empty layer key";
  if (lhs.getRank() < 2 || rhs.getRank() != 2)
    return emitOpError() << "expects an lhs of rank >= 2 and a rank-2 rhs, "
                            "got "
                         << lhs << " and " << rhs;
  int64_t contraction = lhs.getShape().back();
  if (!ShapedType::isDynamic(contraction) &&
      !ShapedType::isDynamic(rhs.getDimSize(0)) &&
      contraction != rhs.getDimSize(0))
    return emitOpError() << "contraction sizes differ: lhs " << lhs << " has "
                         << contraction << ", rhs " << rhs << " has "
                         << rhs.getDimSize(0);
  SmallVector<int64_t> expected(lhs.getShape().drop_back());
  expected.push_back(rhs.getDimSize(1));
  if (failed(verifyCompatibleShape(result.getShape(), expected)))
    return emitOpError() << "result " << result << " does not match " << lhs
                         << " x " << rhs;
  // The weight's rows K and output columns N as this product holds them.
  int64_t k = rhs.getDimSize(0), n = rhs.getDimSize(1);
  if (getProduct() == MatmulProduct::grad_input)
    std::swap(k, n);
  if (getProduct() == MatmulProduct::grad_weight) {
    if (lhs.getRank() != 2)
      return emitOpError() << "computes a weight gradient, which expects a "
                              "rank-2 lhs (the layer input transposed, "
                              "tokens flattened), got "
                           << lhs;
    k = lhs.getDimSize(0);
  }
  bool byColumns = getMode() == PruneMode::col;
  int64_t sharded = byColumns ? n : k;
  if (!ShapedType::isDynamic(sharded) && sharded % getTp() != 0)
    return emitOpError() << stringifyPruneMode(getMode())
                         << "-mode sharding splits the " << sharded << " "
                         << (byColumns ? "output columns" : "rows")
                         << " of the weight over tp = " << getTp()
                         << " ranks, which does not divide them";
  return success();
}

int64_t PrunableMatmulOp::getPrunedWidth() {
  switch (getProduct()) {
  case MatmulProduct::forward:
    return getLhs().getType().getShape().back();
  case MatmulProduct::grad_input:
    return getRhs().getType().getDimSize(1);
  case MatmulProduct::grad_weight:
    return getLhs().getType().getDimSize(0);
  }
  return ShapedType::kDynamic;
}

LogicalResult PrunePlanOp::verify() {
  int64_t kept = getKept().getType().getDimSize(0);
  if (!ShapedType::isDynamic(kept) && kept > getColumns())
    return emitOpError() << "keeps " << kept << " of only " << getColumns()
                         << " columns";
  return success();
}

LogicalResult ObserveWeightOp::verify() {
  int64_t rows = getWeight().getType().getDimSize(0);
  if (ShapedType::isDynamic(rows))
    return emitOpError() << "observes a weight with a dynamic number of rows; "
                            "expected one static row per contraction column";
  // The runtime keys the statistics by layer and columns: a plan of the
  // layer with another width would never read them.
  Operation *scope =
      (*this)->getParentWithTrait<OpTrait::IsIsolatedFromAbove>();
  if (!scope)
    return success();
  WalkResult result = scope->walk([&](PrunePlanOp plan) {
    if (plan.getLayer() != getLayer() || plan.getColumns() == rows)
      return WalkResult::advance();
    InFlightDiagnostic diag =
        emitOpError() << "observes " << rows << " rows of layer '" << getLayer()
                      << "', whose hetero.prune_plan plans "
                      << plan.getColumns()
                      << " columns; expected one row per column";
    diag.attachNote(plan.getLoc()) << "the plan";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

/// Shared by previous_product and keep_product: the runtime copies the bytes
/// of a gradient product's value.
static LogicalResult verifyKeptProduct(Operation *op, MatmulProduct product,
                                       RankedTensorType type) {
  if (product == MatmulProduct::forward)
    return op->emitOpError()
           << "keeps a forward product; only grad_input and grad_weight are "
              "imputed";
  Type element = type.getElementType();
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 != 0)
    return op->emitOpError()
           << "keeps elements of type " << element
           << "; expected integers or floats of a whole number of bytes";
  return success();
}

LogicalResult PreviousProductOp::verify() {
  return verifyKeptProduct(*this, getProduct(), getResult().getType());
}

LogicalResult KeepProductOp::verify() {
  return verifyKeptProduct(*this, getProduct(), getValue().getType());
}

void PreviousProductOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getResult(), "previous");
}

/// Shared by migration_plan and migrated_columns: a list of `columns`
/// positions of one shard holds at most that many.
static LogicalResult verifyColumnList(Operation *op,
                                      TypedValue<RankedTensorType> list,
                                      int64_t columns, StringRef verb) {
  int64_t count = list.getType().getDimSize(0);
  if (!ShapedType::isDynamic(count) && count > columns)
    return op->emitOpError()
           << verb << " " << count << " of only " << columns << " columns";
  return success();
}

LogicalResult MigrationPlanOp::verify() {
  return verifyColumnList(*this, getReceived(), getColumns(), "receives");
}

LogicalResult MigratedColumnsOp::verify() {
  return verifyColumnList(*this, getMigrated(), getColumns(), "migrates");
}

/// Shared by select_cols and impute_cols: `narrow` holds as many slices along
/// `axis` as there are indices, `wide` at least as many.
static LogicalResult verifyColumnMove(Operation *op, RankedTensorType narrow,
                                      RankedTensorType wide,
                                      TypedValue<RankedTensorType> indices,
                                      int64_t axis) {
  if (failed(verifyAxis(op, "axis", axis, wide)) ||
      failed(verifySameDimsExcept(op, narrow, wide, {axis})))
    return failure();
  int64_t count = indices.getType().getDimSize(0);
  int64_t slices = narrow.getDimSize(axis);
  if (!ShapedType::isDynamic(count) && !ShapedType::isDynamic(slices) &&
      count != slices)
    return op->emitOpError() << "has " << count << " indices but " << slices
                             << " slices along axis " << axis;
  int64_t width = wide.getDimSize(axis);
  if (!ShapedType::isDynamic(width) && !ShapedType::isDynamic(slices) &&
      slices > width)
    return op->emitOpError() << "moves " << slices << " slices along axis "
                             << axis << " of a tensor that has only " << width;
  return success();
}

/// Where a pruned dimension goes through `user`, which takes the pruned
/// value `value` (pruned along `axis`): the result and axis that stay
/// pruned, std::nullopt when the user ends the pruning (restores it,
/// contracts it away, reads only a size), or failure when `user` must not
/// see a pruned value.
static FailureOr<std::optional<std::pair<Value, int64_t>>>
followPruned(Operation *user, Value value, int64_t axis) {
  using Next = std::optional<std::pair<Value, int64_t>>;
  if (isa<tensor::DimOp>(user))
    return Next();
  if (auto impute = dyn_cast<ImputeColsOp>(user)) {
    if (impute.getSource() == value && impute.getAxis() == axis)
      return Next();
    return failure();
  }
  if (auto cast = dyn_cast<tensor::CastOp>(user))
    return Next({cast.getResult(), axis});
  // A migrating shard sends the slices of its kept columns; a receiver
  // takes its block of them. Both stay pruned along the axis.
  if (auto broadcast = dyn_cast<BroadcastOp>(user))
    return Next({broadcast.getResult(), axis});
  if (auto extract = dyn_cast<tensor::ExtractSliceOp>(user)) {
    if (extract.getSource() != value ||
        extract.getResultType().getRank() != extract.getSourceType().getRank())
      return failure();
    return Next({extract.getResult(), axis});
  }
  auto groupOf = [&](ArrayRef<ReassociationIndices> groups,
                     int64_t dim) -> int64_t {
    for (auto [index, group] : llvm::enumerate(groups))
      if (llvm::is_contained(group, dim))
        return int64_t(index);
    return -1;
  };
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(user))
    return Next({collapse.getResult(),
                 groupOf(collapse.getReassociationIndices(), axis)});
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(user)) {
    SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
    if (size_t(axis) >= groups.size() || groups[size_t(axis)].empty())
      return failure();
    return Next({expand.getResult(), groups[size_t(axis)].back()});
  }
  // A matmul contracts lhs's last and rhs's first axis; any other pruned
  // axis stays pruned in the product.
  auto product = [&](Value lhs, Value rhs, Value result) -> FailureOr<Next> {
    auto lhsType = dyn_cast<RankedTensorType>(lhs.getType());
    auto resultType = dyn_cast<RankedTensorType>(result.getType());
    if (!lhsType || !resultType)
      return failure();
    if (value == lhs)
      return axis == lhsType.getRank() - 1 ? Next() : Next({result, axis});
    if (value == rhs)
      return axis == 0 ? Next() : Next({result, resultType.getRank() - 1});
    return failure();
  };
  // Operands read raw: the matmul may not be verified yet.
  if (isa<linalg::MatmulOp>(user) && user->getNumOperands() == 3 &&
      user->getNumResults() == 1 && value != user->getOperand(2))
    return product(user->getOperand(0), user->getOperand(1),
                   user->getResult(0));
  if (auto matmul = dyn_cast<PrunableMatmulOp>(user))
    return product(matmul.getLhs(), matmul.getRhs(), matmul.getResult());
  return failure();
}

LogicalResult SelectColsOp::verify() {
  if (failed(verifyColumnMove(*this, getResult().getType(),
                              getSource().getType(), getIndices(), getAxis())))
    return failure();
  // The consistency constraint of ZERO-resizing: a pruned operand only
  // feeds matmuls, and whatever stays pruned is restored by impute_cols
  // before it reaches anything else (a collective, the optimizer, the next
  // layer, a return).
  SmallVector<std::pair<Value, int64_t>> pending = {{getResult(), getAxis()}};
  llvm::DenseSet<std::pair<Value, int64_t>> seen;
  while (!pending.empty()) {
    auto [value, axis] = pending.pop_back_val();
    auto type = dyn_cast<RankedTensorType>(value.getType());
    // A graph region may reach a value twice; each is followed once.
    if (!seen.insert({value, axis}).second)
      continue;
    for (Operation *user : value.getUsers()) {
      FailureOr<std::optional<std::pair<Value, int64_t>>> next = failure();
      if (type && axis >= 0 && axis < type.getRank())
        next = followPruned(user, value, axis);
      if (failed(next)) {
        InFlightDiagnostic diag =
            emitOpError()
            << "prunes a value that reaches '" << user->getName()
            << "' with its pruned axis " << axis
            << "; a pruned value may only feed a matmul, and what stays "
               "pruned must be restored to its unpruned shape by "
               "hetero.impute_cols first";
        diag.attachNote(user->getLoc()) << "pruned value used here";
        return diag;
      }
      if (*next)
        pending.push_back(**next);
    }
  }
  return success();
}

LogicalResult ImputeColsOp::verify() {
  if (getImputation() == Imputation::average &&
      !isa<FloatType>(getSource().getType().getElementType()))
    return emitOpError() << "imputes averages, which needs floating-point "
                            "elements, got "
                         << getSource().getType().getElementType();
  bool same = getImputation() == Imputation::same;
  if (same && !getPrevious())
    return emitOpError() << "imputes the previous iteration's values (same) "
                            "but has no 'previous' operand; expected the "
                            "result of a hetero.previous_product";
  if (!same && getPrevious())
    return emitOpError() << "has a 'previous' operand but imputes "
                         << stringifyImputation(getImputation())
                         << "; only same imputation reads one";
  return verifyColumnMove(*this, getSource().getType(), getResult().getType(),
                          getIndices(), getAxis());
}

//===----------------------------------------------------------------------===//
// AllReduceOp
//===----------------------------------------------------------------------===//

LogicalResult AllReduceOp::verify() {
  if (failed(
          verifyCompressedReduction(*this, getCompressAttr(), getReduction())))
    return failure();
  if (getSparse() != SparseFormat::dense) {
    if (getCompressAttr() &&
        getCompressAttr().getCompressor() != Compressor::none)
      return emitOpError() << "sparse format '"
                           << stringifySparseFormat(getSparse())
                           << "' cannot be combined with a compressor";
    if (getReduction() != Reduction::sum && getReduction() != Reduction::avg)
      return emitOpError() << "sparse format '"
                           << stringifySparseFormat(getSparse())
                           << "' needs a sum or avg reduction, not "
                           << stringifyReduction(getReduction());
  }
  return success();
}

void hetero::nameResultsAfterOp(Operation *op, OpAsmSetValueNameFn setNameFn) {
  // Naming the first result names a pack of several: %bucket:2.
  if (op->getNumResults() > 0)
    setNameFn(op->getResult(0), op->getName().stripDialect());
}

void PrunePlanOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getKept(), "kept");
}

void MigrationPlanOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getReceived(), "received");
  setNameFn(getMigrates(), "migrates");
}

void MigratedColumnsOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getMigrated(), "migrated");
  setNameFn(getFirst(), "first");
}

void SelectColsOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getResult(), "selected");
}

void ImputeColsOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getResult(), "imputed");
}

shard::GridOp CollectiveOpInterface::getGrid() {
  FlatSymbolRefAttr name = getGridAttr();
  if (!name)
    return {};
  return SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(*this, name);
}

std::optional<int64_t> CollectiveOpInterface::getStaticGroupSize() {
  shard::GridOp grid = getGrid();
  if (!grid)
    return std::nullopt;
  return gridGroupSize(grid.getShape(), getGridAxes());
}

LogicalResult
AllReduceOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyGroupOf(*this, symbolTable);
}

namespace {
/// `compress #hetero.compress<none>` says nothing: drop it.
template <typename OpTy> struct DropNoneCompression : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    CompressAttr compress = op.getCompressAttr();
    if (!compress || compress.getCompressor() != Compressor::none)
      return failure();
    rewriter.modifyOpInPlace(op, [&] { op.removeCompressAttr(); });
    return success();
  }
};

/// A collective over a group of one rank returns its input, unless a
/// compressor would still change the values on their way through.
template <typename OpTy> struct SingleRankCollective : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    if (op->getOperandTypes() != op->getResultTypes())
      return failure();
    auto collective = cast<CollectiveOpInterface>(op.getOperation());
    if (collective.isCompressed() || collective.getStaticGroupSize() != 1)
      return failure();
    rewriter.replaceOp(op, op->getOperands());
    return success();
  }
};

/// A bucket of one tensor is a plain all-reduce.
struct SingleTensorBucket : OpRewritePattern<BucketOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BucketOp bucket,
                                PatternRewriter &rewriter) const override {
    if (bucket.getInputs().size() != 1)
      return failure();
    rewriter.replaceOpWithNewOp<AllReduceOp>(
        bucket, bucket.getInputs()[0], bucket.getGridAttr(),
        bucket.getGridAxes(), bucket.getReduction(), bucket.getCompressAttr());
    return success();
  }
};
} // namespace

void AllReduceOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *context) {
  patterns
      .add<DropNoneCompression<AllReduceOp>, SingleRankCollective<AllReduceOp>>(
          context);
}

//===----------------------------------------------------------------------===//
// AllGatherOp, ReduceScatterOp, AllToAllOp
//===----------------------------------------------------------------------===//

void AllGatherOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *context) {
  patterns.add<SingleRankCollective<AllGatherOp>>(context);
}

void ReduceScatterOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                                  MLIRContext *context) {
  patterns.add<SingleRankCollective<ReduceScatterOp>>(context);
}

void AllToAllOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                             MLIRContext *context) {
  patterns.add<SingleRankCollective<AllToAllOp>>(context);
}

void BroadcastOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *context) {
  patterns.add<SingleRankCollective<BroadcastOp>>(context);
}

void ReduceOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                           MLIRContext *context) {
  patterns.add<SingleRankCollective<ReduceOp>>(context);
}

/// `large` is `small` concatenated `factor` times along `axis`; factor is
/// std::nullopt when it is not statically known.
static LogicalResult verifyConcatenation(Operation *op, RankedTensorType small,
                                         RankedTensorType large, int64_t axis,
                                         std::optional<int64_t> factor) {
  if (failed(verifyAxis(op, "axis", axis, small)) ||
      failed(verifySameDimsExcept(op, small, large, {axis})))
    return failure();
  int64_t part = small.getDimSize(axis), whole = large.getDimSize(axis);
  if (ShapedType::isDynamic(part) || ShapedType::isDynamic(whole))
    return success();
  if (factor && whole != part * *factor)
    return op->emitOpError()
           << "expects dimension " << axis << " to be " << part << " x "
           << *factor << " ranks = " << part * *factor << ", got " << whole;
  if (part == 0 ? whole != 0 : whole % part != 0)
    return op->emitOpError()
           << "dimension " << axis << " of " << large
           << " is not a multiple of the " << part << " of " << small;
  return success();
}

LogicalResult AllGatherOp::verify() {
  return verifyConcatenation(*this, getInput().getType(), getResult().getType(),
                             getAxis(), std::nullopt);
}

LogicalResult
AllGatherOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<std::optional<int64_t>> size = verifyGroupOf(*this, symbolTable);
  if (failed(size))
    return failure();
  return verifyConcatenation(*this, getInput().getType(), getResult().getType(),
                             getAxis(), *size);
}

LogicalResult ReduceScatterOp::verify() {
  if (failed(
          verifyCompressedReduction(*this, getCompressAttr(), getReduction())))
    return failure();
  return verifyConcatenation(*this, getResult().getType(), getInput().getType(),
                             getAxis(), std::nullopt);
}

LogicalResult
ReduceScatterOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<std::optional<int64_t>> size = verifyGroupOf(*this, symbolTable);
  if (failed(size))
    return failure();
  return verifyConcatenation(*this, getResult().getType(), getInput().getType(),
                             getAxis(), *size);
}

/// The result of an all-to-all over `factor` ranks: the split dimension is
/// divided by the group size, the concatenated one multiplied by it.
static LogicalResult verifyAllToAllShapes(AllToAllOp op,
                                          std::optional<int64_t> factor) {
  RankedTensorType input = op.getInput().getType();
  RankedTensorType result = op.getResult().getType();
  int64_t split = op.getSplitAxis(), concat = op.getConcatAxis();
  if (failed(verifyAxis(op, "split_axis", split, input)) ||
      failed(verifyAxis(op, "concat_axis", concat, input)) ||
      failed(verifySameDimsExcept(op, input, result, {split, concat})))
    return failure();
  if (split == concat)
    return verifySameDimsExcept(op, input, result, {});
  int64_t inSplit = input.getDimSize(split),
          outSplit = result.getDimSize(split);
  int64_t inConcat = input.getDimSize(concat);
  int64_t outConcat = result.getDimSize(concat);
  if (llvm::any_of(ArrayRef<int64_t>{inSplit, outSplit, inConcat, outConcat},
                   ShapedType::isDynamic))
    return success();
  if (inConcat == 0 || outConcat % inConcat != 0)
    return op.emitOpError() << "concat_axis size " << outConcat
                            << " is not a multiple of " << inConcat;
  int64_t ranks = outConcat / inConcat;
  if (factor && ranks != *factor)
    return op.emitOpError()
           << "concatenates " << ranks << " slices, but the group has "
           << *factor << " ranks";
  if (inSplit != outSplit * ranks)
    return op.emitOpError()
           << "splits dimension " << split << " of size " << inSplit << " into "
           << ranks << " slices of " << outSplit << ", which do not add up";
  return success();
}

LogicalResult AllToAllOp::verify() {
  return verifyAllToAllShapes(*this, std::nullopt);
}

LogicalResult AllToAllOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<std::optional<int64_t>> size = verifyGroupOf(*this, symbolTable);
  if (failed(size))
    return failure();
  return verifyAllToAllShapes(*this, *size);
}

//===----------------------------------------------------------------------===//
// Rooted and point-to-point collectives
//===----------------------------------------------------------------------===//

LogicalResult BroadcastOp::verify() {
  return verifyRankInGroup(*this, "root", getRoot(), std::nullopt);
}

LogicalResult
BroadcastOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyRankAgainstGroup(*this, "root", getRoot(), symbolTable);
}

LogicalResult ReduceOp::verify() {
  return verifyRankInGroup(*this, "root", getRoot(), std::nullopt);
}

LogicalResult ReduceOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyRankAgainstGroup(*this, "root", getRoot(), symbolTable);
}

LogicalResult SendOp::verify() {
  return verifyRankInGroup(*this, "peer", getPeer(), std::nullopt);
}

LogicalResult SendOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyRankAgainstGroup(*this, "peer", getPeer(), symbolTable);
}

LogicalResult RecvOp::verify() {
  return verifyRankInGroup(*this, "peer", getPeer(), std::nullopt);
}

LogicalResult RecvOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyRankAgainstGroup(*this, "peer", getPeer(), symbolTable);
}

//===----------------------------------------------------------------------===//
// BucketOp
//===----------------------------------------------------------------------===//

LogicalResult BucketOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands, DictionaryAttr,
    OpaqueProperties, RegionRange, SmallVectorImpl<Type> &inferredReturnTypes) {
  llvm::append_range(inferredReturnTypes, operands.getTypes());
  return success();
}

LogicalResult BucketOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "needs at least one gradient";
  Type elementType =
      cast<RankedTensorType>(getInputs()[0].getType()).getElementType();
  for (auto [index, input] : llvm::enumerate(getInputs())) {
    auto type = cast<RankedTensorType>(input.getType());
    if (type.getElementType() != elementType)
      return emitOpError() << "fuses tensors into one buffer, so they need one "
                              "element type: operand "
                           << index << " is " << type << ", operand 0 has "
                           << elementType;
    if (!type.hasStaticShape())
      return emitOpError() << "operand " << index << " (" << type
                           << ") needs a static shape to be fused";
  }
  return verifyCompressedReduction(*this, getCompressAttr(), getReduction());
}

LogicalResult BucketOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyGroupOf(*this, symbolTable);
}

void BucketOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                           MLIRContext *context) {
  patterns.add<DropNoneCompression<BucketOp>, SingleTensorBucket,
               SingleRankCollective<BucketOp>>(context);
}

//===----------------------------------------------------------------------===//
// Fault tolerance
//===----------------------------------------------------------------------===//

int64_t CheckpointOp::getShardBytes() {
  int64_t bytes = 0;
  for (Value tensor : getTensors())
    if (__builtin_add_overflow(bytes, tensorBytes(tensor.getType()), &bytes))
      return std::numeric_limits<int64_t>::max();
  return bytes;
}

LogicalResult CheckpointOp::verify() {
  if (getTensors().empty())
    return emitOpError() << "needs at least one tensor to checkpoint";
  if (getReplicas() > getWorld())
    return emitOpError() << "asks for " << getReplicas()
                         << " replicas, but the world has only " << getWorld()
                         << " machines";
  if (getPlacement() == ReplicaPlacement::group &&
      getWorld() % getReplicas() != 0)
    return emitOpError() << "group placement splits " << getWorld()
                         << " machines into groups of " << getReplicas()
                         << ", which does not divide them; use ring or mixed";
  return success();
}

/// The hetero.checkpoint before `op` in its block, or null.
static CheckpointOp checkpointBefore(Operation *op) {
  for (Operation *before = op->getPrevNode(); before;
       before = before->getPrevNode())
    if (auto checkpoint = dyn_cast<CheckpointOp>(before))
      return checkpoint;
  return {};
}

LogicalResult CkptChunkOp::verify() {
  int64_t size = tensorBytes(getTensor().getType());
  if (getOffset() > size || getBytes() > size - getOffset())
    return emitOpError() << "sends " << getBytes() << " bytes from offset "
                         << getOffset() << " of a tensor of " << size
                         << " bytes";
  CheckpointOp checkpoint = checkpointBefore(*this);
  if (!checkpoint || !llvm::is_contained(checkpoint.getTensors(), getTensor()))
    return emitOpError() << "sends a tensor that no hetero.checkpoint before "
                            "it in the block checkpoints";
  if (getCopy() + 1 >= checkpoint.getReplicas())
    return emitOpError() << "sends remote copy " << getCopy()
                         << ", but its checkpoint keeps "
                         << checkpoint.getReplicas()
                         << " replicas: remote copies 0.."
                         << checkpoint.getReplicas() - 2;
  return success();
}

LogicalResult CkptCommitOp::verify() {
  if (!checkpointBefore(*this))
    return emitOpError()
           << "has no hetero.checkpoint before it in the block to complete";
  for (Operation *after = (*this)->getNextNode(); after;
       after = after->getNextNode()) {
    if (isa<CkptChunkOp>(after))
      return emitOpError() << "comes before a hetero.ckpt_chunk of its "
                              "checkpoint; every chunk is sent before the "
                              "commit";
    if (isa<CheckpointOp>(after))
      break;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// CorpusBatchOp, SampleContextOp, SampleNextOp
//===----------------------------------------------------------------------===//

/// A character-level vocabulary: at least two token ids, at most one per
/// byte value.
static LogicalResult verifyVocabulary(Operation *op, int64_t vocab) {
  if (vocab < 2 || vocab > kMaxVocabulary)
    return op->emitOpError() << "vocab must be between 2 and " << kMaxVocabulary
                             << " (character-level token ids), got " << vocab;
  return success();
}

/// Token ids come as sequences x tokens.
static LogicalResult verifyTokenBatch(Operation *op, RankedTensorType type,
                                      StringRef what) {
  if (type.getRank() != 2 || type.getNumElements() == 0)
    return op->emitOpError()
           << what << " has type " << type
           << ", expected a non-empty 2-D tensor (sequences x tokens)";
  return success();
}

LogicalResult CorpusBatchOp::verify() {
  if (failed(verifyVocabulary(*this, getVocab())))
    return failure();
  return verifyTokenBatch(*this, getInput().getType(), "the batch");
}

LogicalResult SampleContextOp::verify() {
  if (failed(verifyVocabulary(*this, getVocab())))
    return failure();
  return verifyTokenBatch(*this, getContext().getType(), "the context");
}

LogicalResult SampleNextOp::verify() {
  RankedTensorType type = getLogits().getType();
  if (type.getRank() != 2 || !type.getElementType().isF32() ||
      type.getNumElements() == 0)
    return emitOpError() << "logits have type " << type
                         << ", expected a non-empty 2-D tensor of f32 "
                            "(positions x vocabulary)";
  return verifyVocabulary(*this, type.getDimSize(1));
}

//===----------------------------------------------------------------------===//
// GroupSyncOp
//===----------------------------------------------------------------------===//

LogicalResult GroupSyncOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands, DictionaryAttr,
    OpaqueProperties, RegionRange, SmallVectorImpl<Type> &inferredReturnTypes) {
  llvm::append_range(inferredReturnTypes, operands.getTypes());
  return success();
}

LogicalResult GroupSyncOp::verify() {
  if (getParams().empty())
    return emitOpError() << "needs at least one parameter tensor";
  for (auto [index, param] : llvm::enumerate(getParams())) {
    Type element = cast<RankedTensorType>(param.getType()).getElementType();
    if (!element.isF32() && !element.isF64())
      return emitOpError() << "averages f32 or f64 parameters, but parameter "
                           << index << " holds " << element;
    if (!cast<RankedTensorType>(param.getType()).hasStaticShape())
      return emitOpError() << "needs statically shaped parameters, but "
                           << "parameter " << index << " is "
                           << param.getType();
  }
  return success();
}

LogicalResult
GroupSyncOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto grid =
      symbolTable.lookupNearestSymbolFrom<shard::GridOp>(*this, getGridAttr());
  if (!grid)
    return emitOpError() << "'" << getGrid() << "' does not name a shard.grid";
  if (grid.getShape().size() > 2)
    return emitOpError() << "runs on grid '" << getGrid() << "' of "
                         << grid.getShape().size()
                         << " axes; expected (stage) or (stage, replica)";
  return success();
}

#include "hetero/Dialect/HeteroInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "hetero/Dialect/HeteroOps.cpp.inc"
