//===- hetero-opt.cpp - the hetero optimizer driver -----------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// mlir-opt for hetero programs: parses, verifies, runs hetero and upstream
// passes and pipelines, and prints the result.
//
//===----------------------------------------------------------------------===//

#include "hetero/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  hetero::registerAllPasses();

  mlir::DialectRegistry registry;
  hetero::registerAllDialects(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "hetero optimizer driver\n", registry));
}
