//===- WireSizeTest.cpp - bytes of compressed tensors on the wire ---------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Support/WireSize.h"

#include "gtest/gtest.h"

using namespace hetero::wire;

namespace {

TEST(WireSize, ParsesEveryCompressorName) {
  for (const char *name : {"none", "fp16", "bf16", "topk", "dgc", "randomk",
                           "efsignsgd", "onebit", "qsgd"})
    EXPECT_TRUE(parseCompressor(name).has_value()) << name;
  EXPECT_FALSE(parseCompressor("zip").has_value());
  EXPECT_FALSE(parseCompressor("").has_value());
}

TEST(WireSize, ClassifiesCompressors) {
  for (Compressor linear :
       {Compressor::None, Compressor::Fp16, Compressor::Bf16})
    EXPECT_TRUE(isLinear(linear));
  for (Compressor other :
       {Compressor::TopK, Compressor::Dgc, Compressor::RandomK,
        Compressor::EfSignSgd, Compressor::OneBit, Compressor::Qsgd})
    EXPECT_FALSE(isLinear(other));
  for (Compressor sparsifier :
       {Compressor::TopK, Compressor::Dgc, Compressor::RandomK})
    EXPECT_TRUE(isSparsifier(sparsifier));
  for (Compressor other : {Compressor::None, Compressor::Fp16, Compressor::Qsgd,
                           Compressor::OneBit})
    EXPECT_FALSE(isSparsifier(other));
}

TEST(WireSize, UncompressedIsTheTensor) {
  EXPECT_EQ(compressedBytes(1000, 4, {}), 4000);
}

TEST(WireSize, CastsHalveFloat32) {
  EXPECT_EQ(compressedBytes(1000, 4, {Compressor::Fp16}), 2000);
  EXPECT_EQ(compressedBytes(1000, 4, {Compressor::Bf16}), 2000);
}

TEST(WireSize, SparsifiersSendValueIndexPairs) {
  // ceil(0.01 * 1001) = 11 pairs of (4-byte value, 4-byte index).
  EXPECT_EQ(compressedBytes(1001, 4, {Compressor::TopK, 0.01}), 88);
  EXPECT_EQ(compressedBytes(1000, 4, {Compressor::RandomK, 0.5}), 4000);
  EXPECT_EQ(compressedBytes(100, 2, {Compressor::Dgc, 0.1}), 60);
}

TEST(WireSize, SignCompressorsPackThirtyTwoSignsPerWord) {
  // 33 signs need two 32-bit words, plus a 4-byte scale.
  EXPECT_EQ(compressedBytes(33, 4, {Compressor::OneBit}), 12);
  EXPECT_EQ(compressedBytes(32, 4, {Compressor::EfSignSgd}), 8);
}

TEST(WireSize, QsgdUsesLevelBitsPlusSign) {
  // 256 levels: 9 magnitude bits + 1 sign bit = 10 bits per element.
  EXPECT_EQ(compressedBytes(8, 4, {Compressor::Qsgd, 1.0, 256}), 10 + 4);
  // 1 level: 1 magnitude bit + sign = 2 bits: 16 elements in 4 bytes.
  EXPECT_EQ(compressedBytes(16, 4, {Compressor::Qsgd, 1.0, 1}), 4 + 4);
}

TEST(WireSize, FormatsBytesForPeople) {
  EXPECT_EQ(formatBytes(512), "512 B");
  EXPECT_EQ(formatBytes(1536), "1.50 KiB");
  EXPECT_EQ(formatBytes(3 * 1024 * 1024), "3.00 MiB");
}

} // namespace
