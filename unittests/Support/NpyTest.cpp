//===- NpyTest.cpp - NumPy .npy files of float32 arrays -------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Support/Npy.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

using namespace hetero;

namespace {

std::string temporaryPath(const std::string &name) {
  return ::testing::TempDir() + "/hetero-npy-" + name + ".npy";
}

TEST(Npy, HeaderIsFormatOneAlignedTo64Bytes) {
  std::string head = npy::header({8, 16});
  ASSERT_EQ(head.size() % 64, 0u);
  EXPECT_EQ(head.substr(0, 6), "\x93NUMPY");
  EXPECT_EQ(head[6], 1);
  EXPECT_EQ(head[7], 0);
  EXPECT_EQ(size_t(uint8_t(head[8])) + 10, head.size());
  EXPECT_NE(head.find("'descr': '<f4'"), std::string::npos);
  EXPECT_NE(head.find("'shape': (8, 16)"), std::string::npos);
  EXPECT_EQ(head.back(), '\n');
  // A one-dimensional shape is a one-element Python tuple.
  EXPECT_NE(npy::header({5}).find("'shape': (5,)"), std::string::npos);
}

TEST(Npy, RoundTripsValuesExactly) {
  std::vector<float> values = {1.5f, -0.0f, 3.25e-8f, -7.0f, 1e30f, 0.1f};
  std::string path = temporaryPath("round-trip");
  ASSERT_EQ(npy::write(path, {2, 3}, values.data()), "");
  std::vector<float> back(6, 99.0f);
  ASSERT_EQ(npy::read(path, {2, 3}, back.data()), "");
  for (size_t i = 0; i < values.size(); ++i)
    EXPECT_EQ(std::memcmp(&values[i], &back[i], sizeof(float)), 0) << i;
  std::remove(path.c_str());
}

TEST(Npy, RejectsAnotherShapeNamingBoth) {
  std::vector<float> values(6, 1.0f);
  std::string path = temporaryPath("shape");
  ASSERT_EQ(npy::write(path, {2, 3}, values.data()), "");
  std::string error = npy::read(path, {3, 2}, values.data());
  EXPECT_NE(error.find("shape (2, 3), expected (3, 2)"), std::string::npos)
      << error;
  std::remove(path.c_str());
}

TEST(Npy, RejectsOtherDtypesTruncationAndGarbage) {
  std::string path = temporaryPath("bad");
  std::vector<float> data(4);
  {
    std::string head = npy::header({4});
    head.replace(head.find("<f4"), 3, "<f8");
    std::ofstream(path, std::ios::binary) << head << std::string(32, '\0');
  }
  EXPECT_NE(npy::read(path, {4}, data.data()).find("dtype <f8"),
            std::string::npos);
  {
    std::ofstream(path, std::ios::binary)
        << npy::header({4}) << std::string(8, '\0');
  }
  EXPECT_NE(npy::read(path, {4}, data.data()).find("cut short"),
            std::string::npos);
  {
    std::ofstream(path, std::ios::binary) << "not numpy at all";
  }
  EXPECT_NE(npy::read(path, {4}, data.data()).find("not a NumPy"),
            std::string::npos);
  std::remove(path.c_str());
  EXPECT_NE(npy::read(path, {4}, data.data()).find("cannot open"),
            std::string::npos);
}

} // namespace
