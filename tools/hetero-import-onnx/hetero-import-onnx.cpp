//===- hetero-import-onnx.cpp - an ONNX model as a hetero pipeline --------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
//   hetero-import-onnx MODEL.onnx -o OUT.mlir [--loss none|mse|cross-entropy]
//                      [--data corpus|npy:DIR] [--batch N] [--microbatches M]
//                      [--dp D] [--vocab V] [--optimizer sgd|adam --lr R]
//
// Writes the model as a forward-only single-stage pipeline in the stage ABI
// (include/hetero/Import/Onnx.h, docs/import.md), ready for
// hetero-partition-stages, hetero-derive-backward and hetero-run.
//
//===----------------------------------------------------------------------===//

#include "hetero/Import/Onnx.h"
#include "hetero/InitAll.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;
using hetero::onnx_import::Loss;

static cl::OptionCategory category("hetero-import-onnx options");
static cl::opt<std::string> modelFile(cl::Positional, cl::desc("<model.onnx>"),
                                      cl::Required, cl::cat(category));
static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::value_desc("file"), cl::init("-"),
                                       cl::cat(category));
static cl::opt<Loss>
    loss("loss", cl::desc("The stage's loss"), cl::init(Loss::none),
         cl::values(clEnumValN(Loss::none, "none",
                               "the model's output is its loss; it takes the "
                               "targets as its second input"),
                    clEnumValN(Loss::mse, "mse",
                               "mean squared error against float targets"),
                    clEnumValN(Loss::crossEntropy, "cross-entropy",
                               "mean softmax cross-entropy over the last "
                               "dimension against integer targets")),
         cl::cat(category));
static cl::opt<std::string>
    data("data",
         cl::desc("Training data: corpus (the runtime's text corpus, "
                  "hetero-run --corpus) or npy:DIR (DIR/x.npy and DIR/y.npy)"),
         cl::init("corpus"), cl::cat(category));
static cl::opt<int64_t>
    batch("batch",
          cl::desc("Samples per micro-batch (default: the model's, "
                   "dimension 0 of its input)"),
          cl::init(0), cl::cat(category));
static cl::opt<int64_t> microbatches("microbatches",
                                     cl::desc("Micro-batches per step"),
                                     cl::init(4), cl::cat(category));
static cl::opt<int64_t> dp("dp", cl::desc("Data-parallel replicas"),
                           cl::init(1), cl::cat(category));
static cl::opt<int64_t>
    vocab("vocab",
          cl::desc("Token ids of the corpus (default: the rows of the "
                   "embedding table the input ids index)"),
          cl::init(0), cl::cat(category));
static cl::opt<std::string> optimizer("optimizer",
                                      cl::desc("Optimizer: sgd or adam"),
                                      cl::init("adam"), cl::cat(category));
static cl::opt<double> learningRate("lr", cl::desc("Learning rate"),
                                    cl::init(1e-3), cl::cat(category));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv, "hetero-import-onnx: an ONNX model as a hetero pipeline\n");
  hetero::onnx_import::ImportOptions options;
  options.loss = loss;
  if (data != "corpus") {
    llvm::StringRef spec(data);
    if (!spec.consume_front("npy:") || spec.empty()) {
      llvm::errs() << "hetero-import-onnx: --data must be corpus or npy:DIR; "
                      "got '"
                   << data << "'\n";
      return 1;
    }
    options.npyDirectory = spec.str();
  }
  options.batch = batch;
  options.microbatches = microbatches;
  options.replicas = dp;
  options.vocab = vocab;
  options.optimizer = optimizer;
  options.learningRate = learningRate;

  mlir::MLIRContext context;
  hetero::registerAndLoadAllDialects(context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      hetero::onnx_import::importOnnx(&context, modelFile, options);
  if (!module)
    return 1;
  std::string errorMessage;
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFile, &errorMessage);
  if (!output) {
    llvm::errs() << "hetero-import-onnx: " << errorMessage << "\n";
    return 1;
  }
  output->os() << "// Imported by: hetero-import-onnx "
               << llvm::sys::path::filename(modelFile.getValue()) << " --loss "
               << (loss == Loss::none  ? "none"
                   : loss == Loss::mse ? "mse"
                                       : "cross-entropy")
               << " --data " << data << " --microbatches " << microbatches
               << " --dp " << dp << " --optimizer " << optimizer << " --lr "
               << learningRate << "\n";
  module->print(output->os());
  output->os() << "\n";
  output->keep();
  return 0;
}
