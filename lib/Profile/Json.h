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

#include "hetero/Fusion/Fusion.h"

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

/// Parses `text` and hands its root to read(root, error): "" on success,
/// else the syntax error or the first problem `read` reports.
template <typename Read>
std::string parseProfile(const std::string &text, Read read) {
  std::string syntax;
  std::optional<llvm::json::Value> root = parseJson(text, syntax);
  if (!root)
    return syntax;
  JsonError error;
  return read(*root, error) ? "" : error.str();
}

/// A number >= 0 (or > 0 when `positive`); a null `value` is missing.
std::optional<double> readNonNegative(const llvm::json::Value *value,
                                      const std::string &path, JsonError &error,
                                      bool positive = false);

/// An integer in [minimum, maximum].
std::optional<int64_t> readInteger(const llvm::json::Value *value,
                                   const std::string &path, JsonError &error,
                                   int64_t minimum, int64_t maximum);

/// The object member `key` of `object`, required or not.
const llvm::json::Value *member(const llvm::json::Object &object,
                                llvm::StringRef key, const std::string &path,
                                JsonError &error, bool required);

/// The member `key` of `object` (at `path`): {"alpha_ms": a,
/// "beta_ms_per_mb": b}.
bool readLinearCost(const llvm::json::Object &object, llvm::StringRef key,
                    const std::string &path, fusion::LinearCost &cost,
                    JsonError &error);

/// The member `key` of `object` (at `path`): {"alpha_ms": a,
/// "beta_ms_per_mb": b, "min_ms": c}, the cost max(c, a + b x); c is
/// optional (0: affine).
bool readCompressionCost(const llvm::json::Object &object, llvm::StringRef key,
                         const std::string &path, fusion::CompressionCost &cost,
                         JsonError &error);

/// The "tensors" array of `object` (the root): name (optional), bytes and
/// backward_ms of each, in gradient-ready order.
bool readTensors(const llvm::json::Object &object,
                 std::vector<fusion::Tensor> &tensors, JsonError &error);

} // namespace hetero::profile

#endif // HETERO_LIB_PROFILE_JSON_H
