//===- hetero-fuzz.cpp - libFuzzer target over hetero pass pipelines ------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The first byte of an input selects one of the pass pipelines below (modulo
// their count); the rest is parsed as MLIR, verified, and the pipeline runs on
// it. Any crash, assertion, sanitizer report or hang (libFuzzer's -timeout) is
// a bug: bad input must only ever produce diagnostics.
//
// The pipelines cover every hetero pass with representative options, the CPU
// and GPU lowerings, the kFkB + verify + export chain and the execution
// chain (schedule, lower the pipeline, fuse, compress, lower to the CPU).
// scripts/fuzz.sh seeds the corpus with every test input, each prefixed
// with the pipelines its RUN lines name; `HETERO_FUZZ_LIST=1 hetero-fuzz`
// prints the table.
//
// Every hetero source file in build-fuzz/ is built with coverage
// instrumentation and the sanitizers, so the fuzzer is guided by hetero's
// own branches; libMLIR.so is not instrumented.
//
//===----------------------------------------------------------------------===//

#include "ToolDialects.h"

#include "hetero/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace {

/// The pipelines the fuzzer can select, each what `hetero-opt
/// --pass-pipeline='builtin.module(TEXT)'` would run. `@CSV@` stands for a
/// schedule file the harness writes at start-up.
const char *const kPipelines[] = {
    "canonicalize",
    "hetero-summary{output=/dev/null}",
    "hetero-prunable-to-linalg",
    "hetero-resize,hetero-prunable-to-linalg,hetero-columns-to-linalg",
    "hetero-kfkb-schedule{group-size=2}",
    "hetero-kfkb-schedule{group-sizes=1,2,4}",
    "hetero-plan-candidates{memory-cap=1048576 batch=8 "
    "activation-bytes=16384}",
    "hetero-fuse-gradients",
    "hetero-select-compression",
    "hetero-select-compression{compressor=dgc ratio=0.1 ranks=8 "
    "density=0.05 node-size=4}",
    "hetero-print-schedule{output=/dev/null}",
    "hetero-verify-schedule{memory-cap=4}",
    "hetero-kfkb-schedule{group-size=2},hetero-verify-schedule,"
    "hetero-export-schedule{output=/dev/null}",
    "hetero-import-schedule{input=@CSV@ name=imported group-size=1},"
    "hetero-verify-schedule",
    "hetero-lower-pipeline",
    "hetero-lower-pipeline{reference=true late-gradient-sync=true}",
    "hetero-lower-to-runtime",
    "hetero-lower-to-runtime{blocking-collectives=true}",
    "hetero-lower-to-cpu",
    "hetero-lower-to-gpu{format=isa}",
    "func.func(hetero-gpu-block-reductions,hetero-gpu-serial-kernels)",
    "func.func(hetero-gpu-row-kernels,hetero-gpu-block-reductions,"
    "hetero-gpu-horizontal-fusion,hetero-gpu-launches-to-loops)",
    "hetero-lower-to-cpu{gpu-kernels-on-host=true}",
    "hetero-kfkb-schedule{group-sizes=1,2},hetero-lower-pipeline,"
    "hetero-fuse-gradients,hetero-select-compression,hetero-lower-to-cpu",
    "hetero-lower-pipeline{eager-gradient-sync=true},"
    "hetero-fuse-gradients{strategy=size bucket-mb=0.001},"
    "hetero-select-compression{strategy=compressed},hetero-lower-to-cpu",
    "hetero-resize,hetero-lower-pipeline,hetero-lower-to-cpu",
    "hetero-partition-tp,hetero-resize,hetero-prunable-to-linalg,"
    "hetero-columns-to-linalg",
    "hetero-lower-pipeline,hetero-partition-tp,hetero-resize{priority=true},"
    "hetero-lower-to-cpu",
    "hetero-lower-pipeline,hetero-partition-tp{migration=true},"
    "hetero-resize,hetero-lower-to-cpu",
    "hetero-derive-backward",
    "hetero-derive-backward,hetero-lower-pipeline,hetero-lower-to-cpu",
    "hetero-derive-backward{split=true residuals=save}",
    "hetero-derive-backward{split=true},"
    "hetero-lower-pipeline{eager-gradient-sync=true},hetero-lower-to-cpu",
    "hetero-derive-backward{residuals=save},"
    "hetero-plan-candidates{memory-cap=1048576},hetero-lower-pipeline",
    "func.func(hetero-fuse-elementwise{fold-transposes=true})",
};
constexpr size_t kNumPipelines = sizeof(kPipelines) / sizeof(kPipelines[0]);

/// A two-stage, four-micro-batch 1F1B schedule for hetero-import-schedule.
constexpr const char *kScheduleCsv = "0F0,0F1,,0B0,0F2,0B1,0F3,0B2,0B3\n"
                                     "1F0,1B0,1F1,1B1,1F2,1B2,1F3,1B3\n";

struct Harness {
  std::unique_ptr<mlir::MLIRContext> context;
  std::vector<std::string> texts;
};

std::string writeScheduleCsv() {
  llvm::SmallString<128> path;
  int fd = -1;
  if (llvm::sys::fs::createTemporaryFile("hetero-fuzz", "csv", fd, path)) {
    llvm::errs() << "hetero-fuzz: cannot create a temporary schedule file\n";
    std::exit(1);
  }
  llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
  out << kScheduleCsv;
  return path.str().str();
}

Harness &getHarness() {
  static Harness *harness = [] {
    // The fuzzed pipelines may name upstream passes.
    mlir::registerAllPasses();
    hetero::registerAllPasses();
    mlir::DialectRegistry registry;
    hetero::registerToolDialects(registry);
    auto *created = new Harness;
    created->context = std::make_unique<mlir::MLIRContext>(
        registry, mlir::MLIRContext::Threading::DISABLED);
    created->context->loadAllAvailableDialects();
    std::string csv = writeScheduleCsv();
    for (const char *pipeline : kPipelines) {
      std::string text = pipeline;
      if (size_t at = text.find("@CSV@"); at != std::string::npos)
        text.replace(at, 5, csv);
      created->texts.push_back(std::move(text));
    }
    return created;
  }();
  return *harness;
}

/// MLIR 22.1's custom parsers of linalg.transpose, linalg.broadcast and
/// linalg.reduce store the result of parsing their `permutation = [...]` or
/// `dimensions = [...]` list without checking it, and dereference a null
/// attribute when the list does not parse (upstream, docs/testing.md): not
/// hetero's to find again and again. True when such a list may be malformed:
/// if the text holds the custom form of one of these ops (its name not
/// quoted), some `permutation = ` or `dimensions = ` is not followed by
/// `[i, j, ...]` (`array<...>` included: the custom parsers take only the
/// list, and integers that fit in an i64); otherwise some is not followed by
/// the generic form's `array<`.
bool hasMalformedDenseList(const std::string &text) {
  bool custom = false;
  for (llvm::StringRef op :
       {"linalg.transpose", "linalg.broadcast", "linalg.reduce"})
    for (size_t at = text.find(op.str()); at != std::string::npos;
         at = text.find(op.str(), at + 1))
      custom |= at == 0 || text[at - 1] != '"';
  // Past whitespace and `//` comments, as the MLIR lexer skips them.
  auto skipTrivia = [&](size_t i) {
    while (i < text.size()) {
      char c = text[i];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++i;
      } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
        while (i < text.size() && text[i] != '\n')
          ++i;
      } else {
        break;
      }
    }
    return i;
  };
  auto isDigit = [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  };
  // True unless `[ (integer (, integer)*)? ]` starts at `i`.
  auto malformedList = [&](size_t i) {
    if (i >= text.size() || text[i] != '[')
      return true;
    ++i;
    bool expectInteger = false, sawInteger = false;
    while (true) {
      i = skipTrivia(i);
      if (i >= text.size())
        return true;
      if (isDigit(text[i])) {
        if (sawInteger && !expectInteger)
          return true;
        size_t first = i;
        while (i < text.size() && isDigit(text[i]))
          ++i;
        if (i - first > 18) // may not fit in an i64
          return true;
        sawInteger = true;
        expectInteger = false;
      } else if (text[i] == ',' && sawInteger && !expectInteger) {
        expectInteger = true;
        ++i;
      } else {
        return text[i] != ']' || expectInteger;
      }
    }
  };
  for (llvm::StringRef keyword : {"permutation", "dimensions"}) {
    for (size_t at = text.find(keyword.str()); at != std::string::npos;
         at = text.find(keyword.str(), at + 1)) {
      size_t i = skipTrivia(at + keyword.size());
      if (i >= text.size() || text[i] != '=')
        continue;
      i = skipTrivia(i + 1);
      if (custom ? malformedList(i) : text.compare(i, 6, "array<") != 0)
        return true;
    }
  }
  return false;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  Harness &harness = getHarness();
  if (std::getenv("HETERO_FUZZ_LIST")) {
    for (size_t i = 0; i < kNumPipelines; ++i)
      std::printf("%zu %s\n", i, kPipelines[i]);
    std::exit(0);
  }
  // Every pipeline must build: a typo here would silently fuzz nothing.
  for (const std::string &text : harness.texts) {
    mlir::PassManager pm(harness.context.get());
    std::string errors;
    llvm::raw_string_ostream errorStream(errors);
    if (failed(mlir::parsePassPipeline(text, pm, errorStream))) {
      llvm::errs() << "hetero-fuzz: pipeline '" << text
                   << "' does not parse: " << errors << "\n";
      std::exit(1);
    }
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  Harness &harness = getHarness();
  mlir::MLIRContext &context = *harness.context;
  const std::string &pipeline = harness.texts[data[0] % kNumPipelines];
  // Diagnostics are the expected outcome of bad input: swallow them.
  mlir::ScopedDiagnosticHandler silence(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  // The MLIR lexer relies on a NUL after the buffer; libFuzzer's input has
  // none, so parse a copy (std::string keeps one after its last character).
  std::string text(reinterpret_cast<const char *>(data + 1), size - 1);
  if (hasMalformedDenseList(text))
    return 0;
  mlir::ParserConfig config(&context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, config, "fuzz");
  if (!module || failed(mlir::verify(*module)))
    return 0;
  mlir::PassManager pm(&context);
  if (failed(mlir::parsePassPipeline(pipeline, pm)))
    std::abort();
  (void)pm.run(*module);
  return 0;
}
