//===- ImportOperators.cpp - one importer per ONNX operator ---------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Each importer reads its node's inputs as Tensors, folds them when they
// are all known and the operator is one that folds, and otherwise builds
// its IR with ImportBuilders.cpp's patterns. A problem is reported on the
// node (describe: its name and operator) with what was expected.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "hetero/Dialect/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>
#include <numeric>

using namespace mlir;

namespace hetero::onnx_import {

//===----------------------------------------------------------------------===//
// Nodes
//===----------------------------------------------------------------------===//

Tensor *Importer::input(const onnx::NodeProto &node, int index) {
  if (!hasInput(node, index)) {
    failAt(node, "input " + std::to_string(index) + " is missing");
    return nullptr;
  }
  auto found = values.find(node.input(index));
  if (found == values.end()) {
    failAt(node, "input '" + node.input(index) +
                     "' is not defined before the node; expected a graph in "
                     "topological order");
    return nullptr;
  }
  return &found->second;
}

bool Importer::inputs(const onnx::NodeProto &node,
                      ArrayRef<Tensor **> tensors) {
  for (auto [index, tensor] : llvm::enumerate(tensors))
    if (!(*tensor = input(node, int(index))))
      return false;
  return true;
}

const Literal *Importer::literalInput(const onnx::NodeProto &node, int index,
                                      const char *what) {
  Tensor *tensor = input(node, index);
  if (!tensor)
    return nullptr;
  if (!tensor->literal) {
    failAt(node, std::string(what) + " (input '" + node.input(index) +
                     "') is computed at run time; expected a constant");
    return nullptr;
  }
  return &*tensor->literal;
}

void Importer::defineValue(const onnx::NodeProto &node, int index, Value value,
                           Element element) {
  Tensor tensor;
  tensor.element = element;
  tensor.shape = shapeOf(value);
  tensor.value = value;
  define(node, index, std::move(tensor));
}

bool Importer::outputUsed(const onnx::NodeProto &node, int index) const {
  return index < node.output_size() && !node.output(index).empty() &&
         graph.needed.count(node.output(index));
}

/// An axis attribute or input normalized to [0, rank); -1 when out of range.
static int64_t normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return -1;
  return axis < 0 ? axis + rank : axis;
}

bool Importer::importNode(const onnx::NodeProto &node) {
  const std::string &op = node.op_type();
  if (op == "Identity" || op == "Dropout") {
    Tensor *in = input(node, 0);
    if (!in)
      return false;
    if (op == "Dropout") {
      if (outputUsed(node, 1))
        return failAt(node, "its mask output is used; expected a Dropout "
                            "exported for inference (the identity)");
      llvm::errs() << graph.path << ": remark: " << describe(node)
                   << ": imported as the identity (inference)\n";
    }
    define(node, 0, *in);
    return true;
  }
  if (op == "MatMul")
    return importMatMul(node);
  if (op == "Gemm")
    return importGemm(node);
  if (op == "ReduceMean" || op == "ReduceSum" || op == "ReduceMax")
    return importReduce(node);
  if (op == "Softmax" || op == "LogSoftmax")
    return importSoftmax(node, op == "LogSoftmax");
  if (op == "LayerNormalization")
    return importLayerNorm(node);
  if (op == "SoftmaxCrossEntropyLoss")
    return importSoftmaxCrossEntropy(node);
  if (op == "Reshape" || op == "Flatten" || op == "Squeeze" ||
      op == "Unsqueeze")
    return importReshapeLike(node);
  if (op == "Transpose")
    return importTranspose(node);
  if (op == "Concat")
    return importConcat(node);
  if (op == "Slice")
    return importSlice(node);
  if (op == "Split")
    return importSplit(node);
  if (op == "Gather")
    return importGather(node);
  if (op == "Cast" || op == "CastLike")
    return importCast(node);
  if (op == "Constant" || op == "ConstantOfShape" || op == "Shape")
    return importConstant(node);
  if (op == "Expand")
    return importExpand(node);
  return importElementwise(node);
}

/// The scalar function of an element-wise operator on `element` operands,
/// for folding literals.
static std::optional<double> foldScalar(const std::string &op,
                                        ArrayRef<double> a, Element element) {
  bool isFloat = element == Element::Float;
  auto f = [](double v) { return double(float(v)); };
  if (op == "Add")
    return a[0] + a[1];
  if (op == "Sub")
    return a[0] - a[1];
  if (op == "Mul")
    return a[0] * a[1];
  if (op == "Div")
    return isFloat
               ? f(float(a[0]) / float(a[1]))
               : (a[1] == 0 ? std::nullopt
                            : std::optional<double>(std::trunc(a[0] / a[1])));
  if (op == "Pow")
    return f(std::pow(float(a[0]), float(a[1])));
  if (op == "Sqrt")
    return f(std::sqrt(float(a[0])));
  if (op == "Reciprocal")
    return f(1.0f / float(a[0]));
  if (op == "Neg")
    return -a[0];
  if (op == "Exp")
    return f(std::exp(float(a[0])));
  if (op == "Log")
    return f(std::log(float(a[0])));
  if (op == "Tanh")
    return f(std::tanh(float(a[0])));
  if (op == "Erf")
    return f(std::erf(float(a[0])));
  if (op == "Relu")
    return a[0] > 0 ? a[0] : 0.0;
  if (op == "Sigmoid")
    return f(1.0f / (1.0f + std::exp(-float(a[0]))));
  if (op == "Equal")
    return a[0] == a[1];
  if (op == "Less")
    return a[0] < a[1];
  if (op == "Greater")
    return a[0] > a[1];
  if (op == "Where")
    return a[0] != 0 ? a[1] : a[2];
  return std::nullopt;
}

bool Importer::importElementwise(const onnx::NodeProto &node) {
  const std::string &op = node.op_type();
  int arity =
      op == "Where" ? 3
      : (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" ||
         op == "Pow" || op == "Equal" || op == "Less" || op == "Greater")
          ? 2
          : 1;
  SmallVector<Tensor *> inputs;
  for (int i = 0; i < arity; ++i) {
    Tensor *tensor = input(node, i);
    if (!tensor)
      return false;
    inputs.push_back(tensor);
  }
  std::optional<std::vector<int64_t>> shape = inputs[0]->shape;
  for (Tensor *tensor : ArrayRef(inputs).drop_front())
    if (shape)
      shape = broadcastShapes(*shape, tensor->shape);
  if (!shape)
    return failAt(node, "its inputs' shapes do not broadcast");
  bool comparison = op == "Equal" || op == "Less" || op == "Greater";
  // The operands' element type (Where's are its second and third).
  Element element = op == "Where" ? inputs[1]->element : inputs[0]->element;
  if (op == "Where" && inputs[0]->element != Element::Bool)
    return failAt(node, "its condition is not bool");
  for (int i = op == "Where" ? 1 : 0; i < arity; ++i)
    if (inputs[i]->element != element)
      return failAt(node, "its inputs have different element types (" +
                              std::string(elementName(element)) + " and " +
                              elementName(inputs[i]->element) + ")");
  bool floatOnly = !(op == "Add" || op == "Sub" || op == "Mul" || op == "Div" ||
                     op == "Neg" || op == "Where" || comparison);
  if (floatOnly && element != Element::Float)
    return failAt(node, "its input is " + std::string(elementName(element)) +
                            "; expected float");
  if (element == Element::Bool && op != "Where")
    return failAt(node, "its inputs are bool; expected numbers");
  Element result = comparison ? Element::Bool : element;

  // Known inputs: the value is known too.
  if (llvm::all_of(inputs, [](Tensor *t) { return t->literal.has_value(); })) {
    std::vector<const Literal *> literals;
    for (Tensor *tensor : inputs)
      literals.push_back(&*tensor->literal);
    bool divisionByZero = false;
    Literal folded = foldElementwise(
        literals, *shape, result, [&](const std::vector<double> &a) {
          std::optional<double> v = foldScalar(op, a, element);
          divisionByZero |= !v;
          return v.value_or(0.0);
        });
    if (divisionByZero)
      return failAt(node, "divides an integer by zero");
    Tensor tensor;
    tensor.element = result;
    tensor.shape = *shape;
    tensor.literal = std::move(folded);
    define(node, 0, std::move(tensor));
    return true;
  }

  if (op == "Pow") {
    // A constant exponent carries no gradient; squares and square roots
    // are exact operations.
    if (!inputs[1]->literal)
      return failAt(node, "its exponent is computed at run time; expected a "
                          "constant exponent");
    if (!inputs[1]->literal->isSplat())
      return failAt(node, "its exponent is not one value; expected a scalar "
                          "exponent");
  }
  Type resultType = elementType(result);
  bool isFloat = element == Element::Float;
  Value value = map(
      inputs, *shape, resultType,
      [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
        auto zero = [&]() { return scalar(element, 0.0, b, l); };
        auto one = [&]() { return scalar(Element::Float, 1.0, b, l); };
        if (op == "Add")
          return isFloat ? Value(arith::AddFOp::create(b, l, a[0], a[1]))
                         : Value(arith::AddIOp::create(b, l, a[0], a[1]));
        if (op == "Sub")
          return isFloat ? Value(arith::SubFOp::create(b, l, a[0], a[1]))
                         : Value(arith::SubIOp::create(b, l, a[0], a[1]));
        if (op == "Mul")
          return isFloat ? Value(arith::MulFOp::create(b, l, a[0], a[1]))
                         : Value(arith::MulIOp::create(b, l, a[0], a[1]));
        if (op == "Div")
          return isFloat ? Value(arith::DivFOp::create(b, l, a[0], a[1]))
                         : Value(arith::DivSIOp::create(b, l, a[0], a[1]));
        if (op == "Neg")
          return isFloat ? Value(arith::NegFOp::create(b, l, a[0]))
                         : Value(arith::SubIOp::create(b, l, zero(), a[0]));
        if (op == "Pow") {
          double exponent = inputs[1]->literal->at(0);
          if (exponent == 1.0)
            return a[0];
          if (exponent == 2.0)
            return arith::MulFOp::create(b, l, a[0], a[0]);
          if (exponent == 0.5)
            return math::SqrtOp::create(b, l, a[0]);
          return math::PowFOp::create(b, l, a[0], a[1]);
        }
        if (op == "Sqrt")
          return math::SqrtOp::create(b, l, a[0]);
        if (op == "Reciprocal")
          return arith::DivFOp::create(b, l, one(), a[0]);
        if (op == "Exp")
          return math::ExpOp::create(b, l, a[0]);
        if (op == "Log")
          return math::LogOp::create(b, l, a[0]);
        if (op == "Tanh")
          return math::TanhOp::create(b, l, a[0]);
        if (op == "Erf")
          return math::ErfOp::create(b, l, a[0]);
        if (op == "Relu") {
          // Gradient 0 at 0, as PyTorch's.
          Value positive = arith::CmpFOp::create(
              b, l, arith::CmpFPredicate::OGT, a[0], zero());
          return arith::SelectOp::create(b, l, positive, a[0], zero());
        }
        if (op == "Sigmoid") {
          Value e =
              math::ExpOp::create(b, l, arith::NegFOp::create(b, l, a[0]));
          return arith::DivFOp::create(b, l, one(),
                                       arith::AddFOp::create(b, l, one(), e));
        }
        if (op == "Where")
          return arith::SelectOp::create(b, l, a[0], a[1], a[2]);
        // Comparisons.
        if (isFloat)
          return arith::CmpFOp::create(b, l,
                                       op == "Equal" ? arith::CmpFPredicate::OEQ
                                       : op == "Less"
                                           ? arith::CmpFPredicate::OLT
                                           : arith::CmpFPredicate::OGT,
                                       a[0], a[1]);
        return arith::CmpIOp::create(b, l,
                                     op == "Equal"  ? arith::CmpIPredicate::eq
                                     : op == "Less" ? arith::CmpIPredicate::slt
                                                    : arith::CmpIPredicate::sgt,
                                     a[0], a[1]);
      });
  defineValue(node, 0, value, result);
  return true;
}

bool Importer::importMatMul(const onnx::NodeProto &node) {
  Tensor *a, *b;
  if (!inputs(node, {&a, &b}))
    return false;
  if (a->element != Element::Float || b->element != Element::Float)
    return failAt(node, "its inputs are not float");
  if (a->shape.empty() || b->shape.empty())
    return failAt(node, "an input is a scalar; expected tensors of rank 1 or "
                        "more");
  int64_t k = a->shape.back();
  int64_t kb = b->rank() == 1 ? b->shape[0] : b->shape[size_t(b->rank() - 2)];
  std::vector<int64_t> batchA(a->shape.begin(),
                              a->shape.end() - std::min<int64_t>(2, a->rank()));
  std::vector<int64_t> batchB(b->shape.begin(),
                              b->shape.end() - std::min<int64_t>(2, b->rank()));
  if (k != kb || !broadcastShapes(batchA, batchB))
    return failAt(node, "the shapes of its inputs do not multiply");
  defineValue(node, 0, matmul(materialize(*a), materialize(*b)),
              Element::Float);
  return true;
}

bool Importer::importGemm(const onnx::NodeProto &node) {
  Tensor *a, *b;
  if (!inputs(node, {&a, &b}))
    return false;
  if (a->rank() != 2 || b->rank() != 2 || a->element != Element::Float ||
      b->element != Element::Float)
    return failAt(node, "expected two float matrices");
  bool transA = intAttribute(node, "transA", 0),
       transB = intAttribute(node, "transB", 0);
  float alpha = floatAttribute(node, "alpha", 1.0f),
        beta = floatAttribute(node, "beta", 1.0f);
  int64_t m = a->shape[transA ? 1 : 0], k = a->shape[transA ? 0 : 1];
  int64_t kb = b->shape[transB ? 1 : 0], n = b->shape[transB ? 0 : 1];
  if (k != kb)
    return failAt(node, "the shapes of its inputs do not multiply");
  AffineExpr dm = builder.getAffineDimExpr(0), dn = builder.getAffineDimExpr(1),
             dk = builder.getAffineDimExpr(2);
  auto map3 = [&](AffineExpr x, AffineExpr y) {
    return AffineMap::get(3, 0, {x, y}, context);
  };
  Value product =
      generic({materialize(*a), materialize(*b)},
              {transA ? map3(dk, dm) : map3(dm, dk),
               transB ? map3(dn, dk) : map3(dk, dn), map3(dm, dn)},
              filled({m, n}, f32, 0.0),
              {utils::IteratorType::parallel, utils::IteratorType::parallel,
               utils::IteratorType::reduction},
              [](OpBuilder &b, Location l, ValueRange x) -> Value {
                return arith::AddFOp::create(
                    b, l, arith::MulFOp::create(b, l, x[0], x[1]), x[2]);
              });
  Tensor productTensor;
  productTensor.shape = {m, n};
  productTensor.value = product;
  SmallVector<Tensor *> operands = {&productTensor};
  Tensor *c = nullptr;
  if (hasInput(node, 2)) {
    c = input(node, 2);
    if (!c)
      return false;
    if (c->element != Element::Float ||
        broadcastShapes(c->shape, {m, n}) != std::vector<int64_t>{m, n})
      return failAt(node, "its third input does not broadcast to the "
                          "product's shape");
    operands.push_back(c);
  }
  if (alpha == 1.0f && !c) {
    defineValue(node, 0, product, Element::Float);
    return true;
  }
  Value value = map(operands, {m, n}, f32,
                    [&](OpBuilder &b, Location l, ArrayRef<Value> x) -> Value {
                      Value y = x[0];
                      if (alpha != 1.0f)
                        y = arith::MulFOp::create(
                            b, l, y, scalar(Element::Float, alpha, b, l));
                      if (x.size() < 2)
                        return y;
                      Value bias = x[1];
                      if (beta != 1.0f)
                        bias = arith::MulFOp::create(
                            b, l, bias, scalar(Element::Float, beta, b, l));
                      return arith::AddFOp::create(b, l, y, bias);
                    });
  defineValue(node, 0, value, Element::Float);
  return true;
}

bool Importer::importReduce(const onnx::NodeProto &node) {
  const std::string &op = node.op_type();
  Tensor *in = input(node, 0);
  if (!in)
    return false;
  if (in->element != Element::Float)
    return failAt(node, "its input is not float");
  std::vector<int64_t> axes;
  // ReduceSum takes its axes as an input from opset 13 on, the others
  // from opset 18 (beyond what is imported).
  if (op == "ReduceSum") {
    if (hasInput(node, 1)) {
      const Literal *literal = literalInput(node, 1, "its axes");
      if (!literal)
        return false;
      for (int64_t i = 0; i < literal->size(); ++i)
        axes.push_back(literal->intAt(i));
    }
  } else {
    axes = intsAttribute(node, "axes");
  }
  bool keep = intAttribute(node, "keepdims", 1);
  if (axes.empty() && intAttribute(node, "noop_with_empty_axes", 0)) {
    define(node, 0, *in);
    return true;
  }
  SmallVector<bool> reduced(in->shape.size(), axes.empty());
  for (int64_t axis : axes) {
    int64_t a = normalizeAxis(axis, in->rank());
    if (a < 0)
      return failAt(node, "axis " + std::to_string(axis) +
                              " is out of range for rank " +
                              std::to_string(in->rank()));
    reduced[size_t(a)] = true;
  }
  int64_t count = 1;
  std::vector<int64_t> keptShape;
  for (size_t d = 0; d < in->shape.size(); ++d) {
    if (reduced[d])
      count *= in->shape[d];
    keptShape.push_back(reduced[d] ? 1 : in->shape[d]);
  }
  bool isMax = op == "ReduceMax";
  Value value =
      reduce(materialize(*in), reduced,
             isMax ? -std::numeric_limits<double>::infinity() : 0.0,
             [&](OpBuilder &b, Location l, ValueRange a) -> Value {
               return isMax ? Value(arith::MaximumFOp::create(b, l, a[0], a[1]))
                            : Value(arith::AddFOp::create(b, l, a[0], a[1]));
             });
  if (op == "ReduceMean")
    value = mapValues(
        {value}, shapeOf(value), f32,
        [&](OpBuilder &b, Location l, ArrayRef<Value> a) {
          return Value(arith::DivFOp::create(
              b, l, a[0], scalar(Element::Float, double(count), b, l)));
        });
  if (keep)
    value = reshape(value, keptShape);
  defineValue(node, 0, value, Element::Float);
  return true;
}

bool Importer::importSoftmax(const onnx::NodeProto &node, bool logarithm) {
  Tensor *in = input(node, 0);
  if (!in)
    return false;
  if (in->element != Element::Float || in->shape.empty())
    return failAt(node, "expected a float tensor of rank 1 or more");
  int64_t axis = normalizeAxis(intAttribute(node, "axis", -1), in->rank());
  if (axis < 0)
    return failAt(node, "its axis is out of range");
  defineValue(node, 0, softmax(materialize(*in), axis, logarithm),
              Element::Float);
  return true;
}

bool Importer::importLayerNorm(const onnx::NodeProto &node) {
  Tensor *x, *scale;
  if (!inputs(node, {&x, &scale}))
    return false;
  Tensor *bias = nullptr;
  if (hasInput(node, 2) && !(bias = input(node, 2)))
    return false;
  if (outputUsed(node, 1) || outputUsed(node, 2))
    return failAt(node, "its mean or inverse deviation output is used; "
                        "expected only the normalized output");
  int64_t axis = normalizeAxis(intAttribute(node, "axis", -1), x->rank());
  if (axis < 0)
    return failAt(node, "its axis is out of range");
  std::vector<int64_t> normalized(x->shape.begin() + axis, x->shape.end());
  for (Tensor *t : {scale, bias})
    if (t && (t->element != Element::Float ||
              broadcastShapes(t->shape, normalized) != normalized))
      return failAt(node, "its scale or bias does not broadcast to the "
                          "normalized dimensions");
  double epsilon = floatAttribute(node, "epsilon", 1e-5f);
  SmallVector<bool> reduced(x->shape.size(), false);
  for (size_t d = size_t(axis); d < reduced.size(); ++d)
    reduced[d] = true;
  double count = double(elementCount(normalized));
  Value value = materialize(*x);
  auto sum = [](OpBuilder &b, Location l, ValueRange a) -> Value {
    return arith::AddFOp::create(b, l, a[0], a[1]);
  };
  Value mean =
      mapValues({reduce(value, reduced, 0.0, sum)},
                std::vector<int64_t>(x->shape.begin(), x->shape.begin() + axis),
                f32, [&](OpBuilder &b, Location l, ArrayRef<Value> a) {
                  return Value(arith::DivFOp::create(
                      b, l, a[0], scalar(Element::Float, count, b, l)));
                });
  Value centred =
      withReduced(value, mean, reduced,
                  [](OpBuilder &b, Location l, ValueRange a) -> Value {
                    return arith::SubFOp::create(b, l, a[0], a[1]);
                  });
  Value squares = reduce(centred, reduced, 0.0,
                         [](OpBuilder &b, Location l, ValueRange a) -> Value {
                           Value sq = arith::MulFOp::create(b, l, a[0], a[0]);
                           return arith::AddFOp::create(b, l, sq, a[1]);
                         });
  Value inverse = mapValues(
      {squares}, shapeOf(squares), f32,
      [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
        Value variance = arith::DivFOp::create(
            b, l, a[0], scalar(Element::Float, count, b, l));
        return math::RsqrtOp::create(
            b, l,
            arith::AddFOp::create(b, l, variance,
                                  scalar(Element::Float, epsilon, b, l)));
      });
  Value normalizedValue =
      withReduced(centred, inverse, reduced,
                  [](OpBuilder &b, Location l, ValueRange a) -> Value {
                    return arith::MulFOp::create(b, l, a[0], a[1]);
                  });
  Tensor normalizedTensor;
  normalizedTensor.shape = x->shape;
  normalizedTensor.value = normalizedValue;
  SmallVector<Tensor *> operands = {&normalizedTensor, scale};
  if (bias)
    operands.push_back(bias);
  Value result = map(operands, x->shape, f32,
                     [](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
                       Value y = arith::MulFOp::create(b, l, a[0], a[1]);
                       return a.size() > 2
                                  ? Value(arith::AddFOp::create(b, l, y, a[2]))
                                  : y;
                     });
  defineValue(node, 0, result, Element::Float);
  return true;
}

bool Importer::importSoftmaxCrossEntropy(const onnx::NodeProto &node) {
  Tensor *scores, *labels;
  if (!inputs(node, {&scores, &labels}))
    return false;
  if (hasInput(node, 2))
    return failAt(node, "it has class weights; expected none");
  if (outputUsed(node, 1))
    return failAt(node, "its log-probability output is used; expected only "
                        "the loss");
  std::string reduction = stringAttribute(node, "reduction", "mean");
  if (reduction != "mean" && reduction != "sum")
    return failAt(node,
                  "its reduction is '" + reduction + "'; expected mean or sum");
  std::vector<int64_t> expected = scores->shape;
  if (scores->rank() >= 2)
    expected.erase(expected.begin() + 1);
  if (scores->element != Element::Float || scores->rank() < 2 ||
      labels->element != Element::Int || labels->shape != expected)
    return failAt(node, "expected float scores [N, C, ...] and integer "
                        "labels [N, ...]");
  std::optional<int64_t> ignore;
  if (attribute(node, "ignore_index"))
    ignore = intAttribute(node, "ignore_index", 0);
  defineValue(node, 0,
              crossEntropy(materialize(*scores), materialize(*labels), 1,
                           ignore, reduction == "mean"),
              Element::Float);
  return true;
}

bool Importer::importReshapeLike(const onnx::NodeProto &node) {
  const std::string &op = node.op_type();
  Tensor *in = input(node, 0);
  if (!in)
    return false;
  std::vector<int64_t> shape;
  int64_t count = elementCount(in->shape);
  if (op == "Reshape") {
    const Literal *spec = literalInput(node, 1, "its shape");
    if (!spec)
      return false;
    bool allowZero = intAttribute(node, "allowzero", 0);
    int64_t inferred = -1, known = 1;
    for (int64_t i = 0; i < spec->size(); ++i) {
      int64_t extent = spec->intAt(i);
      if (extent == 0 && !allowZero) {
        if (i >= in->rank())
          return failAt(node, "its shape copies dimension " +
                                  std::to_string(i) + " the input lacks");
        extent = in->shape[size_t(i)];
      }
      if (extent == -1) {
        if (inferred >= 0)
          return failAt(node, "its shape infers more than one dimension");
        inferred = i;
      } else if (extent < 0) {
        return failAt(node, "its shape has a negative size");
      } else {
        known *= extent;
      }
      shape.push_back(extent);
    }
    if (inferred >= 0) {
      if (known == 0 || count % known)
        return failAt(node, "its shape does not divide the input's size");
      shape[size_t(inferred)] = count / known;
    }
  } else if (op == "Flatten") {
    int64_t axis = intAttribute(node, "axis", 1);
    axis = axis < 0 ? axis + in->rank() : axis;
    if (axis < 0 || axis > in->rank())
      return failAt(node, "its axis is out of range");
    int64_t outer = elementCount({in->shape.begin(), in->shape.begin() + axis});
    shape = {outer, count / outer};
  } else {
    std::vector<int64_t> axes;
    if (hasInput(node, 1)) {
      const Literal *literal = literalInput(node, 1, "its axes");
      if (!literal)
        return false;
      for (int64_t i = 0; i < literal->size(); ++i)
        axes.push_back(literal->intAt(i));
    }
    if (op == "Squeeze") {
      SmallVector<bool> drop(in->shape.size(), axes.empty());
      for (int64_t axis : axes) {
        int64_t a = normalizeAxis(axis, in->rank());
        if (a < 0 || in->shape[size_t(a)] != 1)
          return failAt(node, "axis " + std::to_string(axis) +
                                  " is not a dimension of size 1");
        drop[size_t(a)] = true;
      }
      for (size_t d = 0; d < in->shape.size(); ++d)
        if (!(drop[d] && in->shape[d] == 1))
          shape.push_back(in->shape[d]);
    } else {
      int64_t rank = in->rank() + int64_t(axes.size());
      SmallVector<bool> inserted(size_t(rank), false);
      for (int64_t axis : axes) {
        int64_t a = normalizeAxis(axis, rank);
        if (a < 0 || inserted[size_t(a)])
          return failAt(node, "axis " + std::to_string(axis) +
                                  " is out of range or repeated");
        inserted[size_t(a)] = true;
      }
      size_t next = 0;
      for (int64_t d = 0; d < rank; ++d)
        shape.push_back(inserted[size_t(d)] ? 1 : in->shape[next++]);
    }
  }
  if (elementCount(shape) != count)
    return failAt(node, "its shape changes the number of elements");
  Tensor result;
  result.element = in->element;
  result.shape = shape;
  if (in->literal)
    result.literal = reshaped(*in->literal, shape);
  else
    result.value = reshape(materialize(*in), shape);
  define(node, 0, std::move(result));
  return true;
}

bool Importer::importTranspose(const onnx::NodeProto &node) {
  Tensor *in = input(node, 0);
  if (!in)
    return false;
  std::vector<int64_t> perm = intsAttribute(node, "perm");
  if (perm.empty())
    for (int64_t d = in->rank(); d-- > 0;)
      perm.push_back(d);
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> identity(size_t(in->rank()));
  std::iota(identity.begin(), identity.end(), 0);
  if (sorted != identity)
    return failAt(node, "its perm is not a permutation of the input's "
                        "dimensions");
  std::vector<int64_t> shape;
  for (int64_t axis : perm)
    shape.push_back(in->shape[size_t(axis)]);
  Tensor result;
  result.element = in->element;
  result.shape = shape;
  if (in->literal) {
    result.literal = transpose(*in->literal, perm);
  } else {
    result.value = transposeTensor(builder, loc, materialize(*in), perm);
  }
  define(node, 0, std::move(result));
  return true;
}

bool Importer::importConcat(const onnx::NodeProto &node) {
  SmallVector<Tensor *> inputs;
  for (int i = 0; i < node.input_size(); ++i) {
    Tensor *tensor = input(node, i);
    if (!tensor)
      return false;
    inputs.push_back(tensor);
  }
  if (inputs.empty())
    return failAt(node, "it has no inputs");
  int64_t rank = inputs[0]->rank();
  int64_t axis = normalizeAxis(intAttribute(node, "axis", 0), rank);
  if (axis < 0)
    return failAt(node, "its axis is out of range");
  for (Tensor *tensor : inputs) {
    bool fits = tensor->rank() == rank && tensor->element == inputs[0]->element;
    for (int64_t d = 0; fits && d < rank; ++d)
      fits =
          d == axis || tensor->shape[size_t(d)] == inputs[0]->shape[size_t(d)];
    if (!fits)
      return failAt(node, "its inputs differ in rank, element type or a "
                          "dimension other than the axis");
  }
  if (llvm::all_of(inputs, [](Tensor *t) { return t->literal.has_value(); })) {
    std::vector<const Literal *> literals;
    for (Tensor *tensor : inputs)
      literals.push_back(&*tensor->literal);
    Tensor result;
    result.element = inputs[0]->element;
    result.literal = concat(literals, axis);
    result.shape = result.literal->shape;
    define(node, 0, std::move(result));
    return true;
  }
  SmallVector<Value> operands;
  for (Tensor *tensor : inputs)
    operands.push_back(materialize(*tensor));
  Value value =
      operands.size() == 1
          ? operands[0]
          : Value(tensor::ConcatOp::create(builder, loc, axis, operands));
  defineValue(node, 0, value, inputs[0]->element);
  return true;
}

/// A slice of `value` along one axis.
static Value sliceAlong(OpBuilder &builder, Location loc, Value value,
                        int64_t axis, int64_t start, int64_t size) {
  auto type = llvm::cast<RankedTensorType>(value.getType());
  SmallVector<OpFoldResult> offsets, sizes, strides;
  SmallVector<int64_t> shape(type.getShape());
  for (int64_t d = 0; d < type.getRank(); ++d) {
    offsets.push_back(builder.getIndexAttr(d == axis ? start : 0));
    sizes.push_back(builder.getIndexAttr(d == axis ? size : shape[d]));
    strides.push_back(builder.getIndexAttr(1));
  }
  shape[size_t(axis)] = size;
  return tensor::ExtractSliceOp::create(
      builder, loc, RankedTensorType::get(shape, type.getElementType()), value,
      offsets, sizes, strides);
}

bool Importer::importSlice(const onnx::NodeProto &node) {
  Tensor *in = input(node, 0);
  if (!in)
    return false;
  const Literal *starts = literalInput(node, 1, "its starts");
  const Literal *ends = starts ? literalInput(node, 2, "its ends") : nullptr;
  if (!ends)
    return false;
  const Literal *axes = nullptr, *steps = nullptr;
  if (hasInput(node, 3) && !(axes = literalInput(node, 3, "its axes")))
    return false;
  if (hasInput(node, 4) && !(steps = literalInput(node, 4, "its steps")))
    return false;
  if (starts->size() != ends->size() ||
      (axes && axes->size() != starts->size()) ||
      (steps && steps->size() != starts->size()))
    return failAt(node, "its starts, ends, axes and steps differ in length");
  int64_t rank = in->rank();
  std::vector<int64_t> offset(size_t(rank), 0), size = in -> shape,
                                                stride(size_t(rank), 1);
  for (int64_t i = 0; i < starts->size(); ++i) {
    int64_t axis = axes ? normalizeAxis(axes->intAt(i), rank) : i;
    if (axis < 0 || axis >= rank)
      return failAt(node, "an axis is out of range");
    int64_t extent = in->shape[size_t(axis)];
    int64_t step = steps ? steps->intAt(i) : 1;
    if (step <= 0)
      return failAt(node, "step " + std::to_string(step) +
                              " is not positive; expected positive steps");
    auto clampIndex = [&](int64_t v) {
      if (v < 0)
        v += extent;
      return std::clamp<int64_t>(v, 0, extent);
    };
    int64_t start = clampIndex(starts->intAt(i)),
            end = clampIndex(ends->intAt(i));
    offset[size_t(axis)] = start;
    size[size_t(axis)] = end > start ? (end - start + step - 1) / step : 0;
    stride[size_t(axis)] = step;
    if (size[size_t(axis)] == 0)
      return failAt(node, "it selects no elements along axis " +
                              std::to_string(axis));
  }
  Tensor result;
  result.element = in->element;
  result.shape = size;
  if (in->literal) {
    result.literal = slice(*in->literal, offset, size, stride);
  } else {
    auto toAttrs = [&](const std::vector<int64_t> &v) {
      SmallVector<OpFoldResult> attrs;
      for (int64_t x : v)
        attrs.push_back(builder.getIndexAttr(x));
      return attrs;
    };
    result.value = tensor::ExtractSliceOp::create(
        builder, loc, tensorType(size, in->element), materialize(*in),
        toAttrs(offset), toAttrs(size), toAttrs(stride));
  }
  define(node, 0, std::move(result));
  return true;
}

bool Importer::importSplit(const onnx::NodeProto &node) {
  Tensor *in = input(node, 0);
  if (!in)
    return false;
  int64_t axis = normalizeAxis(intAttribute(node, "axis", 0), in->rank());
  if (axis < 0)
    return failAt(node, "its axis is out of range");
  int64_t extent = in->shape[size_t(axis)];
  int64_t parts = node.output_size();
  std::vector<int64_t> sizes;
  if (hasInput(node, 1)) {
    const Literal *split = literalInput(node, 1, "its split sizes");
    if (!split)
      return false;
    for (int64_t i = 0; i < split->size(); ++i)
      sizes.push_back(split->intAt(i));
  } else {
    if (extent % parts)
      return failAt(node, "dimension " + std::to_string(axis) + " of " +
                              std::to_string(extent) + " does not split into " +
                              std::to_string(parts) + " equal parts");
    sizes.assign(size_t(parts), extent / parts);
  }
  if (int64_t(sizes.size()) != parts ||
      std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) != extent)
    return failAt(node, "its split sizes do not add up to dimension " +
                            std::to_string(axis) + " over its outputs");
  int64_t start = 0;
  for (int64_t i = 0; i < parts; ++i) {
    Tensor result;
    result.element = in->element;
    result.shape = in->shape;
    result.shape[size_t(axis)] = sizes[size_t(i)];
    if (in->literal) {
      std::vector<int64_t> offsets(size_t(in->rank()), 0),
          strides(size_t(in -> rank()), 1);
      offsets[size_t(axis)] = start;
      result.literal = slice(*in->literal, offsets, result.shape, strides);
    } else {
      result.value = sliceAlong(builder, loc, materialize(*in), axis, start,
                                sizes[size_t(i)]);
    }
    start += sizes[size_t(i)];
    define(node, int(i), std::move(result));
  }
  return true;
}

bool Importer::importGather(const onnx::NodeProto &node) {
  Tensor *data, *indices;
  if (!inputs(node, {&data, &indices}))
    return false;
  if (indices->element != Element::Int)
    return failAt(node, "its indices are not integers");
  int64_t axis = normalizeAxis(intAttribute(node, "axis", 0), data->rank());
  if (axis < 0)
    return failAt(node, "its axis is out of range");
  int64_t extent = data->shape[size_t(axis)];
  std::vector<int64_t> shape(data->shape.begin(), data->shape.begin() + axis);
  shape.insert(shape.end(), indices->shape.begin(), indices->shape.end());
  shape.insert(shape.end(), data->shape.begin() + axis + 1, data->shape.end());

  if (data->literal && indices->literal) {
    std::string error;
    Tensor result;
    result.element = data->element;
    result.shape = shape;
    result.literal = gather(*data->literal, *indices->literal, axis, error);
    if (!error.empty())
      return failAt(node, error);
    define(node, 0, std::move(result));
    return true;
  }
  Value table = materialize(*data);
  if (indices->literal) {
    // Known indices: slices of the runs of consecutive ones.
    SmallVector<Value> pieces;
    const Literal &known = *indices->literal;
    for (int64_t i = 0; i < known.size();) {
      int64_t first = known.intAt(i);
      first = first < 0 ? first + extent : first;
      if (first < 0 || first >= extent)
        return failAt(node, "index " + std::to_string(known.intAt(i)) +
                                " is out of range for a dimension of " +
                                std::to_string(extent));
      int64_t run = 1;
      while (i + run < known.size()) {
        int64_t next = known.intAt(i + run);
        next = next < 0 ? next + extent : next;
        if (next != first + run)
          break;
        ++run;
      }
      pieces.push_back(sliceAlong(builder, loc, table, axis, first, run));
      i += run;
    }
    Value joined =
        pieces.size() == 1
            ? pieces[0]
            : Value(tensor::ConcatOp::create(builder, loc, axis, pieces));
    defineValue(node, 0, reshape(joined, shape), data->element);
    return true;
  }
  // Indices known at run time. An embedding (rows of a float matrix) is
  // the product of the ids' one-hot rows and the table, exact, and an sgemm
  // forward and backward on the CPU: out = onehot(ids) [N, V] x data [V, H].
  if (axis == 0 && data->rank() == 2 && data->element == Element::Float) {
    int64_t count = elementCount(indices->shape), width = data->shape[1];
    Value ids = reshape(materialize(*indices), {count});
    Value oneHot =
        generic({ids},
                {AffineMap::get(2, 0, {builder.getAffineDimExpr(0)}, context),
                 builder.getMultiDimIdentityMap(2)},
                empty({count, extent}, f32),
                {utils::IteratorType::parallel, utils::IteratorType::parallel},
                [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                  Value id = a[0];
                  Value negative =
                      arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, id,
                                            scalar(Element::Int, 0, b, l));
                  id = arith::SelectOp::create(
                      b, l, negative,
                      arith::AddIOp::create(b, l, id,
                                            scalar(Element::Int, extent, b, l)),
                      id);
                  Value column = arith::IndexCastOp::create(
                      b, l, i64, linalg::IndexOp::create(b, l, 1));
                  Value hit = arith::CmpIOp::create(
                      b, l, arith::CmpIPredicate::eq, id, column);
                  return arith::UIToFPOp::create(b, l, f32, hit);
                });
    Value rows =
        linalg::MatmulOp::create(
            builder, loc, TypeRange{RankedTensorType::get({count, width}, f32)},
            ValueRange{oneHot, table},
            ValueRange{filled({count, width}, f32, 0.0)})
            .getResult(0);
    defineValue(node, 0, reshape(rows, shape), Element::Float);
    return true;
  }
  // Otherwise a one-hot contraction over the gathered dimension,
  // out[pre, idx, post] = sum_v (ids[idx] == v) data[pre, v, post], so that
  // a gradient reaches the table.
  unsigned pre = unsigned(axis), idx = unsigned(indices->rank()),
           post = unsigned(data->rank() - axis - 1);
  unsigned loops = pre + idx + post + 1, vDim = loops - 1;
  SmallVector<AffineExpr> dataResults, idResults, outResults;
  for (unsigned d = 0; d < pre; ++d)
    dataResults.push_back(builder.getAffineDimExpr(d));
  dataResults.push_back(builder.getAffineDimExpr(vDim));
  for (unsigned d = 0; d < post; ++d)
    dataResults.push_back(builder.getAffineDimExpr(pre + idx + d));
  for (unsigned d = 0; d < idx; ++d)
    idResults.push_back(builder.getAffineDimExpr(pre + d));
  for (unsigned d = 0; d + 1 < loops; ++d)
    outResults.push_back(builder.getAffineDimExpr(d));
  SmallVector<utils::IteratorType> iterators(loops - 1,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Type element = elementType(data->element);
  Value value = generic(
      {table, materialize(*indices)},
      {AffineMap::get(loops, 0, dataResults, context),
       AffineMap::get(loops, 0, idResults, context),
       AffineMap::get(loops, 0, outResults, context)},
      filled(shape, element, 0.0), iterators,
      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        // A negative id counts from the end of the dimension.
        Value id = a[1];
        Value negative = arith::CmpIOp::create(
            b, l, arith::CmpIPredicate::slt, id, scalar(Element::Int, 0, b, l));
        id = arith::SelectOp::create(
            b, l, negative,
            arith::AddIOp::create(b, l, id, scalar(Element::Int, extent, b, l)),
            id);
        Value v = arith::IndexCastOp::create(
            b, l, i64, linalg::IndexOp::create(b, l, vDim));
        Value hit =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, id, v);
        if (data->element == Element::Float)
          return arith::AddFOp::create(
              b, l,
              arith::SelectOp::create(b, l, hit, a[0],
                                      scalar(Element::Float, 0.0, b, l)),
              a[2]);
        return arith::AddIOp::create(
            b, l,
            arith::SelectOp::create(b, l, hit, a[0],
                                    scalar(data->element, 0.0, b, l)),
            a[2]);
      });
  defineValue(node, 0, value, data->element);
  return true;
}

bool Importer::importCast(const onnx::NodeProto &node) {
  Tensor *in = input(node, 0);
  if (!in)
    return false;
  Element to;
  if (node.op_type() == "CastLike") {
    Tensor *like = input(node, 1);
    if (!like)
      return false;
    to = like->element;
  } else {
    int64_t type = intAttribute(node, "to", 0);
    if (type == onnx::TensorProto::FLOAT)
      to = Element::Float;
    else if (type == onnx::TensorProto::INT64 ||
             type == onnx::TensorProto::INT32)
      to = Element::Int;
    else if (type == onnx::TensorProto::BOOL)
      to = Element::Bool;
    else
      return failAt(node, "it casts to data type " + std::to_string(type) +
                              "; expected FLOAT, INT64, INT32 or BOOL");
  }
  Element from = in->element;
  if (from == to) {
    define(node, 0, *in);
    return true;
  }
  Tensor result;
  result.element = to;
  result.shape = in->shape;
  if (in->literal) {
    result.literal = hetero::onnx_import::cast(*in->literal, to);
    define(node, 0, std::move(result));
    return true;
  }
  Type target = elementType(to);
  result.value =
      map({in}, in->shape, target,
          [&](OpBuilder &b, Location l, ArrayRef<Value> a) -> Value {
            if (to == Element::Bool)
              return from == Element::Float
                         ? Value(arith::CmpFOp::create(
                               b, l, arith::CmpFPredicate::UNE, a[0],
                               scalar(Element::Float, 0, b, l)))
                         : Value(arith::CmpIOp::create(
                               b, l, arith::CmpIPredicate::ne, a[0],
                               scalar(Element::Int, 0, b, l)));
            if (to == Element::Float)
              return from == Element::Bool
                         ? Value(arith::UIToFPOp::create(b, l, f32, a[0]))
                         : Value(arith::SIToFPOp::create(b, l, f32, a[0]));
            return from == Element::Bool
                       ? Value(arith::ExtUIOp::create(b, l, i64, a[0]))
                       : Value(arith::FPToSIOp::create(b, l, i64, a[0]));
          });
  define(node, 0, std::move(result));
  return true;
}

bool Importer::importConstant(const onnx::NodeProto &node) {
  const std::string &op = node.op_type();
  Tensor result;
  if (op == "Shape") {
    Tensor *in = input(node, 0);
    if (!in)
      return false;
    int64_t rank = in->rank();
    auto clampIndex = [&](int64_t v) {
      return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank);
    };
    int64_t start = clampIndex(intAttribute(node, "start", 0)),
            end = clampIndex(intAttribute(node, "end", rank));
    std::vector<int64_t> dims(in->shape.begin() + start,
                              in->shape.begin() + std::max(start, end));
    result.literal = Literal::ofInts(dims, {int64_t(dims.size())});
  } else if (op == "ConstantOfShape") {
    const Literal *spec = literalInput(node, 0, "its shape");
    if (!spec)
      return false;
    std::vector<int64_t> shape;
    for (int64_t i = 0; i < spec->size(); ++i)
      shape.push_back(spec->intAt(i));
    Literal fill = Literal::scalarFloat(0.0);
    if (const onnx::AttributeProto *value = attribute(node, "value")) {
      std::string error;
      fill = decodeTensor(value->t(), error);
      if (!error.empty())
        return failAt(node, "its value " + error);
      if (fill.size() != 1)
        return failAt(node, "its value is not one element");
    }
    result.literal = Literal::filled(fill.element, shape, fill.at(0));
  } else {
    const onnx::AttributeProto *attr = nullptr;
    for (const char *name :
         {"value", "value_float", "value_floats", "value_int", "value_ints"})
      if ((attr = attribute(node, name)))
        break;
    if (!attr)
      return failAt(node, "it has no value, value_float(s) or value_int(s); "
                          "expected one of them (sparse and string constants "
                          "are not supported)");
    if (attr->name() == "value") {
      std::string error;
      result.literal = decodeTensor(attr->t(), error);
      if (!error.empty())
        return failAt(node, "its value " + error);
    } else if (attr->name() == "value_float") {
      result.literal = Literal::scalarFloat(attr->f());
    } else if (attr->name() == "value_floats") {
      Literal literal;
      literal.shape = {int64_t(attr->floats_size())};
      literal.floats.assign(attr->floats().begin(), attr->floats().end());
      result.literal = literal;
    } else if (attr->name() == "value_int") {
      result.literal = Literal::ofInts({attr->i()}, {});
    } else {
      std::vector<int64_t> ints(attr->ints().begin(), attr->ints().end());
      result.literal = Literal::ofInts(ints, {int64_t(ints.size())});
    }
  }
  result.element = result.literal->element;
  result.shape = result.literal->shape;
  define(node, 0, std::move(result));
  return true;
}

bool Importer::importExpand(const onnx::NodeProto &node) {
  Tensor *in = input(node, 0);
  if (!in)
    return false;
  const Literal *spec = literalInput(node, 1, "its shape");
  if (!spec)
    return false;
  std::vector<int64_t> wanted;
  for (int64_t i = 0; i < spec->size(); ++i)
    wanted.push_back(spec->intAt(i));
  std::optional<std::vector<int64_t>> shape =
      broadcastShapes(in->shape, wanted);
  if (!shape)
    return failAt(node, "its input does not broadcast to the shape");
  Tensor result;
  result.element = in->element;
  result.shape = *shape;
  if (in->literal)
    result.literal =
        foldElementwise({&*in->literal}, *shape, in->element,
                        [](const std::vector<double> &a) { return a[0]; });
  else
    result.value =
        map({in}, *shape, elementType(in->element),
            [](OpBuilder &, Location, ArrayRef<Value> a) { return a[0]; });
  define(node, 0, std::move(result));
  return true;
}

} // namespace hetero::onnx_import
