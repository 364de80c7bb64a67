/*===- hetero-capi.c - embedding hetero from C ------------------------------===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* RUN: hetero-capi-test 2>&1 | FileCheck %s
 *
 * CHECK: hetero version: 0.1.0
 * CHECK: dialect namespace: hetero
 */

#include "hetero-c/Hetero.h"

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/Support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void printToStdout(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stdout);
}

static MlirContext createContext(void) {
  MlirContext context = mlirContextCreate();
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  heteroRegisterAllDialects(registry);
  mlirContextAppendDialectRegistry(context, registry);
  mlirDialectRegistryDestroy(registry);
  mlirContextLoadAllAvailableDialects(context);
  return context;
}

static const char *validModule =
    "func.func @step(%g: tensor<64xf32>, %s: i64) -> tensor<64xf32> {\n"
    "  %0 = hetero.all_reduce %g reduction = avg compress <fp16> : "
    "tensor<64xf32>\n"
    "  hetero.checkpoint %0 at %s replicas = 2 of 4 placement = ring : "
    "tensor<64xf32>\n"
    "  return %0 : tensor<64xf32>\n"
    "}\n";

/* Parses, verifies and prints a module that uses the hetero dialect. */
static int testParseAndVerify(void) {
  MlirContext context = createContext();
  MlirModule module =
      mlirModuleCreateParse(context, mlirStringRefCreateFromCString(validModule));
  if (mlirModuleIsNull(module)) {
    fprintf(stderr, "failed to parse the valid module\n");
    return 1;
  }
  MlirOperation op = mlirModuleGetOperation(module);
  // CHECK: verified: 1
  printf("verified: %d\n", mlirOperationVerify(op));
  // CHECK: hetero.all_reduce %{{.*}} reduction = avg compress <fp16> : tensor<64xf32>
  // CHECK: hetero.checkpoint %{{.*}} at %{{.*}} replicas = 2 of 4 placement = ring : tensor<64xf32>
  mlirOperationPrint(op, printToStdout, NULL);
  mlirModuleDestroy(module);
  mlirContextDestroy(context);
  return 0;
}

/* A verifier error reaches C callers as a parse failure with a diagnostic. */
static int testRejectsInvalid(void) {
  MlirContext context = createContext();
  const char *invalid =
      "func.func @step(%w: tensor<64xf32>, %s: i64) {\n"
      "  hetero.checkpoint %w at %s replicas = 9 of 8 placement = ring : "
      "tensor<64xf32>\n"
      "  return\n"
      "}\n";
  // CHECK: asks for 9 replicas, but the world has only 8 machines
  MlirModule module =
      mlirModuleCreateParse(context, mlirStringRefCreateFromCString(invalid));
  // CHECK: invalid module rejected: 1
  printf("invalid module rejected: %d\n", mlirModuleIsNull(module));
  mlirContextDestroy(context);
  return 0;
}

/* Passes are registered and run through the C pass manager. */
static int testRunPass(void) {
  MlirContext context = createContext();
  heteroRegisterAllPasses();
  heteroRegisterAllPasses(); /* idempotent */
  MlirModule module =
      mlirModuleCreateParse(context, mlirStringRefCreateFromCString(validModule));
  MlirPassManager pm = mlirPassManagerCreate(context);
  MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
  MlirLogicalResult parsed = mlirParsePassPipeline(
      opm, mlirStringRefCreateFromCString("builtin.module(hetero-summary)"),
      printToStdout, NULL);
  if (mlirLogicalResultIsFailure(parsed)) {
    fprintf(stderr, "failed to parse the pass pipeline\n");
    return 1;
  }
  // CHECK: module without a pipeline
  // CHECK: all_reduce: 1 ops, 256 B of tensors, 128 B on the wire (1 compressed, 2.0x smaller)
  MlirLogicalResult ran =
      mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module));
  fflush(stdout);
  // CHECK: pass ran: 1
  printf("pass ran: %d\n", mlirLogicalResultIsSuccess(ran));
  /* The generated C entry point creates the same pass. */
  MlirPassManager second = mlirPassManagerCreate(context);
  MlirPass summary = mlirCreateHeteroHeteroSummary();
  // CHECK: created summary pass: 1
  printf("created summary pass: %d\n", summary.ptr != NULL);
  mlirPassManagerAddOwnedPass(second, summary);
  mlirPassManagerDestroy(second);
  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(module);
  mlirContextDestroy(context);
  return 0;
}

int main(void) {
  printf("hetero version: %s\n", heteroGetVersion());
  MlirDialectHandle handle = mlirGetDialectHandle__hetero__();
  MlirStringRef ns = mlirDialectHandleGetNamespace(handle);
  printf("dialect namespace: %.*s\n", (int)ns.length, ns.data);
  fflush(stdout);
  int failures = testParseAndVerify();
  fflush(stdout);
  failures += testRejectsInvalid();
  fflush(stdout);
  failures += testRunPass();
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
