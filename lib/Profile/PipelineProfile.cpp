//===- PipelineProfile.cpp - measured pipeline costs in JSON --------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Profile/PipelineProfile.h"

#include "Json.h"

#include <algorithm>
#include <cstdio>

namespace hetero::profile {
namespace {

using llvm::json::Array;
using llvm::json::Object;
using llvm::json::Value;

/// A time for every stage: one number for all, or an array of `stages`.
bool readPerStage(const Value *value, const std::string &path, int64_t stages,
                  double minimum, double &scalar, std::vector<double> &perStage,
                  JsonError &error) {
  auto check = [&](const Value *item, const std::string &where, double &out) {
    std::optional<double> number = item->getAsNumber();
    if (!number || *number < minimum) {
      error = {where, "expected a number >= " + std::to_string(int(minimum))};
      return false;
    }
    out = *number;
    return true;
  };
  if (const Array *items = value->getAsArray()) {
    if (int64_t(items->size()) != stages) {
      error = {path, "expected " + std::to_string(stages) +
                         " values, one per stage, got " +
                         std::to_string(items->size())};
      return false;
    }
    perStage.resize(stages);
    for (int64_t s = 0; s < stages; ++s)
      if (!check(&(*items)[s], path + "[" + std::to_string(s) + "]",
                 perStage[s]))
        return false;
    return true;
  }
  if (!value->getAsNumber()) {
    error = {path, "expected a number or an array of one number per stage"};
    return false;
  }
  return check(value, path, scalar);
}

/// "<from>-><to>" naming a link between neighbouring stages.
bool readLinkName(llvm::StringRef name, int64_t stages, int64_t &from,
                  int64_t &to) {
  auto [left, right] = name.split("->");
  return !left.trim().getAsInteger(10, from) &&
         !right.trim().getAsInteger(10, to) && from >= 0 && to >= 0 &&
         from < stages && to < stages && (from - to == 1 || to - from == 1);
}

bool readProfile(const Value &root, int64_t stages, sim::Costs &costs,
                 int64_t &microbatchSize, JsonError &error) {
  const Object *object = root.getAsObject();
  if (!object) {
    error = {"$", "expected an object"};
    return false;
  }
  microbatchSize = 0;
  if (const Value *size = object->get("microbatch_size")) {
    std::optional<int64_t> value =
        readInteger(size, "$.microbatch_size", error, 1, int64_t(1) << 30);
    if (!value)
      return false;
    microbatchSize = *value;
  }
  const Value *forward = member(*object, "forward_ms", "$", error, true);
  const Value *backward = member(*object, "backward_ms", "$", error, !!forward);
  if (!forward || !backward)
    return false;
  if (!readPerStage(forward, "$.forward_ms", stages, 0.0, costs.forwardMs,
                    costs.stageForwardMs, error) ||
      !readPerStage(backward, "$.backward_ms", stages, 0.0, costs.backwardMs,
                    costs.stageBackwardMs, error))
    return false;

  if (const Value *comm = object->get("comm_ms")) {
    if (const Object *links = comm->getAsObject()) {
      for (const auto &[name, value] : *links) {
        std::string path = "$.comm_ms[\"" + name.str() + "\"]";
        int64_t from = 0, to = 0;
        if (!readLinkName(name, stages, from, to)) {
          error = {path, "expected a link '<from>-><to>' between neighbouring "
                         "stages of " +
                             std::to_string(stages)};
          return false;
        }
        std::optional<double> ms = readNonNegative(&value, path, error);
        if (!ms)
          return false;
        costs.linkCommMs[{from, to}] = *ms;
      }
    } else if (std::optional<double> ms =
                   readNonNegative(comm, "$.comm_ms", error)) {
      costs.commMs = *ms;
    } else {
      error.problem += " or an object of '<from>-><to>' links";
      return false;
    }
  }

  if (const Value *latency = object->get("latency_ms")) {
    std::optional<double> ms = readNonNegative(latency, "$.latency_ms", error);
    if (!ms)
      return false;
    // Per link, the shortest of the links; else the one comm_ms.
    double shortest = costs.commMs;
    if (!costs.linkCommMs.empty()) {
      shortest = costs.linkCommMs.begin()->second;
      for (const auto &[link, linkMs] : costs.linkCommMs)
        shortest = std::min(shortest, linkMs);
    }
    if (*ms > shortest) {
      error = {"$.latency_ms", "expected at most the shortest message's " +
                                   std::to_string(shortest) +
                                   " ms (comm_ms): the latency is part of "
                                   "every message's time"};
      return false;
    }
    costs.latencyMs = *ms;
  }

  costs.deviceSlowdown.assign(stages, 1.0);
  if (const Value *slowdown = object->get("stage_slowdown")) {
    double unused = 1.0;
    std::vector<double> perStage;
    if (!readPerStage(slowdown, "$.stage_slowdown", stages, 1.0, unused,
                      perStage, error))
      return false;
    costs.deviceSlowdown =
        perStage.empty() ? std::vector<double>(stages, unused) : perStage;
  }

  if (const Value *windows = object->get("link_windows")) {
    const Array *items = windows->getAsArray();
    if (!items) {
      error = {"$.link_windows", "expected an array"};
      return false;
    }
    for (size_t i = 0; i < items->size(); ++i) {
      std::string path = "$.link_windows[" + std::to_string(i) + "]";
      const Object *window = (*items)[i].getAsObject();
      if (!window) {
        error = {path, "expected an object"};
        return false;
      }
      sim::LinkWindow parsed;
      auto integer = [&](llvm::StringRef key, int64_t &out) {
        std::optional<int64_t> value =
            readInteger(member(*window, key, path, error, true),
                        path + "." + key.str(), error, 0, stages - 1);
        return value && (out = *value, true);
      };
      auto number = [&](llvm::StringRef key, double &out) {
        std::optional<double> value =
            readNonNegative(member(*window, key, path, error, true),
                            path + "." + key.str(), error);
        return value && (out = *value, true);
      };
      if (!integer("from", parsed.from) || !integer("to", parsed.to) ||
          !number("start_ms", parsed.startMs) ||
          !number("end_ms", parsed.endMs) ||
          !number("slowdown", parsed.slowdown))
        return false;
      if (std::abs(parsed.from - parsed.to) != 1) {
        error = {path, "link " + std::to_string(parsed.from) + "->" +
                           std::to_string(parsed.to) +
                           " does not join neighbouring stages"};
        return false;
      }
      if (!(parsed.endMs > parsed.startMs) || parsed.slowdown < 1.0) {
        error = {path, "a window needs end_ms > start_ms and a slowdown >= 1"};
        return false;
      }
      costs.linkWindows.push_back(parsed);
    }
  }
  return true;
}

} // namespace

std::string parsePipelineProfile(const std::string &text, int64_t stages,
                                 sim::Costs &costs, int64_t *microbatchSize) {
  int64_t size = 0;
  std::string problem =
      parseProfile(text, [&](const Value &root, JsonError &error) {
        return readProfile(root, stages, costs, size, error);
      });
  if (microbatchSize)
    *microbatchSize = size;
  return problem;
}

} // namespace hetero::profile
