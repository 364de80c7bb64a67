//===- Rebatch.cpp - stage variants for larger micro-batches --------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// A stage forward takes B samples; its variant for m B samples is the same
// function with the sample dimension of every tensor that holds samples m
// times larger. Each value of the forward carries where its samples are:
// a dimension whose extent is B times a width w (the samples outermost,
// one after the other), or none. The copy follows them op by op:
//
// * a structured op has a sample loop p: the loop whose shift by its width
//   w_p moves every sample-holding operand by one sample (its expression
//   at the sample dimension grows by that operand's width, its others do
//   not change) and leaves every other operand where it was (a weight, a
//   position table read by t mod S). The expressions are affine, so this
//   is checked by evaluating them over the larger iteration domain. An
//   output whose expression moves with p holds samples; p missing from
//   every output is a reduction over the samples, which must be a sum;
// * reshapes keep the samples outermost in their groups, slices keep
//   them whole, element-wise ops keep them where they are, a call re-types
//   its callee;
// * a sum over the samples grows m times; it may be scaled and added, and
//   the last stage divides its loss by m. A sum divided by another sum (a
//   mean over what a cross-entropy does not ignore) means the same for
//   more samples and is left as it is.
//
//===----------------------------------------------------------------------===//

#include "Autodiff.h"

#include "hetero/Dialect/Hetero.h"
#include "hetero/Passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/ScopeExit.h"

#include <map>

namespace hetero {
#define GEN_PASS_DEF_HETEROREBATCH
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;
using namespace hetero;

namespace {

/// Where a value keeps its samples.
struct Samples {
  /// The dimension that holds them, or -1.
  int64_t dim = -1;
  /// For a value without one: whether it is a sum over the samples, which
  /// grows with their number.
  bool sum = false;
  bool any() const { return dim >= 0 || sum; }
};

/// Points of a domain of `ranges` to check a shift of loop `loop` at: every
/// value of that loop below `loopEnd`, and for each other loop all its
/// values when there are few, else its ends, its middle and their
/// neighbours.
std::vector<SmallVector<int64_t>> checkPoints(ArrayRef<int64_t> ranges,
                                              unsigned loop, int64_t loopEnd) {
  std::vector<SmallVector<int64_t>> values(ranges.size());
  for (unsigned l = 0; l < ranges.size(); ++l) {
    int64_t range = l == loop ? loopEnd : ranges[l];
    if (l == loop || range <= 8) {
      for (int64_t v = 0; v < range; ++v)
        values[l].push_back(v);
    } else {
      for (int64_t v : {int64_t(0), int64_t(1), range / 2 - 1, range / 2,
                        range - 2, range - 1})
        values[l].push_back(v);
    }
  }
  std::vector<SmallVector<int64_t>> points = {{}};
  for (const SmallVector<int64_t> &options : values) {
    std::vector<SmallVector<int64_t>> next;
    for (const SmallVector<int64_t> &point : points)
      for (int64_t v : options) {
        next.push_back(point);
        next.back().push_back(v);
      }
    points = std::move(next);
  }
  return points;
}

class Rebatcher {
public:
  Rebatcher(SymbolTable &symbols, int64_t samples, int64_t factor, int64_t size)
      : symbols(symbols), samples(samples), factor(factor),
        suffix("_b" + std::to_string(size)) {}

  /// The copy of `function` for `factor` times the samples, given where its
  /// arguments hold them; `results` receives where its results do.
  FailureOr<func::FuncOp> retype(func::FuncOp function,
                                 ArrayRef<Samples> arguments,
                                 SmallVector<Samples> &results);

private:
  LogicalResult retypeOp(Operation *op, OpBuilder &builder);
  LogicalResult retypeStructured(linalg::LinalgOp op, OpBuilder &builder);
  LogicalResult retypeLinear(Operation *op, OpBuilder &builder);
  LogicalResult retypeSumStructured(linalg::LinalgOp op, OpBuilder &builder);
  /// The type of `value` with its sample dimension `dim` grown.
  RankedTensorType grown(Type type, int64_t dim) const {
    auto tensor = cast<RankedTensorType>(type);
    SmallVector<int64_t> shape(tensor.getShape());
    shape[size_t(dim)] *= factor;
    return RankedTensorType::get(shape, tensor.getElementType(),
                                 tensor.getEncoding());
  }
  /// The samples' width in dimension `dim` of `type`: its extent over the
  /// number of samples, or 0 when it is not a multiple.
  int64_t width(Type type, int64_t dim) const {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape() || dim >= tensor.getRank())
      return 0;
    int64_t extent = tensor.getDimSize(dim);
    return extent % samples == 0 ? extent / samples : 0;
  }
  /// A copy at `type` of the value an op writes into (an empty tensor, a
  /// fill of one, a splat constant); null when it is something else.
  Value regrow(Value init, RankedTensorType type, OpBuilder &builder);
  Samples of(Value value) const { return where.lookup(value); }
  InFlightDiagnostic fail(Operation *op) {
    return op->emitError() << "hetero-rebatch: cannot re-type '"
                           << op->getName() << "' in '@"
                           << op->getParentOfType<func::FuncOp>().getSymName()
                           << "' for " << samples * factor << " samples: ";
  }

  SymbolTable &symbols;
  int64_t samples, factor;
  std::string suffix;
  IRMapping mapping;
  DenseMap<Value, Samples> where;
  /// Re-typed callees by name and argument samples.
  std::map<std::pair<std::string, std::vector<int64_t>>,
           std::pair<func::FuncOp, SmallVector<Samples>>>
      callees;
};

Value Rebatcher::regrow(Value init, RankedTensorType type, OpBuilder &builder) {
  Operation *def = init.getDefiningOp();
  if (!def)
    return Value();
  Location loc = def->getLoc();
  if (isa<tensor::EmptyOp>(def) &&
      cast<tensor::EmptyOp>(def).getDynamicSizes().empty())
    return tensor::EmptyOp::create(builder, loc, type.getShape(),
                                   type.getElementType());
  if (auto fill = dyn_cast<linalg::FillOp>(def)) {
    Value empty = regrow(fill.getOutputs().front(), type, builder);
    if (!empty)
      return Value();
    return linalg::FillOp::create(
               builder, loc, mapping.lookup(fill.getInputs().front()), empty)
        .getResult(0);
  }
  DenseElementsAttr dense;
  if (matchPattern(def, m_Constant(&dense)) && dense.isSplat())
    return arith::ConstantOp::create(
        builder, loc, type,
        DenseElementsAttr::get(type, dense.getSplatValue<Attribute>()));
  return Value();
}

FailureOr<func::FuncOp> Rebatcher::retype(func::FuncOp function,
                                          ArrayRef<Samples> arguments,
                                          SmallVector<Samples> &results) {
  std::vector<int64_t> key;
  for (Samples argument : arguments)
    key.push_back(argument.dim);
  auto found = callees.find({function.getSymName().str(), key});
  if (found != callees.end()) {
    results = found->second.second;
    return found->second.first;
  }
  std::string name = (function.getSymName() + suffix).str();
  if (symbols.lookup(name)) {
    function.emitError() << "hetero-rebatch: the copy of '@"
                         << function.getSymName() << "' for "
                         << samples * factor << " samples would be named '@"
                         << name << "', which the module already uses";
    return failure();
  }
  SmallVector<Type> inputs;
  for (auto [type, argument] :
       llvm::zip_equal(function.getArgumentTypes(), arguments)) {
    if (argument.dim >= 0 && !width(type, argument.dim)) {
      function.emitError() << "hetero-rebatch: argument " << inputs.size()
                           << " of '@" << function.getSymName() << "' (" << type
                           << ") holds samples in dimension " << argument.dim
                           << ", whose extent is not a multiple of " << samples;
      return failure();
    }
    inputs.push_back(argument.dim >= 0 ? grown(type, argument.dim) : type);
  }
  OpBuilder builder(function);
  auto copy = func::FuncOp::create(builder, function.getLoc(), name,
                                   builder.getFunctionType(inputs, {}));
  copy.setVisibility(function.getVisibility());
  Block *entry = copy.addEntryBlock();
  // The copy's body is built with this function's own mapping and
  // samples; a call inside re-types its callee with fresh ones.
  IRMapping outerMapping = std::move(mapping);
  DenseMap<Value, Samples> outerWhere = std::move(where);
  mapping = IRMapping();
  where.clear();
  llvm::scope_exit restore([&] {
    mapping = std::move(outerMapping);
    where = std::move(outerWhere);
  });
  for (auto [i, argument] : llvm::enumerate(function.getArguments())) {
    mapping.map(argument, entry->getArgument(i));
    where[argument] = arguments[i];
  }
  builder.setInsertionPointToStart(entry);
  Block &body = function.getBody().front();
  for (Operation &op : body.without_terminator())
    if (failed(retypeOp(&op, builder))) {
      copy.erase();
      return failure();
    }
  Operation *terminator = body.getTerminator();
  SmallVector<Value> returned;
  results.clear();
  for (Value value : terminator->getOperands()) {
    returned.push_back(mapping.lookup(value));
    results.push_back(of(value));
  }
  func::ReturnOp::create(builder, terminator->getLoc(), returned);
  copy.setFunctionType(
      builder.getFunctionType(inputs, ValueRange(returned).getTypes()));
  symbols.insert(copy);
  callees[{function.getSymName().str(), key}] = {copy, results};
  return copy;
}

LogicalResult Rebatcher::retypeOp(Operation *op, OpBuilder &builder) {
  SmallVector<Value> reads(op->getOperands());
  llvm::SetVector<Value> above;
  for (Region &region : op->getRegions())
    getUsedValuesDefinedAbove(region, above);
  for (Value value : above) {
    if (of(value).any() && !isa<linalg::LinalgOp>(op))
      return fail(op) << "its regions read a value that holds samples";
    reads.push_back(value);
  }
  bool touched = llvm::any_of(reads, [&](Value v) { return of(v).any(); });
  if (!touched) {
    builder.clone(*op, mapping);
    return success();
  }
  if (auto structured = dyn_cast<linalg::LinalgOp>(op))
    return retypeStructured(structured, builder);

  if (auto product = dyn_cast<PrunableMatmulOp>(op)) {
    Samples lhs = of(product.getLhs());
    auto lhsType = cast<RankedTensorType>(product.getLhs().getType());
    if (of(product.getRhs()).any() || lhs.dim < 0 ||
        lhs.dim == lhsType.getRank() - 1)
      return fail(op) << "the samples must be in a row dimension of the "
                         "input, not in the weight or the contraction";
    Operation *copy = builder.clone(*op, mapping);
    copy->getResult(0).setType(grown(product.getResult().getType(), lhs.dim));
    where[product.getResult()] = {lhs.dim, false};
    mapping.map(product.getResult(), copy->getResult(0));
    return success();
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    int64_t dim = of(collapse.getSrc()).dim;
    for (auto [group, indices] :
         llvm::enumerate(collapse.getReassociationIndices())) {
      if (!llvm::is_contained(indices, dim))
        continue;
      if (indices.front() != dim)
        return fail(op) << "it merges dimension " << dim
                        << ", which holds the samples, into a dimension "
                           "where they are not outermost";
      auto type = grown(collapse.getResultType(), int64_t(group));
      auto copy = tensor::CollapseShapeOp::create(
          builder, op->getLoc(), type, mapping.lookup(collapse.getSrc()),
          collapse.getReassociationIndices());
      mapping.map(collapse.getResult(), copy.getResult());
      where[collapse.getResult()] = {int64_t(group), false};
      return success();
    }
    return fail(op) << "the sample dimension is in no group";
  }
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    int64_t dim = of(expand.getSrc()).dim;
    ReassociationIndices group = expand.getReassociationIndices()[size_t(dim)];
    int64_t outer = group.front();
    if (!width(expand.getResultType(), outer))
      return fail(op) << "it splits the sample dimension " << dim
                      << " so that dimension " << outer
                      << " does not hold whole samples";
    auto type = grown(expand.getResultType(), outer);
    auto copy = tensor::ExpandShapeOp::create(builder, op->getLoc(), type,
                                              mapping.lookup(expand.getSrc()),
                                              expand.getReassociationIndices());
    mapping.map(expand.getResult(), copy.getResult());
    where[expand.getResult()] = {outer, false};
    return success();
  }
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    int64_t dim = of(slice.getSource()).dim;
    auto source = cast<RankedTensorType>(slice.getSource().getType());
    std::optional<int64_t> offset =
        getConstantIntValue(slice.getMixedOffsets()[dim]);
    std::optional<int64_t> extent =
        getConstantIntValue(slice.getMixedSizes()[dim]);
    std::optional<int64_t> stride =
        getConstantIntValue(slice.getMixedStrides()[dim]);
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    if (dim < 0 || offset != 0 || stride != 1 ||
        extent != source.getDimSize(dim) || dropped.test(dim))
      return fail(op) << "it does not keep dimension " << dim
                      << ", which holds the samples, whole";
    int64_t resultDim = dim;
    for (int64_t d = 0; d < dim; ++d)
      resultDim -= dropped.test(d);
    SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
    sizes[dim] = builder.getIndexAttr(source.getDimSize(dim) * factor);
    auto copy = tensor::ExtractSliceOp::create(
        builder, op->getLoc(), grown(slice.getType(), resultDim),
        mapping.lookup(slice.getSource()), slice.getMixedOffsets(), sizes,
        slice.getMixedStrides());
    mapping.map(slice.getResult(), copy.getResult());
    where[slice.getResult()] = {resultDim, false};
    return success();
  }
  if (auto call = dyn_cast<func::CallOp>(op)) {
    auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
    if (!callee || callee.isExternal())
      return fail(op) << "its callee has no body to re-type";
    SmallVector<Samples> arguments;
    for (Value operand : call.getOperands()) {
      if (of(operand).sum)
        return fail(op) << "it passes a sum over the samples to a call";
      arguments.push_back(of(operand));
    }
    SmallVector<Samples> results;
    FailureOr<func::FuncOp> copy = retype(callee, arguments, results);
    if (failed(copy))
      return failure();
    SmallVector<Value> operands;
    for (Value operand : call.getOperands())
      operands.push_back(mapping.lookup(operand));
    auto newCall = func::CallOp::create(builder, op->getLoc(), *copy, operands);
    for (auto [i, result] : llvm::enumerate(call.getResults())) {
      mapping.map(result, newCall.getResult(i));
      where[result] = results[i];
    }
    return success();
  }
  if (isa<tensor::ExtractOp>(op)) {
    if (of(op->getOperand(0)).dim >= 0)
      return fail(op) << "it reads single elements of a tensor that holds "
                         "samples";
    return retypeLinear(op, builder);
  }
  if (isa<tensor::FromElementsOp>(op))
    return retypeLinear(op, builder);
  if (OpTrait::hasElementwiseMappableTraits(op) &&
      llvm::all_of(op->getResultTypes(), llvm::IsaPred<RankedTensorType>)) {
    int64_t dim = -1;
    for (Value operand : op->getOperands()) {
      Samples samples = of(operand);
      if (samples.sum || (dim >= 0 && samples.dim != dim) ||
          (samples.dim < 0 && isa<RankedTensorType>(operand.getType())))
        return fail(op) << "its operands do not all hold the samples in the "
                           "same dimension";
      dim = samples.dim;
    }
    Operation *copy = builder.clone(*op, mapping);
    for (auto [result, copied] :
         llvm::zip_equal(op->getResults(), copy->getResults())) {
      copied.setType(grown(result.getType(), dim));
      mapping.map(result, copied);
      where[result] = {dim, false};
    }
    return success();
  }
  if (op->getNumRegions() == 0 &&
      llvm::none_of(reads, [&](Value v) { return of(v).dim >= 0; }))
    return retypeLinear(op, builder);
  return fail(op) << "hetero-rebatch has no rule for a value that holds "
                     "samples here";
}

/// Whether `op`, which reads a sum over the samples, keeps the sum's
/// meaning for more samples: a sum scaled or divided by another value, sums
/// added or subtracted, a sum negated, read or put into a tensor stay sums;
/// anything else is a function of the sum that changes with their number.
bool keepsSum(Operation *op, function_ref<bool(Value)> isSum) {
  if (isa<arith::MulFOp>(op))
    return isSum(op->getOperand(0)) != isSum(op->getOperand(1));
  if (isa<arith::DivFOp>(op))
    return isSum(op->getOperand(0)) && !isSum(op->getOperand(1));
  if (isa<arith::AddFOp, arith::SubFOp, tensor::FromElementsOp>(op))
    return llvm::all_of(op->getOperands(), isSum);
  return isa<arith::NegFOp, tensor::ExtractOp>(op);
}

/// Whether `op` divides a sum over the samples by another: a mean (the
/// cross-entropy's over the labels it does not ignore), which means the
/// same for more samples and grows with nothing.
bool isRatioOfSums(Operation *op, function_ref<bool(Value)> isSum) {
  return isa<arith::DivFOp>(op) && isSum(op->getOperand(0)) &&
         isSum(op->getOperand(1));
}

/// Scalar arithmetic and tensor.extract or tensor.from_elements on sums
/// over the samples.
LogicalResult Rebatcher::retypeLinear(Operation *op, OpBuilder &builder) {
  if (isRatioOfSums(op, [&](Value v) { return of(v).sum; })) {
    Operation *copy = builder.clone(*op, mapping);
    mapping.map(op->getResult(0), copy->getResult(0));
    where[op->getResult(0)] = {-1, false};
    return success();
  }
  if (!keepsSum(op, [&](Value v) { return of(v).sum; }))
    return fail(op) << "it is not linear in a sum over the samples (only "
                       "scaling, adding and negating keep the sum's meaning "
                       "for more samples)";
  Operation *copy = builder.clone(*op, mapping);
  for (auto [result, copied] :
       llvm::zip_equal(op->getResults(), copy->getResults())) {
    mapping.map(result, copied);
    where[result] = {-1, true};
  }
  return success();
}

/// A structured op that reads sums over the samples and nothing that holds
/// samples: its body must be linear in them (its outputs start as sums
/// too: an accumulation of sums is one).
LogicalResult Rebatcher::retypeSumStructured(linalg::LinalgOp op,
                                             OpBuilder &builder) {
  Block *body = op.getBlock();
  DenseSet<Value> sums;
  for (OpOperand &operand : op->getOpOperands())
    if (op.isDpsInit(&operand) || of(operand.get()).sum)
      sums.insert(op.getMatchingBlockArgument(&operand));
  auto isSum = [&](Value v) { return sums.contains(v); };
  for (Operation &inner : body->without_terminator()) {
    if (llvm::none_of(inner.getOperands(), isSum) ||
        isRatioOfSums(&inner, isSum))
      continue;
    if (!keepsSum(&inner, isSum))
      return fail(op) << "its body's '" << inner.getName()
                      << "' is not linear in a sum over the samples";
    sums.insert(inner.getResults().begin(), inner.getResults().end());
  }
  Operation *copy = builder.clone(*op, mapping);
  Operation *yield = body->getTerminator();
  for (auto [i, result] : llvm::enumerate(op->getResults())) {
    // An output written into a value that holds samples (a fill of one)
    // holds them where it does.
    Value init = op.getDpsInits()[i];
    if (of(init).dim >= 0) {
      copy->getResult(unsigned(i)).setType(mapping.lookup(init).getType());
      where[result] = of(init);
    } else {
      where[result] = {-1, isSum(yield->getOperand(unsigned(i)))};
    }
    mapping.map(result, copy->getResult(unsigned(i)));
  }
  return success();
}

LogicalResult Rebatcher::retypeStructured(linalg::LinalgOp op,
                                          OpBuilder &builder) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic) ||
      llvm::any_of(maps, [](AffineMap map) { return map.getNumSymbols(); }))
    return fail(op) << "its iteration domain is not static";
  // A sum over the samples read by an op without samples: the body must be
  // linear in it.
  OpOperand *sampled = nullptr;
  for (OpOperand *input : op.getDpsInputOperands())
    if (of(input->get()).dim >= 0) {
      sampled = input;
      break;
    }
  for (OpOperand &init : op.getDpsInitsMutable())
    if (of(init.get()).sum)
      return fail(op) << "it writes into a sum over the samples";
  if (!sampled)
    return retypeSumStructured(op, builder);
  for (OpOperand *input : op.getDpsInputOperands())
    if (of(input->get()).sum)
      return fail(op) << "it combines a sum over the samples with values "
                         "that hold samples (statistics of the batch change "
                         "with its size)";
  // The sample loop: the first loop of the sampled input's expression at
  // its sample dimension for which every operand shifts consistently.
  int64_t inputDim = of(sampled->get()).dim;
  AffineExpr expr = maps[sampled->getOperandNumber()].getResult(inputDim);
  std::optional<unsigned> loop;
  SmallVector<int64_t> outputDims;
  for (unsigned p = 0; p < ranges.size() && !loop; ++p) {
    if (!expr.isFunctionOfDim(p) || ranges[p] % samples)
      continue;
    int64_t shift = ranges[p] / samples;
    auto points = checkPoints(ranges, p, ranges[p] * factor - shift);
    bool consistent = true;
    SmallVector<int64_t> dims;
    for (OpOperand &operand : op->getOpOperands()) {
      Value value = operand.get();
      AffineMap map = maps[operand.getOperandNumber()];
      bool isInit = op.isDpsInit(&operand);
      int64_t dim = isInit ? -1 : of(value).dim;
      int64_t moving = -1;
      for (unsigned r = 0; r < map.getNumResults() && consistent; ++r) {
        int64_t expected = 0;
        if (!isInit && int64_t(r) == dim)
          expected = width(value.getType(), dim);
        bool moves = false, fixed = true, exact = true;
        for (SmallVector<int64_t> &point : points) {
          int64_t before = evaluateAffine(map.getResult(r), point);
          point[p] += shift;
          int64_t after = evaluateAffine(map.getResult(r), point);
          point[p] -= shift;
          moves |= after != before;
          fixed &= after == before;
          exact &=
              after - before == (isInit ? width(value.getType(), r) : expected);
        }
        if (isInit) {
          // An output holds samples where its expression moves by their
          // width, in one dimension at most.
          if (fixed)
            continue;
          if (!exact || !width(value.getType(), r) || moving >= 0)
            consistent = false;
          moving = int64_t(r);
          continue;
        }
        consistent &= int64_t(r) == dim ? exact : fixed;
      }
      if (isInit)
        dims.push_back(moving);
    }
    if (consistent) {
      loop = p;
      outputDims = dims;
    }
  }
  if (!loop)
    return fail(op) << "no loop moves every operand that holds samples by "
                       "one sample while leaving the others (constants, "
                       "parameters) where they are: a constant shaped by "
                       "the batch, or an index that mixes the samples";
  // The body may not read the sample loop's index.
  WalkResult indexed = op->walk([&](linalg::IndexOp index) {
    return index.getDim() == *loop ? WalkResult::interrupt()
                                   : WalkResult::advance();
  });
  if (indexed.wasInterrupted())
    return fail(op) << "its body reads the index of the sample loop " << *loop;
  // A loop in no output is a reduction over the samples: a sum.
  Block *body = op.getBlock();
  SmallVector<Value> inits;
  for (auto [i, init] : llvm::enumerate(op.getDpsInits())) {
    int64_t dim = outputDims[i];
    if (of(init).dim >= 0) {
      if (of(init).dim != dim)
        return fail(op) << "its output " << i
                        << " writes into a value that holds the samples in "
                           "another dimension";
      inits.push_back(mapping.lookup(init));
      continue;
    }
    if (dim >= 0) {
      Value regrown = regrow(init, grown(init.getType(), dim), builder);
      if (!regrown)
        return fail(op) << "its output " << i
                        << " holds samples but writes into a value that "
                           "is not an empty tensor, a fill of one or a "
                           "splat constant";
      inits.push_back(regrown);
      continue;
    }
    auto yield = cast<linalg::YieldOp>(body->getTerminator());
    Value yielded = yield.getOperand(unsigned(i));
    auto add = yielded.getDefiningOp<arith::AddFOp>();
    BlockArgument accumulator =
        op.getMatchingBlockArgument(op.getDpsInitOperand(unsigned(i)));
    if (!add || (add.getLhs() != accumulator && add.getRhs() != accumulator))
      return fail(op) << "it reduces over the samples other than by a sum";
    inits.push_back(mapping.lookup(init));
  }
  IRMapping local = mapping;
  for (auto [init, regrown] : llvm::zip_equal(op.getDpsInits(), inits))
    local.map(init, regrown);
  Operation *copy = builder.clone(*op, local);
  for (auto [i, result] : llvm::enumerate(op->getResults())) {
    copy->getResult(unsigned(i)).setType(inits[i].getType());
    mapping.map(result, copy->getResult(unsigned(i)));
    where[result] =
        outputDims[i] >= 0 ? Samples{outputDims[i], false} : Samples{-1, true};
  }
  return success();
}

struct HeteroRebatchPass
    : public hetero::impl::HeteroRebatchBase<HeteroRebatchPass> {
  using Base::Base;

  void runOnOperation() override;
};

void HeteroRebatchPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (sizes.empty()) {
    module.emitError() << "hetero-rebatch: sizes= names no micro-batch size";
    return signalPassFailure();
  }
  SymbolTable symbols(module);
  for (auto pipeline : llvm::to_vector(module.getOps<PipelineOp>())) {
    if (!pipeline.isExecutable())
      continue;
    auto fail = [&](Operation *at) {
      return at->emitError()
             << "hetero-rebatch: pipeline '@" << pipeline.getSymName() << "' ";
    };
    auto data = symbols.lookup<func::FuncOp>(pipeline.getDataAttr().getValue());
    auto input = data ? dyn_cast<RankedTensorType>(data.getResultTypes()[0])
                      : RankedTensorType();
    if (!input || !input.hasStaticShape() || input.getRank() < 1) {
      fail(pipeline) << "needs a data function whose input has a static "
                        "first dimension, the micro-batch's samples";
      return signalPassFailure();
    }
    int64_t samples = input.getDimSize(0);
    int64_t stages = pipeline.getNumStages();
    for (int64_t size : sizes) {
      if (size <= samples || size % samples) {
        fail(pipeline) << "cannot have variants of " << size
                       << " samples: a size must be a multiple n > 1 of "
                          "the pipeline's micro-batch of "
                       << samples << " samples";
        return signalPassFailure();
      }
      if (pipeline.getStageVariant(0, size)) {
        fail(pipeline) << "already has variants of " << size << " samples";
        return signalPassFailure();
      }
      Rebatcher rebatcher(symbols, samples, size / samples, size);
      SmallVector<func::FuncOp> forwards;
      for (int64_t s = 0; s < stages; ++s) {
        StageOp stage = pipeline.getStage(s);
        auto forward = symbols.lookup<func::FuncOp>(stage.getForward());
        // The input and (last stage) the target hold samples first.
        SmallVector<Samples> arguments(forward.getNumArguments());
        arguments.front().dim = 0;
        bool last = s + 1 == stages;
        if (last)
          arguments.back().dim = 0;
        SmallVector<Samples> results;
        FailureOr<func::FuncOp> copy =
            rebatcher.retype(forward, arguments, results);
        if (failed(copy))
          return signalPassFailure();
        if (!last && results.front().dim != 0) {
          fail(stage) << "stage " << s << "'s forward '@"
                      << forward.getSymName()
                      << "' returns an activation whose first dimension "
                         "does not hold the samples";
          return signalPassFailure();
        }
        if (last && results.front().sum) {
          // The loss summed over m times the samples: their mean again.
          func::FuncOp function = *copy;
          auto ret =
              cast<func::ReturnOp>(function.getBody().front().getTerminator());
          OpBuilder builder(ret);
          Location loc = ret.getLoc();
          Value loss = ret.getOperand(0);
          Value scalar =
              tensor::ExtractOp::create(builder, loc, loss, ValueRange{});
          Value divisor = arith::ConstantOp::create(
              builder, loc,
              builder.getFloatAttr(scalar.getType(), double(size / samples)));
          Value mean = arith::DivFOp::create(builder, loc, scalar, divisor);
          ret.setOperand(0, tensor::FromElementsOp::create(
                                builder, loc, loss.getType(), mean));
        }
        forwards.push_back(*copy);
      }
      auto builder = OpBuilder::atBlockEnd(&pipeline.getBody().front());
      for (int64_t s = 0; s < stages; ++s)
        StageVariantOp::create(
            builder, pipeline.getLoc(), builder.getI64IntegerAttr(s),
            builder.getI64IntegerAttr(size),
            FlatSymbolRefAttr::get(forwards[size_t(s)]),
            /*augmented=*/FlatSymbolRefAttr(), /*backward=*/FlatSymbolRefAttr(),
            /*backward_input=*/FlatSymbolRefAttr(),
            /*backward_weight=*/FlatSymbolRefAttr());
    }
  }
}

} // namespace
