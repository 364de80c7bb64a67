//===- PassOutput.cpp - output files of reporting passes -------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Passes/Passes.h"

#include "mlir/Support/FileUtilities.h"

std::unique_ptr<llvm::ToolOutputFile>
hetero::openPassOutput(mlir::Operation *anchor, llvm::StringRef path) {
  std::string errorMessage;
  std::unique_ptr<llvm::ToolOutputFile> file =
      mlir::openOutputFile(path, &errorMessage);
  if (!file)
    anchor->emitError() << errorMessage;
  return file;
}
