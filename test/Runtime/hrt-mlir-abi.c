/*===- hrt-mlir-abi.c - bad arguments from compiled code abort clearly -----===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* REQUIRES: mpi
 * The hrt_mlir_ entry points take 64-bit values from generated code and have
 * no error path: each bad value aborts the job with a message naming the
 * entry point and the value, instead of wrapping or truncating it.
 *
 * RUN: not %mpirun -np 2 hrt-mlir-abi negative-count 2>&1 | FileCheck %s --check-prefix=COUNT
 * COUNT: hetero runtime error: hrt_mlir_all_reduce: the element count -4 is negative
 * RUN: not %mpirun -np 2 hrt-mlir-abi wide-peer 2>&1 | FileCheck %s --check-prefix=PEER
 * PEER: hetero runtime error: hrt_mlir_send: the peer 4294967297 does not fit in an int
 * RUN: not %mpirun -np 2 hrt-mlir-abi bad-mask 2>&1 | FileCheck %s --check-prefix=MASK
 * MASK: hetero runtime error: the axes mask 4 names axes outside the 2-dimensional device grid
 * RUN: not %mpirun -np 2 hrt-mlir-abi bad-extent 2>&1 | FileCheck %s --check-prefix=EXTENT
 * EXTENT: hetero runtime error: device grid extent 0 is -1, not a positive int
 * RUN: not %mpirun -np 2 hrt-mlir-abi compressed-count 2>&1 | FileCheck %s --check-prefix=COMPRESSED
 * COMPRESSED: hetero runtime error: hrt_mlir_compressed_all_reduce: the element count -1 is negative
 * RUN: not %mpirun -np 2 hrt-mlir-abi compressed-resized 2>&1 | FileCheck %s --check-prefix=RESIZED
 * RESIZED: hetero runtime error: hrt_mlir_compressed_all_reduce: compressed all-reduce 9 has 2 elements, but 4 at its first call; a site's size is fixed
 * RUN: not %mpirun -np 2 hrt-mlir-abi compressed-placement 2>&1 | FileCheck %s --check-prefix=PLACEMENT
 * PLACEMENT: hetero runtime error: hrt_mlir_compressed_all_reduce: unknown placement 7, expected 0 (host) or 1 (device)
 * RUN: %mpirun -np 2 hrt-mlir-abi fine | FileCheck %s --check-prefix=FINE
 * FINE: fine: 2 ranks
 */

#include "Inputs/hrt-test.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  CHECK_OK(hrt_init(HRT_BACKEND_MPI, &argc, &argv));
  const char *mode = argc > 1 ? argv[1] : "fine";
  hrt_comm world = hrt_mlir_world();
  float data[4] = {1, 2, 3, 4};
  if (!strcmp(mode, "negative-count"))
    hrt_mlir_all_reduce(world, data, -4, HRT_FLOAT32, HRT_SUM);
  else if (!strcmp(mode, "wide-peer"))
    hrt_mlir_send(world, data, 4, HRT_FLOAT32, 4294967297LL, 0);
  else if (!strcmp(mode, "bad-mask"))
    hrt_mlir_group(2, 1, 2, 1, 1, 4);
  else if (!strcmp(mode, "bad-extent"))
    hrt_mlir_group(2, -1, -2, 1, 1, 0);
  else if (!strcmp(mode, "compressed-count"))
    hrt_mlir_compressed_all_reduce(world, data, -1, HRT_FLOAT32, HRT_SUM, 3,
                                   0.5, 0, 1, 1, 1, 0, 0);
  else if (!strcmp(mode, "compressed-resized")) {
    hrt_mlir_compressed_all_reduce(world, data, 4, HRT_FLOAT32, HRT_SUM, 3,
                                   0.5, 0, 1, 1, 1, 0, 9);
    hrt_mlir_compressed_all_reduce(world, data, 2, HRT_FLOAT32, HRT_SUM, 3,
                                   0.5, 0, 1, 1, 1, 0, 9);
  } else if (!strcmp(mode, "compressed-placement"))
    hrt_mlir_compressed_all_reduce(world, data, 4, HRT_FLOAT32, HRT_SUM, 3,
                                   0.5, 0, 1, 1, 1, 7, 0);
  hrt_comm grid = hrt_mlir_group(2, 1, 2, 1, 1, 0);
  if (hrt_mlir_rank(world) == 0)
    printf("fine: %lld ranks\n", hrt_mlir_size(grid));
  fflush(stdout);
  CHECK_OK(hrt_finalize());
  return 0;
}
