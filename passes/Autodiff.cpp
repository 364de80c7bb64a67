//===- Autodiff.cpp - reverse-mode differentiation of tensor functions ----===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "Autodiff.h"
#include "Transcendental.h"

#include "hetero/Dialect/Hetero.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"

#include <cmath>

using namespace mlir;
using namespace hetero;

namespace {

bool isFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<FloatType>(tensor.getElementType());
}

/// A floating-point value that can carry a gradient: a float tensor or a
/// float scalar.
bool isDifferentiable(Type type) {
  return isa<FloatType>(type) || isFloatTensor(type);
}

/// True when `value` is computed from `root` inside one block.
bool dependsOn(Value value, Value root) {
  SmallVector<Value> worklist = {value};
  DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    if (current == root)
      return true;
    if (!seen.insert(current).second)
      continue;
    if (Operation *op = current.getDefiningOp())
      if (op->getBlock() == root.getParentBlock())
        llvm::append_range(worklist, op->getOperands());
  }
  return false;
}

/// The values `op` and the ops nested in it read (a linalg body reads
/// values from around its op too).
static SmallVector<Value> nestedOperands(Operation *op) {
  SmallVector<Value> values;
  op->walk([&](Operation *nested) {
    llvm::append_range(values, nested->getOperands());
  });
  return values;
}

/// The loop order (new position -> loop) that puts a generic's parallel
/// loops first, keeping their order and the reductions', when a reduction
/// comes between parallel loops; empty when the order stays (a reduction
/// only after, or only before, the parallel loops: a column sum's outer
/// reduction keeps its contiguous inner loop).
static SmallVector<int64_t>
parallelLoopsFirst(ArrayRef<utils::IteratorType> iterators) {
  auto isParallel = [](utils::IteratorType type) {
    return type == utils::IteratorType::parallel;
  };
  const auto *firstReduction = llvm::find_if_not(iterators, isParallel);
  if (firstReduction == iterators.begin() ||
      std::none_of(firstReduction, iterators.end(), isParallel))
    return {};
  SmallVector<int64_t> order;
  for (unsigned loop = 0; loop < iterators.size(); ++loop)
    if (isParallel(iterators[loop]))
      order.push_back(loop);
  for (unsigned loop = 0; loop < iterators.size(); ++loop)
    if (!isParallel(iterators[loop]))
      order.push_back(loop);
  return order;
}

/// True when `map`, over the loops it uses with the static `ranges`,
/// sends no two iterations to one element. Boxes of more than 2^22 points
/// are not enumerated (false: the adjoint then reduces, which is right and
/// slower).
bool isInjectiveOnLoops(AffineMap map, ArrayRef<int64_t> ranges,
                        ArrayRef<int64_t> shape) {
  if (map.getNumSymbols() != 0)
    return false;
  SmallVector<unsigned> dims;
  int64_t points = 1;
  for (unsigned dim = 0; dim < map.getNumDims(); ++dim)
    if (map.isFunctionOfDim(dim)) {
      dims.push_back(dim);
      points *= ranges[dim];
      if (points > (int64_t(1) << 22))
        return false;
    }
  std::vector<bool> seen(size_t(ShapedType::getNumElements(shape)), false);
  SmallVector<int64_t> point(map.getNumDims(), 0);
  for (int64_t index = 0; index < points; ++index) {
    int64_t rest = index;
    for (unsigned dim : dims) {
      point[dim] = rest % ranges[dim];
      rest /= ranges[dim];
    }
    // The element's position in the row-major operand.
    int64_t linear = 0;
    for (auto [result, size] : llvm::zip(map.getResults(), shape)) {
      int64_t coordinate = evaluateAffine(result, point);
      if (coordinate < 0 || coordinate >= size)
        return false;
      linear = linear * size + coordinate;
    }
    if (seen[size_t(linear)])
      return false;
    seen[size_t(linear)] = true;
  }
  return true;
}

/// A derivative inside a scalar body: zero, one, or a value.
struct Tangent {
  Value value;
  bool one = false;
  bool isZero() const { return !value && !one; }
  static Tangent unit() { return {Value(), true}; }
};

/// Forward-mode differentiation of a linalg body's scalar ops, with
/// respect to one of its block arguments; the tangents of zero and one are
/// kept symbolic, so that a product's adjoint body is again a product.
class ScalarTangents {
public:
  ScalarTangents(OpBuilder &builder, Location loc)
      : builder(builder), loc(loc) {}

  void seed(Value value) { tangents[value] = Tangent::unit(); }
  Tangent of(Value value) const { return tangents.lookup(value); }

  /// Sets the tangents of `original`'s results, computed on `clone` (the
  /// same op with operands mapped). Failure names what is missing.
  LogicalResult propagate(Operation *original, Operation *clone,
                          std::string &why);

  Value constant(Type type, double value) {
    return arith::ConstantOp::create(builder, loc,
                                     builder.getFloatAttr(type, value));
  }
  Value materialize(Tangent tangent, Type type) {
    if (tangent.one)
      return constant(type, 1.0);
    return tangent.value ? tangent.value : constant(type, 0.0);
  }

private:
  Tangent add(Tangent a, Tangent b, Type type) {
    if (a.isZero())
      return b;
    if (b.isZero())
      return a;
    return {arith::AddFOp::create(builder, loc, materialize(a, type),
                                  materialize(b, type)),
            false};
  }
  Tangent negate(Tangent a, Type type) {
    if (a.isZero())
      return a;
    return {arith::NegFOp::create(builder, loc, materialize(a, type)), false};
  }
  /// a * factor.
  Tangent scale(Tangent a, Value factor) {
    if (a.isZero())
      return a;
    if (a.one)
      return {factor, false};
    return {arith::MulFOp::create(builder, loc, a.value, factor), false};
  }
  /// a / divisor.
  Tangent divide(Tangent a, Value divisor) {
    if (a.isZero())
      return a;
    return {arith::DivFOp::create(builder, loc,
                                  materialize(a, divisor.getType()), divisor),
            false};
  }
  Tangent choose(Value condition, Tangent a, Tangent b, Type type) {
    if (a.isZero() && b.isZero())
      return a;
    return {arith::SelectOp::create(builder, loc, condition,
                                    materialize(a, type), materialize(b, type)),
            false};
  }

  OpBuilder &builder;
  Location loc;
  DenseMap<Value, Tangent> tangents;
};

LogicalResult ScalarTangents::propagate(Operation *original, Operation *clone,
                                        std::string &why) {
  auto tangentOf = [&](unsigned index) {
    return of(original->getOperand(index));
  };
  bool anyTangent = llvm::any_of(original->getOperands(), [&](Value operand) {
    return !of(operand).isZero();
  });
  if (!anyTangent || clone->getNumResults() != 1 ||
      !isa<FloatType>(clone->getResult(0).getType()))
    return success();
  Value result = clone->getResult(0);
  Type type = result.getType();
  auto operand = [&](unsigned index) { return clone->getOperand(index); };
  Tangent tangent;
  if (isa<arith::AddFOp>(clone)) {
    tangent = add(tangentOf(0), tangentOf(1), type);
  } else if (isa<arith::SubFOp>(clone)) {
    tangent = add(tangentOf(0), negate(tangentOf(1), type), type);
  } else if (isa<arith::MulFOp>(clone)) {
    tangent = add(scale(tangentOf(0), operand(1)),
                  scale(tangentOf(1), operand(0)), type);
  } else if (isa<arith::DivFOp>(clone)) {
    // d(a / b) = da / b - db * (a / b) / b.
    Tangent db = tangentOf(1);
    Tangent second;
    if (!db.isZero())
      second = negate(
          scale(db, arith::DivFOp::create(builder, loc, result, operand(1))),
          type);
    tangent = add(divide(tangentOf(0), operand(1)), second, type);
  } else if (isa<arith::NegFOp>(clone)) {
    tangent = negate(tangentOf(0), type);
  } else if (isa<arith::MaximumFOp, arith::MaxNumFOp>(clone)) {
    Value first = arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::OGE,
                                        operand(0), operand(1));
    tangent = choose(first, tangentOf(0), tangentOf(1), type);
  } else if (isa<arith::MinimumFOp, arith::MinNumFOp>(clone)) {
    Value first = arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::OLE,
                                        operand(0), operand(1));
    tangent = choose(first, tangentOf(0), tangentOf(1), type);
  } else if (isa<arith::SelectOp>(clone)) {
    tangent = choose(operand(0), tangentOf(1), tangentOf(2), type);
  } else if (isa<arith::ExtFOp, arith::TruncFOp>(clone)) {
    Tangent source = tangentOf(0);
    if (source.one)
      tangent = Tangent::unit();
    else if (!source.isZero())
      tangent = {
          clone->getName().getStringRef() == "arith.extf"
              ? Value(arith::ExtFOp::create(builder, loc, type, source.value))
              : Value(
                    arith::TruncFOp::create(builder, loc, type, source.value)),
          false};
  } else if (isa<math::ExpOp>(clone)) {
    tangent = scale(tangentOf(0), result);
  } else if (isa<math::LogOp>(clone)) {
    tangent = divide(tangentOf(0), operand(0));
  } else if (isa<math::TanhOp>(clone)) {
    // 1 - tanh^2.
    Value square = arith::MulFOp::create(builder, loc, result, result);
    tangent =
        scale(tangentOf(0),
              arith::SubFOp::create(builder, loc, constant(type, 1.0), square));
  } else if (isa<math::SqrtOp>(clone)) {
    tangent = divide(
        tangentOf(0),
        arith::MulFOp::create(builder, loc, constant(type, 2.0), result));
  } else if (isa<math::RsqrtOp>(clone)) {
    // d rsqrt(a) = -rsqrt(a) / (2 a).
    Value twice =
        arith::MulFOp::create(builder, loc, constant(type, 2.0), operand(0));
    Value factor = arith::NegFOp::create(
        builder, loc, arith::DivFOp::create(builder, loc, result, twice));
    tangent = scale(tangentOf(0), factor);
  } else if (isa<math::ErfOp>(clone)) {
    // 2 / sqrt(pi) exp(-a^2).
    Value square = arith::MulFOp::create(builder, loc, operand(0), operand(0));
    Value gauss = math::ExpOp::create(
        builder, loc, arith::NegFOp::create(builder, loc, square));
    tangent =
        scale(tangentOf(0),
              arith::MulFOp::create(
                  builder, loc, constant(type, 2.0 / std::sqrt(M_PI)), gauss));
  } else if (isa<math::PowFOp>(clone)) {
    if (!tangentOf(1).isZero()) {
      why = "its exponent is not a constant";
      return failure();
    }
    // c a^(c - 1).
    Value lower =
        arith::SubFOp::create(builder, loc, operand(1), constant(type, 1.0));
    Value power = math::PowFOp::create(builder, loc, operand(0), lower);
    tangent = scale(tangentOf(0),
                    arith::MulFOp::create(builder, loc, operand(1), power));
  } else if (isa<math::AbsFOp>(clone)) {
    Value positive =
        arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::OGE,
                              operand(0), constant(type, 0.0));
    Tangent a = tangentOf(0);
    tangent = choose(positive, a, negate(a, type), type);
  } else {
    why = "it has no derivative rule";
    return failure();
  }
  tangents[original->getResult(0)] = tangent;
  return success();
}

} // namespace

namespace hetero {

int64_t evaluateAffine(AffineExpr expr, ArrayRef<int64_t> point) {
  if (auto dim = dyn_cast<AffineDimExpr>(expr))
    return point[dim.getPosition()];
  if (auto constant = dyn_cast<AffineConstantExpr>(expr))
    return constant.getValue();
  auto binary = cast<AffineBinaryOpExpr>(expr);
  int64_t lhs = evaluateAffine(binary.getLHS(), point);
  int64_t rhs = evaluateAffine(binary.getRHS(), point);
  switch (expr.getKind()) {
  case AffineExprKind::Add:
    return lhs + rhs;
  case AffineExprKind::Mul:
    return lhs * rhs;
  case AffineExprKind::FloorDiv:
    return llvm::divideFloorSigned(lhs, rhs);
  case AffineExprKind::CeilDiv:
    return llvm::divideCeilSigned(lhs, rhs);
  case AffineExprKind::Mod:
    return llvm::mod(lhs, rhs);
  default:
    return 0;
  }
}

/// The derivation of one function: the primal values re-computed, then
/// the adjoints accumulated in reverse.
class FunctionDerivation {
public:
  FunctionDerivation(Differentiator &parent, func::FuncOp forward,
                     const GradientRequest &request)
      : parent(parent), forward(forward), request(request),
        builder(forward.getContext()), loc(forward.getLoc()) {}

  func::FuncOp run(StringRef name, bool isPrivate);

  /// After run: the re-computed forward's results and the last op of the
  /// re-computation (null when it is empty).
  SmallVector<Value> primalResults;
  Operation *lastPrimal = nullptr;

private:
  /// Reports that `op` cannot be differentiated and why, under the name
  /// the forward gave it (a generalised op's named one).
  LogicalResult fail(Operation *op, const Twine &why) {
    auto named = originalNames.find(op);
    StringRef name = named != originalNames.end()
                         ? named->second
                         : op->getName().getStringRef();
    return op->emitError() << "hetero-derive-backward: cannot differentiate '"
                           << name << "' in function '@" << forward.getSymName()
                           << "': " << why;
  }

  LogicalResult normalise(func::FuncOp primal);
  void analyseActivity(Block &block);
  Value primal(Value value) { return primalMap.lookup(value); }
  Value empty(RankedTensorType type);
  Value zeros(RankedTensorType type);
  /// A linalg.generic over `type`'s elements reading `ins` element for
  /// element, its body from `body`.
  Value elementwise(RankedTensorType type, ValueRange ins,
                    function_ref<void(OpBuilder &, Location, ValueRange)> body);
  Value elementwiseAdd(Value a, Value b);
  void accumulate(Value value, Value gradient);
  SmallVector<OpFoldResult> remap(ArrayRef<OpFoldResult> values);

  LogicalResult adjoint(Operation *op);
  LogicalResult adjointGeneric(linalg::GenericOp op);
  LogicalResult adjointPrunable(PrunableMatmulOp op);
  LogicalResult adjointCall(func::CallOp call);
  LogicalResult adjointScalar(Operation *op);

  Differentiator &parent;
  func::FuncOp forward;
  const GradientRequest &request;
  OpBuilder builder;
  Location loc;
  /// Values of the normalised forward -> their re-computation.
  IRMapping primalMap;
  /// Values of the normalised forward -> their accumulated adjoint.
  DenseMap<Value, Value> adjoints;
  DenseSet<Value> active;
  /// Generalised ops -> the name of the named op they were.
  DenseMap<Operation *, std::string> originalNames;
  /// A call re-computed through its callee's augmented forward: the
  /// callee's reverse part and the residuals the augmented call returned.
  struct RecomputedCall {
    func::FuncOp reverse;
    SmallVector<Value> residuals;
  };
  DenseMap<Operation *, RecomputedCall> recomputedCalls;
};

} // namespace hetero

Value FunctionDerivation::empty(RankedTensorType type) {
  return tensor::EmptyOp::create(builder, loc, type.getShape(),
                                 type.getElementType());
}

Value FunctionDerivation::zeros(RankedTensorType type) {
  Value zero = arith::ConstantOp::create(
      builder, loc, builder.getFloatAttr(type.getElementType(), 0.0));
  return linalg::FillOp::create(builder, loc, ValueRange{zero},
                                ValueRange{empty(type)})
      .getResult(0);
}

Value FunctionDerivation::elementwise(
    RankedTensorType type, ValueRange ins,
    function_ref<void(OpBuilder &, Location, ValueRange)> body) {
  AffineMap identity = builder.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             builder, loc, TypeRange{type}, ins, ValueRange{empty(type)},
             SmallVector<AffineMap>(ins.size() + 1, identity), iterators, body)
      .getResult(0);
}

Value FunctionDerivation::elementwiseAdd(Value a, Value b) {
  return elementwise(
      cast<RankedTensorType>(a.getType()), {a, b},
      [](OpBuilder &b, Location l, ValueRange args) {
        linalg::YieldOp::create(
            b, l, Value(arith::AddFOp::create(b, l, args[0], args[1])));
      });
}

/// The static boxes (offsets and sizes) that `value`, a chain of unit-stride
/// insert_slices of static extent into a fill of zeros, writes; false when
/// it is not one.
static bool zeroPaddedBoxes(
    Value value,
    SmallVectorImpl<std::pair<ArrayRef<int64_t>, ArrayRef<int64_t>>> &boxes) {
  while (auto insert = value.getDefiningOp<tensor::InsertSliceOp>()) {
    if (!insert.hasUnitStride() ||
        ShapedType::isDynamicShape(insert.getStaticOffsets()) ||
        ShapedType::isDynamicShape(insert.getStaticSizes()))
      return false;
    boxes.push_back({insert.getStaticOffsets(), insert.getStaticSizes()});
    value = insert.getDest();
  }
  auto fill = value.getDefiningOp<linalg::FillOp>();
  return fill && matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
}

/// Whether two boxes of the same rank share no element.
static bool disjoint(std::pair<ArrayRef<int64_t>, ArrayRef<int64_t>> a,
                     std::pair<ArrayRef<int64_t>, ArrayRef<int64_t>> b) {
  for (auto [aOffset, aSize, bOffset, bSize] :
       llvm::zip_equal(a.first, a.second, b.first, b.second))
    if (aOffset + aSize <= bOffset || bOffset + bSize <= aOffset)
      return true;
  return false;
}

void FunctionDerivation::accumulate(Value value, Value gradient) {
  if (!active.contains(value))
    return;
  Value &slot = adjoints[value];
  if (!slot) {
    slot = gradient;
    return;
  }
  if (isa<FloatType>(gradient.getType())) {
    slot = arith::AddFOp::create(builder, loc, slot, gradient);
    return;
  }
  // Parts written into zeros at places that do not overlap (the gradients
  // of a concatenation's or a split's pieces) add up by writing one into
  // the other: no sum, and no second tensor of zeros.
  SmallVector<std::pair<ArrayRef<int64_t>, ArrayRef<int64_t>>> slotBoxes,
      gradientBoxes;
  auto part = gradient.getDefiningOp<tensor::InsertSliceOp>();
  if (part && zeroPaddedBoxes(gradient, gradientBoxes) &&
      gradientBoxes.size() == 1 && zeroPaddedBoxes(slot, slotBoxes) &&
      llvm::all_of(slotBoxes, [&](auto box) {
        return disjoint(box, gradientBoxes.front());
      })) {
    // The gradient's own insert and zeros are left to the clean-up of
    // dead ops (simplifyDerivative).
    slot = tensor::InsertSliceOp::create(
        builder, loc, part.getSource(), slot, part.getMixedOffsets(),
        part.getMixedSizes(), part.getMixedStrides());
    return;
  }
  slot = elementwiseAdd(slot, gradient);
}

SmallVector<OpFoldResult>
FunctionDerivation::remap(ArrayRef<OpFoldResult> values) {
  SmallVector<OpFoldResult> mapped;
  for (OpFoldResult value : values)
    mapped.push_back(
        isa<Value>(value) ? OpFoldResult(primal(cast<Value>(value))) : value);
  return mapped;
}

/// Named linalg ops become linalg.generic and linalg.softmax its
/// decomposition, so that one rule covers them.
LogicalResult FunctionDerivation::normalise(func::FuncOp primal) {
  IRRewriter rewriter(primal.getContext());
  SmallVector<linalg::SoftmaxOp> softmaxes;
  primal.walk([&](linalg::SoftmaxOp op) { softmaxes.push_back(op); });
  for (linalg::SoftmaxOp op : softmaxes) {
    rewriter.setInsertionPoint(op);
    FailureOr<SmallVector<Value>> parts =
        cast<linalg::AggregatedOpInterface>(op.getOperation())
            .decomposeOperation(rewriter);
    if (failed(parts))
      return fail(op, "its decomposition failed");
    rewriter.replaceOp(op, *parts);
  }
  SmallVector<linalg::LinalgOp> named;
  // Fills stay: their value carries no gradient, and the products' passes
  // read a zero fill before a product as beta = 0.
  primal.walk([&](linalg::LinalgOp op) {
    if (!isa<linalg::GenericOp, linalg::FillOp>(op))
      named.push_back(op);
  });
  for (linalg::LinalgOp op : named) {
    rewriter.setInsertionPoint(op);
    std::string name = op->getName().getStringRef().str();
    FailureOr<linalg::GenericOp> generic =
        linalg::generalizeNamedOp(rewriter, op);
    if (failed(generic))
      return fail(op, "it cannot be written as a linalg.generic");
    originalNames[*generic] = name;
  }
  return success();
}

/// Active values: computed from a differentiated argument (varied) and
/// reaching a differentiated result (useful).
void FunctionDerivation::analyseActivity(Block &block) {
  DenseSet<Value> varied;
  for (auto [index, argument] : llvm::enumerate(block.getArguments()))
    if (index < request.wrt.size() && request.wrt[index])
      varied.insert(argument);
  for (Operation &op : block.without_terminator())
    if (llvm::any_of(nestedOperands(&op),
                     [&](Value v) { return varied.contains(v); }))
      for (Value result : op.getResults())
        if (isDifferentiable(result.getType()))
          varied.insert(result);
  DenseSet<Value> useful;
  for (Value result : block.getTerminator()->getOperands())
    if (isDifferentiable(result.getType()))
      useful.insert(result);
  for (Operation &op : llvm::reverse(block.without_terminator()))
    if (llvm::any_of(op.getResults(),
                     [&](Value v) { return useful.contains(v); }))
      for (Value operand : nestedOperands(&op))
        if (isDifferentiable(operand.getType()))
          useful.insert(operand);
  for (Value value : varied)
    if (useful.contains(value))
      active.insert(value);
}

func::FuncOp FunctionDerivation::run(StringRef name, bool isPrivate) {
  if (forward.isExternal() || !forward.getBody().hasOneBlock()) {
    forward.emitError() << "hetero-derive-backward: cannot differentiate "
                           "function '@"
                        << forward.getSymName()
                        << "': it needs a body of one block";
    return {};
  }
  FunctionType type = forward.getFunctionType();
  for (auto [index, wanted] : llvm::enumerate(request.wrt))
    if (wanted && !isFloatTensor(type.getInput(index))) {
      forward.emitError() << "hetero-derive-backward: argument " << index
                          << " of function '@" << forward.getSymName()
                          << "' has type " << type.getInput(index)
                          << ", expected a floating-point tensor to "
                             "differentiate";
      return {};
    }
  if (request.loss &&
      (type.getNumResults() != 1 ||
       type.getResult(0) !=
           RankedTensorType::get({}, Float32Type::get(forward.getContext())))) {
    forward.emitError() << "hetero-derive-backward: function '@"
                        << forward.getSymName()
                        << "' must return one loss of type tensor<f32>";
    return {};
  }

  // The forward with named ops generalised, outside the module.
  func::FuncOp normalised = forward.clone();
  llvm::scope_exit cleanup([&] { normalised.erase(); });
  if (failed(normalise(normalised)))
    return {};
  Block &block = normalised.front();
  analyseActivity(block);

  // The derived function's signature.
  SmallVector<Type> inputs(type.getInputs());
  if (!request.loss)
    for (Type result : type.getResults())
      if (isFloatTensor(result))
        inputs.push_back(result);
  SmallVector<Type> results;
  for (auto [index, wanted] : llvm::enumerate(request.wrt))
    if (wanted)
      results.push_back(type.getInput(index));
  builder.setInsertionPointAfter(forward);
  auto derived = func::FuncOp::create(builder, forward.getLoc(), name,
                                      builder.getFunctionType(inputs, results));
  if (isPrivate)
    derived.setPrivate();
  Block *entry = derived.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  for (auto [argument, input] :
       llvm::zip(block.getArguments(), entry->getArguments()))
    primalMap.map(argument, input);
  // The primal values: the forward, re-computed. A differentiated call runs
  // its callee's augmented forward, which keeps the callee's residuals.
  for (Operation &op : block.without_terminator()) {
    auto call = dyn_cast<func::CallOp>(op);
    auto callee = call ? parent.symbols.lookup<func::FuncOp>(call.getCallee())
                       : func::FuncOp();
    bool differentiated =
        callee && !callee.isExternal() && callee.isPrivate() &&
        llvm::any_of(call->getResults(),
                     [&](Value v) { return active.contains(v); });
    if (!differentiated) {
      lastPrimal = builder.clone(op, primalMap);
      continue;
    }
    const Differentiator::AugmentedDerivative *derivative =
        parent.calleeDerivative(callee);
    if (!derivative) {
      derived.erase();
      return {};
    }
    SmallVector<Value> operands;
    for (Value operand : call.getOperands())
      operands.push_back(primal(operand));
    auto augmented =
        func::CallOp::create(builder, loc, derivative->augmented, operands);
    lastPrimal = augmented;
    unsigned results = call->getNumResults();
    for (unsigned i = 0; i < results; ++i)
      primalMap.map(call->getResult(i), augmented.getResult(i));
    recomputedCalls[call] = {
        derivative->reverse,
        llvm::to_vector_of<Value>(augmented.getResults().drop_front(results))};
  }
  for (Value result : block.getTerminator()->getOperands())
    primalResults.push_back(primal(result));

  // The results' adjoints: the given gradients, or 1 for the loss.
  Operation *terminator = block.getTerminator();
  unsigned next = type.getNumInputs();
  for (Value result : terminator->getOperands()) {
    if (!isFloatTensor(result.getType()))
      continue;
    Value seed;
    if (request.loss)
      seed = arith::ConstantOp::create(
          builder, loc,
          DenseElementsAttr::get(cast<RankedTensorType>(result.getType()),
                                 builder.getF32FloatAttr(1.0f)));
    else
      seed = entry->getArgument(next++);
    accumulate(result, seed);
  }

  for (Operation &op : llvm::reverse(block.without_terminator())) {
    if (llvm::none_of(op.getResults(),
                      [&](Value v) { return adjoints.count(v); }))
      continue;
    if (failed(adjoint(&op))) {
      derived.erase();
      return {};
    }
  }

  SmallVector<Value> gradients;
  for (auto [index, wanted] : llvm::enumerate(request.wrt)) {
    if (!wanted)
      continue;
    Value argument = block.getArgument(index);
    Value gradient = adjoints.lookup(argument);
    gradients.push_back(
        gradient ? gradient
                 : zeros(cast<RankedTensorType>(argument.getType())));
  }
  func::ReturnOp::create(builder, loc, gradients);
  return derived;
}

void hetero::simplifyDerivative(func::FuncOp function) {
  RewritePatternSet patterns(function.getContext());
  linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
  (void)applyPatternsGreedily(function, std::move(patterns));
}

LogicalResult FunctionDerivation::adjoint(Operation *op) {
  if (auto generic = dyn_cast<linalg::GenericOp>(op))
    return adjointGeneric(generic);
  if (auto prunable = dyn_cast<PrunableMatmulOp>(op))
    return adjointPrunable(prunable);
  if (auto call = dyn_cast<func::CallOp>(op))
    return adjointCall(call);
  if (isa<linalg::FillOp>(op))
    return fail(op, "it fills with a value that carries a gradient; "
                    "broadcast a tensor instead");
  if (op->getNumRegions() == 0 && op->getNumResults() == 1 &&
      isa<FloatType>(op->getResult(0).getType()) &&
      isa<arith::ArithDialect, math::MathDialect>(op->getDialect()))
    return adjointScalar(op);
  Value dy =
      op->getNumResults() == 1 ? adjoints.lookup(op->getResult(0)) : Value();
  if (!dy)
    return fail(op, "it has no derivative rule");
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    Value source = slice.getSource();
    Value grad = tensor::InsertSliceOp::create(
        builder, loc, dy, zeros(slice.getSourceType()),
        remap(slice.getMixedOffsets()), remap(slice.getMixedSizes()),
        remap(slice.getMixedStrides()));
    accumulate(source, grad);
    return success();
  }
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
    auto sourceType = cast<RankedTensorType>(insert.getSourceType());
    SmallVector<OpFoldResult> offsets = remap(insert.getMixedOffsets());
    SmallVector<OpFoldResult> sizes = remap(insert.getMixedSizes());
    SmallVector<OpFoldResult> strides = remap(insert.getMixedStrides());
    if (active.contains(insert.getSource()))
      accumulate(insert.getSource(),
                 tensor::ExtractSliceOp::create(builder, loc, sourceType, dy,
                                                offsets, sizes, strides));
    if (active.contains(insert.getDest()))
      accumulate(insert.getDest(),
                 tensor::InsertSliceOp::create(builder, loc, zeros(sourceType),
                                               dy, offsets, sizes, strides));
    return success();
  }
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    accumulate(expand.getSrc(), tensor::CollapseShapeOp::create(
                                    builder, loc, expand.getSrcType(), dy,
                                    expand.getReassociationIndices()));
    return success();
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    if (!collapse.getSrcType().hasStaticShape())
      return fail(op, "its source has a dynamic shape");
    accumulate(collapse.getSrc(), tensor::ExpandShapeOp::create(
                                      builder, loc, collapse.getSrcType(), dy,
                                      collapse.getReassociationIndices()));
    return success();
  }
  if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
    auto type = cast<RankedTensorType>(extract.getTensor().getType());
    // A tensor of one element (a loss's 0-d sum) is its element's adjoint
    // alone: no zeros to write it into.
    if (type.hasStaticShape() && type.getNumElements() == 1) {
      accumulate(extract.getTensor(),
                 tensor::FromElementsOp::create(builder, loc, type, dy));
      return success();
    }
    SmallVector<Value> indices;
    for (Value index : extract.getIndices())
      indices.push_back(primal(index));
    accumulate(
        extract.getTensor(),
        tensor::InsertOp::create(builder, loc, dy, zeros(type), indices));
    return success();
  }
  if (auto elements = dyn_cast<tensor::FromElementsOp>(op)) {
    auto type = cast<RankedTensorType>(elements.getType());
    for (auto [position, element] : llvm::enumerate(elements.getElements())) {
      if (!active.contains(element))
        continue;
      // The row-major position's coordinates.
      SmallVector<Value> indices(type.getRank());
      int64_t rest = int64_t(position);
      for (int64_t d = type.getRank() - 1; d >= 0; --d) {
        indices[d] = arith::ConstantIndexOp::create(builder, loc,
                                                    rest % type.getDimSize(d));
        rest /= type.getDimSize(d);
      }
      accumulate(element, tensor::ExtractOp::create(builder, loc, dy, indices));
    }
    return success();
  }
  if (auto cast = dyn_cast<tensor::CastOp>(op)) {
    accumulate(
        cast.getSource(),
        tensor::CastOp::create(builder, loc, cast.getSource().getType(), dy));
    return success();
  }
  if (auto concat = dyn_cast<tensor::ConcatOp>(op)) {
    int64_t dim = concat.getDim();
    auto resultType = concat.getResultType();
    int64_t offset = 0;
    for (Value input : concat.getInputs()) {
      auto inputType = cast<RankedTensorType>(input.getType());
      if (!inputType.hasStaticShape())
        return fail(op, "an input has a dynamic shape");
      SmallVector<OpFoldResult> offsets(resultType.getRank(),
                                        builder.getIndexAttr(0));
      offsets[dim] = builder.getIndexAttr(offset);
      SmallVector<OpFoldResult> sizes;
      for (int64_t size : inputType.getShape())
        sizes.push_back(builder.getIndexAttr(size));
      SmallVector<OpFoldResult> strides(resultType.getRank(),
                                        builder.getIndexAttr(1));
      if (active.contains(input))
        accumulate(input,
                   tensor::ExtractSliceOp::create(builder, loc, inputType, dy,
                                                  offsets, sizes, strides));
      offset += inputType.getDimSize(dim);
    }
    return success();
  }
  return fail(op, "it has no derivative rule");
}

LogicalResult FunctionDerivation::adjointGeneric(linalg::GenericOp op) {
  Value dy = adjoints.lookup(op->getResult(0));
  if (op->getNumResults() != 1 || !dy)
    return fail(op, "it has several results");
  if (!op.hasPureTensorSemantics())
    return fail(op, "it works on buffers, not tensors");
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return fail(op, "its loops have dynamic bounds");
  Block &body = op.getRegion().front();
  unsigned numInputs = op.getNumDpsInputs();
  BlockArgument outArg = body.getArgument(numInputs);
  Value yielded = body.getTerminator()->getOperand(0);

  // What the body computes: a map of its operands (which may read the
  // output's initial value), or a reduction whose combiner adds, or takes
  // the maximum or minimum of, the accumulator and a term.
  enum class Kind { Map, Sum, Extremum } kind = Kind::Map;
  Value term = yielded;
  Operation *combiner = nullptr;
  // A masked sum's condition: the term counts where it holds (or, with
  // maskWhenFalse, where it does not).
  Value mask;
  bool maskWhenFalse = false;
  if (op.getNumReductionLoops() > 0) {
    combiner = yielded.getDefiningOp();
    auto other = [&](Operation *c) -> Value {
      if (!c || c->getNumOperands() != 2)
        return {};
      if (c->getOperand(0) == outArg)
        return c->getOperand(1);
      if (c->getOperand(1) == outArg)
        return c->getOperand(0);
      return {};
    };
    // A masked sum, `select(c, out + h, out)`: the sum of h where c holds
    // (a loss picking each row's target logit).
    auto maskedSum = [&](Operation *c) -> Value {
      auto select = dyn_cast_or_null<arith::SelectOp>(c);
      if (!select)
        return {};
      auto sumOf = [&](Value v) -> Value {
        Operation *add = v.getDefiningOp();
        return isa_and_nonnull<arith::AddFOp>(add) ? other(add) : Value();
      };
      if (select.getFalseValue() == outArg) {
        mask = select.getCondition();
        return sumOf(select.getTrueValue());
      }
      if (select.getTrueValue() == outArg) {
        mask = select.getCondition();
        maskWhenFalse = true;
        return sumOf(select.getFalseValue());
      }
      return {};
    };
    if (isa_and_nonnull<arith::AddFOp>(combiner) && (term = other(combiner)))
      kind = Kind::Sum;
    else if ((term = maskedSum(combiner)))
      kind = Kind::Sum;
    else if (isa_and_nonnull<arith::MaximumFOp, arith::MaxNumFOp,
                             arith::MinimumFOp, arith::MinNumFOp>(combiner) &&
             (term = other(combiner)))
      kind = Kind::Extremum;
    else
      return fail(op, "it reduces, but its body is not the sum, maximum or "
                      "minimum of its accumulator and a term");
    if (dependsOn(term, outArg) || (mask && dependsOn(mask, outArg)))
      return fail(op, "the reduction's term reads the accumulator");
  }
  bool readsInit = kind == Kind::Map && !outArg.use_empty();
  // Values the body reads from around the op (constants, scalars).
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(op.getRegion(), captured);
  for (Value value : captured)
    if (active.contains(value))
      return fail(op, "its body reads a value from outside that carries a "
                      "gradient; pass it as an operand");
  AffineMap outMap = op.getIndexingMapMatchingResult(op->getResult(0));
  OpOperand &initOperand = op.getDpsInitsMutable()[0];
  // A map that calls exp or tanh (softmax's exponentials) reads its result
  // where its derivative is that result again (exp' = exp, tanh' = 1 -
  // tanh^2), instead of calling the function a second time: the result is a
  // residual, or re-computed once, either way.
  Operation *yieldedOp = yielded.getDefiningOp();
  bool readsResult = kind == Kind::Map && yieldedOp &&
                     yieldedOp->getBlock() == &body &&
                     hetero::callsTranscendental(op);

  for (OpOperand &operand : op->getOpOperands()) {
    Value value = operand.get();
    if (!active.contains(value))
      continue;
    auto valueType = dyn_cast<RankedTensorType>(value.getType());
    if (!valueType)
      return fail(op, "a scalar operand carries a gradient; pass it as a "
                      "tensor");
    bool isInit = &operand == &initOperand;
    if (isInit && kind == Kind::Sum) {
      accumulate(value, dy);
      continue;
    }
    if (isInit && kind == Kind::Extremum) {
      // The initial value's gradient where it is the extremum.
      Value grad = elementwise(
          valueType, {primal(value), primal(op->getResult(0)), dy},
          [](OpBuilder &b, Location l, ValueRange args) {
            Value equal = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ,
                                                args[0], args[1]);
            Value zero = arith::ConstantOp::create(
                b, l, b.getFloatAttr(args[2].getType(), 0.0));
            linalg::YieldOp::create(
                b, l,
                Value(arith::SelectOp::create(b, l, equal, args[2], zero)));
          });
      accumulate(value, grad);
      continue;
    }
    if (isInit && !readsInit)
      continue;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    // A map that is not a projected permutation (a head split's
    // `(h floordiv 2) * 16 + s`) is written through by the adjoint: its
    // loops stay parallel only where no two iterations write one element.
    bool injective = map.isProjectedPermutation() ||
                     (valueType.hasStaticShape() &&
                      isInjectiveOnLoops(map, ranges, valueType.getShape()));

    // ins: the forward's inputs, its initial value when the body reads
    // it, its result for an extremum, the result's adjoint; out: the
    // operand's gradient.
    SmallVector<Value> ins;
    SmallVector<AffineMap> maps;
    for (OpOperand *input : op.getDpsInputOperands()) {
      ins.push_back(primal(input->get()));
      maps.push_back(op.getMatchingIndexingMap(input));
    }
    int initIndex = -1, resultIndex = -1;
    if (readsInit) {
      initIndex = ins.size();
      ins.push_back(primal(initOperand.get()));
      maps.push_back(outMap);
    }
    if (kind == Kind::Extremum || readsResult) {
      resultIndex = ins.size();
      ins.push_back(primal(op->getResult(0)));
      maps.push_back(outMap);
    }
    int dyIndex = ins.size();
    ins.push_back(dy);
    maps.push_back(outMap);
    maps.push_back(map);
    SmallVector<utils::IteratorType> iterators;
    for (unsigned dim = 0; dim < op.getNumLoops(); ++dim)
      iterators.push_back(injective && map.isFunctionOfDim(dim)
                              ? utils::IteratorType::parallel
                              : utils::IteratorType::reduction);
    // A reduction between parallel loops (dA = dC B^T over the product's
    // loops m, n, k is parallel, reduction, parallel) moves after them, as
    // in a product's own loops: the parallel loops then form one nest, a
    // GPU kernel's threads take them all, and the reduction is innermost.
    SmallVector<int64_t> loopOrder = parallelLoopsFirst(iterators);
    SmallVector<int64_t> newPosition;
    if (!loopOrder.empty()) {
      newPosition = invertPermutationVector(loopOrder);
      AffineMap toOld =
          AffineMap::getPermutationMap(newPosition, builder.getContext());
      for (AffineMap &indexing : maps)
        indexing = indexing.compose(toOld);
      applyPermutationToVector(iterators, loopOrder);
    }
    BlockArgument seed =
        isInit ? outArg : body.getArgument(operand.getOperandNumber());
    bool reduces =
        llvm::is_contained(iterators, utils::IteratorType::reduction);
    std::string why;
    Operation *failedOp = nullptr;
    // Without reduction loops each element is written once: the adjoint
    // is element-wise and does not read its initial value.
    Value init = reduces ? zeros(valueType) : empty(valueType);
    auto generic = linalg::GenericOp::create(
        builder, loc, TypeRange{valueType}, ins, ValueRange{init}, maps,
        iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          IRMapping bodyMap;
          for (unsigned k = 0; k < numInputs; ++k)
            bodyMap.map(body.getArgument(k), args[k]);
          if (initIndex >= 0)
            bodyMap.map(outArg, args[initIndex]);
          for (Value value : captured)
            bodyMap.map(value, primal(value));
          ScalarTangents tangents(b, l);
          tangents.seed(seed);
          Operation *yieldedClone = nullptr;
          // The body's result becomes the primal result read in; the
          // tangents' values may refer to it until the body is complete.
          llvm::scope_exit readResult([&] {
            if (!yieldedClone)
              return;
            yieldedClone->getResult(0).replaceAllUsesWith(args[resultIndex]);
            yieldedClone->erase();
          });
          for (Operation &bodyOp : body.without_terminator()) {
            // A reduction's combiner reads the running accumulator, which
            // the adjoint does not have.
            if (failedOp ||
                (combiner && llvm::any_of(bodyOp.getResults(), [&](Value v) {
                   return dependsOn(v, outArg);
                 })))
              continue;
            Operation *clone = b.clone(bodyOp, bodyMap);
            if (failed(tangents.propagate(&bodyOp, clone, why)))
              failedOp = &bodyOp;
            if (readsResult && &bodyOp == yieldedOp)
              yieldedClone = clone;
          }
          Value acc = args.back();
          Tangent tangent = tangents.of(term);
          if (failedOp || tangent.isZero()) {
            linalg::YieldOp::create(b, l, acc);
            return;
          }
          Value dyArg = args[dyIndex];
          Value contribution =
              tangent.one
                  ? dyArg
                  : Value(arith::MulFOp::create(b, l, dyArg, tangent.value));
          if (mask) {
            Value zero = tangents.constant(dyArg.getType(), 0.0);
            Value where = bodyMap.lookup(mask);
            contribution =
                maskWhenFalse
                    ? arith::SelectOp::create(b, l, where, zero, contribution)
                    : arith::SelectOp::create(b, l, where, contribution, zero);
          }
          if (kind == Kind::Extremum) {
            Value equal =
                arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ,
                                      bodyMap.lookup(term), args[resultIndex]);
            contribution = arith::SelectOp::create(
                b, l, equal, contribution,
                tangents.constant(dyArg.getType(), 0.0));
          }
          linalg::YieldOp::create(
              b, l,
              reduces ? Value(arith::AddFOp::create(b, l, acc, contribution))
                      : contribution);
        });
    if (failedOp)
      return fail(failedOp, "in the body of a linalg op: " + Twine(why));
    // The body's loop indices name the reordered loops.
    if (!loopOrder.empty()) {
      generic.getBody()->walk([&](linalg::IndexOp index) {
        index.setDim(newPosition[index.getDim()]);
      });
    }
    // An operand whose element is the result's (an addend, a copy) has the
    // result's adjoint as its own: no copy.
    if (!reduces && map == outMap && valueType == dy.getType() &&
        generic.getBody()->getTerminator()->getOperand(0) ==
            generic.getBody()->getArgument(dyIndex)) {
      generic.erase();
      init.getDefiningOp()->erase();
      accumulate(value, dy);
      continue;
    }
    accumulate(value, generic.getResult(0));
  }
  return success();
}

/// A scalar arith or math op outside any body (a loss divided by its
/// count): each operand's adjoint is the result's times the op's partial
/// derivative, from the scalar rules of linalg bodies.
LogicalResult FunctionDerivation::adjointScalar(Operation *op) {
  Value dy = adjoints.lookup(op->getResult(0));
  Operation *primalOp = primal(op->getResult(0)).getDefiningOp();
  // Seeding a value seeds all its uses: each operand once (x * x).
  llvm::SetVector<Value> operands(op->getOperands().begin(),
                                  op->getOperands().end());
  for (Value operand : operands) {
    if (!active.contains(operand))
      continue;
    ScalarTangents tangents(builder, loc);
    tangents.seed(operand);
    std::string why;
    if (failed(tangents.propagate(op, primalOp, why)))
      return fail(op, why);
    Tangent partial = tangents.of(op->getResult(0));
    if (partial.isZero())
      continue;
    accumulate(operand, partial.one ? dy
                                    : Value(arith::MulFOp::create(
                                          builder, loc, dy, partial.value)));
  }
  return success();
}

LogicalResult FunctionDerivation::adjointPrunable(PrunableMatmulOp op) {
  if (op.getProduct() != MatmulProduct::forward)
    return fail(op, "it is a gradient product, not a forward one");
  Value dy = adjoints.lookup(op.getResult());
  Value x = op.getLhs(), w = op.getRhs();
  auto xType = cast<RankedTensorType>(x.getType());
  auto wType = cast<RankedTensorType>(w.getType());
  auto yType = cast<RankedTensorType>(op.getResult().getType());
  if (!xType.hasStaticShape() || !wType.hasStaticShape() ||
      wType.getRank() != 2)
    return fail(op, "its operands need static shapes and a 2-d weight");
  // X (.., K) and G (.., N) as matrices of rows.
  // The leading dimensions of a tensor of rank > 2 as one, its last kept.
  auto rowGroups = [](RankedTensorType type) {
    SmallVector<ReassociationIndices> groups(2);
    for (int64_t d = 0; d + 1 < type.getRank(); ++d)
      groups[0].push_back(d);
    groups[1].push_back(type.getRank() - 1);
    return groups;
  };
  auto asMatrix = [&](Value value, RankedTensorType type) -> Value {
    if (type.getRank() == 2)
      return value;
    int64_t rows = type.getNumElements() / type.getShape().back();
    return tensor::CollapseShapeOp::create(
        builder, loc,
        RankedTensorType::get({rows, type.getShape().back()},
                              type.getElementType()),
        value, rowGroups(type));
  };
  auto transpose = [&](Value matrix) -> Value {
    auto type = cast<RankedTensorType>(matrix.getType());
    auto transposed = RankedTensorType::get(
        {type.getDimSize(1), type.getDimSize(0)}, type.getElementType());
    return linalg::TransposeOp::create(builder, loc, matrix, empty(transposed),
                                       ArrayRef<int64_t>{1, 0})
        .getResult()[0];
  };
  auto product = [&](Value lhs, Value rhs, MatmulProduct kind) -> Value {
    auto lhsType = cast<RankedTensorType>(lhs.getType());
    auto rhsType = cast<RankedTensorType>(rhs.getType());
    auto type =
        RankedTensorType::get({lhsType.getDimSize(0), rhsType.getDimSize(1)},
                              lhsType.getElementType());
    return PrunableMatmulOp::create(
        builder, loc, type, lhs, rhs,
        op.getBlock() ? primal(op.getBlock()) : Value(), op.getModeAttr(),
        op.getLayerAttr(), op.getTpAttr(),
        MatmulProductAttr::get(builder.getContext(), kind),
        op.getImputationAttr());
  };
  Value g = asMatrix(dy, yType);
  if (active.contains(x)) {
    Value dx = product(g, transpose(primal(w)), MatmulProduct::grad_input);
    if (xType.getRank() != 2)
      dx = tensor::ExpandShapeOp::create(builder, loc, xType, dx,
                                         rowGroups(xType));
    accumulate(x, dx);
  }
  if (active.contains(w))
    accumulate(w, product(transpose(asMatrix(primal(x), xType)), g,
                          MatmulProduct::grad_weight));
  return success();
}

LogicalResult FunctionDerivation::adjointCall(func::CallOp call) {
  auto recomputed = recomputedCalls.find(call);
  if (recomputed == recomputedCalls.end())
    return fail(call, "it calls '@" + call.getCallee() +
                          "', which is not a private function with a body");
  SmallVector<Value> operands;
  for (Value operand : call.getOperands())
    operands.push_back(primal(operand));
  llvm::append_range(operands, recomputed->second.residuals);
  for (Value result : call.getResults()) {
    if (!isFloatTensor(result.getType()))
      continue;
    Value dy = adjoints.lookup(result);
    operands.push_back(dy ? dy
                          : zeros(cast<RankedTensorType>(result.getType())));
  }
  auto gradients =
      func::CallOp::create(builder, loc, recomputed->second.reverse, operands);
  unsigned next = 0;
  for (Value operand : call.getOperands())
    if (isFloatTensor(operand.getType()))
      accumulate(operand, gradients.getResult(next++));
  return success();
}

Differentiator::Differentiator(ModuleOp module, bool rematerialize)
    : module(module), symbols(module), rematerialize(rematerialize) {}

func::FuncOp Differentiator::derive(func::FuncOp forward, StringRef name,
                                    const GradientRequest &request) {
  if (symbols.lookup(name)) {
    forward.emitError() << "hetero-derive-backward: cannot name the "
                           "derivative of '@"
                        << forward.getSymName() << "' '@" << name
                        << "': the module already defines it";
    return {};
  }
  FunctionDerivation derivation(*this, forward, request);
  func::FuncOp derived = derivation.run(name, /*isPrivate=*/false);
  if (!derived)
    return {};
  simplifyDerivative(derived);
  symbols.insert(derived);
  return derived;
}

/// What the reverse part re-computes of a primal op instead of taking its
/// value as a residual.
enum class Recompute {
  /// Never: a product, a reduction, a call. Its value is a residual.
  No,
  /// From the arguments alone: it computes nothing (a view, a fill, a
  /// copy, a transpose or a broadcast of them).
  FromArguments,
  /// From any values: an element-wise map, one pass over its operands,
  /// which the CPU and GPU pipelines fuse into the adjoints that read it.
  /// Its operands become residuals where they are not re-computed
  /// themselves: a product's or a reduction's output, the normalised and
  /// activated values around them re-done (as in the rematerialising
  /// partitioners of compilers for eager frameworks).
  FromOperands,
};

static Recompute recomputation(Operation *op) {
  // A scalar op (a loss's division by its count, an element read out of a
  // tensor): the residual would be a scalar, not a tensor to stash.
  if (op->getNumRegions() == 0 && op->getNumResults() == 1 &&
      op->getResult(0).getType().isIntOrIndexOrFloat() &&
      (isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) ||
       isa<tensor::ExtractOp>(op)))
    return Recompute::FromOperands;
  if (op->hasTrait<OpTrait::ConstantLike>() ||
      isa<tensor::EmptyOp, linalg::FillOp, tensor::ExpandShapeOp,
          tensor::CollapseShapeOp, tensor::CastOp, tensor::ExtractSliceOp>(op))
    return Recompute::FromArguments;
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumResults() != 1 ||
      generic.getNumReductionLoops() != 0 ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isProjectedPermutation(); }))
    return Recompute::No;
  // A body that yields one of its inputs: a copy, a transpose or a
  // broadcast.
  Block &body = generic.getRegion().front();
  auto argument = dyn_cast<BlockArgument>(body.getTerminator()->getOperand(0));
  if (body.getOperations().size() == 1 && argument &&
      argument.getArgNumber() < generic.getNumDpsInputs())
    return Recompute::FromArguments;
  // An exp, a log or a tanh costs more than keeping its result (softmax's
  // exponentials, the GELU's output).
  if (hetero::callsTranscendental(generic))
    return Recompute::No;
  return Recompute::FromOperands;
}

std::optional<Differentiator::AugmentedDerivative>
Differentiator::deriveAugmented(func::FuncOp forward, StringRef name,
                                StringRef augmentedName,
                                const GradientRequest &request,
                                bool isPrivate) {
  FunctionDerivation derivation(*this, forward, request);
  func::FuncOp reverse = derivation.run(name, isPrivate);
  if (!reverse)
    return std::nullopt;

  // The re-computation moves into the augmented forward; what the chain
  // rule reads of it becomes its residuals, except what the reverse part
  // re-computes.
  Block &entry = reverse.front();
  llvm::SetVector<Operation *> primalOps;
  if (derivation.lastPrimal)
    for (Operation &op : entry) {
      primalOps.insert(&op);
      if (&op == derivation.lastPrimal)
        break;
    }
  // The adjoints read only what their bodies use (an exponential's adjoint
  // reads its result, not its operands), so that no residual is kept for
  // an operand the chain rule does not read.
  SmallVector<Operation *> adjointOps;
  for (Operation &op : entry)
    if (!primalOps.contains(&op) && isa<linalg::GenericOp>(op))
      adjointOps.push_back(&op);
  {
    RewritePatternSet patterns(reverse.getContext());
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    // Only those ops: the primal ops they read stay, dead or not.
    (void)applyOpPatternsGreedily(adjointOps, std::move(patterns),
                                  GreedyRewriteConfig().setStrictness(
                                      GreedyRewriteStrictness::ExistingOps));
  }
  DenseSet<Operation *> recomputed;
  for (Operation *op : primalOps) {
    Recompute how = recomputation(op);
    if ((how == Recompute::FromOperands && rematerialize) ||
        (how == Recompute::FromArguments &&
         llvm::all_of(op->getOperands(), [&](Value operand) {
           Operation *def = operand.getDefiningOp();
           return !def || recomputed.contains(def);
         })))
      recomputed.insert(op);
  }
  // The residuals: the primal values the chain rule reads, directly or
  // through the re-computed ops it needs, that are not re-computed.
  llvm::SetVector<Value> residuals;
  DenseSet<Operation *> needed;
  SmallVector<Value> worklist;
  auto read = [&](Operation *op) {
    SmallVector<Value> operands = nestedOperands(op);
    worklist.append(operands.rbegin(), operands.rend());
    while (!worklist.empty()) {
      Value value = worklist.pop_back_val();
      Operation *def = value.getDefiningOp();
      if (!def || !primalOps.contains(def))
        continue;
      if (!recomputed.contains(def)) {
        residuals.insert(value);
      } else if (needed.insert(def).second) {
        SmallVector<Value> more = nestedOperands(def);
        worklist.append(more.rbegin(), more.rend());
      }
    }
  };
  for (Operation &op : entry)
    if (!primalOps.contains(&op))
      read(&op);

  FunctionType forwardType = forward.getFunctionType();
  SmallVector<Type> augmentedResults(forwardType.getResults());
  for (Value residual : residuals)
    augmentedResults.push_back(residual.getType());
  OpBuilder builder(forward);
  builder.setInsertionPointAfter(forward);
  auto augmented = func::FuncOp::create(
      builder, forward.getLoc(), augmentedName,
      builder.getFunctionType(forwardType.getInputs(), augmentedResults));
  if (isPrivate)
    augmented.setPrivate();
  Block *body = augmented.addEntryBlock();
  IRMapping mapping;
  unsigned inputs = forwardType.getNumInputs();
  for (unsigned i = 0; i < inputs; ++i)
    mapping.map(entry.getArgument(i), body->getArgument(i));
  builder.setInsertionPointToStart(body);
  for (Operation *op : primalOps)
    builder.clone(*op, mapping);
  SmallVector<Value> returned;
  for (Value result : derivation.primalResults)
    returned.push_back(mapping.lookupOrDefault(result));
  for (Value residual : residuals)
    returned.push_back(mapping.lookup(residual));
  func::ReturnOp::create(builder, forward.getLoc(), returned);

  // The reverse part takes the residuals after the arguments.
  SmallVector<Type> reverseInputs(forwardType.getInputs());
  for (auto [index, residual] : llvm::enumerate(residuals)) {
    BlockArgument argument = entry.insertArgument(
        inputs + unsigned(index), residual.getType(), forward.getLoc());
    reverseInputs.push_back(residual.getType());
    Value(residual).replaceAllUsesWith(argument);
  }
  for (Type input : reverse.getFunctionType().getInputs().drop_front(inputs))
    reverseInputs.push_back(input);
  reverse.setFunctionType(builder.getFunctionType(
      reverseInputs, reverse.getFunctionType().getResults()));
  for (Operation *op : llvm::reverse(primalOps))
    if (op->use_empty())
      op->erase();
  simplifyDerivative(augmented);
  simplifyDerivative(reverse);
  symbols.insert(augmented);
  symbols.insert(reverse);
  return AugmentedDerivative{augmented, reverse};
}

const Differentiator::AugmentedDerivative *
Differentiator::calleeDerivative(func::FuncOp callee) {
  auto [it, inserted] = callees.try_emplace(callee, AugmentedDerivative());
  if (!inserted) {
    if (!it->second.reverse) {
      callee.emitError() << "hetero-derive-backward: cannot differentiate "
                            "function '@"
                         << callee.getSymName()
                         << "': it calls itself, directly or not";
      return nullptr;
    }
    return &it->second;
  }
  GradientRequest request;
  for (Type input : callee.getFunctionType().getInputs())
    request.wrt.push_back(isFloatTensor(input));
  std::optional<AugmentedDerivative> parts = deriveAugmented(
      callee, (callee.getSymName() + "_backward").str(),
      (callee.getSymName() + "_augmented").str(), request, /*isPrivate=*/true);
  if (!parts)
    return nullptr;
  AugmentedDerivative &slot = callees[callee];
  slot = *parts;
  return &slot;
}
