//===- PartitionProfile.cpp - measured op costs for stage cuts ------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Profile/PartitionProfile.h"

#include "hetero/Profile/TimelineProfile.h"

#include "Json.h"

namespace hetero::profile {
namespace {

using llvm::json::Array;
using llvm::json::Object;
using llvm::json::Value;

/// Reads the array `key` of `root`, handing each entry's object and path to
/// `read`.
template <typename Read>
bool readEntries(const Object &root, llvm::StringRef key, JsonError &error,
                 Read read) {
  const Value *value = member(root, key, "$", error, /*required=*/false);
  if (!value)
    return error.problem.empty();
  const Array *entries = value->getAsArray();
  std::string path = "$." + key.str();
  if (!entries) {
    error = {path, "expected an array"};
    return false;
  }
  for (size_t i = 0; i < entries->size(); ++i) {
    std::string at = path + "[" + std::to_string(i) + "]";
    const Object *entry = (*entries)[i].getAsObject();
    if (!entry) {
      error = {at, "expected an object"};
      return false;
    }
    if (!read(*entry, at))
      return false;
  }
  return true;
}

bool readProfile(const Value &root, PartitionProfile &profile,
                 JsonError &error) {
  const Object *object = root.getAsObject();
  if (!object) {
    error = {"$", "expected an object"};
    return false;
  }
  auto readMs = [&](const Object &entry, const std::string &at) {
    return readNonNegative(member(entry, "ms", at, error, true), at + ".ms",
                           error);
  };
  bool ok = readEntries(
      *object, "ops", error, [&](const Object &entry, const std::string &at) {
        std::optional<int64_t> index =
            readInteger(member(entry, "index", at, error, true), at + ".index",
                        error, 0, INT64_MAX);
        std::optional<double> ms = index ? readMs(entry, at) : std::nullopt;
        if (!ms)
          return false;
        profile.opMs[*index] = *ms;
        return true;
      });
  ok = ok && readEntries(
                 *object, "calls", error,
                 [&](const Object &entry, const std::string &at) {
                   const Value *callee =
                       member(entry, "callee", at, error, true);
                   if (!callee)
                     return false;
                   std::optional<llvm::StringRef> name = callee->getAsString();
                   if (!name || name->empty()) {
                     error = {at + ".callee", "expected a function's name"};
                     return false;
                   }
                   std::optional<double> ms = readMs(entry, at);
                   if (!ms)
                     return false;
                   profile.callMs[name->str()] = *ms;
                   return true;
                 });
  if (ok && object->get("link")) {
    fusion::LinearCost link;
    ok = readLinearCost(*object, "link", "$", link, error);
    profile.link = link;
  }
  return ok;
}

} // namespace

std::string parsePartitionProfile(const std::string &text,
                                  PartitionProfile &profile) {
  profile = {};
  std::string syntax;
  std::optional<Value> root = parseJson(text, syntax);
  if (!root)
    return syntax;
  const Object *object = root->getAsObject();
  if (object && object->get("traceEvents")) {
    // A measured iteration of the one-stage pipeline: a forward and a
    // backward task per micro-batch.
    std::vector<checkpoint::StageTimeline> timelines;
    std::string problem = parseTimelineProfile(text, 1, timelines);
    if (!problem.empty())
      return problem;
    double ms = 0;
    for (const sim::Span &task : timelines.front().tasks)
      ms += task.endMs - task.startMs;
    profile.microbatchMs = ms / (0.5 * double(timelines.front().tasks.size()));
    return "";
  }
  JsonError error;
  return readProfile(*root, profile, error) ? "" : error.str();
}

} // namespace hetero::profile
