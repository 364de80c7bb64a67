//===- DeriveBackward.cpp - backward functions from stage forwards --------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "Autodiff.h"

#include "hetero/Dialect/Hetero.h"
#include "hetero/Dialect/Utils.h"
#include "hetero/Passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace hetero {
#define GEN_PASS_DEF_HETERODERIVEBACKWARD
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;
using namespace hetero;

namespace {

/// What the pass sets on a stage: its backward, whole or split, and the
/// augmented forward when the residuals are saved.
struct DerivedStage {
  FlatSymbolRefAttr augmented, backward, backwardInput, backwardWeight;
};

/// What the step keeps from one task for another (residuals, saved
/// values) must be tensors whose bytes are known; `option` is what to
/// derive with instead.
LogicalResult checkHandedOver(func::FuncOp function, TypeRange types,
                              StringRef what, StringRef option) {
  for (Type type : types) {
    if (isStashable(type))
      continue;
    return function.emitError()
           << "hetero-derive-backward: '@" << function.getSymName()
           << "' would hand a " << what << " of type " << type
           << " to the next task, but the step hands over only tensors of "
              "static shape with integer or floating-point elements; derive "
              "with "
           << option;
  }
  return success();
}

struct HeteroDeriveBackwardPass
    : public hetero::impl::HeteroDeriveBackwardBase<HeteroDeriveBackwardPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  /// Derives the functions of a stage whose forward is `forward`;
  /// std::nullopt after a diagnostic.
  std::optional<DerivedStage> deriveStage(Differentiator &differentiator,
                                          BackwardSplitter &splitter,
                                          func::FuncOp forward, bool last,
                                          int64_t params);
};

std::optional<DerivedStage> HeteroDeriveBackwardPass::deriveStage(
    Differentiator &differentiator, BackwardSplitter &splitter,
    func::FuncOp forward, bool last, int64_t params) {
  // The stage ABI: (input, parameters..., target on the last stage) ->
  // activation or loss; the input's gradient when it is floating-point,
  // then every parameter's.
  GradientRequest request;
  request.loss = last;
  FunctionType type = forward.getFunctionType();
  bool inputGradient = type.getNumInputs() > 0 &&
                       isa<FloatType>(getElementTypeOrSelf(type.getInput(0)));
  for (unsigned index = 0; index < type.getNumInputs(); ++index)
    request.wrt.push_back(index == 0 ? inputGradient
                                     : index <= unsigned(params));

  std::string base = forward.getSymName().str();
  std::string name = base + "_backward";
  SmallVector<std::string> names = {name};
  if (residuals == "save")
    names.push_back(base + "_augmented");
  if (split) {
    names.push_back(base + "_backward_input");
    names.push_back(base + "_backward_weight");
  }
  for (const std::string &taken : names)
    if (differentiator.defines(taken)) {
      forward.emitError() << "hetero-derive-backward: cannot name the "
                             "derivative of '@"
                          << base << "' '@" << taken
                          << "': the module already defines it";
      return std::nullopt;
    }

  DerivedStage derived;
  func::FuncOp backward;
  if (residuals == "save") {
    std::optional<Differentiator::AugmentedDerivative> parts =
        differentiator.deriveAugmented(forward, name, base + "_augmented",
                                       request);
    if (!parts)
      return std::nullopt;
    backward = parts->reverse;
    if (failed(checkHandedOver(
            parts->augmented,
            parts->augmented.getResultTypes().drop_front(type.getNumResults()),
            "residual", "residuals=recompute")))
      return std::nullopt;
    derived.augmented =
        FlatSymbolRefAttr::get(parts->augmented.getSymNameAttr());
  } else {
    backward = differentiator.derive(forward, name, request);
    if (!backward)
      return std::nullopt;
  }
  if (!split) {
    derived.backward = FlatSymbolRefAttr::get(backward.getSymNameAttr());
    return derived;
  }
  // The input gradient first, then what the parameter gradients need of
  // it; the weight part takes the forward's inputs and that.
  SmallVector<bool> first(backward.getNumResults(), false);
  if (inputGradient)
    first[0] = true;
  FailureOr<BackwardSplitter::Parts> parts =
      splitter.split(backward, first, base + "_backward_input",
                     base + "_backward_weight", type.getNumInputs());
  if (failed(parts) ||
      failed(checkHandedOver(
          parts->first,
          parts->first.getResultTypes().drop_front(inputGradient ? 1 : 0),
          "saved value", "split=false")))
    return std::nullopt;
  splitter.eraseIfUnused(backward);
  derived.backwardInput = FlatSymbolRefAttr::get(parts->first.getSymNameAttr());
  derived.backwardWeight =
      FlatSymbolRefAttr::get(parts->second.getSymNameAttr());
  return derived;
}

void HeteroDeriveBackwardPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (residuals != "recompute" && residuals != "save") {
    module.emitError() << "hetero-derive-backward: unknown residuals '"
                       << residuals << "', expected recompute or save";
    return signalPassFailure();
  }
  // Saved residuals wait in the stash: keep few, re-compute element-wise
  // maps from them. Re-computed ones live within one backward.
  Differentiator differentiator(module, /*rematerialize=*/residuals == "save");
  BackwardSplitter splitter(module, differentiator.symbolTable());
  SymbolTable symbols(module);
  // A forward shared by several stages or variants is derived once.
  llvm::DenseMap<Operation *, DerivedStage> derived;
  WalkResult walked = module.walk([&](PipelineOp pipeline) {
    int64_t last = pipeline.getNumStages() - 1;
    auto derive = [&](auto stage, int64_t id, int64_t params) -> LogicalResult {
      if (stage.hasBackward())
        return success();
      StringRef forwardName = stage.getForward();
      auto forward = symbols.lookup<func::FuncOp>(forwardName);
      if (derived.try_emplace(forward, DerivedStage()).second) {
        std::optional<DerivedStage> functions =
            deriveStage(differentiator, splitter, forward, id == last, params);
        if (!functions) {
          stage->emitOpError()
              << "stage " << id << ": cannot derive the backward of '@"
              << forwardName << "'";
          return failure();
        }
        derived[forward] = *functions;
      }
      const DerivedStage &functions = derived[forward];
      if (functions.augmented)
        stage.setAugmentedAttr(functions.augmented);
      if (functions.backward)
        stage.setBackwardAttr(functions.backward);
      if (functions.backwardInput) {
        stage.setBackwardInputAttr(functions.backwardInput);
        stage.setBackwardWeightAttr(functions.backwardWeight);
      }
      return success();
    };
    llvm::DenseMap<int64_t, int64_t> paramCounts;
    for (auto stage : pipeline.getBody().getOps<StageOp>()) {
      int64_t params = stage.getParamSymbols().size();
      paramCounts[stage.getStageId()] = params;
      if (failed(derive(stage, stage.getStageId(), params)))
        return WalkResult::interrupt();
    }
    for (auto variant : pipeline.getBody().getOps<StageVariantOp>())
      if (failed(derive(variant, variant.getStageId(),
                        paramCounts.lookup(variant.getStageId()))))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (walked.wasInterrupted())
    return signalPassFailure();
  splitter.eraseUnusedParts();
}

} // namespace
