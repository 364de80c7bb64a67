//===- Hash.h - a 64-bit mixing function ------------------------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Header-only and MLIR-free: the compiler's cores and the runtime hash with
// the same function, so that every rank derives the same values.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_SUPPORT_HASH_H
#define HETERO_SUPPORT_HASH_H

#include <cstdint>

namespace hetero {

/// SplitMix64's finaliser: a bijective, well-mixed function of 64 bits.
inline uint64_t splitMix64(uint64_t value) {
  value += 0x9E3779B97F4A7C15ULL;
  value = (value ^ (value >> 30)) * 0xBF58476D1CE4E5B9ULL;
  value = (value ^ (value >> 27)) * 0x94D049BB133111EBULL;
  return value ^ (value >> 31);
}

/// FNV-1a of a layer's key: how compiled code names a prunable layer to the
/// runtime.
inline uint64_t hashLayerKey(const char *key, uint64_t length) {
  uint64_t hash = 0xCBF29CE484222325ULL;
  for (uint64_t i = 0; i < length; ++i) {
    hash ^= static_cast<unsigned char>(key[i]);
    hash *= 0x100000001B3ULL;
  }
  return hash;
}

/// The key of a layer of block `block` (hetero.prune_plan ... block %b):
/// the layer's hash moved along a Weyl sequence, so that block 0 keeps the
/// layer's own key. Compiled code computes the same sum in i64 arithmetic.
constexpr uint64_t kBlockKeyStride = 0x9E3779B97F4A7C15ULL;
inline uint64_t blockLayerKey(uint64_t layer, uint64_t block) {
  return layer + block * kBlockKeyStride;
}

} // namespace hetero

#endif // HETERO_SUPPORT_HASH_H
