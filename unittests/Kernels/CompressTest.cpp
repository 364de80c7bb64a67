//===- CompressTest.cpp - the host compression kernels --------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero-rt/compress.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <set>

namespace {

std::vector<float> randomGradient(size_t n, unsigned seed) {
  std::mt19937 random(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> g(n);
  for (float &x : g)
    x = normal(random);
  return g;
}

TEST(Compress, TopKKeepsExactlyTheLargestMagnitudes) {
  // 300000 elements take the sampled-threshold path.
  for (size_t n : {1, 7, 100, 5000, 300000})
    for (size_t k : {size_t(1), n / 100 + 1, n / 3 + 1, n}) {
      std::vector<float> g = randomGradient(n, unsigned(n + k));
      std::vector<uint32_t> indices(k);
      std::vector<float> values(k);
      hrt_topk(g.data(), n, k, indices.data(), values.data());
      // The k-th largest magnitude bounds every kept and every dropped one.
      std::vector<float> magnitudes(n);
      for (size_t i = 0; i < n; ++i)
        magnitudes[i] = std::fabs(g[i]);
      std::sort(magnitudes.rbegin(), magnitudes.rend());
      float kth = magnitudes[k - 1];
      std::set<uint32_t> kept(indices.begin(), indices.end());
      ASSERT_EQ(kept.size(), k);
      EXPECT_TRUE(std::is_sorted(indices.begin(), indices.end()));
      for (size_t i = 0; i < k; ++i) {
        EXPECT_EQ(values[i], g[indices[i]]);
        EXPECT_GE(std::fabs(values[i]), kth);
      }
      for (size_t i = 0; i < n; ++i) {
        if (!kept.count(uint32_t(i))) {
          EXPECT_LE(std::fabs(g[i]), kth);
        }
      }
    }
}

TEST(Compress, TopKBreaksTiesByIndex) {
  // 200000 elements of magnitude 1 and a few larger ones.
  size_t n = 200000;
  std::vector<float> g(n, 1.0f);
  g[7] = -3.0f;
  g[150000] = 2.0f;
  std::vector<uint32_t> indices(5);
  std::vector<float> values(5);
  hrt_topk(g.data(), n, 5, indices.data(), values.data());
  EXPECT_EQ(indices, (std::vector<uint32_t>{0, 1, 2, 7, 150000}));
  EXPECT_EQ(values[3], -3.0f);
}

TEST(Compress, RandomKPicksTheSameIndicesForTheSameSeed) {
  size_t n = 10000, k = 100;
  std::vector<float> a = randomGradient(n, 1), b = randomGradient(n, 2);
  std::vector<uint32_t> ia(k), ib(k), ic(k);
  std::vector<float> va(k), vb(k), vc(k);
  hrt_randomk(a.data(), n, k, 42, ia.data(), va.data());
  hrt_randomk(b.data(), n, k, 42, ib.data(), vb.data());
  hrt_randomk(a.data(), n, k, 43, ic.data(), vc.data());
  EXPECT_EQ(ia, ib); // another rank's gradient, the same seed
  EXPECT_NE(ia, ic);
  EXPECT_EQ(std::set<uint32_t>(ia.begin(), ia.end()).size(), k);
  EXPECT_TRUE(std::is_sorted(ia.begin(), ia.end()));
  for (size_t i = 0; i < k; ++i)
    EXPECT_EQ(va[i], a[ia[i]]);
  // k = n keeps everything.
  std::vector<uint32_t> all(n);
  std::vector<float> values(n);
  hrt_randomk(a.data(), n, n, 7, all.data(), values.data());
  EXPECT_EQ(values, a);
}

TEST(Compress, SignPackingIsBitExact) {
  std::vector<float> g = randomGradient(1000, 3);
  g[5] = -0.0f; // a negative zero packs as negative
  g[6] = 0.0f;
  std::vector<uint32_t> words((g.size() + 31) / 32, 0xdeadbeef);
  hrt_pack_signs(g.data(), g.size(), words.data());
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_EQ((words[i / 32] >> (i % 32)) & 1, std::signbit(g[i]) ? 1u : 0u);
  // The unused bits of the last word are zero.
  EXPECT_EQ(words.back() >> (g.size() % 32), 0u);
  std::vector<float> out(g.size());
  hrt_unpack_signs(words.data(), g.size(), 0.5f, out.data());
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_EQ(out[i], std::signbit(g[i]) ? -0.5f : 0.5f);
}

TEST(Compress, EfSignSgdScaleIsTheMeanMagnitude) {
  std::vector<float> g = {1.0f, -2.0f, 3.0f, -6.0f};
  std::vector<uint32_t> words(1);
  EXPECT_FLOAT_EQ(hrt_efsignsgd(g.data(), g.size(), words.data()), 3.0f);
  EXPECT_EQ(words[0], 0b1010u);
}

TEST(Compress, QsgdIsUnbiased) {
  size_t n = 64;
  int levels = 4;
  std::vector<float> g = randomGradient(n, 5);
  std::vector<double> mean(n, 0.0);
  std::vector<int8_t> steps(n);
  std::vector<float> out(n);
  const int seeds = 4000;
  // QSGD scales by the L2 norm, computed here independently.
  double l2 = 0.0;
  for (float x : g)
    l2 += double(x) * double(x);
  l2 = std::sqrt(l2);
  float norm = 0.0f;
  for (int seed = 0; seed < seeds; ++seed) {
    norm = hrt_qsgd(g.data(), n, levels, uint64_t(seed), steps.data());
    ASSERT_NEAR(norm, l2, 1e-5 * l2);
    for (int8_t step : steps)
      EXPECT_LE(std::abs(int(step)), levels);
    hrt_qsgd_decompress(steps.data(), n, levels, norm, out.data());
    for (size_t i = 0; i < n; ++i)
      mean[i] += out[i] / seeds;
  }
  // One draw is off by at most norm / levels; the mean of 4000 by a few
  // standard errors of that.
  double bound = 5.0 * l2 / levels / 2.0 / std::sqrt(double(seeds));
  for (size_t i = 0; i < n; ++i)
    EXPECT_NEAR(mean[i], g[i], bound) << "element " << i;
}

uint16_t half(float value) {
  uint16_t out;
  hrt_to_fp16(&value, 1, &out);
  return out;
}

float fromHalf(uint16_t value) {
  float out;
  hrt_from_fp16(&value, 1, &out);
  return out;
}

TEST(Compress, Fp16RoundsToNearestEven) {
  EXPECT_EQ(half(1.0f), 0x3c00);
  EXPECT_EQ(half(-2.0f), 0xc000);
  EXPECT_EQ(half(0.1f), 0x2e66);
  EXPECT_EQ(half(65504.0f), 0x7bff);
  EXPECT_EQ(half(65519.0f), 0x7bff);
  EXPECT_EQ(half(65520.0f), 0x7c00); // rounds to infinity
  EXPECT_EQ(half(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(half(std::ldexp(1.0f, -25)), 0x0000); // a tie, to even
  EXPECT_EQ(half(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(half(std::ldexp(1.0f, -14)), 0x0400);        // the smallest normal
  EXPECT_EQ(half(1.0f + std::ldexp(1.0f, -11)), 0x3c00); // tie, to even
  EXPECT_EQ(half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(half(INFINITY), 0x7c00);
  EXPECT_TRUE(std::isnan(fromHalf(half(NAN))));
  // Every half converts to float and back unchanged.
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    if ((bits & 0x7c00) == 0x7c00 && (bits & 0x3ff))
      continue; // NaN payloads
    ASSERT_EQ(half(fromHalf(uint16_t(bits))), bits) << std::hex << bits;
  }
}

TEST(Compress, Bf16RoundsToNearestEven) {
  auto bf16 = [](float value) {
    uint16_t out;
    hrt_to_bf16(&value, 1, &out);
    return out;
  };
  EXPECT_EQ(bf16(1.0f), 0x3f80);
  EXPECT_EQ(bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80); // tie, to even
  EXPECT_EQ(bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  std::vector<float> g = randomGradient(1000, 9), back(1000);
  std::vector<uint16_t> packed(1000);
  hrt_to_bf16(g.data(), g.size(), packed.data());
  hrt_from_bf16(packed.data(), g.size(), back.data());
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_NEAR(back[i], g[i], std::fabs(g[i]) * std::ldexp(1.0, -8));
}

TEST(Compress, TopKRanksNaNAboveEverything) {
  // Fewer finite elements than k: the NaNs fill the selection (they used
  // to be skipped, and the k-th magnitude was read past the candidates).
  std::vector<float> g = {NAN, 1.0f, NAN, -5.0f, NAN, NAN};
  std::vector<uint32_t> indices(5, 99);
  std::vector<float> values(5);
  hrt_topk(g.data(), g.size(), 5, indices.data(), values.data());
  EXPECT_EQ(indices, (std::vector<uint32_t>{0, 2, 3, 4, 5}));
  EXPECT_TRUE(std::isnan(values[0]));
  EXPECT_EQ(values[2], -5.0f);
  // One NaN among large finite values is still kept.
  std::vector<float> many = randomGradient(300000, 5);
  many[1234] = NAN;
  std::vector<uint32_t> top(10);
  std::vector<float> topValues(10);
  hrt_topk(many.data(), many.size(), 10, top.data(), topValues.data());
  EXPECT_NE(std::find(top.begin(), top.end(), 1234u), top.end());
}

TEST(Compress, DgcClampsItsRatio) {
  // A ratio above 1 keeps what 1 keeps; NaN and negative ones what 0 keeps
  // (the largest sampled magnitude and above), instead of converting an
  // out-of-range double to size_t.
  std::vector<float> g = randomGradient(1000, 3);
  std::vector<uint32_t> indices(1000);
  std::vector<float> values(1000);
  auto kept = [&](double ratio) {
    return hrt_dgc(g.data(), 1000, ratio, 1000, 1, 1000, indices.data(),
                   values.data());
  };
  size_t all = kept(1.0), fewest = kept(0.0);
  EXPECT_GT(all, 900u);
  EXPECT_LT(fewest, 20u);
  EXPECT_EQ(kept(7.0), all);
  EXPECT_EQ(kept(NAN), fewest);
  EXPECT_EQ(kept(-2.0), fewest);
}

TEST(Compress, DgcKeepsEverythingAboveItsThreshold) {
  size_t n = 100000;
  std::vector<float> g = randomGradient(n, 11);
  std::vector<uint32_t> indices(n);
  std::vector<float> values(n);
  size_t kept =
      hrt_dgc(g.data(), n, 0.01, 2000, 3, n, indices.data(), values.data());
  // About 1% (the sampled threshold is an estimate).
  EXPECT_GT(kept, n / 200);
  EXPECT_LT(kept, n / 50);
  float smallestKept = INFINITY;
  for (size_t i = 0; i < kept; ++i) {
    // Each kept value is the gradient's own, at its index.
    ASSERT_LT(indices[i], n);
    ASSERT_EQ(values[i], g[indices[i]]);
    smallestKept = std::min(smallestKept, std::fabs(values[i]));
  }
  std::set<uint32_t> chosen(indices.begin(), indices.begin() + kept);
  ASSERT_EQ(chosen.size(), kept) << "an index is kept twice";
  for (size_t i = 0; i < n; ++i) {
    if (!chosen.count(uint32_t(i))) {
      ASSERT_LT(std::fabs(g[i]), smallestKept);
    }
  }
}

// Error feedback: e <- (g + e) - decompress(compress(g + e)). What was sent
// over all steps plus the final residual is the sum of the gradients.
TEST(Compress, ErrorFeedbackTelescopes) {
  size_t n = 512, k = 16;
  std::vector<double> sent(n, 0.0), total(n, 0.0);
  std::vector<float> residual(n, 0.0f), corrected(n);
  std::vector<uint32_t> indices(k);
  std::vector<float> values(k);
  for (unsigned step = 0; step < 50; ++step) {
    std::vector<float> g = randomGradient(n, 100 + step);
    for (size_t i = 0; i < n; ++i) {
      total[i] += g[i];
      corrected[i] = g[i] + residual[i];
    }
    hrt_topk(corrected.data(), n, k, indices.data(), values.data());
    std::vector<float> decompressed(n, 0.0f);
    hrt_scatter_add(indices.data(), values.data(), k, decompressed.data());
    for (size_t i = 0; i < n; ++i) {
      sent[i] += decompressed[i];
      residual[i] = corrected[i] - decompressed[i];
    }
  }
  for (size_t i = 0; i < n; ++i)
    EXPECT_NEAR(sent[i] + residual[i], total[i], 1e-4) << "element " << i;
}

TEST(Compress, ScatterAddAggregates) {
  std::vector<float> out(4, 1.0f);
  uint32_t indices[] = {0, 2, 2};
  float values[] = {1.0f, 2.0f, 3.0f};
  hrt_scatter_add(indices, values, 3, out.data());
  EXPECT_EQ(out, (std::vector<float>{2.0f, 1.0f, 6.0f, 1.0f}));
}

} // namespace
