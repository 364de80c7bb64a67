//===- WireSize.cpp - bytes a (compressed) tensor occupies on the wire ----===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Support/WireSize.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <utility>

namespace hetero::wire {

std::optional<Compressor> parseCompressor(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, Compressor>, 9>
      names = {{{"none", Compressor::None},
                {"fp16", Compressor::Fp16},
                {"bf16", Compressor::Bf16},
                {"topk", Compressor::TopK},
                {"dgc", Compressor::Dgc},
                {"randomk", Compressor::RandomK},
                {"efsignsgd", Compressor::EfSignSgd},
                {"onebit", Compressor::OneBit},
                {"qsgd", Compressor::Qsgd}}};
  for (const auto &[text, compressor] : names)
    if (text == name)
      return compressor;
  return std::nullopt;
}

bool isLinear(Compressor compressor) {
  return compressor == Compressor::None || compressor == Compressor::Fp16 ||
         compressor == Compressor::Bf16;
}

bool isSparsifier(Compressor compressor) {
  return compressor == Compressor::TopK || compressor == Compressor::Dgc ||
         compressor == Compressor::RandomK;
}

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t compressedBytes(int64_t elements, int64_t elementBytes,
                        const Compression &compression) {
  constexpr int64_t kIndexBytes = 4;
  constexpr int64_t kScaleBytes = 4;
  switch (compression.compressor) {
  case Compressor::None:
    return elements * elementBytes;
  case Compressor::Fp16:
  case Compressor::Bf16:
    return elements * 2;
  case Compressor::TopK:
  case Compressor::Dgc:
  case Compressor::RandomK: {
    auto kept = static_cast<int64_t>(
        std::ceil(compression.ratio * static_cast<double>(elements)));
    return kept * (elementBytes + kIndexBytes);
  }
  case Compressor::EfSignSgd:
  case Compressor::OneBit:
    return ceilDiv(elements, 32) * 4 + kScaleBytes;
  case Compressor::Qsgd: {
    int64_t magnitudeBits = 0;
    while ((int64_t{1} << magnitudeBits) < compression.levels + 1)
      ++magnitudeBits;
    int64_t bits = elements * (magnitudeBits + 1);
    return ceilDiv(bits, 8) + kScaleBytes;
  }
  }
  return elements * elementBytes;
}

std::string formatBytes(int64_t bytes) {
  static constexpr const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit + 1 < 5) {
    value /= 1024.0;
    ++unit;
  }
  char buffer[32];
  if (unit == 0)
    std::snprintf(buffer, sizeof(buffer), "%lld B",
                  static_cast<long long>(bytes));
  else
    std::snprintf(buffer, sizeof(buffer), "%.2f %s", value, units[unit]);
  return buffer;
}

} // namespace hetero::wire
