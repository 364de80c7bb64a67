//===- PassOutput.cpp - the files passes read and write
//--------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Passes/Passes.h"

#include "mlir/Support/FileUtilities.h"
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
