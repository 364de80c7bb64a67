//===- DeriveBackward.cpp - backward functions from stage forwards --------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "Autodiff.h"

#include "hetero/Dialect/Hetero.h"
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

struct HeteroDeriveBackwardPass
    : public hetero::impl::HeteroDeriveBackwardBase<HeteroDeriveBackwardPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (residuals != "recompute" && residuals != "save") {
      module.emitError() << "hetero-derive-backward: unknown residuals '"
                         << residuals << "', expected recompute or save";
      return signalPassFailure();
    }
    // Not yet built: the options are refused rather than ignored.
    if (split || residuals == "save") {
      module.emitError() << "hetero-derive-backward: "
                         << (split ? "split=true" : "residuals=save")
                         << " is not supported yet; derive with split=false "
                            "residuals=recompute";
      return signalPassFailure();
    }
    Differentiator differentiator(module);
    SymbolTable symbols(module);
    // A forward shared by several stages or variants is derived once.
    llvm::DenseMap<Operation *, func::FuncOp> derived;
    WalkResult walked = module.walk([&](PipelineOp pipeline) {
      int64_t last = pipeline.getNumStages() - 1;
      auto derive = [&](Operation *stage, int64_t id, StringRef forwardName,
                        int64_t params) -> FlatSymbolRefAttr {
        auto forward = symbols.lookup<func::FuncOp>(forwardName);
        func::FuncOp &backward = derived[forward];
        if (!backward) {
          // The stage ABI: (input, parameters..., target on the last
          // stage) -> activation or loss; the input's gradient when it is
          // floating-point, then every parameter's.
          GradientRequest request;
          request.loss = id == last;
          FunctionType type = forward.getFunctionType();
          for (unsigned index = 0; index < type.getNumInputs(); ++index) {
            bool wanted =
                index == 0
                    ? isa<FloatType>(getElementTypeOrSelf(type.getInput(0)))
                    : index <= unsigned(params);
            request.wrt.push_back(wanted);
          }
          backward = differentiator.derive(
              forward, (forwardName + "_backward").str(), request);
          if (!backward) {
            stage->emitOpError()
                << "stage " << id << ": cannot derive the backward of '@"
                << forwardName << "'";
            return {};
          }
        }
        return FlatSymbolRefAttr::get(backward.getSymNameAttr());
      };
      llvm::DenseMap<int64_t, int64_t> paramCounts;
      for (auto stage : pipeline.getBody().getOps<StageOp>()) {
        int64_t params = stage.getParamSymbols().size();
        paramCounts[stage.getStageId()] = params;
        if (stage.getBackwardAttr())
          continue;
        FlatSymbolRefAttr backward =
            derive(stage, stage.getStageId(), stage.getForward(), params);
        if (!backward)
          return WalkResult::interrupt();
        stage.setBackwardAttr(backward);
      }
      for (auto variant : pipeline.getBody().getOps<StageVariantOp>()) {
        if (variant.getBackwardAttr())
          continue;
        FlatSymbolRefAttr backward =
            derive(variant, variant.getStageId(), variant.getForward(),
                   paramCounts.lookup(variant.getStageId()));
        if (!backward)
          return WalkResult::interrupt();
        variant.setBackwardAttr(backward);
      }
      return WalkResult::advance();
    });
    if (walked.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
