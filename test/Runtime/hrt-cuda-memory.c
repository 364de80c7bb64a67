/*===- hrt-cuda-memory.c - device copies, staging and their release -------===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* REQUIRES: host-cuda
 * RUN: env LD_LIBRARY_PATH=%host_cuda HETERO_HOST_CUDA_REPORT=1 hrt-cuda-memory 2>&1 | FileCheck %s
 *
 * libhetero_rt_cuda's memory entry points (include/hetero-rt/gpu.h) on the
 * driver of host memory (Inputs/host-cuda.c), whose device memory the host
 * cannot touch: every value below went through the driver's copies.
 *
 * A global's device copy is made once and filled from the host buffer.
 * CHECK:      mirror: filled from the host, the same copy again
 * CHECK-NEXT: mirror count: 1 (1024 bytes)
 *
 * The host buffer and its copy go apart until one is copied to the other,
 * one buffer or all of them.
 * CHECK-NEXT: mirror_copy to the host: the device's values
 * CHECK-NEXT: mirror_copy to the device: the host's values
 * CHECK-NEXT: mirrors_to_host: the device's values
 * CHECK-NEXT: mirrors_to_device: the host's values
 *
 * Staging: a pinned host copy of device data, copied back on release and
 * reused for the next call of a size it fits.
 * CHECK-NEXT: stage_in: the device's values
 * CHECK-NEXT: stage_out: the device holds the staged values
 * CHECK-NEXT: stage_in again: the same pinned buffer
 *
 * hrt_cuda_release frees the device copies (and says how many bytes) and
 * the pinned buffers; a later mirror is a fresh copy of the host buffer.
 * CHECK-NEXT: release: 1024 bytes; mirror count 0 (0 bytes)
 * CHECK-NEXT: mirror after release: filled from the host
 * CHECK-NEXT: release again: 1024 bytes
 * CHECK-NEXT: release with nothing held: 0 bytes
 *
 * The driver saw two device copies made and freed, and nothing is left.
 * CHECK-NEXT: host-cuda: launches 0 {{.*}}; device memory: 2 allocations and 0 stream-ordered, 2 frees, 0 live (0 bytes), peak 1024 bytes; {{.*}}; pinned host buffers: 0 live
 *
 * What the driver refuses, the runtime reports, and the process ends:
 * RUN: not env LD_LIBRARY_PATH=%host_cuda hrt-cuda-memory touch 2>&1 | FileCheck %s --check-prefix=TOUCH
 * TOUCH: host-cuda: the host read or wrote device memory: +12 of a 1024-byte allocation
 * RUN: not env LD_LIBRARY_PATH=%host_cuda hrt-cuda-memory resize 2>&1 | FileCheck %s --check-prefix=RESIZE
 * RESIZE: hetero GPU runtime: hrt_cuda_mirror: the buffer at {{[0-9]+}} has 1024 bytes on the device, asked for 512
 * RUN: not env LD_LIBRARY_PATH=%host_cuda hrt-cuda-memory outside 2>&1 | FileCheck %s --check-prefix=OUTSIDE
 * OUTSIDE:      host-cuda: cuMemcpyAsync: the destination: 100 bytes at +1000 of a 1024-byte allocation
 * OUTSIDE-NEXT: hetero GPU runtime: {{.*}}cuMemcpyAsync{{.*}} failed: CUDA_ERROR_INVALID_VALUE (invalid argument)
 * RUN: not env LD_LIBRARY_PATH=%host_cuda hrt-cuda-memory negative 2>&1 | FileCheck %s --check-prefix=NEGATIVE
 * NEGATIVE: hetero GPU runtime: hrt_cuda_stage_in: a negative size, -4
 */

#include "hetero-rt/gpu.h"

#include <stdio.h>
#include <string.h>

enum { kFloats = 256 };
static float params[kFloats];

static void fillWith(float *values, float scale) {
  for (int i = 0; i < kFloats; ++i)
    values[i] = scale * (float)i;
}

static int holds(const float *values, float scale) {
  for (int i = 0; i < kFloats; ++i)
    if (values[i] != scale * (float)i)
      return 0;
  return 1;
}

/* The device copy's values, through the driver. */
static int deviceHolds(void *device, float scale) {
  float read[kFloats];
  hrt_cuda_copy(read, device, sizeof read);
  return holds(read, scale);
}

static void writeDevice(void *device, float scale) {
  float values[kFloats];
  fillWith(values, scale);
  hrt_cuda_copy(device, values, sizeof values);
}

static const char *yes(int condition, const char *good, const char *bad) {
  return condition ? good : bad;
}

int main(int argc, char **argv) {
  const long long bytes = sizeof params;
  fillWith(params, 1);
  float *device = hrt_cuda_mirror(params, bytes);

  if (argc > 1 && !strcmp(argv[1], "touch")) {
    printf("%f\n", device[3]);
    return 0;
  }
  if (argc > 1 && !strcmp(argv[1], "resize")) {
    hrt_cuda_mirror(params, bytes / 2);
    return 0;
  }
  if (argc > 1 && !strcmp(argv[1], "outside")) {
    hrt_cuda_copy((char *)device + 1000, params, 100);
    return 0;
  }
  if (argc > 1 && !strcmp(argv[1], "negative")) {
    hrt_cuda_stage_in(device, -4, 1);
    return 0;
  }

  printf("mirror: %s\n",
         yes(deviceHolds(device, 1) && hrt_cuda_mirror(params, bytes) == device,
             "filled from the host, the same copy again", "wrong"));
  int64_t mirrored = 0;
  int64_t count = hrt_cuda_mirror_count(&mirrored);
  printf("mirror count: %lld (%lld bytes)\n", (long long)count,
         (long long)mirrored);

  fillWith(params, -1);
  hrt_cuda_mirror_copy(params, bytes, /*to_device=*/0);
  printf("mirror_copy to the host: %s\n",
         yes(holds(params, 1), "the device's values", "wrong"));
  fillWith(params, 2);
  hrt_cuda_mirror_copy(params, bytes, /*to_device=*/1);
  printf("mirror_copy to the device: %s\n",
         yes(deviceHolds(device, 2), "the host's values", "wrong"));
  writeDevice(device, 3);
  hrt_cuda_mirrors_to_host();
  printf("mirrors_to_host: %s\n",
         yes(holds(params, 3), "the device's values", "wrong"));
  fillWith(params, 4);
  hrt_cuda_mirrors_to_device();
  printf("mirrors_to_device: %s\n",
         yes(deviceHolds(device, 4), "the host's values", "wrong"));

  float *staged = hrt_cuda_stage_in(device, bytes, /*copy_in=*/1);
  printf("stage_in: %s\n",
         yes(holds(staged, 4), "the device's values", "wrong"));
  fillWith(staged, 5);
  hrt_cuda_stage_out(staged, device, bytes, /*copy_out=*/1);
  printf("stage_out: %s\n", yes(deviceHolds(device, 5),
                                "the device holds the staged values", "wrong"));
  float *again = hrt_cuda_stage_in(device, bytes, /*copy_in=*/0);
  printf("stage_in again: %s\n",
         yes(again == staged, "the same pinned buffer", "another buffer"));
  hrt_cuda_stage_out(again, device, bytes, /*copy_out=*/0);

  long long freed = (long long)hrt_cuda_release();
  count = hrt_cuda_mirror_count(&mirrored);
  printf("release: %lld bytes; mirror count %lld (%lld bytes)\n", freed,
         (long long)count, (long long)mirrored);
  fillWith(params, 6);
  device = hrt_cuda_mirror(params, bytes);
  printf("mirror after release: %s\n",
         yes(deviceHolds(device, 6), "filled from the host", "wrong"));
  printf("release again: %lld bytes\n", (long long)hrt_cuda_release());
  printf("release with nothing held: %lld bytes\n",
         (long long)hrt_cuda_release());
  fflush(stdout);
  return 0;
}
