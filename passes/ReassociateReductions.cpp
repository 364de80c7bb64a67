//===- ReassociateReductions.cpp - reductions the vectoriser may reorder --===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// A linalg reduction lowers to a loop that folds one element after another
// into its accumulator. Floating-point addition is not associative, so
// LLVM's loop vectoriser keeps that order and runs the loop one element at
// a time: a softmax's, a layer norm's or a loss's row sum, a bias gradient's
// column sum. Marked `reassoc`, the combining op may be reordered: the
// vectoriser keeps one partial sum per vector lane and adds the lanes at the
// end, as BLAS and PyTorch's kernels do. Only the ops that carry the
// accumulator from a reduction's output argument to its yield are marked;
// the element-wise part of the body keeps its exact order.
//
//===----------------------------------------------------------------------===//

#include "hetero/Passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace hetero {
#define GEN_PASS_DEF_HETEROREASSOCIATEREDUCTIONS
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;

namespace {

/// Adds `reassoc` to the fast-math flags of every op of `body` that the
/// accumulator `accumulator` reaches on its way to the yield.
void markCombiners(Block &body, BlockArgument accumulator) {
  SmallVector<Value> work{accumulator};
  DenseSet<Operation *> seen;
  while (!work.empty()) {
    Value value = work.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (user->getBlock() != &body || !seen.insert(user).second)
        continue;
      if (auto fastMath = dyn_cast<arith::ArithFastMathInterface>(user))
        fastMath->setAttr(
            fastMath.getFastMathAttrName(),
            arith::FastMathFlagsAttr::get(
                user->getContext(), fastMath.getFastMathFlagsAttr().getValue() |
                                        arith::FastMathFlags::reassoc));
      llvm::append_range(work, user->getResults());
    }
  }
}

struct ReassociateReductions
    : hetero::impl::HeteroReassociateReductionsBase<ReassociateReductions> {
  void runOnOperation() override {
    getOperation().walk([](linalg::LinalgOp op) {
      if (op.getNumReductionLoops() == 0 || op->getNumRegions() != 1 ||
          op->getRegion(0).empty())
        return;
      Block &body = op->getRegion(0).front();
      for (OpOperand &init : op.getDpsInitsMutable())
        if (op.payloadUsesValueFromOperand(&init))
          markCombiners(body, op.getMatchingBlockArgument(&init));
    });
  }
};

} // namespace
