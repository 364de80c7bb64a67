//===- Transcendental.h - element-wise ops worth computing once -*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// An element-wise map is cheap to compute again where it is read (one pass
// of adds and multiplies), unless its body calls a transcendental function:
// an exp, a log or a tanh costs tens of adds even vectorised. The derivation
// keeps such a map's value as a residual instead of re-computing it in the
// backward, and the CPU pipeline's fusion computes it once instead of once
// per consumer.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_PASSES_TRANSCENDENTAL_H
#define HETERO_PASSES_TRANSCENDENTAL_H

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Operation.h"

namespace hetero {

/// Whether `op`, or an op nested in it, calls a transcendental math
/// function (anything of the math dialect beyond absolute values, signs,
/// roundings, fused multiply-adds and square roots).
inline bool callsTranscendental(mlir::Operation *op) {
  using namespace mlir;
  return op
      ->walk([](Operation *nested) {
        if (isa<math::MathDialect>(nested->getDialect()) &&
            !isa<math::AbsFOp, math::AbsIOp, math::CopySignOp, math::FmaOp,
                 math::SqrtOp, math::RsqrtOp, math::FloorOp, math::CeilOp,
                 math::RoundOp, math::RoundEvenOp, math::TruncOp>(nested))
          return WalkResult::interrupt();
        return WalkResult::advance();
      })
      .wasInterrupted();
}

} // namespace hetero

#endif // HETERO_PASSES_TRANSCENDENTAL_H
