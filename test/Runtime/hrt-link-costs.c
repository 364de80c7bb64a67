/*===- hrt-link-costs.c - what a link costs, measured by the runtime -------===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* REQUIRES: mpi
 * RUN: env HETERO_RT_TIMEOUT=20 %mpirun -np 2 hrt-link-costs plain | FileCheck %s --check-prefix=PLAIN
 * RUN: env HETERO_RT_LINK=2,5 HETERO_RT_TIMEOUT=20 %mpirun -x HETERO_RT_LINK -np 2 hrt-link-costs emulated 2 5 | FileCheck %s --check-prefixes=CHECK,EMULATED
 *
 * Rank 0 sends rank 1 eight messages of 16 and 64 KiB alternately, each
 * after rank 1's acknowledgement of the previous, so rank 1 is waiting when
 * each arrives and none queues; then one more while rank 1 is busy, which
 * it cannot time. The link is emulated at 2 MiB/s with 5 ms of latency
 * (`emulated <MiB/s> <ms>`), or shaped by the kernel (`shaped <Mbit/s>`,
 * test/Integration/shaped-link.test). The probe measures the latency (5 ms
 * each way on the emulated link; within 2 ms, as a descheduled peer delays
 * a pong, and half of a round trip, not all of it) and the clocks' offset (0 on one host);
 * the fit's time per byte is within 25% of the link's (LINK_TOLERANCE).
 * Alone on a machine, the emulated link's estimate is within 1% and the
 * shaped link's within 6% (header bytes); other tests that run at once can
 * deschedule the waiting receiver for milliseconds, so a measurement that
 * misses is taken again, up to 5 times.
 *
 * Without measurement and emulation, messages carry no stamp and nothing is
 * timed; a probe then fails, as does one of a rank that is no peer. With
 * measurement on, the probed link is known (over shared memory a message
 * may arrive before the receiver polls, so none need be timed). Each rank's
 * lines reach mpirun's output on their own, in either order.
 * PLAIN-DAG: rank 1: 0 links timed without measurement
 * PLAIN-DAG: probe unmeasured: invalid argument: hrt_link_probe on rank 0 (0 bytes): links are not measured: call hrt_link_measure(1) first
 * PLAIN-DAG: probe self: invalid argument: hrt_link_probe on rank 0 (0 bytes): peer 0 is not another rank of the communicator's 2
 * PLAIN-DAG: rank 1: link from 0: {{[0-8]}} timed messages
 *
 * A receiver descheduled while a message arrives (busy machines) does not
 * time it, so half of the eight are enough.
 * CHECK: rank 1: at least 4 of 8 messages timed
 * EMULATED: rank 1: probed latency within 2 ms of the link's
 * CHECK: rank 1: clocks agree within 0.5 ms
 * CHECK: rank 1: time per byte within 25% of the link's
 * CHECK: rank 1: 16 KiB within 25% of alpha + bytes / rate
 * CHECK: rank 1: 64 KiB within 25% of alpha + bytes / rate
 * CHECK: rank 1: a message it was busy for is not timed
 */

#include "Inputs/hrt-test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { SMALL = 16 * 1024, LARGE = 64 * 1024, TIMED = 8 };

static void sleepMs(double ms) {
  struct timespec pause = {(time_t)(ms / 1000),
                           (long)(fmod(ms, 1000.0) * 1e6)};
  nanosleep(&pause, NULL);
}

static int estimateFrom(int sender, hrt_link_estimate *out) {
  hrt_link_estimate all[8];
  int count = hrt_link_estimates(all, 8);
  for (int i = 0; i < count && i < 8; ++i)
    if (all[i].sender == sender) {
      *out = all[i];
      return 1;
    }
  return 0;
}

/* Checks rank 1's estimate against the link's rate and latency (latency 0:
 * unknown); prints what holds when `print`. Returns whether all of it does. */
static int report(const hrt_link_estimate *estimate, double bytesPerMs,
                  double latencyMs, double tolerance, int print) {
  int good = 1;
#define HOLDS(condition, ...)                                                  \
  do {                                                                         \
    if (condition) {                                                           \
      if (print)                                                               \
        printf(__VA_ARGS__);                                                   \
    } else                                                                     \
      good = 0;                                                                \
  } while (0)
  if (print)
    printf("rank 1: alpha %.3f ms, %.4g ms per byte, offset %.3f ms, "
           "mean %.3f ms for %.0f bytes\n",
           estimate->alpha_ms, estimate->ms_per_byte,
           estimate->clock_offset_ms, estimate->message_ms,
           estimate->message_bytes);
  HOLDS(estimate->messages >= TIMED / 2,
        "rank 1: at least %d of %d messages timed\n", TIMED / 2, TIMED);
  if (latencyMs > 0)
    HOLDS(fabs(estimate->alpha_ms - latencyMs) <= 2.0,
          "rank 1: probed latency within 2 ms of the link's\n");
  HOLDS(fabs(estimate->clock_offset_ms) <= 0.5,
        "rank 1: clocks agree within 0.5 ms\n");
  double perByte = 1.0 / bytesPerMs;
  HOLDS(fabs(estimate->ms_per_byte - perByte) <= tolerance * perByte,
        "rank 1: time per byte within %.0f%% of the link's\n",
        tolerance * 100);
  int sizes[2] = {SMALL, LARGE};
  for (int i = 0; i < 2; ++i) {
    double truth = estimate->alpha_ms + sizes[i] / bytesPerMs;
    double predicted = estimate->alpha_ms + sizes[i] * estimate->ms_per_byte;
    if (print)
      printf("rank 1: %d KiB: predicted %.3f ms, alpha + bytes / rate "
             "%.3f ms\n",
             sizes[i] / 1024, predicted, truth);
    HOLDS(fabs(predicted - truth) <= tolerance * truth,
          "rank 1: %d KiB within %.0f%% of alpha + bytes / rate\n",
          sizes[i] / 1024, tolerance * 100);
  }
#undef HOLDS
  return good;
}

/* Rank 0 sends `count` messages, each after rank 1's acknowledgement. */
static void exchange(hrt_comm world, int rank, int count, char *buffer) {
  char ack = 1;
  for (int i = 0; i < count; ++i) {
    size_t bytes = i % 2 ? LARGE : SMALL;
    if (rank == 0) {
      CHECK_OK(hrt_recv(&ack, 1, HRT_UINT8, 1, 1, world));
      CHECK_OK(hrt_bsend(buffer, bytes, HRT_UINT8, 1, 0, world));
    } else {
      CHECK_OK(hrt_bsend(&ack, 1, HRT_UINT8, 0, 1, world));
      CHECK_OK(hrt_recv(buffer, bytes, HRT_UINT8, 0, 0, world));
    }
  }
  CHECK_OK(hrt_flush_sends());
}

int main(int argc, char **argv) {
  int rank, size;
  hrt_comm world = hrt_test_init(&argc, &argv, &rank, &size);
  if (size != 2 || argc < 2) {
    fprintf(stderr, "usage: 2 ranks, plain | emulated <MiB/s> <latency ms> "
                    "| shaped <Mbit/s>\n");
    hrt_abort(2);
  }
  const char *mode = argv[1];
  int plain = strcmp(mode, "plain") == 0;
  int emulated = strcmp(mode, "emulated") == 0;
  double bytesPerMs = 0.0, latencyMs = 0.0;
  if (emulated && argc == 4) {
    bytesPerMs = atof(argv[2]) * 1048576.0 / 1e3;
    latencyMs = atof(argv[3]);
  } else if (strcmp(mode, "shaped") == 0 && argc == 3) {
    bytesPerMs = atof(argv[2]) * 1e6 / 8.0 / 1e3;
  } else if (!plain) {
    fprintf(stderr, "unknown mode %s\n", mode);
    hrt_abort(2);
  }
  char *buffer = calloc(LARGE, 1);
  int peer = 1 - rank;

  if (plain) {
    exchange(world, rank, 2, buffer);
    if (rank == 1)
      printf("rank 1: %d links timed without measurement\n",
             hrt_link_estimates(NULL, 0));
    hrt_status status = hrt_link_probe(world, &peer, 1);
    if (rank == 0)
      printf("probe unmeasured: %s: %s\n", hrt_status_string(status),
             hrt_last_error());
    CHECK_OK(hrt_link_measure(1));
    if (rank == 0) {
      status = hrt_link_probe(world, &rank, 1);
      printf("probe self: %s: %s\n", hrt_status_string(status),
             hrt_last_error());
    }
    fflush(stdout);
    CHECK_OK(hrt_barrier(world));
  } else {
    CHECK_OK(hrt_link_measure(1));
  }
  /* Timing on a shared machine: a measurement that other processes spoiled
   * is taken again, up to 5 times; the last one is reported. */
  hrt_link_estimate estimate;
  double tolerance =
      getenv("LINK_TOLERANCE") ? atof(getenv("LINK_TOLERANCE")) : 0.25;
  enum { kAttempts = 5 };
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    hrt_link_estimates_reset();
    CHECK_OK(hrt_link_probe(world, &peer, 1));
    exchange(world, rank, TIMED, buffer);
    int last = attempt == kAttempts - 1 || plain;
    int good = 1;
    if (rank == 1 && !plain) {
      good = estimateFrom(0, &estimate) && report(&estimate, bytesPerMs,
                                                  latencyMs, tolerance, 0);
    }
    CHECK_OK(hrt_all_reduce(&good, &good, 1, HRT_INT32, HRT_MIN, world));
    if (!good && !last)
      continue;
    if (rank == 1) {
      if (!estimateFrom(0, &estimate)) {
        printf("rank 1: no estimate of the link from 0\n");
        hrt_abort(1);
      }
      printf("rank 1: link from 0: %d timed messages\n", estimate.messages);
      if (!plain)
        report(&estimate, bytesPerMs, latencyMs, tolerance, 1);
    }
    break;
  }
  if (!plain) {
    /* Rank 1 computes (sleeps) while the message arrives. */
    if (rank == 0)
      CHECK_OK(hrt_bsend(buffer, SMALL, HRT_UINT8, 1, 2, world));
    else {
      sleepMs(200);
      CHECK_OK(hrt_recv(buffer, SMALL, HRT_UINT8, 0, 2, world));
      hrt_link_estimate after;
      if (estimateFrom(0, &after) && after.messages == estimate.messages)
        printf("rank 1: a message it was busy for is not timed\n");
    }
    CHECK_OK(hrt_flush_sends());
  }
  fflush(stdout);
  free(buffer);
  CHECK_OK(hrt_finalize());
  return 0;
}
