//===- Literal.cpp - tensors known while importing ------------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "Literal.h"

#include <cassert>
#include <cmath>

namespace hetero::onnx_import {

const char *elementName(Element element) {
  switch (element) {
  case Element::Float:
    return "float";
  case Element::Int:
    return "int64";
  case Element::Bool:
    return "bool";
  }
  return "?";
}

int64_t elementCount(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t extent : shape)
    count *= extent;
  return count;
}

int64_t Literal::size() const { return elementCount(shape); }

double Literal::at(int64_t i) const {
  return isFloat() ? floats[size_t(i)] : double(ints[size_t(i)]);
}

int64_t Literal::intAt(int64_t i) const {
  return isFloat() ? int64_t(floats[size_t(i)]) : ints[size_t(i)];
}

bool Literal::isSplat() const {
  for (int64_t i = 1, e = size(); i < e; ++i)
    if (at(i) != at(0))
      return false;
  return true;
}

Literal Literal::scalarFloat(double value) {
  return filled(Element::Float, {}, value);
}

Literal Literal::filled(Element element, std::vector<int64_t> shape,
                        double value) {
  Literal literal;
  literal.element = element;
  literal.shape = std::move(shape);
  size_t count = size_t(literal.size());
  if (element == Element::Float)
    literal.floats.assign(count, double(float(value)));
  else
    literal.ints.assign(count, element == Element::Bool ? int64_t(value != 0)
                                                        : int64_t(value));
  return literal;
}

Literal Literal::ofInts(std::vector<int64_t> values,
                        std::vector<int64_t> shape) {
  Literal literal;
  literal.element = Element::Int;
  literal.shape = shape.empty() && values.size() != 1
                      ? std::vector<int64_t>{int64_t(values.size())}
                      : std::move(shape);
  literal.ints = std::move(values);
  return literal;
}

std::optional<std::vector<int64_t>>
broadcastShapes(const std::vector<int64_t> &a, const std::vector<int64_t> &b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x != y && x != 1 && y != 1)
      return std::nullopt;
    result[i] = x == 1 ? y : x;
  }
  return result;
}

namespace {

/// The C-order strides of `shape` read as a tensor of shape `to`: 0 for a
/// dimension of size 1 that the broadcast repeats and for the leading
/// dimensions `shape` lacks.
std::vector<int64_t> broadcastStrides(const std::vector<int64_t> &shape,
                                      const std::vector<int64_t> &to) {
  std::vector<int64_t> strides(to.size(), 0);
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    size_t j = i + (to.size() - shape.size());
    strides[j] = shape[i] == 1 && to[j] != 1 ? 0 : stride;
    stride *= shape[i];
  }
  return strides;
}

/// Calls `fn(index, sourceOffsets)` for every element of `shape`, with the
/// element's offset into each of the sources of `strides`.
void forEachElement(
    const std::vector<int64_t> &shape,
    const std::vector<std::vector<int64_t>> &strides,
    const std::function<void(int64_t, const std::vector<int64_t> &)> &fn) {
  int64_t count = elementCount(shape);
  std::vector<int64_t> index(shape.size(), 0), offsets(strides.size(), 0);
  for (int64_t n = 0; n < count; ++n) {
    fn(n, offsets);
    // Advance the multi-index and every source's offset.
    for (size_t d = shape.size(); d-- > 0;) {
      ++index[d];
      for (size_t s = 0; s < strides.size(); ++s)
        offsets[s] += strides[s][d];
      if (index[d] < shape[d])
        break;
      for (size_t s = 0; s < strides.size(); ++s)
        offsets[s] -= strides[s][d] * shape[d];
      index[d] = 0;
    }
  }
}

void store(Literal &literal, int64_t i, double value) {
  if (literal.isFloat())
    literal.floats[size_t(i)] = double(float(value));
  else if (literal.element == Element::Bool)
    literal.ints[size_t(i)] = value != 0;
  else
    literal.ints[size_t(i)] = int64_t(value);
}

Literal emptyLike(Element element, std::vector<int64_t> shape) {
  return Literal::filled(element, std::move(shape), 0);
}

} // namespace

Literal
foldElementwise(const std::vector<const Literal *> &inputs,
                const std::vector<int64_t> &shape, Element element,
                const std::function<double(const std::vector<double> &)> &fn) {
  Literal result = emptyLike(element, shape);
  std::vector<std::vector<int64_t>> strides;
  for (const Literal *input : inputs)
    strides.push_back(broadcastStrides(input->shape, shape));
  std::vector<double> operands(inputs.size());
  forEachElement(shape, strides,
                 [&](int64_t n, const std::vector<int64_t> &offsets) {
                   for (size_t s = 0; s < inputs.size(); ++s)
                     operands[s] = inputs[s]->at(offsets[s]);
                   store(result, n, fn(operands));
                 });
  return result;
}

Literal reshaped(const Literal &literal, std::vector<int64_t> shape) {
  assert(elementCount(shape) == literal.size() && "reshape changes the size");
  Literal result = literal;
  result.shape = std::move(shape);
  return result;
}

Literal cast(const Literal &literal, Element element) {
  Literal result = emptyLike(element, literal.shape);
  for (int64_t i = 0, e = literal.size(); i < e; ++i) {
    double value = literal.at(i);
    if (element == Element::Int)
      value = std::trunc(value);
    store(result, i, value);
  }
  return result;
}

Literal gather(const Literal &data, const Literal &indices, int64_t axis,
               std::string &error) {
  std::vector<int64_t> shape(data.shape.begin(), data.shape.begin() + axis);
  shape.insert(shape.end(), indices.shape.begin(), indices.shape.end());
  shape.insert(shape.end(), data.shape.begin() + axis + 1, data.shape.end());
  Literal result = emptyLike(data.element, shape);
  int64_t outer = elementCount({data.shape.begin(), data.shape.begin() + axis});
  int64_t extent = data.shape[size_t(axis)];
  int64_t inner =
      elementCount({data.shape.begin() + axis + 1, data.shape.end()});
  int64_t count = indices.size(), out = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < count; ++k) {
      int64_t index = indices.intAt(k);
      if (index < 0)
        index += extent;
      if (index < 0 || index >= extent) {
        error = "index " + std::to_string(indices.intAt(k)) +
                " is out of range for a dimension of " + std::to_string(extent);
        return result;
      }
      for (int64_t i = 0; i < inner; ++i)
        store(result, out++, data.at((o * extent + index) * inner + i));
    }
  return result;
}

Literal concat(const std::vector<const Literal *> &inputs, int64_t axis) {
  std::vector<int64_t> shape = inputs.front()->shape;
  shape[size_t(axis)] = 0;
  for (const Literal *input : inputs)
    shape[size_t(axis)] += input->shape[size_t(axis)];
  Literal result = emptyLike(inputs.front()->element, shape);
  int64_t outer = elementCount({shape.begin(), shape.begin() + axis});
  int64_t out = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (const Literal *input : inputs) {
      int64_t block =
          elementCount({input->shape.begin() + axis, input->shape.end()});
      for (int64_t i = 0; i < block; ++i)
        store(result, out++, input->at(o * block + i));
    }
  return result;
}

Literal transpose(const Literal &literal, const std::vector<int64_t> &perm) {
  std::vector<int64_t> shape, strides;
  std::vector<int64_t> sourceStrides(literal.shape.size(), 1);
  for (size_t d = literal.shape.size(); d-- > 1;)
    sourceStrides[d - 1] = sourceStrides[d] * literal.shape[d];
  for (int64_t axis : perm) {
    shape.push_back(literal.shape[size_t(axis)]);
    strides.push_back(sourceStrides[size_t(axis)]);
  }
  Literal result = emptyLike(literal.element, shape);
  forEachElement(shape, {strides},
                 [&](int64_t n, const std::vector<int64_t> &offsets) {
                   store(result, n, literal.at(offsets[0]));
                 });
  return result;
}

Literal slice(const Literal &literal, const std::vector<int64_t> &starts,
              const std::vector<int64_t> &sizes,
              const std::vector<int64_t> &strides) {
  std::vector<int64_t> sourceStrides(literal.shape.size(), 1);
  for (size_t d = literal.shape.size(); d-- > 1;)
    sourceStrides[d - 1] = sourceStrides[d] * literal.shape[d];
  int64_t base = 0;
  std::vector<int64_t> steps;
  for (size_t d = 0; d < literal.shape.size(); ++d) {
    base += starts[d] * sourceStrides[d];
    steps.push_back(strides[d] * sourceStrides[d]);
  }
  Literal result = emptyLike(literal.element, sizes);
  forEachElement(sizes, {steps},
                 [&](int64_t n, const std::vector<int64_t> &offsets) {
                   store(result, n, literal.at(base + offsets[0]));
                 });
  return result;
}

} // namespace hetero::onnx_import
