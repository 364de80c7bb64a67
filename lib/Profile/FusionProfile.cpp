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

bool readProblem(const Value &root, fusion::Problem &problem,
                 JsonError &error) {
  const Object *object = root.getAsObject();
  if (!object) {
    error = {"$", "expected an object"};
    return false;
  }
  if (!readTensors(*object, problem.tensors, error))
    return false;
  if (object->get("dense_comm")) {
    fusion::LinearCost dense;
    if (!readLinearCost(*object, "dense_comm", "$", dense, error))
      return false;
    problem.dense = dense;
  }
  // Uncompressed gradients cost nothing to compress.
  if (object->get("compress") &&
      !readCompressionCost(*object, "compress", "$", problem.compress, error))
    return false;
  return readLinearCost(*object, "comm", "$", problem.comm, error);
}

} // namespace

std::string parseFusionProfile(const std::string &text,
                               fusion::Problem &problem) {
  problem = {};
  return parseProfile(text, [&](const Value &root, JsonError &error) {
    return readProblem(root, problem, error);
  });
}

} // namespace hetero::profile
