//===- Kfkb.cpp - kFkB pipeline schedules ---------------------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Schedule/Kfkb.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <tuple>
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
      program.push_back({kind, microbatch, stage});
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

std::vector<int64_t> Placement::stagesOf(int64_t rank) const {
  std::vector<int64_t> stages;
  for (int64_t s = 0; s < this->stages(); ++s)
    if (rankOf[s] == rank)
      stages.push_back(s);
  return stages;
}

Placement Placement::identity(int64_t stages) {
  Placement placement;
  for (int64_t s = 0; s < stages; ++s)
    placement.rankOf.push_back(s);
  placement.ranks = stages;
  return placement;
}

Placement Placement::loop(int64_t stages, int64_t ranks) {
  Placement placement;
  for (int64_t s = 0; s < stages; ++s)
    placement.rankOf.push_back(s % ranks);
  placement.ranks = ranks;
  return placement;
}

Placement Placement::vShape(int64_t ranks) {
  Placement placement;
  for (int64_t s = 0; s < 2 * ranks; ++s)
    placement.rankOf.push_back(s < ranks ? s : 2 * ranks - 1 - s);
  placement.ranks = ranks;
  return placement;
}

std::string Placement::check(const std::vector<int64_t> &rankOf,
                             int64_t ranks) {
  // The ranks in use, as a set: a list may name ranks far beyond its
  // stages.
  std::set<int64_t> used;
  for (size_t s = 0; s < rankOf.size(); ++s) {
    if (rankOf[s] < 0 || rankOf[s] >= ranks)
      return "places stage " + std::to_string(s) + " on rank " +
             std::to_string(rankOf[s]) + ", outside ranks 0.." +
             std::to_string(ranks - 1);
    used.insert(rankOf[s]);
  }
  // The first rank without a stage: the first gap in the sorted set.
  int64_t expected = 0;
  for (int64_t r : used) {
    if (r != expected)
      break;
    ++expected;
  }
  if (expected < ranks)
    return "places no stage on rank " + std::to_string(expected) + " of " +
           std::to_string(ranks);
  return "";
}

std::string formatPlacement(const std::vector<int64_t> &rankOf) {
  std::string text = "[";
  for (size_t s = 0; s < rankOf.size(); ++s)
    text += (s ? ", " : "") + std::to_string(rankOf[s]);
  return text + "]";
}

namespace {

char letterOf(Task::Kind kind) {
  switch (kind) {
  case Task::Forward:
    return 'F';
  case Task::Backward:
    return 'B';
  case Task::BackwardInput:
    return 'I';
  case Task::BackwardWeight:
    return 'W';
  }
  return '?';
}

} // namespace

std::string formatProgram(const std::vector<Task> &program, bool withStage) {
  std::string text;
  for (const Task &task : program) {
    if (!text.empty())
      text += ' ';
    if (withStage)
      text += std::to_string(task.stage);
    text += letterOf(task.kind);
    text += std::to_string(task.microbatch);
  }
  return text;
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
bool isCompute(Action::Kind kind) { return !isSend(kind) && !isReceive(kind); }
bool producesInputGradient(Action::Kind kind) {
  return kind == Action::Backward || kind == Action::BackwardInput;
}

Action::Kind actionKind(Task::Kind kind) {
  switch (kind) {
  case Task::Forward:
    return Action::Forward;
  case Task::Backward:
    return Action::Backward;
  case Task::BackwardInput:
    return Action::BackwardInput;
  case Task::BackwardWeight:
    return Action::BackwardWeight;
  }
  return Action::Forward;
}

std::vector<Task> computeTasks(const std::vector<Action> &program) {
  std::vector<Task> tasks;
  for (const Action &action : program) {
    Task::Kind kind;
    switch (action.kind) {
    case Action::Forward:
      kind = Task::Forward;
      break;
    case Action::Backward:
      kind = Task::Backward;
      break;
    case Action::BackwardInput:
      kind = Task::BackwardInput;
      break;
    case Action::BackwardWeight:
      kind = Task::BackwardWeight;
      break;
    default:
      continue;
    }
    tasks.push_back({kind, action.microbatch, action.stage});
  }
  return tasks;
}

std::vector<Action> withTransfers(const std::vector<Task> &program,
                                  const Placement &placement, int64_t rank) {
  std::vector<Action> actions;
  int64_t last = placement.stages() - 1;
  auto remote = [&](int64_t stage) {
    return stage >= 0 && stage <= last && placement.rankOf[stage] != rank;
  };
  for (const Task &task : program) {
    int64_t i = task.microbatch, s = task.stage;
    Action compute{actionKind(task.kind), i, -1, s};
    switch (task.kind) {
    case Task::Forward:
      if (remote(s - 1))
        actions.push_back({Action::RecvActivation, i, s - 1, s});
      actions.push_back(compute);
      if (remote(s + 1))
        actions.push_back({Action::SendActivation, i, s + 1, s});
      break;
    case Task::Backward:
    case Task::BackwardInput:
      if (remote(s + 1))
        actions.push_back({Action::RecvGradient, i, s + 1, s});
      actions.push_back(compute);
      if (remote(s - 1))
        actions.push_back({Action::SendGradient, i, s - 1, s});
      break;
    case Task::BackwardWeight:
      actions.push_back(compute);
      break;
    }
  }
  return actions;
}

std::vector<Action> withTransfers(const std::vector<Task> &program,
                                  int64_t stages, int64_t stage) {
  std::vector<Task> staged = program;
  for (Task &task : staged)
    task.stage = stage;
  return withTransfers(staged, Placement::identity(stages), stage);
}

std::vector<std::vector<Action>>
splitMicrobatches(const std::vector<std::vector<Action>> &programs,
                  int64_t factor) {
  std::vector<std::vector<Action>> split(programs.size());
  for (size_t r = 0; r < programs.size(); ++r)
    for (const Action &action : programs[r])
      for (int64_t part = 0; part < factor; ++part) {
        Action piece = action;
        piece.microbatch = action.microbatch * factor + part;
        split[r].push_back(piece);
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
  std::string stage = std::to_string(action.stage);
  std::string peer = std::to_string(action.peer);
  std::string payload =
      carriesActivation(action.kind) ? "activation " : "gradient ";
  switch (action.kind) {
  case Action::Forward:
    return "F" + i + " of stage " + stage;
  case Action::Backward:
    return "B" + i + " of stage " + stage;
  case Action::BackwardInput:
    return "I" + i + " of stage " + stage;
  case Action::BackwardWeight:
    return "W" + i + " of stage " + stage;
  case Action::SendActivation:
  case Action::SendGradient:
    return "stage " + stage + "'s send of " + payload + i + " to stage " + peer;
  case Action::RecvActivation:
  case Action::RecvGradient:
    return "stage " + stage + "'s receive of " + payload + i + " from stage " +
           peer;
  }
  return "?";
}

namespace {

/// What the tasks of every stage have done so far, per micro-batch.
struct StageState {
  std::vector<int> forwards, backwards, inputs, weights;
  std::vector<bool> activationIn, gradientIn;
  explicit StageState(int64_t microbatches)
      : forwards(microbatches), backwards(microbatches), inputs(microbatches),
        weights(microbatches), activationIn(microbatches),
        gradientIn(microbatches) {}
  bool inputGradientDone(int64_t i) const { return backwards[i] || inputs[i]; }
};

/// The checks of one rank's program: each compute task once, in a valid
/// order, with its inputs there before it runs and its outputs sent after.
void verifyRank(const std::vector<Action> &program, int64_t rank,
                const Placement &placement, int64_t microbatches,
                int64_t memoryCap, std::vector<StageState> &state,
                std::vector<Problem> &problems) {
  int64_t stages = placement.stages();
  int64_t stashes = 0;
  bool capReported = false;
  std::string where = "rank " + std::to_string(rank);
  auto report = [&](int64_t index, const std::string &message) {
    problems.push_back({rank, index, message});
  };
  for (int64_t index = 0; index < int64_t(program.size()); ++index) {
    const Action &action = program[index];
    int64_t i = action.microbatch, s = action.stage;
    std::string what = describe(action);
    if (s < 0 || s >= stages) {
      report(index, where + ": " + what + " names a stage outside 0.." +
                        std::to_string(stages - 1));
      continue;
    }
    if (i < 0 || i >= microbatches) {
      report(index, where + ": " + what + " names micro-batch " +
                        std::to_string(i) + " of " +
                        std::to_string(microbatches));
      continue;
    }
    if (placement.rankOf[s] != rank) {
      report(index, where + " runs " + what + ", but stage " +
                        std::to_string(s) + " is placed on rank " +
                        std::to_string(placement.rankOf[s]));
      continue;
    }
    StageState &here = state[s];
    bool localBefore = s > 0 && placement.rankOf[s - 1] == rank;
    bool localAfter = s + 1 < stages && placement.rankOf[s + 1] == rank;
    std::string mb = std::to_string(i);
    auto addStash = [&] {
      if (++stashes > memoryCap && memoryCap > 0 && !capReported) {
        report(index, where + " holds " + std::to_string(stashes) +
                          " micro-batch stashes after " + what +
                          ", above the memory cap of " +
                          std::to_string(memoryCap));
        capReported = true;
      }
    };
    switch (action.kind) {
    case Action::Forward:
      if (here.forwards[i]++)
        report(index, where + " runs " + what + " twice");
      if (s > 0 && localBefore && !state[s - 1].forwards[i])
        report(index, where + " runs " + what + " before F" + mb +
                          " of stage " + std::to_string(s - 1) +
                          " produces its activation");
      else if (s > 0 && !localBefore && !here.activationIn[i])
        report(index, where + " runs " + what +
                          " before receiving its activation from stage " +
                          std::to_string(s - 1));
      addStash();
      break;
    case Action::Backward:
    case Action::BackwardInput: {
      bool whole = action.kind == Action::Backward;
      if ((whole ? here.backwards[i] : here.inputs[i]) > 0)
        report(index, where + " runs " + what + " twice");
      else if (here.backwards[i] || here.inputs[i])
        report(index, where + " runs both B" + mb + " and I" + mb +
                          " of stage " + std::to_string(s));
      ++(whole ? here.backwards[i] : here.inputs[i]);
      if (!here.forwards[i])
        report(index, where + " runs " + what + " before F" + mb);
      if (s + 1 < stages && localAfter && !state[s + 1].inputGradientDone(i))
        report(index, where + " runs " + what + " before stage " +
                          std::to_string(s + 1) +
                          " produces its output gradient");
      else if (s + 1 < stages && !localAfter && !here.gradientIn[i])
        report(index, where + " runs " + what +
                          " before receiving its gradient from stage " +
                          std::to_string(s + 1));
      if (whole)
        --stashes;
      break;
    }
    case Action::BackwardWeight:
      if (here.weights[i]++)
        report(index, where + " runs " + what + " twice");
      else if (here.backwards[i])
        report(index, where + " runs both B" + mb + " and W" + mb +
                          " of stage " + std::to_string(s));
      else if (!here.inputs[i])
        report(index, where + " runs " + what + " before I" + mb);
      --stashes;
      break;
    case Action::SendActivation:
    case Action::SendGradient:
    case Action::RecvActivation:
    case Action::RecvGradient: {
      bool activation = carriesActivation(action.kind);
      bool send = isSend(action.kind);
      // Activations flow to the next stage, gradients to the previous.
      int64_t expected = (activation == send) ? s + 1 : s - 1;
      if (action.peer != expected || expected < 0 || expected >= stages) {
        report(index, where + ": " + what + " joins stages that are not " +
                          "neighbours in the data flow" +
                          (expected >= 0 && expected < stages
                               ? "; expected stage " + std::to_string(expected)
                               : ""));
        break;
      }
      if (placement.rankOf[expected] == rank) {
        report(index, where + ": " + what + " needs no transfer: stage " +
                          std::to_string(expected) + " is on the same rank");
        break;
      }
      if (send &&
          !(activation ? here.forwards[i] > 0 : here.inputGradientDone(i)))
        report(index, where + ": " + what + " comes before " +
                          (activation ? "F" : "B or I") + mb + " produces it");
      if (!send)
        (activation ? here.activationIn : here.gradientIn)[i] = true;
      break;
    }
    }
  }
  for (int64_t s : placement.stagesOf(rank))
    for (int64_t i = 0; i < microbatches; ++i) {
      const StageState &here = state[s];
      std::string tail = std::to_string(i) + " of stage " + std::to_string(s);
      if (!here.forwards[i])
        report(-1, where + " never runs F" + tail);
      if (!here.backwards[i] && !here.inputs[i])
        report(-1, where + " never runs B" + tail + " (nor I and W)");
      else if (here.inputs[i] && !here.weights[i])
        report(-1, where + " never runs W" + tail);
    }
}

/// A message: its sender stage, receiver stage, payload and micro-batch.
using MessageKey = std::tuple<int64_t, int64_t, bool, int64_t>;

MessageKey keyOf(const Action &action) {
  bool activation = carriesActivation(action.kind);
  return isSend(action.kind) ? MessageKey{action.stage, action.peer, activation,
                                          action.microbatch}
                             : MessageKey{action.peer, action.stage, activation,
                                          action.microbatch};
}

/// Runs the programs with buffered sends; with `blockingReceives` a
/// receive waits where it stands, else it is only posted and the task that
/// needs its value waits for it. Returns where each program stopped, and
/// for a stopped one the action whose message it waits for.
struct Run {
  std::vector<size_t> next;
  std::vector<const Action *> waitsFor;
};

Run runPrograms(const std::vector<std::vector<Action>> &programs,
                bool blockingReceives) {
  std::set<MessageKey> sent;
  // Posted receives by the task that waits for them: (stage, payload, mb).
  std::map<std::tuple<int64_t, bool, int64_t>, const Action *> posted;
  Run run;
  run.waitsFor.assign(programs.size(), nullptr);
  run.next = runBlocking(programs, [&](int64_t r, const Action &action) {
    run.waitsFor[r] = nullptr;
    if (isSend(action.kind)) {
      sent.insert(keyOf(action));
      return true;
    }
    if (isReceive(action.kind)) {
      if (!blockingReceives) {
        posted[{action.stage, carriesActivation(action.kind),
                action.microbatch}] = &action;
        return true;
      }
      if (sent.count(keyOf(action)))
        return true;
      run.waitsFor[r] = &action;
      return false;
    }
    if (blockingReceives || action.kind == Action::BackwardWeight)
      return true;
    // The posted receive this task needs, if any.
    bool forward = action.kind == Action::Forward;
    auto found = posted.find({action.stage, forward, action.microbatch});
    if (found == posted.end() || sent.count(keyOf(*found->second)))
      return true;
    run.waitsFor[r] = found->second;
    return false;
  });
  return run;
}

/// "rank 0 waits at ... for rank 1; rank 1 waits at ... for rank 0": the
/// cycle of waiting ranks that `run` stopped in.
std::string describeDeadlock(const Run &run, const Placement &placement,
                             const std::vector<std::vector<Action>> &programs,
                             int64_t &first) {
  int64_t ranks = programs.size();
  first = -1;
  for (int64_t r = 0; r < ranks && first < 0; ++r)
    if (run.next[r] < programs[r].size())
      first = r;
  if (first < 0)
    return "";
  // Follow the waits from the first stopped rank until one repeats.
  std::vector<int64_t> chain;
  std::vector<int> seenAt(ranks, -1);
  for (int64_t r = first; r >= 0 && seenAt[r] < 0;) {
    seenAt[r] = chain.size();
    chain.push_back(r);
    const Action *waiting = run.waitsFor[r];
    r = waiting ? placement.rankOf[waiting->peer] : -1;
    if (r >= 0 && run.next[r] >= programs[r].size())
      r = -1;
    if (r >= 0 && seenAt[r] >= 0)
      chain.erase(chain.begin(), chain.begin() + seenAt[r]);
  }
  std::string text;
  for (int64_t r : chain) {
    if (!text.empty())
      text += "; ";
    const Action *waiting = run.waitsFor[r];
    text += "rank " + std::to_string(r) + " waits at ";
    text += waiting ? describe(*waiting) + " (from rank " +
                          std::to_string(placement.rankOf[waiting->peer]) + ")"
                    : describe(programs[r][run.next[r]]);
  }
  first = chain.front();
  return text;
}

} // namespace

std::vector<Problem>
verifyPrograms(const std::vector<std::vector<Action>> &programs,
               const Placement &placement, int64_t microbatches,
               int64_t memoryCap) {
  int64_t ranks = programs.size();
  std::vector<Problem> problems;
  std::vector<StageState> state(placement.stages(), StageState(microbatches));
  for (int64_t r = 0; r < ranks; ++r)
    verifyRank(programs[r], r, placement, microbatches, memoryCap, state,
               problems);

  // Every send has one receive and every receive one send: also where a
  // rank's own program is wrong, which a missing receive often explains.
  std::map<MessageKey, std::vector<std::pair<int64_t, int64_t>>> sends,
      receives;
  for (int64_t r = 0; r < ranks; ++r)
    for (int64_t index = 0; index < int64_t(programs[r].size()); ++index) {
      const Action &action = programs[r][index];
      if (isSend(action.kind))
        sends[keyOf(action)].push_back({r, index});
      else if (isReceive(action.kind))
        receives[keyOf(action)].push_back({r, index});
    }
  auto pairing = [&](const auto &mine, const auto &theirs, bool send) {
    for (const auto &[key, places] : mine) {
      auto [r, index] = places.front();
      const Action &action = programs[r][index];
      std::string who = "rank " + std::to_string(r);
      if (places.size() > 1) {
        auto [again, at] = places[1];
        problems.push_back(
            {again, at,
             "rank " + std::to_string(again) + " repeats " + describe(action)});
        continue;
      }
      if (theirs.count(key))
        continue;
      int64_t peerRank = placement.rankOf[action.peer];
      problems.push_back(
          {r, index,
           send ? "unpaired send: " + who + " runs " + describe(action) +
                      ", but rank " + std::to_string(peerRank) +
                      " never receives it"
                : "unpaired receive: " + who + " runs " + describe(action) +
                      ", but rank " + std::to_string(peerRank) +
                      " never sends it"});
    }
  };
  pairing(sends, receives, true);
  pairing(receives, sends, false);
  if (!problems.empty())
    return problems;

  // Buffered sends; receives that block where they stand (hetero's
  // runtime), then receives that are only posted (PyTorch's).
  Run blocking = runPrograms(programs, /*blockingReceives=*/true);
  int64_t at = -1;
  std::string cycle = describeDeadlock(blocking, placement, programs, at);
  if (cycle.empty())
    return problems;
  Run posted = runPrograms(programs, /*blockingReceives=*/false);
  int64_t postedAt = -1;
  std::string postedCycle =
      describeDeadlock(posted, placement, programs, postedAt);
  if (!postedCycle.empty())
    problems.push_back(
        {postedAt, int64_t(posted.next[postedAt]), "deadlock: " + postedCycle});
  else
    problems.push_back(
        {at, int64_t(blocking.next[at]),
         "deadlock with blocking receives: " + cycle +
             " (it runs when receives are only posted there and waited "
             "for by the task that needs them: move each receive to right "
             "before that task)"});
  return problems;
}

std::vector<Problem>
verifyPrograms(const std::vector<std::vector<Action>> &programs,
               int64_t microbatches, int64_t memoryCap) {
  return verifyPrograms(programs, Placement::identity(programs.size()),
                        microbatches, memoryCap);
}

std::vector<int64_t>
peakStashes(const std::vector<std::vector<Action>> &programs) {
  std::vector<int64_t> peaks;
  for (const std::vector<Action> &program : programs) {
    int64_t live = 0, peak = 0;
    for (const Action &action : program) {
      if (action.kind == Action::Forward)
        peak = std::max(peak, ++live);
      else if (action.kind == Action::Backward ||
               action.kind == Action::BackwardWeight)
        --live;
    }
    peaks.push_back(peak);
  }
  return peaks;
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
