//===- FusionProfile.cpp - gradient-fusion profiles in JSON ---------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Profile/FusionProfile.h"

#include "Json.h"

namespace hetero::profile {
namespace {

using llvm::json::Object;
using llvm::json::Value;

bool readLinear(const Object &root, llvm::StringRef key,
                fusion::LinearCost &cost, JsonError &error) {
  std::string path = "$." + key.str();
  const Value *value = member(root, key, "$", error, true);
  if (!value)
    return false;
  const Object *object = value->getAsObject();
  if (!object) {
    error = {path, "expected an object with \"alpha_ms\" and "
                   "\"beta_ms_per_mb\""};
    return false;
  }
  std::optional<double> alpha = readNonNegative(
      member(*object, "alpha_ms", path, error, true), path + ".alpha_ms",
      error);
  if (!alpha)
    return false;
  std::optional<double> beta = readNonNegative(
      member(*object, "beta_ms_per_mb", path, error, true),
      path + ".beta_ms_per_mb", error);
  if (!beta)
    return false;
  cost = {*alpha, *beta};
  return true;
}

bool readProblem(const Value &root, fusion::Problem &problem,
                 JsonError &error) {
  const Object *object = root.getAsObject();
  if (!object) {
    error = {"$", "expected an object"};
    return false;
  }
  const Value *tensors = member(*object, "tensors", "$", error, true);
  if (!tensors)
    return false;
  const llvm::json::Array *items = tensors->getAsArray();
  if (!items || items->empty()) {
    error = {"$.tensors", "expected a non-empty array of tensors"};
    return false;
  }
  for (size_t i = 0; i < items->size(); ++i) {
    std::string path = "$.tensors[" + std::to_string(i) + "]";
    const Object *tensor = (*items)[i].getAsObject();
    if (!tensor) {
      error = {path, "expected an object with \"name\", \"bytes\" and "
                     "\"backward_ms\""};
      return false;
    }
    fusion::Tensor parsed;
    if (const Value *name = tensor->get("name")) {
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
    std::optional<double> backward = readNonNegative(
        member(*tensor, "backward_ms", path, error, true),
        path + ".backward_ms", error);
    if (!backward)
      return false;
    parsed.bytes = *bytes;
    parsed.backwardMs = *backward;
    problem.tensors.push_back(parsed);
  }
  return readLinear(*object, "compress", problem.compress, error) &&
         readLinear(*object, "comm", problem.comm, error);
}

} // namespace

std::string parseFusionProfile(const std::string &text,
                               fusion::Problem &problem) {
  std::string syntax;
  std::optional<Value> root = parseJson(text, syntax);
  if (!root)
    return syntax;
  JsonError error;
  problem = {};
  if (!readProblem(*root, problem, error))
    return error.str();
  return "";
}

} // namespace hetero::profile
