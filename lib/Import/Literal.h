//===- Literal.h - tensors known while importing ----------------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free: the values of an ONNX graph that are known before it runs
// (constants, initializers that stay constant, shapes of static tensors)
// and the operators folded over them, so that the shape arithmetic an
// exporter leaves in a graph (Shape, Gather, Concat, Reshape of sizes, a
// Pow of two constants) never reaches the compiled step.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_LIB_IMPORT_LITERAL_H
#define HETERO_LIB_IMPORT_LITERAL_H

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace hetero::onnx_import {

/// The element types the importer handles: ONNX's float, its integers
/// (int64 and int32, both held as 64 bits) and bool.
enum class Element { Float, Int, Bool };

const char *elementName(Element element);

/// A tensor of known values in C order. Floats are float32 values held in
/// doubles; integers and booleans (0 or 1) in `ints`.
struct Literal {
  Element element = Element::Float;
  std::vector<int64_t> shape;
  std::vector<double> floats;
  std::vector<int64_t> ints;

  int64_t size() const;
  int64_t rank() const { return int64_t(shape.size()); }
  bool isFloat() const { return element == Element::Float; }
  /// Element i as a double (integers converted).
  double at(int64_t i) const;
  /// Element i as an integer (floats truncated).
  int64_t intAt(int64_t i) const;
  /// Whether every element equals the first (true for one element).
  bool isSplat() const;

  static Literal scalarFloat(double value);
  static Literal filled(Element element, std::vector<int64_t> shape,
                        double value);
  static Literal ofInts(std::vector<int64_t> values,
                        std::vector<int64_t> shape = {});
};

int64_t elementCount(const std::vector<int64_t> &shape);

/// NumPy's broadcast of two shapes; nullopt when they do not broadcast.
std::optional<std::vector<int64_t>>
broadcastShapes(const std::vector<int64_t> &a, const std::vector<int64_t> &b);

/// Element-wise `fn` over `inputs` broadcast to `shape`, into a literal of
/// `element` (floats rounded to float32).
Literal
foldElementwise(const std::vector<const Literal *> &inputs,
                const std::vector<int64_t> &shape, Element element,
                const std::function<double(const std::vector<double> &)> &fn);

/// The literal with the same elements and another shape.
Literal reshaped(const Literal &literal, std::vector<int64_t> shape);

/// Converts the elements to `element` (ONNX Cast: float to integer
/// truncates, anything to bool is "not zero").
Literal cast(const Literal &literal, Element element);

/// ONNX Gather along `axis` with integer `indices` (negative ones count from
/// the end); "" or what is out of range in `error`.
Literal gather(const Literal &data, const Literal &indices, int64_t axis,
               std::string &error);

/// ONNX Concat along `axis` of literals of one element type.
Literal concat(const std::vector<const Literal *> &inputs, int64_t axis);

/// ONNX Transpose by `perm` (output dim j is input dim perm[j]).
Literal transpose(const Literal &literal, const std::vector<int64_t> &perm);

/// The elements [start, start + stride * size) along each dimension.
Literal slice(const Literal &literal, const std::vector<int64_t> &starts,
              const std::vector<int64_t> &sizes,
              const std::vector<int64_t> &strides);

} // namespace hetero::onnx_import

#endif // HETERO_LIB_IMPORT_LITERAL_H
