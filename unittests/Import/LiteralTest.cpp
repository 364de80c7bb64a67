//===- LiteralTest.cpp - the importer's folding of known tensors ----------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The folds of lib/Import/Literal.cpp against values worked out by hand,
// and the decoding of ONNX tensors (raw bytes and typed fields).
//
//===----------------------------------------------------------------------===//

#include "Literal.h"
#include "OnnxGraph.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace hetero::onnx_import;

namespace {

Literal floats(std::vector<double> values, std::vector<int64_t> shape) {
  Literal literal;
  literal.shape = std::move(shape);
  literal.floats = std::move(values);
  return literal;
}

TEST(LiteralTest, BroadcastsAsNumPyDoes) {
  EXPECT_EQ(broadcastShapes({2, 1, 4}, {3, 1}),
            (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(broadcastShapes({}, {5}), (std::vector<int64_t>{5}));
  EXPECT_FALSE(broadcastShapes({2, 3}, {4}).has_value());
}

TEST(LiteralTest, FoldsElementwiseWithBroadcasting) {
  Literal a = floats({1, 2}, {2, 1}), b = floats({10, 20, 30}, {3});
  Literal sum =
      foldElementwise({&a, &b}, {2, 3}, Element::Float,
                      [](const std::vector<double> &x) { return x[0] + x[1]; });
  EXPECT_EQ(sum.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(sum.floats, (std::vector<double>{11, 21, 31, 12, 22, 32}));
  // A comparison into bool stores 0 or 1.
  Literal less = foldElementwise(
      {&b, &a}, {2, 3}, Element::Bool,
      [](const std::vector<double> &x) { return double(x[0] < 25); });
  EXPECT_EQ(less.ints, (std::vector<int64_t>{1, 1, 0, 1, 1, 0}));
}

TEST(LiteralTest, GathersWithNegativeIndicesAndReportsOutOfRange) {
  Literal data = floats({0, 1, 2, 3, 4, 5}, {2, 3});
  std::string error;
  Literal picked = gather(data, Literal::ofInts({-1, 0}), 1, error);
  EXPECT_EQ(error, "");
  EXPECT_EQ(picked.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(picked.floats, (std::vector<double>{2, 0, 5, 3}));
  // A scalar index drops the axis.
  Literal row = gather(data, Literal::ofInts({1}, {}), 0, error);
  EXPECT_EQ(row.shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(row.floats, (std::vector<double>{3, 4, 5}));
  gather(data, Literal::ofInts({3}), 1, error);
  EXPECT_EQ(error, "index 3 is out of range for a dimension of 3");
}

TEST(LiteralTest, ConcatenatesTransposesAndSlices) {
  Literal a = floats({0, 1, 2, 3}, {2, 2}), b = floats({9, 8}, {2, 1});
  Literal joined = concat({&a, &b}, 1);
  EXPECT_EQ(joined.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(joined.floats, (std::vector<double>{0, 1, 9, 2, 3, 8}));
  Literal turned = transpose(joined, {1, 0});
  EXPECT_EQ(turned.shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(turned.floats, (std::vector<double>{0, 2, 1, 3, 9, 8}));
  Literal strided = slice(floats({0, 1, 2, 3, 4, 5}, {6}), {1}, {3}, {2});
  EXPECT_EQ(strided.floats, (std::vector<double>{1, 3, 5}));
}

TEST(LiteralTest, CastsTruncateAndTestForZero) {
  Literal values = floats({-1.7, 0.0, 2.5}, {3});
  EXPECT_EQ(cast(values, Element::Int).ints, (std::vector<int64_t>{-1, 0, 2}));
  EXPECT_EQ(cast(values, Element::Bool).ints, (std::vector<int64_t>{1, 0, 1}));
  // Floats are float32 values.
  EXPECT_EQ(Literal::scalarFloat(0.1).floats[0], double(0.1f));
}

TEST(LiteralTest, DecodesRawAndTypedTensors) {
  onnx::TensorProto raw;
  raw.set_data_type(onnx::TensorProto::FLOAT);
  raw.add_dims(2);
  float data[2] = {1.5f, -2.0f};
  raw.set_raw_data(std::string(reinterpret_cast<char *>(data), sizeof(data)));
  std::string error;
  Literal decoded = decodeTensor(raw, error);
  EXPECT_EQ(error, "");
  EXPECT_EQ(decoded.floats, (std::vector<double>{1.5, -2.0}));

  onnx::TensorProto typed;
  typed.set_data_type(onnx::TensorProto::INT32);
  typed.add_dims(3);
  for (int v : {4, -5, 6})
    typed.add_int32_data(v);
  decoded = decodeTensor(typed, error);
  EXPECT_EQ(decoded.element, Element::Int);
  EXPECT_EQ(decoded.ints, (std::vector<int64_t>{4, -5, 6}));

  typed.add_int32_data(7);
  decodeTensor(typed, error);
  EXPECT_EQ(error, "holds 4 values for its shape of 3 elements");
  onnx::TensorProto doubles;
  doubles.set_data_type(onnx::TensorProto::DOUBLE);
  error.clear();
  decodeTensor(doubles, error);
  EXPECT_EQ(error, "holds DOUBLE; expected FLOAT, INT64, INT32 or BOOL");
}

} // namespace
