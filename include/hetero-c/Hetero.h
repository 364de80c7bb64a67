/*===- hetero-c/Hetero.h - C API of the hetero dialect ------------*- C -*-===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
|* Embedders written in C (or in any language with a C FFI) register the      *|
|* hetero dialect and passes through these entry points and use the upstream  *|
|* MLIR C API (mlir-c/IR.h, mlir-c/Pass.h) for everything else.               *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef HETERO_C_HETERO_H
#define HETERO_C_HETERO_H

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/* mlirGetDialectHandle__hetero__(): the handle of the hetero dialect. */
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Hetero, hetero);

/* Adds the hetero dialect and the upstream dialects hetero programs are
 * written in (func, arith, math, tensor, linalg, shard) to `registry`. */
MLIR_CAPI_EXPORTED void heteroRegisterAllDialects(MlirDialectRegistry registry);

/* Registers every hetero pass and pipeline with the global pass registry,
 * so that mlirParsePassPipeline() accepts their names. Idempotent. */
MLIR_CAPI_EXPORTED void heteroRegisterAllPasses(void);

/* The version of hetero, "major.minor.patch". */
MLIR_CAPI_EXPORTED const char *heteroGetVersion(void);

#ifdef __cplusplus
}
#endif

#include "hetero/Passes/Passes.capi.h.inc"

#endif /* HETERO_C_HETERO_H */
