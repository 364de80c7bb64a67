//===- OnnxGraph.cpp - an ONNX model read and checked ---------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "OnnxGraph.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

namespace hetero::onnx_import {
namespace {

/// The operators of the default domain the importer builds, and the inputs
/// of each that a gradient flows into (-1: all of them).
const std::map<std::string, std::vector<int>> &operators() {
  static const std::map<std::string, std::vector<int>> table = {
      {"Add", {-1}},
      {"Sub", {-1}},
      {"Mul", {-1}},
      {"Div", {-1}},
      {"Pow", {0}},
      {"Sqrt", {0}},
      {"Reciprocal", {0}},
      {"Neg", {0}},
      {"Exp", {0}},
      {"Log", {0}},
      {"Tanh", {0}},
      {"Erf", {0}},
      {"Relu", {0}},
      {"Sigmoid", {0}},
      {"Softmax", {0}},
      {"LogSoftmax", {0}},
      {"ReduceMean", {0}},
      {"ReduceSum", {0}},
      {"ReduceMax", {0}},
      {"MatMul", {-1}},
      {"Gemm", {-1}},
      {"Transpose", {0}},
      {"Reshape", {0}},
      {"Flatten", {0}},
      {"Squeeze", {0}},
      {"Unsqueeze", {0}},
      {"Concat", {-1}},
      {"Slice", {0}},
      {"Split", {0}},
      {"Gather", {0}},
      {"Where", {1, 2}},
      {"Equal", {}},
      {"Less", {}},
      {"Greater", {}},
      {"Cast", {0}},
      {"CastLike", {0}},
      {"Constant", {}},
      {"ConstantOfShape", {}},
      {"Shape", {}},
      {"Expand", {0}},
      {"LayerNormalization", {0, 1, 2}},
      {"SoftmaxCrossEntropyLoss", {0}},
      {"Identity", {0}},
      {"Dropout", {0}},
  };
  return table;
}

std::string supportedList() {
  std::string list;
  for (const auto &[name, inputs] : operators())
    list += (list.empty() ? "" : ", ") + name;
  return list;
}

/// The importer's element type of an ONNX TensorProto data type.
std::optional<Element> elementOf(int32_t type) {
  switch (type) {
  case onnx::TensorProto::FLOAT:
    return Element::Float;
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::INT32:
    return Element::Int;
  case onnx::TensorProto::BOOL:
    return Element::Bool;
  default:
    return std::nullopt;
  }
}

std::string typeName(int32_t type) {
  const std::string &name = onnx::TensorProto::DataType_Name(
      static_cast<onnx::TensorProto::DataType>(type));
  return name.empty() ? "type " + std::to_string(type) : name;
}

/// A graph input's or output's type, or a problem.
std::string readValueInfo(const onnx::ValueInfoProto &info, const char *what,
                          GraphValue &value) {
  value.name = info.name();
  std::string subject = std::string(what) + " '" + info.name() + "'";
  if (!info.type().has_tensor_type())
    return subject + " is not a tensor; expected a tensor of static shape";
  const onnx::TypeProto::Tensor &tensor = info.type().tensor_type();
  std::optional<Element> element = elementOf(tensor.elem_type());
  if (!element)
    return subject + " has element type " + typeName(tensor.elem_type()) +
           "; expected FLOAT, INT64, INT32 or BOOL";
  value.element = *element;
  if (!tensor.has_shape())
    return subject + " has no shape; expected static sizes";
  for (int d = 0; d < tensor.shape().dim_size(); ++d) {
    const onnx::TensorShapeProto::Dimension &dim = tensor.shape().dim(d);
    if (!dim.has_dim_value() || dim.dim_value() <= 0)
      return subject + " has a dynamic dimension " + std::to_string(d) +
             (dim.has_dim_param() ? " ('" + dim.dim_param() + "')" : "") +
             "; expected static sizes (export without dynamic_axes)";
    value.shape.push_back(dim.dim_value());
  }
  return "";
}

template <typename T>
bool readRaw(const std::string &raw, size_t count, std::vector<T> &out) {
  if (raw.size() != count * sizeof(T))
    return false;
  out.resize(count);
  std::memcpy(out.data(), raw.data(), raw.size());
  return true;
}

} // namespace

std::string describe(const onnx::NodeProto &node) {
  std::string name = node.name();
  if (name.empty() && node.output_size())
    name = node.output(0);
  return "node '" + name + "' (" + node.op_type() + ")";
}

const onnx::AttributeProto *attribute(const onnx::NodeProto &node,
                                      const std::string &name) {
  for (const onnx::AttributeProto &attr : node.attribute())
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

int64_t intAttribute(const onnx::NodeProto &node, const std::string &name,
                     int64_t fallback) {
  const onnx::AttributeProto *attr = attribute(node, name);
  return attr ? attr->i() : fallback;
}

float floatAttribute(const onnx::NodeProto &node, const std::string &name,
                     float fallback) {
  const onnx::AttributeProto *attr = attribute(node, name);
  return attr ? attr->f() : fallback;
}

std::vector<int64_t> intsAttribute(const onnx::NodeProto &node,
                                   const std::string &name) {
  const onnx::AttributeProto *attr = attribute(node, name);
  if (!attr)
    return {};
  return {attr->ints().begin(), attr->ints().end()};
}

std::string stringAttribute(const onnx::NodeProto &node,
                            const std::string &name,
                            const std::string &fallback) {
  const onnx::AttributeProto *attr = attribute(node, name);
  return attr ? attr->s() : fallback;
}

Literal decodeTensor(const onnx::TensorProto &tensor, std::string &error) {
  Literal literal;
  std::optional<Element> element = elementOf(tensor.data_type());
  if (!element) {
    error = "holds " + typeName(tensor.data_type()) +
            "; expected FLOAT, INT64, INT32 or BOOL";
    return literal;
  }
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    error = "keeps its data in an external file; expected the data in the "
            "model (torch.onnx.export without external data)";
    return literal;
  }
  literal.element = *element;
  literal.shape.assign(tensor.dims().begin(), tensor.dims().end());
  size_t count = size_t(literal.size());
  const std::string &raw = tensor.raw_data();
  bool ok = true;
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT: {
    std::vector<float> values;
    if (tensor.has_raw_data())
      ok = readRaw(raw, count, values);
    else
      values.assign(tensor.float_data().begin(), tensor.float_data().end());
    literal.floats.assign(values.begin(), values.end());
    break;
  }
  case onnx::TensorProto::INT64:
    if (tensor.has_raw_data())
      ok = readRaw(raw, count, literal.ints);
    else
      literal.ints.assign(tensor.int64_data().begin(),
                          tensor.int64_data().end());
    break;
  case onnx::TensorProto::INT32: {
    std::vector<int32_t> values;
    if (tensor.has_raw_data())
      ok = readRaw(raw, count, values);
    else
      values.assign(tensor.int32_data().begin(), tensor.int32_data().end());
    literal.ints.assign(values.begin(), values.end());
    break;
  }
  case onnx::TensorProto::BOOL: {
    std::vector<uint8_t> values;
    if (tensor.has_raw_data())
      ok = readRaw(raw, count, values);
    else
      values.assign(tensor.int32_data().begin(), tensor.int32_data().end());
    for (uint8_t value : values)
      literal.ints.push_back(value != 0);
    break;
  }
  }
  size_t held = literal.isFloat() ? literal.floats.size() : literal.ints.size();
  if (!ok || held != count)
    error = "holds " + std::to_string(held) + " values for its shape of " +
            std::to_string(count) + " elements";
  return literal;
}

OnnxGraph readGraph(const std::string &path, std::vector<std::string> &errors) {
  OnnxGraph graph;
  graph.path = path;
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    errors.push_back("cannot open the model: " +
                     std::string(std::strerror(errno)));
    return graph;
  }
  if (!graph.model.ParseFromIstream(&file)) {
    errors.push_back("is not an ONNX model (its protobuf does not parse)");
    return graph;
  }
  for (const onnx::OperatorSetIdProto &opset : graph.model.opset_import())
    if (opset.domain().empty() || opset.domain() == "ai.onnx")
      graph.opset = opset.version();
  if (graph.opset < kMinOpset || graph.opset > kMaxOpset) {
    errors.push_back(
        (graph.opset ? "imports opset " + std::to_string(graph.opset)
                     : std::string("imports no opset")) +
        " of the default ONNX domain; expected " + std::to_string(kMinOpset) +
        " to " + std::to_string(kMaxOpset) +
        " (torch.onnx.export(..., opset_version=17))");
    return graph;
  }
  const onnx::GraphProto &body = graph.model.graph();

  for (const onnx::TensorProto &tensor : body.initializer()) {
    std::string error;
    Literal literal = decodeTensor(tensor, error);
    if (!error.empty())
      errors.push_back("initializer '" + tensor.name() + "' " + error);
    graph.initializers[tensor.name()] = std::move(literal);
  }
  for (const onnx::ValueInfoProto &info : body.input()) {
    if (graph.initializers.count(info.name()))
      continue;
    GraphValue value;
    if (std::string error = readValueInfo(info, "input", value); !error.empty())
      errors.push_back(error);
    graph.inputs.push_back(std::move(value));
  }
  for (const onnx::ValueInfoProto &info : body.output()) {
    GraphValue value;
    if (std::string error = readValueInfo(info, "output", value);
        !error.empty())
      errors.push_back(error);
    graph.outputs.push_back(std::move(value));
  }

  // An exporter that deduplicates equal initializers (torch.onnx.export's
  // constant folding does) names each former copy by an Identity of the one
  // it keeps: each name is a parameter of its own again, as in the model
  // that was exported.
  for (const onnx::NodeProto &node : body.node()) {
    bool known = node.domain().empty() || node.domain() == "ai.onnx";
    if (!known || !operators().count(node.op_type())) {
      errors.push_back(describe(node) + ": operator '" +
                       (known ? "" : node.domain() + ".") + node.op_type() +
                       "' is not supported; expected one of " +
                       supportedList());
      continue;
    }
    if (node.op_type() == "Identity" && node.input_size() == 1 &&
        graph.initializers.count(node.input(0))) {
      graph.initializers[node.output(0)] = graph.initializers[node.input(0)];
      continue;
    }
    graph.nodes.push_back(&node);
  }
  if (!errors.empty())
    return graph;

  // The nodes the outputs need, and the values a gradient of the loss
  // reaches through them.
  std::map<std::string, const onnx::NodeProto *> producer;
  for (const onnx::NodeProto *node : graph.nodes)
    for (const std::string &output : node->output())
      producer[output] = node;
  std::set<std::string> &needed = graph.needed, active;
  for (const GraphValue &output : graph.outputs) {
    needed.insert(output.name);
    active.insert(output.name);
  }
  for (auto it = graph.nodes.rbegin(); it != graph.nodes.rend(); ++it) {
    const onnx::NodeProto *node = *it;
    bool isNeeded = false, isActive = false;
    for (const std::string &output : node->output()) {
      isNeeded |= needed.count(output) > 0;
      isActive |= active.count(output) > 0;
    }
    if (!isNeeded)
      continue;
    graph.live.insert(node);
    for (const std::string &input : node->input())
      needed.insert(input);
    // A cast to an integer or bool carries no gradient.
    if (!isActive || (node->op_type() == "Cast" &&
                      intAttribute(*node, "to", onnx::TensorProto::FLOAT) !=
                          onnx::TensorProto::FLOAT))
      continue;
    const std::vector<int> &differentiable = operators().at(node->op_type());
    for (int i = 0; i < node->input_size(); ++i)
      if (!differentiable.empty() &&
          (differentiable.front() == -1 ||
           std::find(differentiable.begin(), differentiable.end(), i) !=
               differentiable.end()))
        active.insert(node->input(i));
  }
  std::set<std::string> seen;
  for (const onnx::NodeProto *node : graph.nodes) {
    if (!graph.live.count(node))
      continue;
    for (const std::string &input : node->input()) {
      auto found = graph.initializers.find(input);
      if (found != graph.initializers.end() && found->second.isFloat() &&
          active.count(input) && seen.insert(input).second)
        graph.trainable.push_back(input);
    }
  }
  for (const GraphValue &output : graph.outputs)
    if (!producer.count(output.name))
      errors.push_back("output '" + output.name +
                       "' is not computed by a node; expected the model's "
                       "result");
  return graph;
}

} // namespace hetero::onnx_import
