//===- TimelineProfile.cpp - measured stage timelines in JSON -------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Profile/TimelineProfile.h"

#include "Json.h"

#include <algorithm>
#include <map>

namespace hetero::profile {
namespace {

using llvm::json::Array;
using llvm::json::Object;
using llvm::json::Value;

/// The stage and replica a row stands for, from its name.
bool readRowName(llvm::StringRef name, int64_t &stage, int64_t &replica) {
  int64_t rank;
  if (!name.consume_front("rank ") || name.consumeInteger(10, rank))
    return false;
  if (name.empty()) {
    stage = rank;
    replica = 0;
    return true;
  }
  return name.consume_front(" (stage ") && !name.consumeInteger(10, stage) &&
         name.consume_front(", replica ") &&
         !name.consumeInteger(10, replica) && name == ")";
}

bool readTimelines(const Value &root, int64_t stages,
                   std::vector<checkpoint::StageTimeline> &timelines,
                   JsonError &error) {
  const Object *object = root.getAsObject();
  if (!object) {
    error = {"$", "expected an object (a Chrome trace)"};
    return false;
  }
  const Value *events = member(*object, "traceEvents", "$", error, true);
  if (!events)
    return false;
  const Array *list = events->getAsArray();
  if (!list) {
    error = {"$.traceEvents", "expected an array"};
    return false;
  }
  // Rows first: the row of each stage's lowest replica.
  std::map<int64_t, std::pair<int64_t, int64_t>> rowOfStage; // replica, tid
  for (auto [index, event] : llvm::enumerate(*list)) {
    const Object *fields = event.getAsObject();
    if (!fields || fields->getString("ph") != "M" ||
        fields->getString("name") != "thread_name")
      continue;
    std::string path = "$.traceEvents[" + std::to_string(index) + "]";
    std::optional<int64_t> tid = fields->getInteger("tid");
    const Object *args = fields->getObject("args");
    std::optional<llvm::StringRef> name =
        args ? args->getString("name") : std::nullopt;
    if (!tid || !name) {
      error = {path, "expected a thread_name event with a tid and a name"};
      return false;
    }
    int64_t stage, replica;
    if (!readRowName(*name, stage, replica) || stage < 0 || stage >= stages)
      continue;
    auto found = rowOfStage.find(stage);
    if (found == rowOfStage.end() || replica < found->second.first)
      rowOfStage[stage] = {replica, *tid};
  }
  timelines.assign(stages, {});
  std::map<int64_t, int64_t> stageOfRow;
  for (int64_t s = 0; s < stages; ++s) {
    auto found = rowOfStage.find(s);
    if (found == rowOfStage.end()) {
      error = {"$.traceEvents", "no row \"rank r (stage " + std::to_string(s) +
                                    ", replica p)\" for stage " +
                                    std::to_string(s)};
      return false;
    }
    stageOfRow[found->second.second] = s;
  }
  for (auto [index, event] : llvm::enumerate(*list)) {
    const Object *fields = event.getAsObject();
    if (!fields || fields->getString("ph") != "X")
      continue;
    std::optional<int64_t> tid = fields->getInteger("tid");
    if (!tid || !stageOfRow.count(*tid))
      continue;
    std::string path = "$.traceEvents[" + std::to_string(index) + "]";
    std::optional<double> start = readNonNegative(
        member(*fields, "ts", path, error, true), path + ".ts", error);
    if (!start)
      return false;
    std::optional<double> duration = readNonNegative(
        member(*fields, "dur", path, error, true), path + ".dur", error);
    if (!duration)
      return false;
    sim::Span span{*start / 1000.0, (*start + *duration) / 1000.0};
    llvm::StringRef category = fields->getString("cat").value_or("");
    checkpoint::StageTimeline &timeline = timelines[stageOfRow[*tid]];
    if (category == "forward" || category == "backward")
      timeline.tasks.push_back(span);
    else
      timeline.busy.push_back(span);
  }
  for (int64_t s = 0; s < stages; ++s) {
    std::vector<sim::Span> &tasks = timelines[s].tasks;
    if (tasks.empty()) {
      error = {"$.traceEvents", "stage " + std::to_string(s) +
                                    " has no forward or backward task"};
      return false;
    }
    std::stable_sort(tasks.begin(), tasks.end(),
                     [](const sim::Span &a, const sim::Span &b) {
                       return a.startMs < b.startMs;
                     });
  }
  return true;
}

} // namespace

std::string
parseTimelineProfile(const std::string &text, int64_t stages,
                     std::vector<checkpoint::StageTimeline> &timelines) {
  return parseProfile(text, [&](const Value &root, JsonError &error) {
    return readTimelines(root, stages, timelines, error);
  });
}

} // namespace hetero::profile
