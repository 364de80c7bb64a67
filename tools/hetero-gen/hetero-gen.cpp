//===- hetero-gen.cpp - generate example models in the stage ABI ----------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
//   hetero-gen gpt [--vocab V] [--layers L] [--hidden H] [--heads A]
//                  [--seq S] [--batch B] [--microbatch-sizes N,...]
//                  [--stages P] [--pipeline-ranks R --placement loop|v]
//                  [--microbatches M]
//                  [--tp T] [--dp D] [--optimizer sgd|adam] [--lr R]
//                  [--impute zero|average|same]
//                  [--sync "policy = dynamic, ..."] [-o file]
//
// Emits what a frontend would: parameters, the data function (reading the
// runtime's corpus), the stage functions, the generation function and the
// hetero.pipeline (docs/execution.md), built with
// builders and verified before they are printed. Schedules, collectives,
// compression and checkpoints are the passes' decisions.
//
//===----------------------------------------------------------------------===//

#include "hetero/Dialect/Hetero.h"
#include "hetero/InitAll.h"
#include "hetero/Models/Gpt.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

static cl::OptionCategory category("hetero-gen options");
static cl::opt<std::string> model(cl::Positional, cl::desc("<model>"),
                                  cl::Required, cl::cat(category));
static const hetero::models::GptConfig defaults;
static cl::opt<int64_t> vocab("vocab",
                              cl::desc("Token ids (character-level, 2..256)"),
                              cl::init(defaults.vocab), cl::cat(category));
static cl::opt<int64_t> layers("layers", cl::desc("Transformer layers"),
                               cl::init(defaults.layers), cl::cat(category));
static cl::opt<int64_t> hidden("hidden", cl::desc("Hidden size"),
                               cl::init(defaults.hidden), cl::cat(category));
static cl::opt<int64_t> heads("heads", cl::desc("Attention heads"),
                              cl::init(defaults.heads), cl::cat(category));
static cl::opt<int64_t> seq("seq", cl::desc("Tokens per sequence"),
                            cl::init(defaults.seq), cl::cat(category));
static cl::opt<int64_t> batch("batch", cl::desc("Sequences per micro-batch"),
                              cl::init(defaults.batch), cl::cat(category));
static cl::list<int64_t> microbatchSizes(
    "microbatch-sizes",
    cl::desc("Larger micro-batches (sequences, multiples of --batch) that the "
             "stages also get functions for (hetero.stage_variant)"),
    cl::CommaSeparated, cl::cat(category));
static cl::opt<int64_t> stages("stages", cl::desc("Pipeline stages"),
                               cl::init(defaults.stages), cl::cat(category));
static cl::opt<int64_t> pipelineRanks(
    "pipeline-ranks",
    cl::desc("Ranks of the pipeline axis (default: one per stage); fewer "
             "than --stages places several stages on a rank"),
    cl::init(0), cl::cat(category));
static cl::opt<std::string>
    placement("placement",
              cl::desc("Where stages go when ranks are fewer: loop (stage s "
                       "on rank s mod R) or v (rank r holds r and 2R-1-r)"),
              cl::init(defaults.placement), cl::cat(category));
static cl::opt<int64_t> microbatches("microbatches",
                                     cl::desc("Micro-batches per step"),
                                     cl::init(defaults.microbatches),
                                     cl::cat(category));
static cl::opt<int64_t> tp("tp", cl::desc("Tensor-parallel degree"),
                           cl::init(defaults.tp), cl::cat(category));
static cl::opt<int64_t> dp("dp", cl::desc("Data-parallel replicas"),
                           cl::init(defaults.dataParallel), cl::cat(category));
static cl::opt<std::string> optimizer("optimizer",
                                      cl::desc("Optimizer: sgd or adam"),
                                      cl::init(defaults.optimizer),
                                      cl::cat(category));
static cl::opt<double> learningRate("lr", cl::desc("Learning rate"),
                                    cl::init(defaults.learningRate),
                                    cl::cat(category));
static cl::opt<std::string>
    imputation("impute",
               cl::desc("What ZERO-resizing imputes into the pruned columns "
                        "of the linears' gradients: zero, average or same"),
               cl::init(defaults.imputation), cl::cat(category));
static cl::opt<std::string>
    sync("sync",
         cl::desc("The pipeline's #hetero.sync parameters, for example "
                  "\"policy = dynamic, period = 4\" (docs/sync-groups.md); "
                  "default: none (gradient all-reduce)"),
         cl::init(""), cl::cat(category));
static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::value_desc("file"), cl::init("-"),
                                       cl::cat(category));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "hetero-gen: example models in the stage ABI\n");
  if (model != "gpt") {
    llvm::errs() << "hetero-gen: unknown model '" << model
                 << "', expected 'gpt'\n";
    return 1;
  }
  hetero::models::GptConfig config;
  config.vocab = vocab;
  config.layers = layers;
  config.hidden = hidden;
  config.heads = heads;
  config.seq = seq;
  config.batch = batch;
  config.microbatchSizes.assign(microbatchSizes.begin(), microbatchSizes.end());
  config.stages = stages;
  config.pipelineRanks = pipelineRanks;
  config.placement = placement;
  config.microbatches = microbatches;
  config.tp = tp;
  config.dataParallel = dp;
  config.optimizer = optimizer;
  config.learningRate = learningRate;
  config.imputation = imputation;
  std::vector<std::string> problems = hetero::models::validate(config);
  for (const std::string &problem : problems)
    llvm::errs() << "hetero-gen: " << problem << "\n";
  if (!problems.empty())
    return 1;

  mlir::MLIRContext context;
  hetero::registerAndLoadAllDialects(context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      hetero::models::buildGpt(&context, config);
  if (!sync.empty()) {
    // The attribute's parser and the pipeline's verifier say what is wrong.
    std::string problem;
    mlir::ScopedDiagnosticHandler handler(&context,
                                          [&](mlir::Diagnostic &diagnostic) {
                                            if (problem.empty())
                                              problem = diagnostic.str();
                                            return mlir::success();
                                          });
    auto attr = llvm::dyn_cast_or_null<hetero::SyncAttr>(
        mlir::parseAttribute("#hetero.sync<" + sync + ">", &context));
    if (attr)
      for (auto pipeline : module->getOps<hetero::PipelineOp>())
        pipeline.setSyncAttr(attr);
    if (!attr || failed(mlir::verify(*module))) {
      llvm::errs() << "hetero-gen: --sync \"" << sync << "\": " << problem
                   << "\n";
      return 1;
    }
  }
  if (failed(mlir::verify(*module))) {
    llvm::errs() << "hetero-gen: internal error: the generated model does "
                    "not verify\n";
    return 2;
  }
  std::string errorMessage;
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFile, &errorMessage);
  if (!output) {
    llvm::errs() << "hetero-gen: " << errorMessage << "\n";
    return 1;
  }
  output->os() << "// Generated by: hetero-gen gpt --vocab " << vocab
               << " --layers " << layers << " --hidden " << hidden
               << " --heads " << heads << " --seq " << seq << " --batch "
               << batch;
  if (!microbatchSizes.empty()) {
    output->os() << " --microbatch-sizes ";
    llvm::interleave(microbatchSizes, output->os(), ",");
  }
  output->os() << " --stages " << stages;
  if (pipelineRanks && pipelineRanks != stages)
    output->os() << " --pipeline-ranks " << pipelineRanks << " --placement "
                 << placement;
  output->os() << " --microbatches " << microbatches << " --tp " << tp
               << " --dp " << dp << " --optimizer " << optimizer << " --lr "
               << learningRate;
  if (imputation != defaults.imputation)
    output->os() << " --impute " << imputation;
  if (!sync.empty())
    output->os() << " --sync \"" << sync << "\"";
  output->os() << "\n";
  module->print(output->os());
  output->os() << "\n";
  output->keep();
  return 0;
}
