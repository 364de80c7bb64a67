//===- OptimizerUpdate.cpp - optimizer steps on parameter globals ---------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "OptimizerUpdate.h"

#include "hetero/Dialect/Hetero.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace hetero;

Value hetero::readGlobal(OpBuilder &builder, Location loc,
                         memref::GlobalOp global) {
  MemRefType type = global.getType();
  Value memref =
      memref::GetGlobalOp::create(builder, loc, type, global.getSymName());
  auto tensorType =
      RankedTensorType::get(type.getShape(), type.getElementType());
  return bufferization::ToTensorOp::create(builder, loc, tensorType, memref,
                                           /*restrict=*/builder.getUnitAttr(),
                                           /*writable=*/UnitAttr());
}

/// A linalg.generic over buffers of one shape that reads `inputs` and
/// updates `outputs` in place: `body` takes the input elements, then the
/// outputs' current elements, and returns their new values.
static void updateInPlace(
    OpBuilder &builder, Location loc, ValueRange inputs, ValueRange outputs,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)> body) {
  auto shape = cast<MemRefType>(outputs.front().getType());
  AffineMap identity = builder.getMultiDimIdentityMap(shape.getRank());
  SmallVector<AffineMap> maps(inputs.size() + outputs.size(), identity);
  SmallVector<utils::IteratorType> iterators(shape.getRank(),
                                             utils::IteratorType::parallel);
  linalg::GenericOp::create(
      builder, loc, TypeRange{}, inputs, outputs, maps, iterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange arguments) {
        linalg::YieldOp::create(nested, nestedLoc,
                                body(nested, nestedLoc, arguments));
      });
}

/// The buffer of global `global`.
static Value globalBuffer(OpBuilder &builder, Location loc,
                          memref::GlobalOp global) {
  return memref::GetGlobalOp::create(builder, loc, global.getType(),
                                     global.getSymName());
}

/// A zero-initialised global `name` of `type` at the builder's insertion
/// point, its name made unique in `symbols`.
static memref::GlobalOp createZeroGlobal(OpBuilder &builder, Location loc,
                                         StringRef name, MemRefType type,
                                         SymbolTable &symbols) {
  auto tensorType =
      RankedTensorType::get(type.getShape(), type.getElementType());
  auto global = memref::GlobalOp::create(
      builder, loc, name, builder.getStringAttr("private"), type,
      DenseElementsAttr::get(tensorType,
                             builder.getZeroAttr(type.getElementType())),
      /*constant=*/false, /*alignment=*/IntegerAttr());
  symbols.insert(global, Block::iterator(global.getOperation()));
  return global;
}

memref::GlobalOp hetero::createStateGlobal(memref::GlobalOp param,
                                           StringRef suffix,
                                           SymbolTable &symbols) {
  OpBuilder builder(param.getContext());
  builder.setInsertionPointAfter(param);
  return createZeroGlobal(builder, param.getLoc(),
                          (param.getSymName() + "_" + suffix).str(),
                          param.getType(), symbols);
}

OptimizerUpdate::OptimizerUpdate(Attribute optimizer,
                                 ArrayRef<memref::GlobalOp> params,
                                 StringRef counterPrefix, SymbolTable &symbols,
                                 int64_t varianceReplicas)
    : optimizer(optimizer), varianceReplicas(varianceReplicas) {
  for (memref::GlobalOp param : params)
    for (StringRef suffix : stateSuffixes(optimizer, varianceReplicas))
      state[param].push_back(createStateGlobal(param, suffix, symbols));
  if (isa<AdamAttr>(optimizer) && !params.empty()) {
    memref::GlobalOp first = params.front();
    OpBuilder builder(first);
    steps = createZeroGlobal(
        builder, first.getLoc(), (counterPrefix + "_optimizer_steps").str(),
        MemRefType::get({}, builder.getI64Type()), symbols);
  }
}

SmallVector<StringRef, 3>
OptimizerUpdate::stateSuffixes(Attribute optimizer, int64_t varianceReplicas) {
  SmallVector<StringRef, 3> suffixes;
  if (auto sgd = dyn_cast<SgdAttr>(optimizer); sgd && sgd.getMomentum())
    suffixes.push_back("momentum");
  if (isa<AdamAttr>(optimizer)) {
    suffixes.append({"adam_m", "adam_v"});
    if (varianceReplicas > 0)
      suffixes.push_back("adam_m2");
  }
  return suffixes;
}

ArrayRef<memref::GlobalOp> OptimizerUpdate::stateOf(memref::GlobalOp param) {
  auto found = state.find(param);
  if (found == state.end())
    return {};
  return found->second;
}

void OptimizerUpdate::beginStep(OpBuilder &builder, Location loc) {
  auto adam = dyn_cast<AdamAttr>(optimizer);
  if (!adam || !steps)
    return;
  // t = ++steps; 1 - beta^t in double precision, as PyTorch computes it.
  Value counter = memref::GetGlobalOp::create(builder, loc, steps.getType(),
                                              steps.getSymName());
  Value previous = memref::LoadOp::create(builder, loc, counter);
  Value one =
      arith::ConstantIntOp::create(builder, loc, builder.getI64Type(), 1);
  Value step = arith::AddIOp::create(builder, loc, previous, one);
  memref::StoreOp::create(builder, loc, step, counter);
  Type f64 = builder.getF64Type(), f32 = builder.getF32Type();
  Value t = arith::SIToFPOp::create(builder, loc, f64, step);
  auto correction = [&](double beta) -> Value {
    Value base = arith::ConstantFloatOp::create(
        builder, loc, cast<FloatType>(f64), llvm::APFloat(beta));
    Value power = math::PowFOp::create(builder, loc, base, t);
    Value unit = arith::ConstantFloatOp::create(
        builder, loc, cast<FloatType>(f64), llvm::APFloat(1.0));
    Value difference = arith::SubFOp::create(builder, loc, unit, power);
    return arith::TruncFOp::create(builder, loc, f32, difference);
  };
  correction1 = correction(adam.getBeta1Value());
  correction2 = correction(adam.getBeta2Value());
}

void OptimizerUpdate::update(OpBuilder &builder, Location loc,
                             memref::GlobalOp param, Value gradientSum,
                             double scale) {
  auto element = cast<FloatType>(param.getType().getElementType());
  auto constant = [&](OpBuilder &b, Location l, double value) -> Value {
    return arith::ConstantOp::create(b, l, b.getFloatAttr(element, value));
  };
  // The mean gradient of one element. Here and below, one op per statement:
  // the evaluation order of function arguments, and with it the order of
  // the ops built in them, is unspecified.
  auto mean = [&](OpBuilder &b, Location l, Value sum) -> Value {
    Value factor = constant(b, l, scale);
    return arith::MulFOp::create(b, l, sum, factor);
  };
  auto times = [&](OpBuilder &b, Location l, Value x, double factor) -> Value {
    Value c = constant(b, l, factor);
    return arith::MulFOp::create(b, l, x, c);
  };
  // The parameter and its state are updated in place in their globals.
  Value gradient = bufferization::ToBufferOp::create(
      builder, loc, param.getType(), gradientSum, /*read_only=*/true);
  SmallVector<Value> outputs = {globalBuffer(builder, loc, param)};
  for (memref::GlobalOp global : state.lookup(param))
    outputs.push_back(globalBuffer(builder, loc, global));

  // Below, x[0] is the gradient sum, x[1] the parameter, then the state.
  if (auto sgd = dyn_cast<SgdAttr>(optimizer)) {
    double lr = sgd.getLr().getValueAsDouble();
    if (!sgd.getMomentum()) {
      updateInPlace(
          builder, loc, gradient, outputs,
          [&](OpBuilder &b, Location l, ValueRange x) -> SmallVector<Value> {
            Value step = times(b, l, mean(b, l, x[0]), lr);
            return {arith::SubFOp::create(b, l, x[1], step)};
          });
      return;
    }
    // buf = mu * buf + g (buf starts at zero, so the first step's buf is
    // g, as in PyTorch); w -= lr * buf.
    double momentum = sgd.getMomentum().getValueAsDouble();
    updateInPlace(
        builder, loc, gradient, outputs,
        [&](OpBuilder &b, Location l, ValueRange x) -> SmallVector<Value> {
          Value decayed = times(b, l, x[2], momentum);
          Value g = mean(b, l, x[0]);
          Value next = arith::AddFOp::create(b, l, decayed, g);
          Value step = times(b, l, next, lr);
          return {arith::SubFOp::create(b, l, x[1], step), next};
        });
    return;
  }

  auto adam = cast<AdamAttr>(optimizer);
  double lr = adam.getLr().getValueAsDouble();
  double beta1 = adam.getBeta1Value(), beta2 = adam.getBeta2Value();
  double eps = adam.getEpsValue();
  Value c1 = correction1, c2 = correction2;
  if (!element.isF32()) {
    c1 = arith::ExtFOp::create(builder, loc, element, c1);
    c2 = arith::ExtFOp::create(builder, loc, element, c2);
  }
  updateInPlace(
      builder, loc, gradient, outputs,
      [&](OpBuilder &b, Location l, ValueRange x) -> SmallVector<Value> {
        Value g = mean(b, l, x[0]);
        // m = beta1 m + (1 - beta1) g; v = beta2 v + (1 - beta2) g^2.
        Value keptM = times(b, l, x[2], beta1);
        Value newM = times(b, l, g, 1.0 - beta1);
        Value nextM = arith::AddFOp::create(b, l, keptM, newM);
        Value square = arith::MulFOp::create(b, l, g, g);
        Value keptV = times(b, l, x[3], beta2);
        Value newV = times(b, l, square, 1.0 - beta2);
        Value nextV = arith::AddFOp::create(b, l, keptV, newV);
        SmallVector<Value> results = {Value(), nextM, nextV};
        // The second moment the step divides by: v, or rebuilt from m2.
        Value second = nextV;
        if (varianceReplicas > 0) {
          // m2 = beta2 m2 + (1 - beta2) g; v' = m2^2 + max(v - m2^2, 0) / N.
          Value keptM2 = times(b, l, x[4], beta2);
          Value newM2 = times(b, l, g, 1.0 - beta2);
          Value nextM2 = arith::AddFOp::create(b, l, keptM2, newM2);
          Value mean2 = arith::MulFOp::create(b, l, nextM2, nextM2);
          Value spread = arith::SubFOp::create(b, l, nextV, mean2);
          Value zero = constant(b, l, 0.0);
          Value clamped = arith::MaximumFOp::create(b, l, spread, zero);
          Value shrunk = times(b, l, clamped, 1.0 / double(varianceReplicas));
          second = arith::AddFOp::create(b, l, mean2, shrunk);
          results.push_back(nextM2);
        }
        // w -= lr * (m / c1) / (sqrt(v / c2) + eps).
        Value mHat = arith::DivFOp::create(b, l, nextM, c1);
        Value vHat = arith::DivFOp::create(b, l, second, c2);
        Value root = math::SqrtOp::create(b, l, vHat);
        Value epsilon = constant(b, l, eps);
        Value denominator = arith::AddFOp::create(b, l, root, epsilon);
        Value direction = arith::DivFOp::create(b, l, mHat, denominator);
        Value step = times(b, l, direction, lr);
        results[0] = arith::SubFOp::create(b, l, x[1], step);
        return results;
      });
}
