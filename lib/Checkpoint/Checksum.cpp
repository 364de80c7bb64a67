//===- Checksum.cpp - checksums of checkpoint bytes -----------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Checkpoint/Checksum.h"

#include "hetero/Support/Hash.h"

#include <cstring>

namespace hetero::checkpoint {

uint64_t checksum(const void *data, size_t bytes) {
  const auto *cursor = static_cast<const unsigned char *>(data);
  // Four independent lanes keep the multiplier pipeline busy.
  uint64_t lanes[4] = {0x243F6A8885A308D3ULL, 0x13198A2E03707344ULL,
                       0xA4093822299F31D0ULL, 0x082EFA98EC4E6C89ULL};
  size_t words = bytes / 8;
  for (size_t i = 0; i < words; ++i) {
    uint64_t word;
    std::memcpy(&word, cursor + 8 * i, 8);
    uint64_t &lane = lanes[i % 4];
    lane = (lane ^ word) * 0x9E3779B97F4A7C15ULL;
    lane ^= lane >> 29;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, cursor + 8 * words, bytes % 8);
  uint64_t result = splitMix64(bytes ^ tail);
  for (uint64_t lane : lanes)
    result = splitMix64(result ^ lane);
  return result;
}

} // namespace hetero::checkpoint
