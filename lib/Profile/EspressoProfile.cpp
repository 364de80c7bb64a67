//===- EspressoProfile.cpp - compression-decision profiles in JSON --------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Profile/EspressoProfile.h"

#include "Json.h"

namespace hetero::profile {
namespace {

using llvm::json::Object;

bool readDevice(const Object &root, llvm::StringRef key,
                espresso::DeviceCosts &costs, JsonError &error) {
  const llvm::json::Value *value = member(root, key, "$", error, true);
  if (!value)
    return false;
  const Object *device = value->getAsObject();
  std::string path = "$." + key.str();
  if (!device) {
    error = {path, "expected an object with \"compress\" and \"decompress\""};
    return false;
  }
  return readLinearCost(*device, "compress", path, costs.compress, error) &&
         readLinearCost(*device, "decompress", path, costs.decompress, error);
}

bool readProblem(const llvm::json::Value &root, espresso::Problem &problem,
                 JsonError &error) {
  const Object *object = root.getAsObject();
  if (!object) {
    error = {"$", "expected an object"};
    return false;
  }
  if (const llvm::json::Value *ranks = object->get("ranks")) {
    std::optional<int64_t> value =
        readInteger(ranks, "$.ranks", error, 1, 1 << 20);
    if (!value)
      return false;
    problem.ranks = *value;
  }
  if (const llvm::json::Value *fraction = object->get("wire_fraction")) {
    std::optional<double> value =
        readNonNegative(fraction, "$.wire_fraction", error, true);
    if (!value)
      return false;
    problem.wireFraction = *value;
  }
  if (const llvm::json::Value *workers = object->get("cpu_workers")) {
    std::optional<int64_t> value =
        readInteger(workers, "$.cpu_workers", error, 1, 1 << 16);
    if (!value)
      return false;
    problem.cpuWorkers = *value;
  }
  if (const llvm::json::Value *nodeSize = object->get("node_size")) {
    std::optional<int64_t> value =
        readInteger(nodeSize, "$.node_size", error, 1, 1 << 20);
    if (!value)
      return false;
    problem.nodeSize = *value;
    if (!readLinearCost(*object, "intra_link", "$", problem.intraLink, error))
      return false;
  }
  return readTensors(*object, problem.tensors, error) &&
         readLinearCost(*object, "link", "$", problem.link, error) &&
         readDevice(*object, "gpu", problem.gpu, error) &&
         readDevice(*object, "cpu", problem.cpu, error);
}

} // namespace

std::string parseEspressoProfile(const std::string &text,
                                 espresso::Problem &problem) {
  problem = {};
  return parseProfile(text,
                      [&](const llvm::json::Value &root, JsonError &error) {
                        return readProblem(root, problem, error);
                      });
}

} // namespace hetero::profile
