//===- PassOutput.cpp - the files passes read and write ------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "PassOutput.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

std::unique_ptr<llvm::ToolOutputFile>
hetero::openPassOutput(mlir::Operation *anchor, llvm::StringRef path) {
  std::string errorMessage;
  std::unique_ptr<llvm::ToolOutputFile> file =
      mlir::openOutputFile(path, &errorMessage);
  if (!file)
    anchor->emitError() << errorMessage;
  return file;
}

mlir::LogicalResult hetero::readPassProfile(
    mlir::Operation *anchor, llvm::StringRef pass, llvm::StringRef path,
    llvm::function_ref<std::string(const std::string &)> parse) {
  std::string message;
  std::unique_ptr<llvm::MemoryBuffer> file =
      mlir::openInputFile(path, &message);
  if (!file)
    return anchor->emitError() << pass << ": " << message;
  std::string problem = parse(file->getBuffer().str());
  if (!problem.empty())
    return anchor->emitError() << pass << ": " << path << ": " << problem;
  return mlir::success();
}

mlir::LogicalResult hetero::readPassProfileSets(
    mlir::Operation *anchor, llvm::StringRef pass, llvm::StringRef path,
    llvm::function_ref<std::string(const std::string &)> parse) {
  return readPassProfile(anchor, pass, path, [&](const std::string &text) {
    llvm::Expected<llvm::json::Value> value = llvm::json::parse(text);
    const llvm::json::Array *sets = nullptr;
    if (value)
      if (const llvm::json::Object *object = value->getAsObject())
        sets = object->getArray("sets");
    if (!value)
      llvm::consumeError(value.takeError()); // the parser says where
    if (!sets)
      return parse(text);
    if (sets->empty())
      return std::string("$.sets: expected at least one profile");
    for (auto [index, set] : llvm::enumerate(*sets)) {
      std::string problem = parse(llvm::formatv("{0}", set).str());
      if (!problem.empty())
        return "$.sets[" + std::to_string(index) + "]: " + problem;
    }
    return std::string();
  });
}
