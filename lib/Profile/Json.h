//===- Json.h - reading profile values with their JSON paths ----*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Helpers shared by the profile readers: each failure names the JSON path
// of the offending value ("$.tensors[3].bytes") and what was expected.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_LIB_PROFILE_JSON_H
#define HETERO_LIB_PROFILE_JSON_H

#include "llvm/Support/JSON.h"

#include <optional>
#include <string>

namespace hetero::profile {

/// A profile problem: where, and what was expected.
struct JsonError {
  std::string path;
  std::string problem;
  std::string str() const { return path + ": " + problem; }
};

/// Parses `text`; a syntax error is "line L: <problem> (column C)".
std::optional<llvm::json::Value> parseJson(const std::string &text,
                                           std::string &error);

/// A number >= 0 (or > 0 when `positive`); a null `value` is missing.
std::optional<double> readNonNegative(const llvm::json::Value *value,
                                      const std::string &path,
                                      JsonError &error, bool positive = false);

/// An integer in [minimum, maximum].
std::optional<int64_t> readInteger(const llvm::json::Value *value,
                                   const std::string &path, JsonError &error,
                                   int64_t minimum, int64_t maximum);

/// The object member `key` of `object`, required or not.
const llvm::json::Value *member(const llvm::json::Object &object,
                                llvm::StringRef key, const std::string &path,
                                JsonError &error, bool required);

} // namespace hetero::profile

#endif // HETERO_LIB_PROFILE_JSON_H
