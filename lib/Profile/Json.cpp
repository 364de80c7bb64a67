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
                                      const std::string &path,
                                      JsonError &error, bool positive) {
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

} // namespace hetero::profile
