//===- Blas.cpp - host GEMMs of compiled CPU code -------------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// hrt_cpu_sgemm (include/hetero-rt/blas.h) with OpenBLAS's cblas_sgemm, one
// call per matrix of a batch (Debian's OpenBLAS 0.3.21 has no batched
// sgemm), or, in a runtime built without OpenBLAS, with a loop nest that the
// compiler vectorises along C's rows. OpenBLAS runs on as many threads as
// the machine has cores unless told otherwise; the ranks of a job share the
// cores, so products run on one thread until hrt_blas_set_threads says
// more.
//
//===----------------------------------------------------------------------===//

#include "hetero-rt/blas.h"

#include "../LeadingDimension.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>

#ifdef HETERO_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace {

std::atomic<int> blasThreads{1};
std::once_flag threadsApplied;

/// A product's shape, the key of its profile.
using Shape = std::array<int64_t, 5>; // batch, transposes, m, n, k

struct ShapeTimes {
  int64_t calls = 0;
  double seconds = 0;
};

/// The profile of hrt_blas_profile: counts per shape, under a lock (the
/// products of a rank run on its main thread, but a hand-written caller
/// may call from several).
struct Profile {
  std::atomic<bool> on{false};
  std::mutex mutex;
  std::map<Shape, ShapeTimes> shapes;
};

Profile &profile() {
  static Profile instance;
  return instance;
}

/// Ends the process after a product that cannot run: compiled code has no
/// error path.
[[noreturn]] void failProduct(const char *what, int64_t value, int64_t m,
                              int64_t n, int64_t k, const char *problem) {
  std::fprintf(stderr,
               "hrt_cpu_sgemm: %s %lld of a %lld x %lld x %lld product %s\n",
               what, (long long)value, (long long)m, (long long)n, (long long)k,
               problem);
  std::fflush(stderr);
  hrt_abort(1);
  __builtin_unreachable();
}

int asBlasInt(int64_t value, const char *what, int64_t m, int64_t n,
              int64_t k) {
  if (value > INT_MAX)
    failProduct(what, value, m, n, k, "is outside the BLAS's int range");
  return int(value);
}

#ifndef HETERO_HAVE_OPENBLAS
/// C = op(A) op(B) + beta C for one matrix, element (i, p) of op(A) at
/// a[i * rowA + p * colA], and so on.
void loopGemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t rowA,
              int64_t colA, const float *b, int64_t rowB, int64_t colB,
              float beta, float *c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    float *row = c + i * ldc;
    if (beta == 0.0f)
      std::fill(row, row + n, 0.0f);
    else if (beta != 1.0f)
      for (int64_t j = 0; j < n; ++j)
        row[j] *= beta;
    for (int64_t p = 0; p < k; ++p) {
      float scale = a[i * rowA + p * colA];
      const float *source = b + p * rowB;
      for (int64_t j = 0; j < n; ++j)
        row[j] += scale * source[j * colB];
    }
  }
}
#endif

} // namespace

/// The product itself (hrt_cpu_sgemm without its profile).
static void sgemm(int64_t batch, int64_t transposeA, int64_t transposeB,
                  int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                  int64_t strideA, const float *b, int64_t ldb, int64_t strideB,
                  float beta, float *c, int64_t ldc, int64_t strideC) {
  int64_t negative = 0;
  if (const char *name = hetero::rt::negativeGemmSize(batch, m, n, k, negative))
    failProduct(name, negative, m, n, k, "is negative");
  if (batch == 0 || m == 0 || n == 0)
    return;
  // Stored shapes: A is m x k (k x m transposed), B is k x n (n x k).
  hetero::rt::GemmLeadingDimensions leading = hetero::rt::gemmLeadingDimensions(
      transposeA, transposeB, m, n, k, lda, ldb, ldc);
  if (leading.tooSmall)
    failProduct(leading.tooSmall, leading.tooSmallValue, m, n, k,
                "is too small");
  lda = leading.a;
  ldb = leading.b;
  ldc = leading.c;
#ifdef HETERO_HAVE_OPENBLAS
  std::call_once(threadsApplied,
                 [] { openblas_set_num_threads(blasThreads.load()); });
  int mInt = asBlasInt(m, "m", m, n, k), nInt = asBlasInt(n, "n", m, n, k),
      kInt = asBlasInt(k, "k", m, n, k);
  int ldaInt = asBlasInt(lda, "lda", m, n, k),
      ldbInt = asBlasInt(ldb, "ldb", m, n, k),
      ldcInt = asBlasInt(ldc, "ldc", m, n, k);
  for (int64_t index = 0; index < batch; ++index)
    cblas_sgemm(CblasRowMajor, transposeA ? CblasTrans : CblasNoTrans,
                transposeB ? CblasTrans : CblasNoTrans, mInt, nInt, kInt, 1.0f,
                a + index * strideA, ldaInt, b + index * strideB, ldbInt, beta,
                c + index * strideC, ldcInt);
#else
  int64_t rowA = transposeA ? 1 : lda, colA = transposeA ? lda : 1;
  int64_t rowB = transposeB ? 1 : ldb, colB = transposeB ? ldb : 1;
  for (int64_t index = 0; index < batch; ++index)
    loopGemm(m, n, k, a + index * strideA, rowA, colA, b + index * strideB,
             rowB, colB, beta, c + index * strideC, ldc);
#endif
}

extern "C" void hrt_cpu_sgemm(int64_t batch, int64_t transposeA,
                              int64_t transposeB, int64_t m, int64_t n,
                              int64_t k, const float *a, int64_t lda,
                              int64_t strideA, const float *b, int64_t ldb,
                              int64_t strideB, float beta, float *c,
                              int64_t ldc, int64_t strideC) {
  Profile &counts = profile();
  if (!counts.on.load(std::memory_order_relaxed)) {
    sgemm(batch, transposeA, transposeB, m, n, k, a, lda, strideA, b, ldb,
          strideB, beta, c, ldc, strideC);
    return;
  }
  auto start = std::chrono::steady_clock::now();
  sgemm(batch, transposeA, transposeB, m, n, k, a, lda, strideA, b, ldb,
        strideB, beta, c, ldc, strideC);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::lock_guard<std::mutex> lock(counts.mutex);
  ShapeTimes &times = counts.shapes[{
      batch, int64_t(transposeA != 0) * 2 + (transposeB != 0), m, n, k}];
  times.calls += 1;
  times.seconds += seconds;
}

extern "C" void hrt_blas_profile(int on) { profile().on.store(on != 0); }

extern "C" void hrt_blas_profile_totals(long long *calls, double *flops,
                                        double *seconds) {
  Profile &counts = profile();
  std::lock_guard<std::mutex> lock(counts.mutex);
  *calls = 0;
  *flops = *seconds = 0;
  for (const auto &[shape, times] : counts.shapes) {
    *calls += times.calls;
    *flops += 2.0 * double(shape[0]) * double(shape[2]) * double(shape[3]) *
              double(shape[4]) * double(times.calls);
    *seconds += times.seconds;
  }
}

extern "C" int hrt_blas_profile_write(const char *path) {
  Profile &counts = profile();
  std::lock_guard<std::mutex> lock(counts.mutex);
  std::FILE *file = std::fopen(path, "w");
  if (!file)
    return -1;
  std::fprintf(file, "batch transpose_a transpose_b m n k calls seconds\n");
  for (const auto &[shape, times] : counts.shapes)
    std::fprintf(file, "%lld %lld %lld %lld %lld %lld %lld %.9f\n",
                 (long long)shape[0], (long long)(shape[1] / 2),
                 (long long)(shape[1] % 2), (long long)shape[2],
                 (long long)shape[3], (long long)shape[4],
                 (long long)times.calls, times.seconds);
  counts.shapes.clear();
  return std::fclose(file) == 0 ? 0 : -1;
}

extern "C" hrt_status hrt_blas_set_threads(int threads) {
  if (threads < 1)
    return HRT_ERROR_INVALID_ARGUMENT;
  blasThreads.store(threads);
#ifdef HETERO_HAVE_OPENBLAS
  openblas_set_num_threads(threads);
  // A later first product must not reset it.
  std::call_once(threadsApplied, [] {});
#endif
  return HRT_SUCCESS;
}

extern "C" int hrt_blas_threads(void) { return blasThreads.load(); }

extern "C" const char *hrt_blas_library(void) {
#ifdef HETERO_HAVE_OPENBLAS
  // OPENBLAS_VERSION is " OpenBLAS 0.3.21 ": the name without the blanks.
  static const std::string name = [] {
    std::string text = OPENBLAS_VERSION;
    size_t first = text.find_first_not_of(' ');
    size_t last = text.find_last_not_of(' ');
    return first == std::string::npos ? std::string("OpenBLAS")
                                      : text.substr(first, last - first + 1);
  }();
  return name.c_str();
#else
  return "loops";
#endif
}
