//===- TorchCsv.cpp - schedules in torch.distributed.pipelining's CSV -----===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Schedule/TorchCsv.h"

#include <cctype>
#include <sstream>

namespace hetero::schedule {

namespace {

struct Kind {
  const char *name;
  Action::Kind kind;
};
constexpr Kind kKinds[] = {
    {"SEND_F", Action::SendActivation},
    {"RECV_F", Action::RecvActivation},
    {"SEND_B", Action::SendGradient},
    {"RECV_B", Action::RecvGradient},
    {"F", Action::Forward},
    {"B", Action::Backward},
};

const char *nameOf(Action::Kind kind) {
  for (const Kind &entry : kKinds)
    if (entry.kind == kind)
      return entry.name;
  return "?";
}

bool isCompute(Action::Kind kind) {
  return kind == Action::Forward || kind == Action::Backward;
}

} // namespace

std::string exportTorchCsv(const std::vector<std::vector<Action>> &programs) {
  std::ostringstream os;
  for (size_t stage = 0; stage < programs.size(); ++stage) {
    bool first = true;
    for (const Action &action : programs[stage]) {
      os << (first ? "" : ",") << stage << nameOf(action.kind)
         << action.microbatch;
      first = false;
    }
    os << "\n";
  }
  return os.str();
}

ImportedSchedule importTorchCsv(const std::string &text, int64_t microbatches) {
  ImportedSchedule result;
  std::istringstream lines(text);
  std::string line;
  int64_t rank = 0;
  std::vector<bool> computeOnly;
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    std::vector<Action> program;
    bool hasTransfers = false;
    size_t start = 0;
    for (int64_t column = 1;; ++column) {
      size_t comma = line.find(',', start);
      std::string cell =
          line.substr(start, comma == std::string::npos ? std::string::npos
                                                        : comma - start);
      // Trim spaces.
      size_t first = cell.find_first_not_of(' ');
      cell = first == std::string::npos
                 ? ""
                 : cell.substr(first, cell.find_last_not_of(' ') - first + 1);
      auto fail = [&](const std::string &problem) {
        result.error = "line " + std::to_string(rank + 1) + ", column " +
                       std::to_string(column) + ": " + problem;
      };
      if (!cell.empty()) {
        size_t digits = cell.find_first_not_of("0123456789");
        if (digits == 0 || digits == std::string::npos) {
          fail("expected [stage][F|B|SEND_F|RECV_F|SEND_B|RECV_B][micro-batch]"
               ", got '" +
               cell + "'");
          return result;
        }
        int64_t stage = std::stoll(cell.substr(0, digits));
        std::string rest = cell.substr(digits);
        const Kind *matched = nullptr;
        for (const Kind &entry : kKinds)
          if (rest.rfind(entry.name, 0) == 0 &&
              rest.size() > std::string(entry.name).size() &&
              std::isdigit(rest[std::string(entry.name).size()])) {
            matched = &entry;
            break;
          }
        if (!matched) {
          fail("'" + cell +
               "' is not an action hetero schedules (F, B, SEND_F, RECV_F, "
               "SEND_B, RECV_B with a micro-batch; split backwards I/W and "
               "UNSHARD/RESHARD are not supported)");
          return result;
        }
        std::string number = rest.substr(std::string(matched->name).size());
        if (number.find_first_not_of("0123456789") != std::string::npos) {
          fail("bad micro-batch in '" + cell + "'");
          return result;
        }
        int64_t microbatch = std::stoll(number);
        if (stage != rank) {
          fail("'" + cell + "' runs stage " + std::to_string(stage) +
               " on rank " + std::to_string(rank) +
               "; hetero places stage s on rank s");
          return result;
        }
        if (microbatch >= microbatches) {
          fail("'" + cell + "' names micro-batch " +
               std::to_string(microbatch) + ", but the pipeline has " +
               std::to_string(microbatches));
          return result;
        }
        Action action{matched->kind, microbatch};
        if (!isCompute(action.kind)) {
          hasTransfers = true;
          bool towardsNext = action.kind == Action::SendActivation ||
                             action.kind == Action::RecvGradient;
          action.peer = towardsNext ? rank + 1 : rank - 1;
        }
        program.push_back(action);
      }
      if (comma == std::string::npos)
        break;
      start = comma + 1;
    }
    result.programs.push_back(program);
    computeOnly.push_back(!hasTransfers);
    ++rank;
  }
  int64_t stages = result.programs.size();
  for (int64_t s = 0; s < stages; ++s) {
    if (!computeOnly[s])
      continue;
    std::vector<Task> tasks;
    for (const Action &action : result.programs[s])
      tasks.push_back(
          {action.kind == Action::Forward ? Task::Forward : Task::Backward,
           action.microbatch});
    result.programs[s] = withTransfers(tasks, stages, s);
  }
  return result;
}

} // namespace hetero::schedule
