/*===- hrt-ckpt-state.c - checkpoints of state that lives on a device -------===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* REQUIRES: mpi
 * RUN: rm -rf %t.agents && mkdir -p %t.agents
 * RUN: %mpirun -np 2 hrt-ckpt-state %t.agents %hetero_obj/bin/hetero-ckpt-agent | sort -s -k2,2n | FileCheck %s
 *
 * A GPU run's state lives in device copies of the globals; the compiled
 * step names the host buffers, which only the runtime's copy_state hook
 * (hrt_ckpt_options) keeps in step. Here the "device" is another array.
 * Two ranks, two replicas: each rank's shard goes to the other, and the
 * checkpoints live in the ranks' agents (argv[1], the sockets' directory;
 * argv[2], hetero-ckpt-agent), from which a recovery takes them. mpirun
 * keeps each rank's lines in order but not the ranks' against each other,
 * so the output is sorted by rank, stably.
 *
 * Step 0's checkpoint opens on a host buffer that holds stale values: the
 * hook copies the device's values in first, so the local copy and the
 * peer's chunk hold what the device held.
 * CHECK:      rank 0: step 0 opened: 1 to host, 0 to device; host holds the device's values
 *
 * The device trains on and the host buffer is overwritten; a recovery of
 * step 0 restores the checkpoint into the host buffer as the step's
 * checkpoint opens, and the hook writes it to the device.
 * CHECK-NEXT: rank 0: recovered step 0
 * CHECK-NEXT: rank 0: step 0 reopened: 2 to host, 1 to device; device holds step 0's values
 *
 * Step 1 does not checkpoint (every = 2): nothing is copied.
 * CHECK-NEXT: rank 0: step 1: 2 to host, 1 to device
 *
 * Rank 1 sees the same.
 * CHECK-NEXT: rank 1: step 0 opened: 1 to host, 0 to device; host holds the device's values
 * CHECK-NEXT: rank 1: recovered step 0
 * CHECK-NEXT: rank 1: step 0 reopened: 2 to host, 1 to device; device holds step 0's values
 * CHECK-NEXT: rank 1: step 1: 2 to host, 1 to device
 * CHECK-NOT:  rank
 */

#include "Inputs/hrt-test.h"

enum { kElements = 64 };
static float host[kElements], device[kElements];
static int toHost, toDevice;

static void copyState(void *buffer, long long bytes, int to_device) {
  if (buffer != host || bytes != (long long)sizeof host) {
    fprintf(stderr, "copy_state: asked for %p (%lld bytes), expected %p\n",
            buffer, bytes, (void *)host);
    hrt_abort(2);
  }
  if (to_device) {
    memcpy(device, host, sizeof host);
    ++toDevice;
  } else {
    memcpy(host, device, sizeof host);
    ++toHost;
  }
}

static int holds(const float *values, int rank) {
  for (int i = 0; i < kElements; ++i)
    if (values[i] != (float)(rank * 100 + i))
      return 0;
  return 1;
}

static void say(int rank, const char *line) {
  printf("rank %d: %s\n", rank, line);
  fflush(stdout);
}

static void step(long long number) {
  hrt_mlir_ckpt_begin(number, /*replicas=*/2, /*world=*/2, /*placement=*/0,
                      /*every=*/2, /*tensors=*/1);
  hrt_mlir_ckpt_tensor(host, sizeof host);
  hrt_mlir_ckpt_chunk(host, 0, sizeof host, 0);
  hrt_mlir_ckpt_commit();
}

int main(int argc, char **argv) {
  int rank, size;
  hrt_test_init(&argc, &argv, &rank, &size);
  if (argc < 3) {
    fprintf(stderr, "usage: hrt-ckpt-state <agents dir> <hetero-ckpt-agent>\n");
    return 2;
  }
  hrt_ckpt_options options = {argv[1], argv[2], 42, copyState};
  CHECK_OK(hrt_ckpt_configure(&options));
  char line[160];

  for (int i = 0; i < kElements; ++i) {
    device[i] = (float)(rank * 100 + i);
    host[i] = -1;
  }
  step(0);
  snprintf(line, sizeof line,
           "step 0 opened: %d to host, %d to device; host %s the device's "
           "values",
           toHost, toDevice, holds(host, rank) ? "holds" : "lacks");
  say(rank, line);

  for (int i = 0; i < kElements; ++i) {
    device[i] = -7;
    host[i] = -9;
  }
  long long recovered = -1;
  int fromPeer = 0;
  CHECK_OK(hrt_ckpt_recover(-1, &recovered, &fromPeer));
  snprintf(line, sizeof line, "recovered step %lld", recovered);
  say(rank, line);
  step(recovered);
  snprintf(line, sizeof line,
           "step 0 reopened: %d to host, %d to device; device %s step 0's "
           "values",
           toHost, toDevice, holds(device, rank) ? "holds" : "lacks");
  say(rank, line);

  step(1);
  snprintf(line, sizeof line, "step 1: %d to host, %d to device", toHost,
           toDevice);
  say(rank, line);
  CHECK_OK(hrt_ckpt_finish(/*stop_agent=*/1));
  CHECK_OK(hrt_finalize());
  return 0;
}
