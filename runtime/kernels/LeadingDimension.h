//===- LeadingDimension.h - a BLAS leading dimension ------------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Shared by the host (kernels/cpu/Blas.cpp) and cuBLAS (kernels/cuda/Blas.cpp)
// GEMMs of compiled code, whose callers pass a view's row stride.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_RUNTIME_KERNELS_LEADINGDIMENSION_H
#define HETERO_RUNTIME_KERNELS_LEADINGDIMENSION_H

#include <algorithm>
#include <cstdint>

namespace hetero::rt {

/// The leading dimension a BLAS accepts for a matrix of `rows` rows of
/// `columns` elements whose rows are `stride` apart: a matrix of at most one
/// row may carry any stride, and a BLAS wants at least max(1, columns).
inline int64_t leadingDimension(int64_t stride, int64_t rows, int64_t columns) {
  return rows <= 1 ? std::max({stride, columns, int64_t(1)}) : stride;
}

} // namespace hetero::rt

#endif // HETERO_RUNTIME_KERNELS_LEADINGDIMENSION_H
