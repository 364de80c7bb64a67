//===- Npy.h - NumPy .npy files of float32 and int64 arrays -----*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free: reads and writes NumPy format 1.0 files holding little-endian
// float32 (or int64) arrays in C order, as hetero-run's --save and --load
// exchange parameters with NumPy (and its disk checkpoints the optimizer's
// step counter), and hetero-import-onnx reads a data set's samples.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_SUPPORT_NPY_H
#define HETERO_SUPPORT_NPY_H

#include <cstdint>
#include <string>
#include <vector>

namespace hetero::npy {

/// The element types: NumPy's '<f4' and '<i8'.
enum class Dtype { Float32, Int64 };

/// The header of a format 1.0 file of a C-order array of `shape`, padded so
/// that the data starts at a multiple of 64 bytes.
std::string header(const std::vector<int64_t> &shape,
                   Dtype dtype = Dtype::Float32);

/// Writes `data` (the product of `shape` elements) to `path`; returns "" or
/// what went wrong.
std::string write(const std::string &path, const std::vector<int64_t> &shape,
                  const void *data, Dtype dtype);
inline std::string write(const std::string &path,
                         const std::vector<int64_t> &shape, const float *data) {
  return write(path, shape, data, Dtype::Float32);
}

/// Reads `path` into `data`, which holds the product of `shape` elements;
/// the file must hold a C-order array of `dtype` and exactly `shape`.
/// Returns "" or what is wrong with the file.
std::string read(const std::string &path, const std::vector<int64_t> &shape,
                 void *data, Dtype dtype);
inline std::string read(const std::string &path,
                        const std::vector<int64_t> &shape, float *data) {
  return read(path, shape, data, Dtype::Float32);
}

/// An array of either element type, as a file holds it.
struct Array {
  Dtype dtype = Dtype::Float32;
  std::vector<int64_t> shape;
  /// The elements in C order: `floats` for Float32, `ints` for Int64.
  std::vector<float> floats;
  std::vector<int64_t> ints;
};

/// Reads `path`, whatever its shape and element type (of the two); returns
/// "" or what is wrong with the file.
std::string read(const std::string &path, Array &array);

} // namespace hetero::npy

#endif // HETERO_SUPPORT_NPY_H
