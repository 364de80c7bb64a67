//===- Hetero.cpp - C API of the hetero dialect ---------------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero-c/Hetero.h"

#include "hetero/Dialect/Hetero.h"
#include "hetero/InitAll.h"
#include "hetero/Passes/Passes.h"

#include "mlir/CAPI/Pass.h"
#include "mlir/CAPI/Registration.h"

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Hetero, hetero, hetero::HeteroDialect)

void heteroRegisterAllDialects(MlirDialectRegistry registry) {
  hetero::registerAllDialects(*unwrap(registry));
}

void heteroRegisterAllPasses(void) { hetero::registerAllPasses(); }

const char *heteroGetVersion(void) { return HETERO_VERSION; }

using namespace hetero;
#include "hetero/Passes/Passes.capi.cpp.inc"
