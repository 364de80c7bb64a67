/*===- hrt-test.h - shared by the runtime's test programs -------------------===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef HETERO_TEST_RUNTIME_HRT_TEST_H
#define HETERO_TEST_RUNTIME_HRT_TEST_H

#include "hetero-rt/hrt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Aborts the whole job when a call that must succeed fails. */
#define CHECK_OK(call)                                                         \
  do {                                                                         \
    hrt_status status_ = (call);                                               \
    if (status_ != HRT_SUCCESS) {                                              \
      fprintf(stderr, "%s failed: %s\n", #call, hrt_last_error());             \
      hrt_abort(2);                                                            \
    }                                                                          \
  } while (0)

/* Initialises the MPI backend (the NCCL backend when HETERO_TEST_BACKEND
 * is "nccl") and returns the world with this rank and the job's size;
 * aborts when that fails. */
static inline hrt_comm hrt_test_init(int *argc, char ***argv, int *rank,
                                     int *size) {
  hrt_comm world;
  const char *backend = getenv("HETERO_TEST_BACKEND");
  CHECK_OK(hrt_init(backend && strcmp(backend, "nccl") == 0 ? HRT_BACKEND_NCCL
                                                            : HRT_BACKEND_MPI,
                    argc, argv));
  CHECK_OK(hrt_comm_world(&world));
  CHECK_OK(hrt_comm_rank(world, rank));
  CHECK_OK(hrt_comm_size(world, size));
  return world;
}

#endif /* HETERO_TEST_RUNTIME_HRT_TEST_H */
