//===- Npy.h - NumPy .npy files of float32 arrays ---------------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free: reads and writes NumPy format 1.0 files holding little-endian
// float32 arrays in C order, as hetero-run's --save and --load exchange
// parameters with NumPy.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_SUPPORT_NPY_H
#define HETERO_SUPPORT_NPY_H

#include <cstdint>
#include <string>
#include <vector>

namespace hetero::npy {

/// The header of a format 1.0 file of a `<f4` C-order array of `shape`,
/// padded so that the data starts at a multiple of 64 bytes.
std::string header(const std::vector<int64_t> &shape);

/// Writes `data` (the product of `shape` floats) to `path`; returns "" or
/// what went wrong.
std::string write(const std::string &path, const std::vector<int64_t> &shape,
                  const float *data);

/// Reads `path` into `data`, which holds the product of `shape` floats; the
/// file must hold a `<f4` C-order array of exactly `shape`. Returns "" or
/// what is wrong with the file.
std::string read(const std::string &path, const std::vector<int64_t> &shape,
                 float *data);

} // namespace hetero::npy

#endif // HETERO_SUPPORT_NPY_H
