//===- LeadingDimension.h - a BLAS leading dimension ------------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Shared by the host (kernels/cpu/Blas.cpp) and cuBLAS (kernels/cuda/Blas.cpp)
// GEMMs of compiled code, whose callers pass a view's row stride, in the
// same ABI (include/hetero-rt/blas.h, gpu.h).
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

/// The name of the first of a GEMM's sizes (batch, m, n, k) that is
/// negative, with its value; null when none is.
inline const char *negativeGemmSize(int64_t batch, int64_t m, int64_t n,
                                    int64_t k, int64_t &value) {
  const int64_t sizes[] = {batch, m, n, k};
  const char *names[] = {"batch", "m", "n", "k"};
  for (int index = 0; index < 4; ++index)
    if (sizes[index] < 0) {
      value = sizes[index];
      return names[index];
    }
  return nullptr;
}

/// The leading dimensions of a row-major C = op(A) op(B) as a BLAS takes
/// them (A stored m x k, or k x m when transposed; B k x n, or n x k; C
/// m x n), from the row strides the caller passes.
struct GemmLeadingDimensions {
  int64_t a = 0, b = 0, c = 0;
  /// "lda", "ldb" or "ldc" for the first that is shorter than its stored
  /// matrix's rows; null when all fit.
  const char *tooSmall = nullptr;
  int64_t tooSmallValue = 0;
};

inline GemmLeadingDimensions
gemmLeadingDimensions(bool transposeA, bool transposeB, int64_t m, int64_t n,
                      int64_t k, int64_t lda, int64_t ldb, int64_t ldc) {
  GemmLeadingDimensions result;
  result.a =
      transposeA ? leadingDimension(lda, k, m) : leadingDimension(lda, m, k);
  result.b =
      transposeB ? leadingDimension(ldb, n, k) : leadingDimension(ldb, k, n);
  result.c = leadingDimension(ldc, m, n);
  if (result.a < std::max<int64_t>(transposeA ? m : k, 1)) {
    result.tooSmall = "lda";
    result.tooSmallValue = result.a;
  } else if (result.b < std::max<int64_t>(transposeB ? k : n, 1)) {
    result.tooSmall = "ldb";
    result.tooSmallValue = result.b;
  } else if (result.c < n) {
    result.tooSmall = "ldc";
    result.tooSmallValue = result.c;
  }
  return result;
}

} // namespace hetero::rt

#endif // HETERO_RUNTIME_KERNELS_LEADINGDIMENSION_H
