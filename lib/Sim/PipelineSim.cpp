//===- PipelineSim.cpp - discrete-event pipeline simulator ----------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Sim/PipelineSim.h"

#include <set>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
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
  // A message's latency does not grow with its size; the rest does.
  auto message = [&](double ms) {
    double latency = std::min(latencyMs, ms);
    return latency + (ms - latency) * factor;
  };
  result.forwardMs *= factor;
  result.backwardMs *= factor;
  result.commMs = message(commMs);
  for (double &ms : result.stageForwardMs)
    ms *= factor;
  for (double &ms : result.stageBackwardMs)
    ms *= factor;
  for (auto &[link, ms] : result.linkCommMs)
    ms = message(ms);
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
  return simulate(programs, costs,
                  schedule::Placement::identity(programs.size()));
}

Result simulate(const std::vector<std::vector<Action>> &programs,
                const Costs &costs, const schedule::Placement &placement) {
  int64_t ranks = programs.size();
  Result result;
  result.peakInflight.assign(ranks, 0);
  result.computeSpans.resize(ranks);
  result.computeTasks.resize(ranks);
  auto slowdown = [&](int64_t rank) {
    return rank < int64_t(costs.deviceSlowdown.size())
               ? costs.deviceSlowdown[rank]
               : 1.0;
  };
  auto duration = [&](const Action &action) {
    int64_t s = action.stage;
    switch (action.kind) {
    case Action::Forward:
      return costs.forward(s);
    case Action::Backward:
      return costs.backward(s);
    case Action::BackwardInput:
      return costs.backward(s) * costs.inputGradientShare;
    case Action::BackwardWeight:
      return costs.backward(s) * (1.0 - costs.inputGradientShare);
    default:
      return 0.0;
    }
  };
  // When each message (sender stage, receiver stage, payload, micro-batch)
  // arrives.
  std::map<std::tuple<int64_t, int64_t, bool, int64_t>, double> arrivals;
  std::map<std::pair<int64_t, int64_t>, double> linkFree;
  std::map<std::pair<int64_t, int64_t>, std::vector<Span>> linkBusy;
  std::vector<double> deviceFree(ranks, 0.0), lastProduced(ranks, 0.0);
  std::vector<int64_t> inFlight(ranks, 0);
  int64_t last = placement.stages() - 1;
  auto step = [&](int64_t r, const Action &action) {
    bool activation = carriesActivation(action.kind);
    switch (action.kind) {
    case Action::Forward:
    case Action::Backward:
    case Action::BackwardInput:
    case Action::BackwardWeight: {
      // A task whose input comes from a stage on another rank waits for
      // its message; its receive was only posted.
      int64_t s = action.stage;
      bool forward = action.kind == Action::Forward;
      int64_t from = forward ? s - 1 : s + 1;
      if (action.kind != Action::BackwardWeight && from >= 0 && from <= last &&
          placement.rankOf[from] != r) {
        auto arrival = arrivals.find({from, s, forward, action.microbatch});
        if (arrival == arrivals.end())
          return false; // the sender has not produced it yet
        deviceFree[r] = std::max(deviceFree[r], arrival->second);
      }
      double start = deviceFree[r];
      deviceFree[r] = start + duration(action) * slowdown(r);
      if (action.kind != Action::BackwardWeight)
        lastProduced[r] = deviceFree[r];
      result.computeSpans[r].push_back({start, deviceFree[r]});
      result.computeTasks[r].push_back(action);
      if (action.kind == Action::Forward)
        ++inFlight[r];
      else if (action.kind != Action::BackwardInput)
        --inFlight[r];
      result.peakInflight[r] = std::max(result.peakInflight[r], inFlight[r]);
      return true;
    }
    case Action::SendActivation:
    case Action::SendGradient: {
      int64_t to = placement.rankOf[action.peer];
      auto link = std::make_pair(r, to);
      double &free = costs.sharedMedium ? linkFree[{-1, -1}] : linkFree[link];
      double start = std::max(lastProduced[r], free);
      double end = transferEnd(costs, r, to, start);
      free = end;
      if (end > start)
        linkBusy[link].push_back({start, end});
      arrivals[{action.stage, action.peer, activation, action.microbatch}] =
          end;
      return true;
    }
    case Action::RecvActivation:
    case Action::RecvGradient:
      // Posted: the task that needs the message waits for it.
      return true;
    }
    return true;
  };
  if (!costs.sharedMedium) {
    // Each link's transfers follow its sender's program order, so the
    // order in which devices are stepped does not matter.
    runBlocking(programs, step);
  } else {
    // One queue for all: step the device whose next action is ready first,
    // so that transfers reach the medium in the order they are ready.
    std::vector<size_t> next(size_t(ranks), 0);
    std::vector<bool> blocked(size_t(ranks), false);
    while (true) {
      int64_t chosen = -1;
      double earliest = 0.0;
      for (int64_t r = 0; r < ranks; ++r) {
        if (blocked[r] || next[r] >= programs[r].size())
          continue;
        bool send = isSend(programs[r][next[r]].kind);
        double ready = send ? lastProduced[r] : deviceFree[r];
        if (chosen < 0 || ready < earliest) {
          chosen = r;
          earliest = ready;
        }
      }
      if (chosen < 0)
        break;
      if (step(chosen, programs[chosen][next[chosen]])) {
        ++next[chosen];
        blocked.assign(size_t(ranks), false);
      } else {
        blocked[chosen] = true;
      }
    }
  }
  double end = 0.0, busy = 0.0;
  for (int64_t r = 0; r < ranks; ++r) {
    end = std::max(end, deviceFree[r]);
    for (const Span &span : result.computeSpans[r])
      busy += span.endMs - span.startMs;
  }
  result.iterationMs = end;
  result.bubbleFraction = end > 0.0 ? 1.0 - busy / (double(ranks) * end) : 0.0;
  // The links between ranks that hold neighbouring stages.
  std::set<std::pair<int64_t, int64_t>> joined;
  for (int64_t s = 0; s + 1 < placement.stages(); ++s) {
    int64_t a = placement.rankOf[s], b = placement.rankOf[s + 1];
    if (a != b) {
      joined.insert({a, b});
      joined.insert({b, a});
    }
  }
  for (auto [from, to] : joined) {
    Result::Link link{from, to, linkBusy[{from, to}], {}};
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
