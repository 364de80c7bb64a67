//===- Kfkb.cpp - kFkB pipeline schedules ---------------------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Schedule/Kfkb.h"

#include <algorithm>
#include <cctype>
#include <unordered_map>

namespace hetero::schedule {

std::vector<Task> kfkbProgram(int64_t stages, int64_t microbatches,
                              int64_t groupSize, int64_t stage) {
  int64_t groups = (microbatches + groupSize - 1) / groupSize;
  auto emitGroup = [&](std::vector<Task> &program, Task::Kind kind,
                       int64_t group) {
    int64_t first = group * groupSize;
    int64_t last = std::min(microbatches, first + groupSize);
    for (int64_t microbatch = first; microbatch < last; ++microbatch)
      program.push_back({kind, microbatch});
  };
  std::vector<Task> program;
  int64_t warmup = std::min(stages - 1 - stage, groups);
  int64_t forward = 0, backward = 0;
  for (; forward < warmup; ++forward)
    emitGroup(program, Task::Forward, forward);
  for (; forward < groups; ++forward, ++backward) {
    emitGroup(program, Task::Forward, forward);
    emitGroup(program, Task::Backward, backward);
  }
  for (; backward < groups; ++backward)
    emitGroup(program, Task::Backward, backward);
  return program;
}

std::string formatProgram(const std::vector<Task> &program) {
  std::string text;
  for (const Task &task : program) {
    if (!text.empty())
      text += ' ';
    text += task.kind == Task::Forward ? 'F' : 'B';
    text += std::to_string(task.microbatch);
  }
  return text;
}

std::vector<Action> withTransfers(const std::vector<Task> &program,
                                  int64_t stages, int64_t stage) {
  std::vector<Action> actions;
  for (const Task &task : program) {
    int64_t i = task.microbatch;
    if (task.kind == Task::Forward) {
      if (stage > 0)
        actions.push_back({Action::RecvActivation, i, stage - 1});
      actions.push_back({Action::Forward, i});
      if (stage + 1 < stages)
        actions.push_back({Action::SendActivation, i, stage + 1});
    } else {
      if (stage + 1 < stages)
        actions.push_back({Action::RecvGradient, i, stage + 1});
      actions.push_back({Action::Backward, i});
      if (stage > 0)
        actions.push_back({Action::SendGradient, i, stage - 1});
    }
  }
  return actions;
}

std::vector<std::vector<Action>>
splitMicrobatches(const std::vector<std::vector<Action>> &programs,
                  int64_t factor) {
  std::vector<std::vector<Action>> split(programs.size());
  for (size_t s = 0; s < programs.size(); ++s)
    for (const Action &action : programs[s])
      for (int64_t part = 0; part < factor; ++part) {
        Action piece = action;
        piece.microbatch = action.microbatch * factor + part;
        split[s].push_back(piece);
      }
  return split;
}

std::vector<std::vector<Action>>
kfkbPrograms(int64_t stages, int64_t microbatches, int64_t groupSize) {
  std::vector<std::vector<Action>> programs;
  for (int64_t s = 0; s < stages; ++s)
    programs.push_back(withTransfers(
        kfkbProgram(stages, microbatches, groupSize, s), stages, s));
  return programs;
}

std::string describe(const Action &action) {
  std::string i = std::to_string(action.microbatch);
  std::string peer = std::to_string(action.peer);
  switch (action.kind) {
  case Action::Forward:
    return "F" + i;
  case Action::Backward:
    return "B" + i;
  case Action::SendActivation:
    return "the send of activation " + i + " to stage " + peer;
  case Action::RecvActivation:
    return "the receive of activation " + i + " from stage " + peer;
  case Action::SendGradient:
    return "the send of gradient " + i + " to stage " + peer;
  case Action::RecvGradient:
    return "the receive of gradient " + i + " from stage " + peer;
  }
  return "?";
}

bool isSend(Action::Kind kind) {
  return kind == Action::SendActivation || kind == Action::SendGradient;
}
bool isReceive(Action::Kind kind) {
  return kind == Action::RecvActivation || kind == Action::RecvGradient;
}
bool carriesActivation(Action::Kind kind) {
  return kind == Action::SendActivation || kind == Action::RecvActivation;
}

namespace {

/// Per-stage checks: each compute task once, in a valid order, with its
/// inputs received before and its outputs sent after.
void verifyStage(const std::vector<Action> &program, int64_t stage,
                 int64_t stages, int64_t microbatches, int64_t memoryCap,
                 std::vector<Problem> &problems) {
  std::vector<int> forwards(microbatches), backwards(microbatches);
  std::vector<bool> activationIn(microbatches), gradientIn(microbatches);
  int64_t inFlight = 0;
  bool capReported = false;
  auto report = [&](int64_t index, const std::string &message) {
    problems.push_back({stage, index, message});
  };
  std::string where = "stage " + std::to_string(stage);
  for (int64_t index = 0; index < int64_t(program.size()); ++index) {
    const Action &action = program[index];
    int64_t i = action.microbatch;
    if (i < 0 || i >= microbatches) {
      report(index, where + ": " + describe(action) + " names micro-batch " +
                        std::to_string(i) + " of " +
                        std::to_string(microbatches));
      continue;
    }
    switch (action.kind) {
    case Action::Forward:
      if (forwards[i]++)
        report(index, where + " runs F" + std::to_string(i) + " twice");
      if (stage > 0 && !activationIn[i])
        report(index, where + " runs F" + std::to_string(i) +
                          " before receiving its activation from stage " +
                          std::to_string(stage - 1));
      if (++inFlight > memoryCap && memoryCap > 0 && !capReported) {
        report(index, where + " holds " + std::to_string(inFlight) +
                          " activations in flight after F" + std::to_string(i) +
                          ", above the memory cap of " +
                          std::to_string(memoryCap));
        capReported = true;
      }
      break;
    case Action::Backward:
      if (backwards[i]++)
        report(index, where + " runs B" + std::to_string(i) + " twice");
      if (!forwards[i])
        report(index, where + " runs B" + std::to_string(i) + " before F" +
                          std::to_string(i));
      if (stage + 1 < stages && !gradientIn[i])
        report(index, where + " runs B" + std::to_string(i) +
                          " before receiving its gradient from stage " +
                          std::to_string(stage + 1));
      --inFlight;
      break;
    case Action::SendActivation:
    case Action::SendGradient: {
      bool activation = action.kind == Action::SendActivation;
      int64_t expected = activation ? stage + 1 : stage - 1;
      if (action.peer != expected)
        report(index, where + ": " + describe(action) +
                          " goes to the wrong stage; " +
                          (activation ? "activations" : "gradients") +
                          " go to stage " + std::to_string(expected));
      else if (!(activation ? forwards[i] : backwards[i]))
        report(index, where + ": " + describe(action) + " comes before " +
                          (activation ? "F" : "B") + std::to_string(i) +
                          " produces it");
      break;
    }
    case Action::RecvActivation:
    case Action::RecvGradient: {
      bool activation = action.kind == Action::RecvActivation;
      int64_t expected = activation ? stage - 1 : stage + 1;
      if (action.peer != expected)
        report(index, where + ": " + describe(action) +
                          " comes from the wrong stage; " +
                          (activation ? "activations" : "gradients") +
                          " come from stage " + std::to_string(expected));
      (activation ? activationIn : gradientIn)[i] = true;
      break;
    }
    }
  }
  for (int64_t i = 0; i < microbatches; ++i) {
    if (!forwards[i])
      report(-1, where + " never runs F" + std::to_string(i));
    if (!backwards[i])
      report(-1, where + " never runs B" + std::to_string(i));
  }
}

} // namespace

std::vector<Problem>
verifyPrograms(const std::vector<std::vector<Action>> &programs,
               int64_t microbatches, int64_t memoryCap) {
  int64_t stages = programs.size();
  std::vector<Problem> problems;
  for (int64_t s = 0; s < stages; ++s)
    verifyStage(programs[s], s, stages, microbatches, memoryCap, problems);
  if (!problems.empty())
    return problems;

  // Per directed link and payload: the receive order is the send order.
  for (int64_t s = 0; s < stages; ++s) {
    for (int64_t peer : {s - 1, s + 1}) {
      if (peer < 0 || peer >= stages)
        continue;
      for (bool activation : {true, false}) {
        std::vector<int64_t> sent, received;
        std::vector<int64_t> receiveIndex;
        for (const Action &action : programs[s])
          if (isSend(action.kind) && action.peer == peer &&
              carriesActivation(action.kind) == activation)
            sent.push_back(action.microbatch);
        for (int64_t index = 0; index < int64_t(programs[peer].size());
             ++index) {
          const Action &action = programs[peer][index];
          if (isReceive(action.kind) && action.peer == s &&
              carriesActivation(action.kind) == activation) {
            received.push_back(action.microbatch);
            receiveIndex.push_back(index);
          }
        }
        std::string payload = activation ? "activation" : "gradient";
        for (size_t k = 0; k < std::max(sent.size(), received.size()); ++k) {
          if (k < sent.size() && k < received.size() && sent[k] == received[k])
            continue;
          std::string message = "link " + std::to_string(s) + " -> " +
                                std::to_string(peer) + ": message " +
                                std::to_string(k) + " is ";
          message += k < sent.size() ? payload + " " + std::to_string(sent[k])
                                     : "never sent";
          message += ", but stage " + std::to_string(peer) + " ";
          message += k < received.size()
                         ? "receives " + payload + " " +
                               std::to_string(received[k]) + " there"
                         : "never receives it";
          problems.push_back(
              {peer, k < receiveIndex.size() ? receiveIndex[k] : -1, message});
          break;
        }
      }
    }
  }
  if (!problems.empty())
    return problems;

  // Blocking receives, buffered sends: every program must run to the end.
  // queues[from][to][payload]: microbatches in flight, in send order.
  std::vector<std::vector<std::vector<std::vector<int64_t>>>> queues(
      stages, std::vector<std::vector<std::vector<int64_t>>>(
                  stages, std::vector<std::vector<int64_t>>(2)));
  std::vector<std::vector<std::vector<size_t>>> heads(
      stages, std::vector<std::vector<size_t>>(stages, std::vector<size_t>(2)));
  std::vector<size_t> next =
      runBlocking(programs, [&](int64_t s, const Action &action) {
        int payload = carriesActivation(action.kind) ? 0 : 1;
        if (isSend(action.kind)) {
          queues[s][action.peer][payload].push_back(action.microbatch);
        } else if (isReceive(action.kind)) {
          std::vector<int64_t> &queue = queues[action.peer][s][payload];
          size_t &head = heads[action.peer][s][payload];
          if (head >= queue.size())
            return false; // blocked until the peer sends
          ++head;
        }
        return true;
      });
  std::string waits;
  for (int64_t s = 0; s < stages; ++s)
    if (next[s] < programs[s].size()) {
      if (!waits.empty())
        waits += "; ";
      waits += "stage " + std::to_string(s) + " waits at " +
               describe(programs[s][next[s]]);
    }
  if (!waits.empty()) {
    for (int64_t s = 0; s < stages; ++s)
      if (next[s] < programs[s].size()) {
        problems.push_back({s, int64_t(next[s]), "deadlock: " + waits});
        break;
      }
  }
  return problems;
}

ProblemDigest digestProblems(const std::vector<Problem> &problems,
                             int64_t perKind) {
  // The kind of a message: the message with each run of digits as '#'.
  auto kindOf = [](const std::string &message) {
    std::string kind;
    for (char c : message)
      if (!std::isdigit(static_cast<unsigned char>(c)))
        kind += c;
      else if (kind.empty() || kind.back() != '#')
        kind += '#';
    return kind;
  };
  struct Seen {
    int64_t count = 0;
    size_t lastShown = 0;
  };
  std::unordered_map<std::string, Seen> kinds;
  ProblemDigest digest;
  for (const Problem &problem : problems) {
    Seen &seen = kinds[kindOf(problem.message)];
    if (seen.count++ < perKind) {
      seen.lastShown = digest.shown.size();
      digest.shown.push_back(problem);
      digest.more.push_back(0);
    } else {
      ++digest.more[seen.lastShown];
    }
  }
  return digest;
}

} // namespace hetero::schedule
