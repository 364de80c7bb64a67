//===- hetero-gen.cpp - generate example training steps -------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
//   hetero-gen gpt --layers L --hidden H --heads A --seq S --stages P
//                  --microbatches M --tp T [--batch B] [--dp D]
//                  [--compress C] [--ratio R] [--checkpoint-replicas N]
//                  [-o file]
//
// The model text is parsed and verified before it is printed, so every
// output of hetero-gen is a valid hetero program.
//
//===----------------------------------------------------------------------===//

#include "hetero/InitAll.h"
#include "hetero/Models/Gpt.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
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
static cl::opt<int64_t> layers("layers", cl::desc("Transformer layers"),
                               cl::init(2), cl::cat(category));
static cl::opt<int64_t> hidden("hidden", cl::desc("Hidden size"),
                               cl::init(32), cl::cat(category));
static cl::opt<int64_t> heads("heads", cl::desc("Attention heads"),
                              cl::init(2), cl::cat(category));
static cl::opt<int64_t> seq("seq", cl::desc("Tokens per sequence"),
                            cl::init(16), cl::cat(category));
static cl::opt<int64_t> batch("batch",
                              cl::desc("Sequences per micro-batch"),
                              cl::init(1), cl::cat(category));
static cl::opt<int64_t> stages("stages", cl::desc("Pipeline stages"),
                               cl::init(2), cl::cat(category));
static cl::opt<int64_t> microbatches("microbatches",
                                     cl::desc("Micro-batches per step"),
                                     cl::init(4), cl::cat(category));
static cl::opt<int64_t> tp("tp", cl::desc("Tensor-parallel degree"),
                           cl::init(1), cl::cat(category));
static cl::opt<int64_t> dp("dp", cl::desc("Data-parallel replicas"),
                           cl::init(2), cl::cat(category));
static cl::opt<std::string>
    compress("compress", cl::desc("Gradient compressor (none, fp16, bf16, "
                                  "topk, dgc, randomk, efsignsgd, onebit, "
                                  "qsgd)"),
             cl::init("fp16"), cl::cat(category));
static cl::opt<double> ratio("ratio",
                             cl::desc("Kept fraction for sparsifiers"),
                             cl::init(0.01), cl::cat(category));
static cl::opt<int64_t>
    checkpointReplicas("checkpoint-replicas",
                       cl::desc("In-memory checkpoint replicas (0: none)"),
                       cl::init(2), cl::cat(category));
static cl::opt<bool>
    train("train", cl::desc("Also emit SGD training entry points "
                            "(@train_step, @train_step_reference, "
                            "@weights_digest)"),
          cl::init(false), cl::cat(category));
static cl::opt<int64_t> groupSize("group-size",
                                  cl::desc("k of the kFkB schedule (--train)"),
                                  cl::init(1), cl::cat(category));
static cl::list<int64_t> adaptiveGroupSizes(
    "adaptive-group-sizes",
    cl::desc("Candidate k for hetero-run --adaptive: @train_step_k<k> each "
             "(--train)"),
    cl::CommaSeparated, cl::cat(category));
static cl::opt<double> learningRate("lr", cl::desc("SGD step size (--train)"),
                                    cl::init(0.05), cl::cat(category));
static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::value_desc("file"), cl::init("-"),
                                       cl::cat(category));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "hetero-gen: example hetero training steps\n");
  if (model != "gpt") {
    llvm::errs() << "hetero-gen: unknown model '" << model
                 << "', expected 'gpt'\n";
    return 1;
  }
  hetero::models::GptConfig config;
  config.layers = layers;
  config.hidden = hidden;
  config.heads = heads;
  config.seq = seq;
  config.batch = batch;
  config.stages = stages;
  config.microbatches = microbatches;
  config.tp = tp;
  config.dataParallel = dp;
  config.compressor = compress;
  config.ratio = ratio;
  config.checkpointReplicas = checkpointReplicas;
  hetero::models::TrainingOptions training;
  training.groupSize = groupSize;
  training.learningRate = learningRate;
  training.adaptiveGroupSizes.assign(adaptiveGroupSizes.begin(),
                                     adaptiveGroupSizes.end());
  std::vector<std::string> problems =
      train ? hetero::models::validateTraining(config, training)
            : hetero::models::validate(config);
  for (const std::string &problem : problems)
    llvm::errs() << "hetero-gen: " << problem << "\n";
  if (!problems.empty())
    return 1;

  mlir::MLIRContext context;
  hetero::registerAndLoadAllDialects(context);
  std::string text = train ? hetero::models::emitGptTraining(config, training)
                           : hetero::models::emitGpt(config);
  mlir::ParserConfig parserConfig(&context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, parserConfig, "gpt");
  if (!module || failed(mlir::verify(*module))) {
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
  output->os() << "// Generated by: hetero-gen gpt --layers " << layers
               << " --hidden " << hidden << " --heads " << heads << " --seq "
               << seq << " --batch " << batch << " --stages " << stages
               << " --microbatches " << microbatches << " --tp " << tp
               << " --dp " << dp << " --compress " << compress;
  if (checkpointReplicas != 2)
    output->os() << " --checkpoint-replicas " << checkpointReplicas;
  if (train)
    output->os() << " --train --group-size " << groupSize << " --lr "
                 << learningRate;
  if (train && !adaptiveGroupSizes.empty()) {
    output->os() << " --adaptive-group-sizes ";
    for (size_t i = 0; i < adaptiveGroupSizes.size(); ++i)
      output->os() << (i ? "," : "") << adaptiveGroupSizes[i];
  }
  output->os() << "\n";
  module->print(output->os());
  output->os() << "\n";
  output->keep();
  return 0;
}
