//===- Checksum.h - checksums of checkpoint bytes ---------------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free. A 64-bit checksum of a byte range, eight bytes at a time, so
// that a torn or corrupted checkpoint is told from a complete one.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_CHECKPOINT_CHECKSUM_H
#define HETERO_CHECKPOINT_CHECKSUM_H

#include <cstddef>
#include <cstdint>

namespace hetero::checkpoint {

/// The checksum of `bytes` bytes at `data`; any change of a byte, of the
/// length or of the order of words changes it (with high probability).
uint64_t checksum(const void *data, size_t bytes);

} // namespace hetero::checkpoint

#endif // HETERO_CHECKPOINT_CHECKSUM_H
