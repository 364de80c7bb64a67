//===- TorchCsv.cpp - schedules in torch.distributed.pipelining's CSV -----===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Schedule/TorchCsv.h"

#include <set>
#include <sstream>
#include <tuple>

namespace hetero::schedule {

namespace {

/// The name of each action kind in the current names.
const char *nameOf(Action::Kind kind) {
  switch (kind) {
  case Action::Forward:
    return "F";
  case Action::Backward:
    return "B";
  case Action::BackwardInput:
    return "I";
  case Action::BackwardWeight:
    return "W";
  case Action::SendActivation:
    return "SEND_F";
  case Action::RecvActivation:
    return "RECV_F";
  case Action::SendGradient:
    return "SEND_B";
  case Action::RecvGradient:
    return "RECV_B";
  }
  return "?";
}

/// One cell: an action, or the tasks of an overlapped pair, or nothing (an
/// idle slot or an FSDP action).
struct Cell {
  std::vector<Action> actions;
};

/// The type names a cell may use, longest first so that prefixes match
/// last.
constexpr const char *kTypes[] = {"REDUCE_GRAD", "UNSHARD", "RESHARD", "SEND_F",
                                  "RECV_F",      "SEND_B",  "RECV_B",  "BW",
                                  "F",           "I",       "W",       "B"};

std::string trim(const std::string &text) {
  size_t first = text.find_first_not_of(" \t");
  if (first == std::string::npos)
    return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

class Reader {
public:
  Reader(int64_t stages, int64_t microbatches, bool olderNames)
      : stages(stages), microbatches(microbatches), olderNames(olderNames) {}

  /// Parses one cell into `cell`; "" or the problem.
  std::string parse(const std::string &text, Cell &cell) {
    if (text.empty())
      return "";
    if (text.front() == '(') {
      size_t close = text.find(')');
      if (close == std::string::npos || text.substr(close + 1) != "OVERLAP_F_B")
        return "expected '(a;b)OVERLAP_F_B', got '" + text + "'";
      std::string inner = text.substr(1, close - 1);
      std::istringstream parts(inner);
      std::string part;
      while (std::getline(parts, part, ';')) {
        part = trim(part);
        if (part.empty())
          continue;
        Cell sub;
        if (std::string problem = parseSimple(part, sub); !problem.empty())
          return problem;
        for (const Action &action : sub.actions) {
          if (!isCompute(action.kind))
            return "'" + text + "' overlaps '" + part +
                   "', which is not a compute action";
          cell.actions.push_back(action);
        }
      }
      if (cell.actions.empty())
        return "'" + text + "' overlaps no actions";
      return "";
    }
    return parseSimple(text, cell);
  }

private:
  std::string parseSimple(const std::string &text, Cell &cell) {
    size_t digits = text.find_first_not_of("0123456789");
    std::string expected = "expected [stage][F|I|W|B|BW|SEND_F|RECV_F|SEND_B|"
                           "RECV_B|UNSHARD|RESHARD|REDUCE_GRAD][micro-batch]"
                           " or (a;b)OVERLAP_F_B, got '" +
                           text + "'";
    if (digits == 0 || digits == std::string::npos || digits > 9)
      return expected;
    int64_t stage = std::stoll(text.substr(0, digits));
    std::string rest = text.substr(digits);
    const char *type = nullptr;
    for (const char *candidate : kTypes)
      if (rest.rfind(candidate, 0) == 0) {
        type = candidate;
        break;
      }
    if (!type)
      return expected;
    std::string number = rest.substr(std::string(type).size());
    if (number.find_first_not_of("0123456789") != std::string::npos ||
        number.size() > 9)
      return expected;
    std::string name = type;
    typesSeen.insert(name);
    if (stage >= stages)
      return "'" + text + "' names stage " + std::to_string(stage) +
             ", but the pipeline has " + std::to_string(stages);
    // FSDP's actions: read, no effect.
    if (name == "UNSHARD" || name == "RESHARD" || name == "REDUCE_GRAD")
      return "";
    if (number.empty())
      return "'" + text + "' names no micro-batch";
    int64_t microbatch = std::stoll(number);
    if (microbatch >= microbatches)
      return "'" + text + "' names micro-batch " + std::to_string(microbatch) +
             ", but the pipeline has " + std::to_string(microbatches);
    Action action{Action::Forward, microbatch, -1, stage};
    if (name == "F")
      action.kind = Action::Forward;
    else if (name == "I")
      action.kind = Action::BackwardInput;
    else if (name == "W")
      action.kind = Action::BackwardWeight;
    else if (name == "BW")
      action.kind = Action::Backward;
    else if (name == "B")
      action.kind = olderNames ? Action::BackwardInput : Action::Backward;
    else {
      bool activation = name == "SEND_F" || name == "RECV_F";
      bool send = name.rfind("SEND", 0) == 0;
      action.kind =
          send ? (activation ? Action::SendActivation : Action::SendGradient)
               : (activation ? Action::RecvActivation : Action::RecvGradient);
      action.peer = activation == send ? stage + 1 : stage - 1;
    }
    cell.actions.push_back(action);
    return "";
  }

  int64_t stages, microbatches;
  bool olderNames;

public:
  /// The type names of the cells parsed so far.
  std::set<std::string> typesSeen;
};

/// Splits a line at its commas.
std::vector<std::string> cellsOf(const std::string &line) {
  std::vector<std::string> cells;
  std::istringstream stream(line);
  std::string cell;
  while (std::getline(stream, cell, ','))
    cells.push_back(trim(cell));
  if (!line.empty() && line.back() == ',')
    cells.push_back("");
  return cells;
}

} // namespace

std::string exportTorchCsv(const std::vector<std::vector<Action>> &programs) {
  std::ostringstream os;
  for (const std::vector<Action> &program : programs) {
    bool first = true;
    for (const Action &action : program) {
      os << (first ? "" : ",") << action.stage << nameOf(action.kind)
         << action.microbatch;
      first = false;
    }
    os << "\n";
  }
  return os.str();
}

std::vector<std::vector<Action>>
addTransfersInTurn(const std::vector<std::vector<std::vector<Task>>> &order,
                   const Placement &placement, std::string &error) {
  int64_t ranks = order.size(), last = placement.stages() - 1;
  std::vector<std::vector<Action>> programs(ranks);
  // What each rank has run or posted: (kind, stage, micro-batch).
  std::vector<std::set<std::tuple<int, int64_t, int64_t>>> done(ranks);
  auto has = [&](int64_t r, Action::Kind kind, int64_t stage, int64_t i) {
    return done[r].count({int(kind), stage, i}) > 0;
  };
  auto ready = [&](int64_t r, const Task &task) {
    int64_t s = task.stage, i = task.microbatch;
    if (task.kind == Task::Forward && s > 0)
      return has(r, Action::RecvActivation, s, i) ||
             has(r, Action::Forward, s - 1, i);
    if ((task.kind == Task::Backward || task.kind == Task::BackwardInput) &&
        s < last)
      return has(r, Action::RecvGradient, s, i) ||
             has(r, Action::Backward, s + 1, i) ||
             has(r, Action::BackwardInput, s + 1, i);
    return true;
  };
  auto emit = [&](int64_t r, const Action &action) {
    programs[r].push_back(action);
    done[r].insert({int(action.kind), action.stage, action.microbatch});
  };
  std::vector<size_t> next(ranks, 0);
  for (bool remaining = true; remaining;) {
    remaining = false;
    bool progress = false;
    for (int64_t r = 0; r < ranks; ++r) {
      if (next[r] >= order[r].size())
        continue;
      remaining = true;
      const std::vector<Task> &entry = order[r][next[r]];
      bool allReady = true;
      for (const Task &task : entry)
        allReady = allReady && ready(r, task);
      if (!allReady)
        continue;
      std::vector<std::pair<Action, int64_t>> sends;
      for (const Task &task : entry) {
        int64_t s = task.stage, i = task.microbatch;
        emit(r, {actionKind(task.kind), i, -1, s});
        bool forward = task.kind == Task::Forward;
        bool input =
            task.kind == Task::Backward || task.kind == Task::BackwardInput;
        int64_t peer = forward ? s + 1 : s - 1;
        if ((forward || input) && peer >= 0 && peer <= last &&
            placement.rankOf[peer] != r)
          sends.push_back(
              {{forward ? Action::SendActivation : Action::SendGradient, i,
                peer, s},
               placement.rankOf[peer]});
      }
      for (const auto &[send, peerRank] : sends) {
        emit(r, send);
        emit(peerRank, {carriesActivation(send.kind) ? Action::RecvActivation
                                                     : Action::RecvGradient,
                        send.microbatch, send.stage, send.peer});
      }
      ++next[r];
      progress = true;
    }
    if (remaining && !progress) {
      error = "the compute order cannot go on:";
      for (int64_t r = 0; r < ranks; ++r)
        if (next[r] < order[r].size()) {
          const Task &task = order[r][next[r]].front();
          error += " rank " + std::to_string(r) + " waits to run " +
                   describe({actionKind(task.kind), task.microbatch, -1,
                             task.stage}) +
                   ";";
        }
      error.pop_back();
      return {};
    }
  }
  return programs;
}

CsvCells readTorchCsv(const std::string &text, int64_t stages,
                      int64_t microbatches) {
  CsvCells result;
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    rows.push_back(cellsOf(line));
  }
  // The names a file uses: those before PyTorch's rename when it has a BW
  // cell, or W cells and no I cell.
  Reader names(stages, microbatches, /*olderNames=*/false);
  for (const auto &row : rows)
    for (const std::string &text : row) {
      Cell ignored;
      names.parse(text, ignored);
    }
  const std::set<std::string> &seen = names.typesSeen;
  result.olderNames = seen.count("BW") || (seen.count("W") && !seen.count("I"));
  Reader reader(stages, microbatches, result.olderNames);
  result.rows.resize(rows.size());
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t c = 0; c < rows[r].size(); ++c) {
      Cell cell;
      if (std::string problem = reader.parse(rows[r][c], cell);
          !problem.empty()) {
        result.error = "line " + std::to_string(r + 1) + ", column " +
                       std::to_string(c + 1) + ": " + problem;
        return result;
      }
      if (!cell.actions.empty())
        result.rows[r].push_back(cell.actions);
    }
  return result;
}

ImportedSchedule importTorchCsv(const std::string &text, int64_t stages,
                                int64_t microbatches) {
  ImportedSchedule result;
  CsvCells read = readTorchCsv(text, stages, microbatches);
  result.olderNames = read.olderNames;
  result.error = read.error;
  if (!result.error.empty())
    return result;
  std::vector<std::vector<std::vector<Action>>> &cells = read.rows;
  result.rankOf.assign(stages, -1);
  bool transfers = false;
  for (size_t r = 0; r < cells.size(); ++r)
    for (const std::vector<Action> &cell : cells[r])
      for (const Action &action : cell) {
        int64_t &rank = result.rankOf[action.stage];
        if (rank >= 0 && rank != int64_t(r)) {
          result.error = "line " + std::to_string(r + 1) + " runs stage " +
                         std::to_string(action.stage) + ", which line " +
                         std::to_string(rank + 1) +
                         " runs too; a stage "
                         "runs on one rank";
          return result;
        }
        rank = r;
        transfers = transfers || !isCompute(action.kind);
      }
  result.rows = cells.size();
  for (int64_t s = 0; s < stages; ++s)
    if (result.rankOf[s] < 0) {
      result.error = "no row runs a task of stage " + std::to_string(s) +
                     ", but the pipeline has " + std::to_string(stages) +
                     " stages";
      return result;
    }
  if (transfers) {
    for (const auto &rank : cells) {
      result.programs.emplace_back();
      for (const auto &cell : rank)
        result.programs.back().insert(result.programs.back().end(),
                                      cell.begin(), cell.end());
    }
    return result;
  }
  result.computeOnly = true;
  // PyTorch's lowering: an input gradient followed by its own weight
  // gradient is one whole backward.
  std::vector<std::vector<std::vector<Task>>> order(cells.size());
  for (size_t r = 0; r < cells.size(); ++r)
    for (size_t c = 0; c < cells[r].size(); ++c) {
      std::vector<Task> tasks = computeTasks(cells[r][c]);
      if (tasks.size() == 1 && tasks[0].kind == Task::BackwardInput &&
          c + 1 < cells[r].size() && cells[r][c + 1].size() == 1) {
        const Action &next = cells[r][c + 1].front();
        if (next.kind == Action::BackwardWeight &&
            next.stage == tasks[0].stage &&
            next.microbatch == tasks[0].microbatch) {
          tasks[0].kind = Task::Backward;
          ++c;
        }
      }
      order[r].push_back(tasks);
    }
  Placement placement;
  placement.rankOf = result.rankOf;
  placement.ranks = cells.size();
  result.programs = addTransfersInTurn(order, placement, result.error);
  return result;
}

} // namespace hetero::schedule
