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

#include "ToolDialects.h"

#include "hetero/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  // Every upstream pass, as in mlir-opt, and hetero's.
  mlir::registerAllPasses();
  hetero::registerAllPasses();

  // Every upstream dialect and extension, as in mlir-opt, so that the output
  // of any lowering step parses again.
  mlir::DialectRegistry registry;
  hetero::registerToolDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "hetero optimizer driver\n", registry));
}
