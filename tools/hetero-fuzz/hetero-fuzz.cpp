//===- hetero-fuzz.cpp - libFuzzer target over hetero IR ------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Parses the input as MLIR, verifies it and canonicalizes it. Any crash,
// assertion or sanitizer report is a bug: bad input must only ever produce
// diagnostics. scripts/fuzz.sh seeds the corpus with the test inputs.
//
// The context holds the hetero dialect and the upstream dialects its ops
// refer to (func, arith, tensor, shard), so that the fuzzer spends its time
// in hetero's parsers, verifiers and canonicalizers rather than in linalg's.
//
//===----------------------------------------------------------------------===//

#include "hetero/Dialect/Hetero.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/SourceMgr.h"

#include <cstddef>
#include <cstdint>
#include <string>

static mlir::MLIRContext &getContext() {
  static mlir::MLIRContext *context = [] {
    auto *created =
        new mlir::MLIRContext(mlir::MLIRContext::Threading::DISABLED);
    created->loadDialect<hetero::HeteroDialect, mlir::arith::ArithDialect,
                         mlir::func::FuncDialect, mlir::shard::ShardDialect,
                         mlir::tensor::TensorDialect>();
    return created;
  }();
  return *context;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext &context = getContext();
  // Diagnostics are the expected outcome of bad input: swallow them.
  mlir::ScopedDiagnosticHandler silence(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  // The MLIR lexer relies on a NUL after the buffer; libFuzzer's input has
  // none, so parse a copy (std::string keeps one after its last character).
  std::string text(reinterpret_cast<const char *>(data), size);
  mlir::ParserConfig config(&context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, config, "fuzz");
  if (!module)
    return 0;
  if (failed(mlir::verify(*module)))
    return 0;
  mlir::PassManager pm(&context);
  pm.addPass(mlir::createCanonicalizerPass());
  (void)pm.run(*module);
  return 0;
}
