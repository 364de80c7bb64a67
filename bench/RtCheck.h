//===- RtCheck.h - abort a benchmark on a failed runtime call ---*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_BENCH_RTCHECK_H
#define HETERO_BENCH_RTCHECK_H

#include "hetero-rt/hrt.h"

#include <cstdio>

/// Runs a runtime call; on failure prints it with the runtime's last error
/// and aborts the job.
#define CHECK(call)                                                            \
  do {                                                                         \
    if ((call) != HRT_SUCCESS) {                                               \
      std::fprintf(stderr, "%s: %s\n", #call, hrt_last_error());               \
      hrt_abort(1);                                                            \
    }                                                                          \
  } while (0)

#endif // HETERO_BENCH_RTCHECK_H
