//===- OnnxGraph.h - an ONNX model read and checked -------------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free: reads an ONNX model with Debian's ONNX library, checks what
// the importer needs (the opset, static shapes, supported operators, the
// outputs that are used) and finds the trainable initializers. Everything
// it reports names the node, its operator and what is expected.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_LIB_IMPORT_ONNXGRAPH_H
#define HETERO_LIB_IMPORT_ONNXGRAPH_H

#include "Literal.h"

#include <onnx/onnx_pb.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace hetero::onnx_import {

/// The opsets of the default domain the importer implements.
constexpr int64_t kMinOpset = 13, kMaxOpset = 17;

/// A graph input or output: its name, element type and static shape.
struct GraphValue {
  std::string name;
  Element element = Element::Float;
  std::vector<int64_t> shape;
};

/// The model as the importer builds it.
struct OnnxGraph {
  std::string path;
  int64_t opset = 0;
  /// The computation, in the file's (topological) order; Identity nodes of
  /// initializers removed (their outputs are initializers of their own).
  std::vector<const onnx::NodeProto *> nodes;
  /// The inputs that are not initializers, and the outputs.
  std::vector<GraphValue> inputs, outputs;
  /// Every initializer, by name.
  std::map<std::string, Literal> initializers;
  /// The trainable initializers in the order of their first use.
  std::vector<std::string> trainable;
  /// The nodes that the outputs need.
  std::set<const onnx::NodeProto *> live;
  /// The values they need: the outputs and every input of a live node.
  std::set<std::string> needed;

  onnx::ModelProto model;
};

/// "node 'name' (Op)": how messages name a node (its output when unnamed).
std::string describe(const onnx::NodeProto &node);

/// Reads and checks `path`; problems are appended to `errors` (each one
/// line without the file's name), and then the graph is incomplete.
OnnxGraph readGraph(const std::string &path, std::vector<std::string> &errors);

/// Decodes an ONNX tensor (raw or typed data); "" or the problem in
/// `error`.
Literal decodeTensor(const onnx::TensorProto &tensor, std::string &error);

/// The attribute `name` of `node`, or null.
const onnx::AttributeProto *attribute(const onnx::NodeProto &node,
                                      const std::string &name);
int64_t intAttribute(const onnx::NodeProto &node, const std::string &name,
                     int64_t fallback);
float floatAttribute(const onnx::NodeProto &node, const std::string &name,
                     float fallback);
std::vector<int64_t> intsAttribute(const onnx::NodeProto &node,
                                   const std::string &name);
std::string stringAttribute(const onnx::NodeProto &node,
                            const std::string &name,
                            const std::string &fallback);

} // namespace hetero::onnx_import

#endif // HETERO_LIB_IMPORT_ONNXGRAPH_H
