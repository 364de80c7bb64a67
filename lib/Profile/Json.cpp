//===- Json.cpp - reading profile values with their JSON paths ------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "Json.h"

#include "llvm/Support/Error.h"

namespace hetero::profile {

std::optional<llvm::json::Value> parseJson(const std::string &text,
                                           std::string &error) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  if (parsed)
    return std::move(*parsed);
  llvm::handleAllErrors(
      parsed.takeError(),
      [&](const llvm::json::ParseError &problem) {
        // ParseError keeps its position private; its log is
        // "[line:column, byte=offset]: message".
        std::string logged;
        llvm::raw_string_ostream os(logged);
        problem.log(os);
        unsigned line = 0, column = 0;
        size_t close = logged.find("]: ");
        if (std::sscanf(logged.c_str(), "[%u:%u", &line, &column) == 2 &&
            close != std::string::npos)
          error = "line " + std::to_string(line) + ": " +
                  logged.substr(close + 3) + " (column " +
                  std::to_string(column) + ")";
        else
          error = logged;
      },
      [&](const llvm::ErrorInfoBase &other) { error = other.message(); });
  return std::nullopt;
}

std::optional<double> readNonNegative(const llvm::json::Value *value,
                                      const std::string &path, JsonError &error,
                                      bool positive) {
  if (!value) {
    error = {path, "missing"};
    return std::nullopt;
  }
  std::optional<double> number = value ? value->getAsNumber() : std::nullopt;
  if (number && (positive ? *number > 0.0 : *number >= 0.0))
    return number;
  error = {path, positive ? "expected a number > 0" : "expected a number >= 0"};
  return std::nullopt;
}

std::optional<int64_t> readInteger(const llvm::json::Value *value,
                                   const std::string &path, JsonError &error,
                                   int64_t minimum, int64_t maximum) {
  if (!value) {
    error = {path, "missing"};
    return std::nullopt;
  }
  std::optional<int64_t> number = value ? value->getAsInteger() : std::nullopt;
  if (number && *number >= minimum && *number <= maximum)
    return number;
  error = {path, "expected an integer in " + std::to_string(minimum) + ".." +
                     std::to_string(maximum)};
  return std::nullopt;
}

const llvm::json::Value *member(const llvm::json::Object &object,
                                llvm::StringRef key, const std::string &path,
                                JsonError &error, bool required) {
  const llvm::json::Value *value = object.get(key);
  if (!value && required)
    error = {path, "missing \"" + key.str() + "\""};
  return value;
}

bool readLinearCost(const llvm::json::Object &object, llvm::StringRef key,
                    const std::string &parent, fusion::LinearCost &cost,
                    JsonError &error) {
  std::string path = parent + "." + key.str();
  const llvm::json::Value *value = member(object, key, parent, error, true);
  if (!value)
    return false;
  const llvm::json::Object *fields = value->getAsObject();
  if (!fields) {
    error = {path, "expected an object with \"alpha_ms\" and "
                   "\"beta_ms_per_mb\""};
    return false;
  }
  std::optional<double> alpha =
      readNonNegative(fields->get("alpha_ms"), path + ".alpha_ms", error);
  if (!alpha)
    return false;
  std::optional<double> beta = readNonNegative(fields->get("beta_ms_per_mb"),
                                               path + ".beta_ms_per_mb", error);
  if (!beta)
    return false;
  cost = {*alpha, *beta};
  return true;
}

bool readCompressionCost(const llvm::json::Object &object, llvm::StringRef key,
                         const std::string &parent,
                         fusion::CompressionCost &cost, JsonError &error) {
  fusion::LinearCost line;
  if (!readLinearCost(object, key, parent, line, error))
    return false;
  cost = {line.alphaMs, line.betaMsPerMB, 0.0};
  std::string path = parent + "." + key.str() + ".min_ms";
  const llvm::json::Value *minimum = object.getObject(key)->get("min_ms");
  if (!minimum)
    return true;
  std::optional<double> value = readNonNegative(minimum, path, error);
  if (!value)
    return false;
  cost.minMs = *value;
  return true;
}

bool readTensors(const llvm::json::Object &object,
                 std::vector<fusion::Tensor> &tensors, JsonError &error) {
  const llvm::json::Value *list = member(object, "tensors", "$", error, true);
  if (!list)
    return false;
  const llvm::json::Array *items = list->getAsArray();
  if (!items || items->empty()) {
    error = {"$.tensors", "expected a non-empty array of tensors"};
    return false;
  }
  for (size_t i = 0; i < items->size(); ++i) {
    std::string path = "$.tensors[" + std::to_string(i) + "]";
    const llvm::json::Object *tensor = (*items)[i].getAsObject();
    if (!tensor) {
      error = {path, "expected an object with \"name\", \"bytes\" and "
                     "\"backward_ms\""};
      return false;
    }
    fusion::Tensor parsed;
    if (const llvm::json::Value *name = tensor->get("name")) {
      std::optional<llvm::StringRef> text = name->getAsString();
      if (!text) {
        error = {path + ".name", "expected a string"};
        return false;
      }
      parsed.name = text->str();
    } else {
      parsed.name = "t" + std::to_string(i);
    }
    std::optional<int64_t> bytes =
        readInteger(member(*tensor, "bytes", path, error, true),
                    path + ".bytes", error, 0, int64_t(1) << 50);
    if (!bytes)
      return false;
    std::optional<double> backward =
        readNonNegative(member(*tensor, "backward_ms", path, error, true),
                        path + ".backward_ms", error);
    if (!backward)
      return false;
    parsed.bytes = *bytes;
    parsed.backwardMs = *backward;
    tensors.push_back(parsed);
  }
  return true;
}

} // namespace hetero::profile
