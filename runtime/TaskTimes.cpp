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

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <random>
#include <thread>

namespace hetero::rt {
namespace {

/// HETERO_RT_COMPUTE: every forward task takes `forwardMs` and every
/// backward `backwardMs`, plus `stragglerMs` with probability
/// `probability`, drawn per rank from `seed`. The sleep happens at the
/// task's mark, so the task's measured time and its sends include it.
struct ComputeEmulation {
  bool active = false;
  double forwardMs = 0.0, backwardMs = 0.0, stragglerMs = 0.0;
  double probability = 0.0;
  unsigned long long seed = 0;
  bool seeded = false;
  std::mt19937_64 random;
};

ComputeEmulation &computeEmulation() {
  static ComputeEmulation emulation;
  return emulation;
}

void emulateCompute(int kind) {
  ComputeEmulation &emulation = computeEmulation();
  if (!emulation.active)
    return;
  if (!emulation.seeded) {
    emulation.random.seed(emulation.seed * 1000003ULL + unsigned(worldRank()));
    emulation.seeded = true;
  }
  double ms =
      kind == HRT_TIMELINE_FORWARD ? emulation.forwardMs : emulation.backwardMs;
  if (emulation.probability > 0.0 &&
      std::uniform_real_distribution<double>(0.0, 1.0)(emulation.random) <
          emulation.probability)
    ms += emulation.stragglerMs;
  std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
}

struct TaskClock {
  double lastMark = -1.0;
  double communicationSinceMark = 0.0;
  /// Every communication call since the mark, collectives included: time
  /// a slower device would not stretch.
  double waitingSinceMark = 0.0;
  double sums[2] = {0.0, 0.0};
  long counts[2] = {0, 0};
  double transferSum = 0.0;
  long transfers = 0;
};

TaskClock &taskClock() {
  static TaskClock clock;
  return clock;
}

/// HETERO_RT_SLOWDOWN: each named rank's factor, and this rank's once its
/// rank is known.
struct TaskSlowdown {
  std::map<long, double> factors;
  std::optional<Slowdown> slowdown;
};

TaskSlowdown &taskSlowdown() {
  static TaskSlowdown state;
  return state;
}

/// Stretches the task that ends now, which computed for `seconds`.
void emulateSlowdown(double seconds) {
  TaskSlowdown &state = taskSlowdown();
  if (!state.slowdown) {
    auto found = state.factors.find(worldRank());
    state.slowdown =
        Slowdown{found == state.factors.end() ? 1.0 : found->second};
  }
  if (state.slowdown->factor > 1.0 && seconds > 0)
    state.slowdown->pay(seconds);
}

} // namespace

namespace {
/// Seconds compiled code has spent in communication calls, all kinds.
double &communicationTotal() {
  static double seconds = 0;
  return seconds;
}
} // namespace

double communicationSeconds() { return communicationTotal(); }

void noteCommunication(hrt_timeline_kind kind, double start, double end) {
  communicationTotal() += end - start;
  // Waiting for a peer is not compute; a collective inside a stage's task
  // (tensor parallelism) is part of the task as the planner simulates it.
  if (kind == HRT_TIMELINE_SEND || kind == HRT_TIMELINE_RECV)
    taskClock().communicationSinceMark += end - start;
  taskClock().waitingSinceMark += end - start;
  recordCommunication(kind, start, end);
}

double Slowdown::pay(double seconds) {
  double took = factor * seconds;
  owedSeconds += took - seconds;
  if (owedSeconds >= 1e-3) {
    double start = hrt_wtime();
    std::this_thread::sleep_for(std::chrono::duration<double>(owedSeconds));
    owedSeconds -= hrt_wtime() - start;
  }
  return took;
}

hrt_status readRankFactors(const char *variable, const CallSite &site,
                           std::map<long, double> &factors) {
  factors.clear();
  const char *text = std::getenv(variable);
  if (!text || !*text)
    return HRT_SUCCESS;
  std::string value(text);
  size_t start = 0;
  while (start <= value.size()) {
    size_t end = value.find(',', start);
    std::string item =
        value.substr(start, end == std::string::npos ? end : end - start);
    char *rest = nullptr;
    long who = std::strtol(item.c_str(), &rest, 10);
    double factor = 0;
    bool valid = rest != item.c_str() && *rest == ':' && who >= 0;
    if (valid) {
      const char *number = rest + 1;
      factor = std::strtod(number, &rest);
      valid = rest != number && *rest == '\0' && std::isfinite(factor) &&
              factor >= 1.0;
    }
    if (!valid)
      return fail(HRT_ERROR_INVALID_ARGUMENT, site,
                  std::string(variable) + "='" + value +
                      "' is not '<rank>:<slowdown >= 1>[,<rank>:<slowdown>]'");
    factors[who] = factor;
    if (end == std::string::npos)
      break;
    start = end + 1;
  }
  return HRT_SUCCESS;
}

hrt_status configureComputeFromEnvironment(const CallSite &site) {
  TaskSlowdown &slowdown = taskSlowdown();
  slowdown.slowdown.reset();
  if (hrt_status status =
          readRankFactors("HETERO_RT_SLOWDOWN", site, slowdown.factors))
    return status;
  ComputeEmulation &emulation = computeEmulation();
  emulation = ComputeEmulation();
  const char *text = std::getenv("HETERO_RT_COMPUTE");
  if (!text || !*text)
    return HRT_SUCCESS;
  double values[5] = {0.0, 0.0, 0.0, 0.0, 0.0};
  int count = 0;
  const char *cursor = text;
  bool valid = true;
  while (valid && count < 5) {
    char *end = nullptr;
    values[count] = std::strtod(cursor, &end);
    valid = end != cursor && values[count] >= 0.0;
    ++count;
    if (!valid || *end == '\0') {
      cursor = end;
      break;
    }
    valid = *end == ',';
    cursor = end + 1;
  }
  valid = valid && *cursor == '\0' && (count == 2 || count >= 4) &&
          values[3] <= 1.0;
  if (!valid)
    return fail(HRT_ERROR_INVALID_ARGUMENT, site,
                std::string("HETERO_RT_COMPUTE='") + text +
                    "' is not '<forward ms>,<backward ms>[,<straggler ms>,"
                    "<probability in [0, 1]>[,<seed>]]' of non-negative "
                    "numbers");
  emulation.active = true;
  emulation.forwardMs = values[0];
  emulation.backwardMs = values[1];
  emulation.stragglerMs = values[2];
  emulation.probability = values[3];
  emulation.seed = static_cast<unsigned long long>(values[4]);
  return HRT_SUCCESS;
}

void noteTransfer(double seconds) {
  taskClock().transferSum += seconds;
  ++taskClock().transfers;
}

} // namespace hetero::rt

using namespace hetero::rt;

extern "C" void hrt_mlir_task_mark(int kind, long long microbatch) {
  if (kind != HRT_TIMELINE_FORWARD && kind != HRT_TIMELINE_BACKWARD)
    return;
  emulateCompute(kind);
  TaskClock &clock = taskClock();
  if (clock.lastMark >= 0.0)
    emulateSlowdown(hrt_wtime() - clock.lastMark - clock.waitingSinceMark);
  double now = hrt_wtime();
  recordTask(hrt_timeline_kind(kind), microbatch, now);
  if (clock.lastMark >= 0.0) {
    clock.sums[kind] += now - clock.lastMark - clock.communicationSinceMark;
    ++clock.counts[kind];
  }
  clock.lastMark = now;
  clock.communicationSinceMark = 0.0;
  clock.waitingSinceMark = 0.0;
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
