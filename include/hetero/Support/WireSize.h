//===- WireSize.h - bytes a (compressed) tensor occupies on the wire ------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free: shared by the passes, the runtime's planners and hetero-sim.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_SUPPORT_WIRESIZE_H
#define HETERO_SUPPORT_WIRESIZE_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hetero::wire {

/// The compressors hetero knows. The dialect's `Compressor` maps onto them
/// by an exhaustive switch (CompressAttr::getWireCompression), so the two
/// cannot drift apart silently.
enum class Compressor {
  None,
  Fp16,
  Bf16,
  TopK,
  Dgc,
  RandomK,
  EfSignSgd,
  OneBit,
  Qsgd,
};

/// Parses the name used in IR and on command lines ("topk", "qsgd", ...).
std::optional<Compressor> parseCompressor(std::string_view name);

/// True when compressed tensors of different ranks can be summed
/// element-wise (no compression and the casts), so a plain all-reduce
/// aggregates them.
bool isLinear(Compressor compressor);

/// True for the compressors that keep a fraction of the elements (topk, dgc,
/// randomk), the ones a keep ratio applies to.
bool isSparsifier(Compressor compressor);

/// How one tensor is compressed.
struct Compression {
  Compressor compressor = Compressor::None;
  /// Fraction of elements kept by the sparsifiers (topk, dgc, randomk).
  double ratio = 1.0;
  /// Quantisation levels of qsgd.
  int64_t levels = 256;
};

/// Bytes sent for a tensor of `elements` elements of `elementBytes` bytes
/// each, compressed with `compression`:
///  - casts send 2 bytes per element;
///  - sparsifiers send ceil(ratio * n) (value, 32-bit index) pairs;
///  - sign compressors send one bit per element, packed into 32-bit words,
///    plus one scale;
///  - qsgd sends ceil(log2(levels + 1)) + 1 bits per element plus the norm.
int64_t compressedBytes(int64_t elements, int64_t elementBytes,
                        const Compression &compression);

/// Formats a byte count for people: "512 B", "3.0 KiB", "1.25 MiB".
std::string formatBytes(int64_t bytes);

} // namespace hetero::wire

#endif // HETERO_SUPPORT_WIRESIZE_H
