//===- PipelineSim.cpp - discrete-event pipeline simulator ----------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Sim/PipelineSim.h"

#include <algorithm>
#include <limits>
#include <map>
#include <sstream>

namespace hetero::sim {

using schedule::Action;

double Costs::forward(int64_t stage) const {
  return stage < int64_t(stageForwardMs.size()) ? stageForwardMs[stage]
                                                : forwardMs;
}

double Costs::backward(int64_t stage) const {
  return stage < int64_t(stageBackwardMs.size()) ? stageBackwardMs[stage]
                                                 : backwardMs;
}

double Costs::comm(int64_t from, int64_t to) const {
  auto found = linkCommMs.find({from, to});
  return found != linkCommMs.end() ? found->second : commMs;
}

Costs Costs::scaled(double factor) const {
  Costs result = *this;
  result.forwardMs *= factor;
  result.backwardMs *= factor;
  result.commMs *= factor;
  for (double &ms : result.stageForwardMs)
    ms *= factor;
  for (double &ms : result.stageBackwardMs)
    ms *= factor;
  for (auto &[link, ms] : result.linkCommMs)
    ms *= factor;
  return result;
}

std::string parseTrace(const std::string &text, int64_t stages, Costs &costs) {
  std::istringstream lines(text);
  std::string line;
  int64_t number = 0;
  costs.deviceSlowdown.resize(stages, 1.0);
  while (std::getline(lines, line)) {
    ++number;
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string kind;
    if (!(words >> kind))
      continue;
    std::string where = "line " + std::to_string(number) + ": ";
    if (kind == "link") {
      LinkWindow window;
      if (!(words >> window.from >> window.to >> window.startMs >>
            window.endMs >> window.slowdown))
        return where + "expected 'link <from> <to> <start_ms> <end_ms> "
                       "<slowdown>'";
      if (window.from < 0 || window.from >= stages || window.to < 0 ||
          window.to >= stages || std::abs(window.from - window.to) != 1)
        return where + "link " + std::to_string(window.from) + " -> " +
               std::to_string(window.to) +
               " does not join neighbouring stages of " +
               std::to_string(stages);
      if (!(window.endMs > window.startMs) || !(window.slowdown >= 1.0))
        return where + "a window needs end > start and a slowdown >= 1";
      costs.linkWindows.push_back(window);
    } else if (kind == "stage") {
      int64_t stage;
      double slowdown;
      if (!(words >> stage >> slowdown))
        return where + "expected 'stage <s> <slowdown>'";
      if (stage < 0 || stage >= stages || !(slowdown >= 1.0))
        return where + "expected a stage in 0.." + std::to_string(stages - 1) +
               " and a slowdown >= 1";
      costs.deviceSlowdown[stage] = slowdown;
    } else {
      return where + "unknown directive '" + kind +
             "', expected 'link' or 'stage'";
    }
  }
  return "";
}

double transferEnd(const Costs &costs, int64_t from, int64_t to,
                   double startMs) {
  // Walk the slowed windows of this link in time order, spending the
  // transfer's work at the rate each window allows.
  std::vector<LinkWindow> windows;
  for (const LinkWindow &window : costs.linkWindows)
    if (window.from == from && window.to == to && window.endMs > startMs)
      windows.push_back(window);
  std::sort(windows.begin(), windows.end(),
            [](const LinkWindow &a, const LinkWindow &b) {
              return a.startMs < b.startMs;
            });
  double now = startMs, work = costs.comm(from, to);
  for (const LinkWindow &window : windows) {
    if (work <= 0.0)
      break;
    double windowStart = std::max(now, window.startMs);
    // Full speed until the window opens.
    double fast = windowStart - now;
    if (fast >= work)
      return now + work;
    work -= fast;
    now = windowStart;
    double slowCapacity = (window.endMs - now) / window.slowdown;
    if (slowCapacity >= work)
      return now + work * window.slowdown;
    work -= slowCapacity;
    now = window.endMs;
  }
  return now + work;
}

Result simulate(const std::vector<std::vector<Action>> &programs,
                const Costs &costs) {
  int64_t stages = programs.size();
  Result result;
  result.peakInflight.assign(stages, 0);
  result.computeSpans.resize(stages);
  result.computeTasks.resize(stages);
  auto slowdown = [&](int64_t stage) {
    return stage < int64_t(costs.deviceSlowdown.size())
               ? costs.deviceSlowdown[stage]
               : 1.0;
  };
  // Arrival times of messages per (from, to, payload), in send order.
  std::map<std::tuple<int64_t, int64_t, bool>, std::vector<double>> arrivals;
  std::map<std::pair<int64_t, int64_t>, double> linkFree;
  std::map<std::pair<int64_t, int64_t>, std::vector<Span>> linkBusy;
  std::map<std::tuple<int64_t, int64_t, bool>, size_t> consumed;
  std::vector<double> deviceFree(stages, 0.0), lastProduced(stages, 0.0);
  std::vector<int64_t> inFlight(stages, 0);
  auto step = [&](int64_t s, const Action &action) {
    bool activation = carriesActivation(action.kind);
    switch (action.kind) {
    case Action::Forward:
    case Action::Backward: {
      double duration = (action.kind == Action::Forward ? costs.forward(s)
                                                        : costs.backward(s)) *
                        slowdown(s);
      double start = deviceFree[s];
      deviceFree[s] = lastProduced[s] = start + duration;
      result.computeSpans[s].push_back({start, deviceFree[s]});
      result.computeTasks[s].push_back(action);
      inFlight[s] += action.kind == Action::Forward ? 1 : -1;
      result.peakInflight[s] = std::max(result.peakInflight[s], inFlight[s]);
      return true;
    }
    case Action::SendActivation:
    case Action::SendGradient: {
      auto link = std::make_pair(s, action.peer);
      double &free = costs.sharedMedium ? linkFree[{-1, -1}] : linkFree[link];
      double start = std::max(lastProduced[s], free);
      double end = transferEnd(costs, s, action.peer, start);
      free = end;
      if (end > start)
        linkBusy[link].push_back({start, end});
      arrivals[{s, action.peer, activation}].push_back(end);
      return true;
    }
    case Action::RecvActivation:
    case Action::RecvGradient: {
      auto key = std::make_tuple(action.peer, s, activation);
      size_t &index = consumed[key];
      std::vector<double> &queue = arrivals[key];
      if (index >= queue.size())
        return false; // the sender has not produced it yet
      deviceFree[s] = std::max(deviceFree[s], queue[index++]);
      return true;
    }
    }
    return true;
  };
  if (!costs.sharedMedium) {
    // Each link's queue follows its sender's program order, so the order
    // in which devices are stepped does not matter.
    runBlocking(programs, step);
  } else {
    // One queue for all: step the device whose next action is ready first,
    // so that transfers reach the medium in the order they are ready.
    std::vector<size_t> next(size_t(stages), 0);
    std::vector<bool> blocked(size_t(stages), false);
    while (true) {
      int64_t chosen = -1;
      double earliest = 0.0;
      for (int64_t s = 0; s < stages; ++s) {
        if (blocked[s] || next[s] >= programs[s].size())
          continue;
        Action::Kind kind = programs[s][next[s]].kind;
        bool send =
            kind == Action::SendActivation || kind == Action::SendGradient;
        double ready = send ? lastProduced[s] : deviceFree[s];
        if (chosen < 0 || ready < earliest) {
          chosen = s;
          earliest = ready;
        }
      }
      if (chosen < 0)
        break;
      if (step(chosen, programs[chosen][next[chosen]])) {
        ++next[chosen];
        blocked.assign(size_t(stages), false);
      } else {
        blocked[chosen] = true;
      }
    }
  }
  double end = 0.0, busy = 0.0;
  for (int64_t s = 0; s < stages; ++s) {
    end = std::max(end, deviceFree[s]);
    for (const Span &span : result.computeSpans[s])
      busy += span.endMs - span.startMs;
  }
  result.iterationMs = end;
  result.bubbleFraction = end > 0.0 ? 1.0 - busy / (double(stages) * end) : 0.0;
  for (int64_t s = 0; s < stages; ++s)
    for (int64_t peer : {s - 1, s + 1}) {
      if (peer < 0 || peer >= stages)
        continue;
      Result::Link link{s, peer, linkBusy[{s, peer}], {}};
      double cursor = 0.0;
      for (const Span &span : link.busy) {
        if (span.startMs > cursor)
          link.idle.push_back({cursor, span.startMs});
        cursor = std::max(cursor, span.endMs);
      }
      if (end > cursor)
        link.idle.push_back({cursor, end});
      result.links.push_back(link);
    }
  return result;
}

Choice chooseGroupSize(int64_t stages, int64_t microbatches, const Costs &costs,
                       int64_t memoryCap) {
  Choice best{1, std::numeric_limits<double>::infinity()};
  for (int64_t k = 1; k <= microbatches; ++k) {
    int64_t peak = std::min(k * stages, microbatches);
    if (memoryCap > 0 && peak > memoryCap && k > 1)
      break; // larger groups only hold more
    double ms =
        simulate(kfkbPrograms(stages, microbatches, k), costs).iterationMs;
    if (ms < best.iterationMs)
      best = {k, ms};
  }
  return best;
}

} // namespace hetero::sim
