//===- Families.cpp - the built-in pipeline schedule families -------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Schedule/Families.h"

#include <algorithm>
#include <deque>
#include <map>

namespace hetero::schedule {

namespace {

constexpr std::pair<Family, const char *> kNames[] = {
    {Family::OneFOneB, "1f1b"},
    {Family::Interleaved, "interleaved"},
    {Family::LoopedBfs, "looped-bfs"},
    {Family::Zb1p, "zb1p"},
    {Family::Zbv, "zbv"},
    {Family::DualPipeV, "dualpipev"},
};

/// Appends tasks of one rank, counting each stage's micro-batches per kind:
/// the n-th F of a stage runs micro-batch n.
class RankOrder {
public:
  void add(Task::Kind kind, int64_t stage) {
    int64_t &next = counters[{stage, kind}];
    tasks.push_back({kind, next++, stage});
    if (kind == Task::BackwardInput)
      pendingWeights.push_back(tasks.back());
  }
  /// The weight gradient of the oldest input gradient without one (of
  /// `stage` when it is not negative); nothing when there is none.
  bool addPendingWeight(int64_t stage = -1) {
    auto input = std::find_if(
        pendingWeights.begin(), pendingWeights.end(),
        [&](const Task &task) { return stage < 0 || task.stage == stage; });
    if (input == pendingWeights.end())
      return false;
    tasks.push_back({Task::BackwardWeight, input->microbatch, input->stage});
    pendingWeights.erase(input);
    return true;
  }
  void addPendingWeights(int64_t stage = -1) {
    while (addPendingWeight(stage)) {
    }
  }
  /// A whole backward, counted with the input gradients.
  void addBackward(int64_t stage) {
    int64_t &next = counters[{stage, Task::BackwardInput}];
    tasks.push_back({Task::Backward, next++, stage});
  }
  std::vector<Task> tasks;

private:
  std::map<std::pair<int64_t, Task::Kind>, int64_t> counters;
  std::deque<Task> pendingWeights;
};

/// Interleaved 1F1B and ZB1P over `units` micro-batch groups: forwards go
/// round the rank's L stages `perRound` units at a time, backwards round
/// them in reverse.
std::vector<Task> interleavedRank(int64_t ranks, int64_t local, int64_t units,
                                  int64_t perRound, int64_t rank,
                                  bool zeroBubble) {
  int64_t all = units * local;
  int64_t warmup = std::min(
      (local - 1) * perRound + (zeroBubble ? 1 : 2) * (ranks - 1 - rank), all);
  auto forwardStage = [&](int64_t op) {
    return ((op / perRound) % local) * ranks + rank;
  };
  auto backwardStage = [&](int64_t op) {
    return (local - 1 - ((op - warmup) / perRound) % local) * ranks + rank;
  };
  RankOrder order;
  Task::Kind backward = zeroBubble ? Task::BackwardInput : Task::Backward;
  int64_t backwards = 0;
  auto addBackward = [&](int64_t op) {
    if (zeroBubble)
      order.add(backward, backwardStage(op));
    else
      order.addBackward(backwardStage(op));
    // ZB1P: rank r runs each weight gradient r backwards late.
    if (zeroBubble && backwards++ >= rank)
      order.addPendingWeight();
  };
  for (int64_t op = 0; op < all + warmup; ++op) {
    if (op < all)
      order.add(Task::Forward, forwardStage(op));
    if (op >= warmup)
      addBackward(op);
  }
  order.addPendingWeights();
  return order.tasks;
}

/// ZB-V on the V placement: rank r holds stage r (chunk 0) and 2R-1-r
/// (chunk 1). Padded to max(2R-1, units) units; the padding is dropped.
std::vector<Task> zbvRank(int64_t ranks, int64_t units, int64_t rank) {
  int64_t s0 = rank, s1 = 2 * ranks - 1 - rank;
  int64_t n = std::max(2 * ranks - 1, units);
  RankOrder order;
  std::map<int64_t, int64_t> forwards;
  auto forward = [&](int64_t stage) {
    order.add(Task::Forward, stage);
    ++forwards[stage];
  };
  auto backward = [&](int64_t stage) {
    order.add(Task::BackwardInput, stage);
    order.addPendingWeight();
  };
  for (int64_t i = 0; i < 2 * (ranks - rank) - 1; ++i)
    forward(s0);
  for (int64_t i = 0; i < rank; ++i) {
    forward(s1);
    forward(s0);
  }
  for (int64_t i = 0; i < ranks - rank; ++i) {
    forward(s1);
    backward(s1);
  }
  while (forwards[s1] < forwards[s0] || forwards[s0] < n) {
    if (forwards[s0] < n)
      forward(s0);
    backward(s0);
    forward(s1);
    backward(s1);
  }
  // The cool-down: input gradients first, their weights in the bubbles.
  for (int64_t i = 0; i < rank; ++i) {
    order.add(Task::BackwardInput, s0);
    order.add(Task::BackwardInput, s1);
  }
  for (int64_t i = 0; i < ranks - rank; ++i) {
    order.add(Task::BackwardInput, s0);
    order.addPendingWeight(s0);
  }
  order.addPendingWeights(s1);
  order.addPendingWeights(s0);
  std::vector<Task> tasks;
  for (const Task &task : order.tasks)
    if (task.microbatch < units)
      tasks.push_back(task);
  return tasks;
}

/// DualPipeV on the V placement.
std::vector<Task> dualPipeVRank(int64_t ranks, int64_t units, int64_t rank) {
  int64_t s0 = rank, s1 = 2 * ranks - 1 - rank;
  RankOrder order;
  int64_t r = rank, R = ranks;
  for (int64_t i = 0; i < 2 * (R - r - 1); ++i)
    order.add(Task::Forward, s0);
  for (int64_t i = 0; i <= r; ++i) {
    order.add(Task::Forward, s0);
    order.add(Task::Forward, s1);
  }
  for (int64_t i = 0; i < R - r - 1; ++i) {
    order.add(Task::BackwardInput, s1);
    order.addPendingWeight();
    order.add(Task::Forward, s1);
  }
  // The steady state: overlapped pairs (a forward of one stage, a whole
  // backward of the other), run in order.
  for (int64_t i = 0; i < units - 2 * R + r + 1; ++i) {
    order.add(Task::Forward, s0);
    order.addBackward(s1);
    order.add(Task::Forward, s1);
    order.addBackward(s0);
  }
  for (int64_t i = 0; i < R - r - 1; ++i) {
    order.addBackward(s1);
    order.add(Task::Forward, s1);
    order.addBackward(s0);
  }
  // The cool-down turns to split backwards half-way, their weight
  // gradients deferred into the bubbles.
  bool split = false;
  auto backward = [&](int64_t stage) {
    if (split)
      order.add(Task::BackwardInput, stage);
    else
      order.addBackward(stage);
  };
  for (int64_t i = 0; i <= r; ++i) {
    if (i == (r + 1) / 2 && r % 2 == 1)
      split = true;
    backward(s1);
    if (i == (r + 1) / 2 && r % 2 == 0)
      split = true;
    backward(s0);
  }
  for (int64_t i = 0; i < R - r - 1; ++i) {
    order.addPendingWeight();
    backward(s0);
  }
  order.addPendingWeights();
  return order.tasks;
}

/// The tasks of a group unit: its micro-batches, ascending.
std::vector<Task> expandGroups(const std::vector<Task> &units,
                               int64_t microbatches, int64_t groupSize) {
  std::vector<Task> tasks;
  for (const Task &unit : units) {
    int64_t first = unit.microbatch * groupSize;
    int64_t last = std::min(microbatches, first + groupSize);
    for (int64_t i = first; i < last; ++i)
      tasks.push_back({unit.kind, i, unit.stage});
  }
  return tasks;
}

} // namespace

const char *familyName(Family family) {
  for (const auto &[entry, name] : kNames)
    if (entry == family)
      return name;
  return "?";
}

std::optional<Family> parseFamily(const std::string &name) {
  for (const auto &[family, entry] : kNames)
    if (name == entry)
      return family;
  return std::nullopt;
}

std::string familyNames() {
  std::string names;
  for (const auto &[family, name] : kNames)
    names += (names.empty() ? "" : "|") + std::string(name);
  return names;
}

bool needsSplitBackward(Family family) {
  return family == Family::Zb1p || family == Family::Zbv ||
         family == Family::DualPipeV;
}

FamilyOrder familyOrder(Family family, const Placement &placement,
                        int64_t microbatches, int64_t groupSize) {
  FamilyOrder result;
  int64_t stages = placement.stages(), ranks = placement.ranks;
  int64_t units = (microbatches + groupSize - 1) / groupSize;
  std::string name = familyName(family);
  auto fail = [&](const std::string &message) {
    result.error = "family=" + name + " " + message;
    return result;
  };
  std::vector<std::vector<Task>> order(ranks);
  switch (family) {
  case Family::OneFOneB:
    if (!placement.onePerRank())
      return fail("runs one stage per rank, but the pipeline places " +
                  std::to_string(stages) + " stages on " +
                  std::to_string(ranks) + " ranks; use family=interleaved");
    for (int64_t s = 0; s < stages; ++s)
      order[placement.rankOf[s]] = kfkbProgram(stages, units, 1, s);
    break;
  case Family::LoopedBfs:
    for (int64_t r = 0; r < ranks; ++r) {
      std::vector<int64_t> local = placement.stagesOf(r);
      for (int64_t s : local)
        for (int64_t i = 0; i < units; ++i)
          order[r].push_back({Task::Forward, i, s});
      for (auto s = local.rbegin(); s != local.rend(); ++s)
        for (int64_t i = 0; i < units; ++i)
          order[r].push_back({Task::Backward, i, *s});
    }
    break;
  case Family::Interleaved:
  case Family::Zb1p: {
    if (stages % ranks || !(placement == Placement::loop(stages, ranks)))
      return fail("needs the loop placement (stage s on rank s mod " +
                  std::to_string(ranks) + "), got " +
                  formatPlacement(placement.rankOf));
    int64_t rounds = std::max<int64_t>(1, units / ranks);
    if (units % rounds)
      return fail("goes round the stages in " + std::to_string(rounds) +
                  " rounds, which do not divide its " + std::to_string(units) +
                  " micro-batch groups; use a number of groups that " +
                  std::to_string(ranks) + " divides, or fewer than " +
                  std::to_string(ranks));
    for (int64_t r = 0; r < ranks; ++r)
      order[r] = interleavedRank(ranks, stages / ranks, units, units / rounds,
                                 r, family == Family::Zb1p);
    break;
  }
  case Family::Zbv:
  case Family::DualPipeV:
    if (!(placement == Placement::vShape(ranks)))
      return fail("needs the V placement (rank r holds stages r and " +
                  std::to_string(2 * ranks - 1) + "-r), got " +
                  formatPlacement(placement.rankOf));
    if (family == Family::DualPipeV && units < stages)
      return fail("needs at least as many micro-batch groups as stages (" +
                  std::to_string(stages) + "), got " + std::to_string(units));
    for (int64_t r = 0; r < ranks; ++r)
      order[r] = family == Family::Zbv ? zbvRank(ranks, units, r)
                                       : dualPipeVRank(ranks, units, r);
    break;
  }
  for (std::vector<Task> &tasks : order)
    result.tasks.push_back(expandGroups(tasks, microbatches, groupSize));
  return result;
}

std::vector<std::vector<Action>>
familyPrograms(Family family, const Placement &placement, int64_t microbatches,
               int64_t groupSize, std::string &error) {
  FamilyOrder order = familyOrder(family, placement, microbatches, groupSize);
  error = order.error;
  std::vector<std::vector<Action>> programs;
  if (!error.empty())
    return programs;
  for (int64_t r = 0; r < placement.ranks; ++r)
    programs.push_back(withTransfers(order.tasks[r], placement, r));
  return programs;
}

} // namespace hetero::schedule
