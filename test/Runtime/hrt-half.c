/*===- hrt-half.c - 16-bit float reductions on the MPI backend ------------===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* REQUIRES: mpi
 * RUN: %mpirun -np 2 hrt-half | FileCheck %s
 * RUN: %mpirun -np 4 hrt-half | FileCheck %s
 *
 * Rank r holds x_i = i + (r + 1) / 2 (i < 16) in fp16 and in bf16; every
 * partial sum, product, mean, maximum and minimum of these is exact in both
 * formats, so the reduced values must equal the float results exactly, on
 * every rank, whatever order MPI combines the ranks in. A sum that needs
 * rounding rounds to nearest even: 2048 + 3 = 2051 lies halfway between the
 * fp16 values 2050 and 2052 and becomes 2052 (truncation would give 2050).
 *
 * CHECK-DAG: fp16 sum: 0 mismatches
 * CHECK-DAG: fp16 avg: 0 mismatches
 * CHECK-DAG: fp16 max: 0 mismatches
 * CHECK-DAG: fp16 min: 0 mismatches
 * CHECK-DAG: fp16 prod: 0 mismatches
 * CHECK-DAG: bf16 sum: 0 mismatches
 * CHECK-DAG: bf16 avg: 0 mismatches
 * CHECK-DAG: bf16 max: 0 mismatches
 * CHECK-DAG: bf16 min: 0 mismatches
 * CHECK-DAG: bf16 prod: 0 mismatches
 * CHECK-DAG: fp16 2048 + 3: 2052
 */

#include "Inputs/hrt-test.h"
#include "hetero-rt/compress.h"

#include <stdio.h>

enum { N = 16 };

static int rank = 0, size = 1;

/* Rank r's element i; products use 1 + (r + 1) / 2 to stay small. */
static float element(hrt_reduce_op op, int r, int i) {
  if (op == HRT_PROD)
    return 1.0f + 0.5f * (float)(r + 1);
  return (float)i + 0.5f * (float)(r + 1);
}

static float expected(hrt_reduce_op op, int i) {
  float result = element(op, 0, i);
  for (int r = 1; r < size; ++r) {
    float x = element(op, r, i);
    if (op == HRT_SUM || op == HRT_AVG)
      result += x;
    else if (op == HRT_PROD)
      result *= x;
    else if (op == HRT_MAX)
      result = x > result ? x : result;
    else
      result = x < result ? x : result;
  }
  return op == HRT_AVG ? result / (float)size : result;
}

static void check(const char *format, hrt_dtype dtype, const char *name,
                  hrt_reduce_op op, hrt_comm world) {
  float mine[N], back[N];
  uint16_t packed[N];
  for (int i = 0; i < N; ++i)
    mine[i] = element(op, rank, i);
  (dtype == HRT_FLOAT16 ? hrt_to_fp16 : hrt_to_bf16)(mine, N, packed);
  CHECK_OK(hrt_all_reduce(packed, packed, N, dtype, op, world));
  (dtype == HRT_FLOAT16 ? hrt_from_fp16 : hrt_from_bf16)(packed, N, back);
  int mismatches = 0;
  for (int i = 0; i < N; ++i)
    mismatches += !(back[i] == expected(op, i));
  if (rank == 0)
    printf("%s %s: %d mismatches\n", format, name, mismatches);
}

int main(int argc, char **argv) {
  hrt_comm world = hrt_test_init(&argc, &argv, &rank, &size);
  const char *names[] = {"sum", "avg", "max", "min", "prod"};
  hrt_reduce_op ops[] = {HRT_SUM, HRT_AVG, HRT_MAX, HRT_MIN, HRT_PROD};
  for (int k = 0; k < 5; ++k) {
    check("fp16", HRT_FLOAT16, names[k], ops[k], world);
    check("bf16", HRT_BFLOAT16, names[k], ops[k], world);
  }
  /* 2048 on rank 0, 3 on rank 1, 0 elsewhere: 2051 is not an fp16 value. */
  float value = rank == 0 ? 2048.0f : rank == 1 ? 3.0f : 0.0f, back;
  uint16_t half;
  hrt_to_fp16(&value, 1, &half);
  CHECK_OK(hrt_all_reduce(&half, &half, 1, HRT_FLOAT16, HRT_SUM, world));
  hrt_from_fp16(&half, 1, &back);
  if (rank == 0)
    printf("fp16 2048 + 3: %g\n", back);
  fflush(stdout);
  CHECK_OK(hrt_finalize());
  return 0;
}
