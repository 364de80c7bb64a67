//===- TaskTimes.cpp - measured task and transfer times -------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Stage programs call hrt_mlir_task_mark after each forward and backward
// task. A task's time is the wall time since the previous mark minus the
// time spent inside point-to-point calls since then (waiting for a peer is
// not compute). Transfers are timed by the emulated link: a message's time
// on the link, queueing excluded, as the simulator counts it. Marks and
// communication calls also feed the timeline (Timeline.cpp).
//
//===----------------------------------------------------------------------===//

#include "Runtime.h"

namespace hetero::rt {
namespace {

struct TaskClock {
  double lastMark = -1.0;
  double communicationSinceMark = 0.0;
  double sums[2] = {0.0, 0.0};
  long counts[2] = {0, 0};
  double transferSum = 0.0;
  long transfers = 0;
};

TaskClock &taskClock() {
  static TaskClock clock;
  return clock;
}

} // namespace

void noteCommunication(hrt_timeline_kind kind, double start, double end) {
  // Waiting for a peer is not compute; a collective inside a stage's task
  // (tensor parallelism) is part of the task as the planner simulates it.
  if (kind == HRT_TIMELINE_SEND || kind == HRT_TIMELINE_RECV)
    taskClock().communicationSinceMark += end - start;
  recordCommunication(kind, start, end);
}

void noteTransfer(double seconds) {
  taskClock().transferSum += seconds;
  ++taskClock().transfers;
}

} // namespace hetero::rt

using namespace hetero::rt;

extern "C" void hrt_mlir_task_mark(int kind, long long microbatch) {
  TaskClock &clock = taskClock();
  double now = hrt_wtime();
  if (kind != HRT_TIMELINE_FORWARD && kind != HRT_TIMELINE_BACKWARD)
    return;
  recordTask(hrt_timeline_kind(kind), microbatch, now);
  if (clock.lastMark >= 0.0) {
    clock.sums[kind] += now - clock.lastMark - clock.communicationSinceMark;
    ++clock.counts[kind];
  }
  clock.lastMark = now;
  clock.communicationSinceMark = 0.0;
}

extern "C" void hrt_task_times(double *forward_ms, double *backward_ms,
                               double *transfer_ms) {
  const TaskClock &clock = taskClock();
  auto mean = [](double sum, long count) {
    return count ? sum / double(count) * 1e3 : 0.0;
  };
  if (forward_ms)
    *forward_ms = mean(clock.sums[0], clock.counts[0]);
  if (backward_ms)
    *backward_ms = mean(clock.sums[1], clock.counts[1]);
  if (transfer_ms)
    *transfer_ms = mean(clock.transferSum, clock.transfers);
}

extern "C" void hrt_task_times_reset(void) {
  TaskClock &clock = taskClock();
  clock = TaskClock();
  clock.lastMark = hrt_wtime();
}
