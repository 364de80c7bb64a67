//===- ToolDialects.cpp - what hetero's command-line tools parse ----------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "ToolDialects.h"

#include "hetero/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

void hetero::registerToolDialects(mlir::DialectRegistry &registry) {
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  hetero::registerAllDialects(registry);
}
