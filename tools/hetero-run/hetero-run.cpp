//===- hetero-run.cpp - compile a hetero program and run it ---------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
//   mpirun -np R hetero-run model.mlir [--entry step] [--iterations N]
//                          [--seed S] [--backend mpi|nccl]
//                          [--save DIR] [--load DIR] [--timeline DIR]
//                          [--corpus FILE] [--prompt TEXT]
//                          [--temperature T]
//                          [--checkpoint replicas=m,every=n,...]
//                          [--prune ratio=a[,ranks=r+r...][,migrate=m]
//                                   [,epoch=n] |
//                                   target=min|mean
//                                   [,policy=prune|migrate|semi]
//                                   [,order=random|priority][,epsilon=e]]
//
// Compiles the module with the CPU pipeline (hetero-lower-to-cpu), JITs it
// with the MLIR ExecutionEngine and calls the entry function once per
// iteration on every rank. The entry takes nothing, (i64 iteration) or
// (i64 iteration, i64 seed), and returns nothing, a float (printed as the
// loss) or an integer (printed as the result). Rank 0 prints one line per
// iteration: `iteration <i>: loss <value>, <ms> ms`.
//
// A module that still holds an executable hetero.pipeline is first lowered
// by hetero-lower-pipeline (with its reference step), after
// hetero-derive-backward when a stage has no backward; the entry defaults to
// the pipeline's @<pipeline>_step, and --save / --load exchange its
// parameters with NumPy as DIR/<global>.npy. hetero.corpus_batch reads the
// --corpus text; after the iterations, rank 0 prints the streams that
// hetero.sample_next generated from --prompt. --checkpoint keeps Gemini's
// in-memory checkpoints of the step (Checkpointing.h) and resumes from the
// newest one a failed run left. --prune answers the hetero.prune_plan and
// hetero.migration_plan ops that hetero-resize and hetero-partition-tp
// left, with fixed shares of each layer's columns or shares the online
// planner sets (docs/resizing.md).
//
//===----------------------------------------------------------------------===//

#include "AdaptivePlanning.h"
#include "Checkpointing.h"
#include "Device.h"
#include "HostCompiler.h"
#include "MeasuredTimeline.h"
#include "Shards.h"
#include "ToolDialects.h"

#include "hetero-rt/blas.h"
#include "hetero-rt/hrt.h"
#include "hetero/InitAll.h"
#include "hetero/Passes/Passes.h"
#include "hetero/Support/Npy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace cl = llvm::cl;
using namespace mlir;

static cl::OptionCategory category("hetero-run options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.mlir>"),
                                      cl::Required, cl::cat(category));
static cl::opt<std::string> entry("entry", cl::desc("Function to run"),
                                  cl::init("step"), cl::cat(category));
static cl::opt<int64_t> iterations("iterations",
                                   cl::desc("Times to call the entry"),
                                   cl::init(1), cl::cat(category));
static cl::opt<int64_t> seed("seed", cl::desc("Seed passed to the entry"),
                             cl::init(0), cl::cat(category));
static cl::opt<std::string> backend("backend",
                                    cl::desc("Communication backend: mpi, "
                                             "or nccl (with --device gpu)"),
                                    cl::init("mpi"), cl::cat(category));
static cl::opt<std::string>
    device("device",
           cl::desc("Where the program computes: cpu, or gpu (compiled with "
                    "hetero-lower-to-gpu, one GPU per rank; with --backend "
                    "nccl the collectives move device buffers, with mpi they "
                    "stage through pinned host memory)"),
           cl::init("cpu"), cl::cat(category));
static cl::opt<bool> allRanks("all-ranks",
                              cl::desc("Print the lines of every rank"),
                              cl::init(false), cl::cat(category));
static cl::opt<std::string>
    then("then",
         cl::desc("A function () -> scalar to call once after the "
                  "iterations; rank 0 prints `<name>: <value>`"),
         cl::init(""), cl::cat(category));
static cl::opt<bool> adaptive(
    "adaptive",
    cl::desc("Run the plan of the entry's plan table (a pipeline with a "
             "hetero.plan_set) that the planner picks from measured task and "
             "transfer times, re-planning at iteration boundaries"),
    cl::init(false), cl::cat(category));
static cl::opt<int64_t>
    replanEvery("replan-every",
                cl::desc("--adaptive: iterations between re-plans"),
                cl::init(4), cl::cat(category));
static cl::opt<bool> replanVerbose(
    "replan-verbose",
    cl::desc("--adaptive: print every plan's predicted iteration time at "
             "each re-plan"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> sharedLink(
    "shared-link",
    cl::desc("--adaptive: every rank's traffic crosses one link (one shaped "
             "or shared network): the planner queues all transfers on it"),
    cl::init(false), cl::cat(category));
static cl::opt<double> replanMinGain(
    "replan-min-gain",
    cl::desc("--adaptive: switch only to a plan predicted faster by at least "
             "this fraction of the iteration time"),
    cl::init(0.05), cl::cat(category));
static cl::opt<std::string>
    saveDirectory("save",
                  cl::desc("After the last iteration, write every parameter "
                           "of the pipeline as DIR/<global>.npy"),
                  cl::value_desc("DIR"), cl::init(""), cl::cat(category));
static cl::opt<std::string>
    loadDirectory("load",
                  cl::desc("Before the first iteration, read every parameter "
                           "of the pipeline from DIR/<global>.npy"),
                  cl::value_desc("DIR"), cl::init(""), cl::cat(category));
static cl::opt<bool> measureThroughput(
    "throughput",
    cl::desc("Time the iterations after the first (a warm-up) on every "
             "rank: rank 0 prints `throughput: <micro-batches per second>`, "
             "the micro-batches of every replica over the slowest rank's "
             "time"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> blockingCollectives(
    "blocking-collectives",
    cl::desc("Wait for every all-reduce where it stands (no overlap)"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> reassociateReductions(
    "reassociate-reductions",
    cl::desc("Let floating-point reductions be reordered so that they "
             "vectorise (=false keeps each sum's order, bit for bit as "
             "written)"),
    cl::init(true), cl::cat(category));
static cl::opt<bool> gpuKernelsOnHost(
    "gpu-kernels-on-host",
    cl::desc("On the CPU, run the kernels the GPU pipeline builds (row "
             "kernels, block reductions, horizontal fusion) as loops, to "
             "check them against the CPU's own code without a device"),
    cl::init(false), cl::cat(category));
/// --threads: the threads each rank's BLAS products may use. libLLVM
/// already registers a `threads` option of type int (without a
/// description); hetero-run takes that one over, and registers its own
/// where the library has none.
static cl::opt<int> &threadsOption() {
  static cl::opt<int> *option = [] {
    auto options = cl::getRegisteredOptions();
    auto found = options.find("threads");
    cl::opt<int> *threads =
        found != options.end()
            ? static_cast<cl::opt<int> *>(found->second)
            : new cl::opt<int>("threads", cl::value_desc("N"));
    threads->setDescription("Threads each rank's BLAS products may use "
                            "(default 1: the ranks of a job share the "
                            "machine's cores)");
    threads->setValueStr("N");
    threads->setInitialValue(1);
    threads->addCategory(category);
    return threads;
  }();
  return *option;
}
static cl::opt<unsigned> optLevel(
    "O", cl::Prefix,
    cl::desc("Optimisation level of the host compile, -O0 to -O3 (default "
             "3; lower levels compile faster and run slower)"),
    cl::init(3), cl::cat(category));
static cl::opt<std::string> matmul(
    "matmul",
    cl::desc("How the CPU step's f32 products run: blas (hrt_cpu_sgemm, the "
             "default when hetero is built with OpenBLAS) or loops"),
    cl::init(""), cl::cat(category));
static cl::opt<std::string> residualsOption(
    "residuals",
    cl::desc("How a backward that hetero-run derives (a stage written "
             "forward-only) gets the forward's values: recompute (it re-runs "
             "the forward, the default) or save (the forward keeps them, "
             "stashed per micro-batch)"),
    cl::value_desc("recompute|save"), cl::init("recompute"), cl::cat(category));
static cl::opt<bool> splitBackward(
    "split-backward",
    cl::desc("Derive a forward-only stage's backward as an input-gradient "
             "and a weight-gradient task (hetero-derive-backward split=true)"),
    cl::init(false), cl::cat(category));
static cl::opt<std::string> blasProfile(
    "blas-profile",
    cl::desc("Time the CPU step's products in the iterations after the "
             "first: print their share of the time and rate, and write "
             "their shapes, calls and seconds to FILE (rank r of several "
             "to FILE.r); bench/products.sh compares them with OpenBLAS on "
             "the same shapes"),
    cl::value_desc("FILE"), cl::init(""), cl::cat(category));
static cl::opt<std::string> corpus(
    "corpus",
    cl::desc(
        "The text that hetero.corpus_batch reads (default: " HRT_DEFAULT_CORPUS
        ")"),
    cl::value_desc("FILE"), cl::init(""), cl::cat(category));
static cl::opt<std::string>
    prompt("prompt",
           cl::desc("The text every generated stream starts from "
                    "(hetero.sample_context)"),
           cl::init("The "), cl::cat(category));
static cl::opt<double> temperature(
    "temperature",
    cl::desc("Sampling temperature of hetero.sample_next; 0 takes the most "
             "likely character"),
    cl::init(0.8), cl::cat(category));
static cl::opt<std::string>
    dumpLowered("dump-lowered",
                cl::desc("Write the lowered LLVM-dialect module to a file"),
                cl::init(""), cl::cat(category));
static cl::opt<std::string> timelineDirectory(
    "timeline",
    cl::desc("Measure the last iteration on every rank and write it as "
             "DIR/timeline.json (Chrome trace) and DIR/timeline.svg"),
    cl::value_desc("DIR"), cl::init(""), cl::cat(category));

static cl::opt<std::string> profileTimeline(
    "profile-timeline",
    cl::desc("Measure the iterations after the first (at most 20) on every "
             "rank and write their mean as a Chrome trace to FILE: the "
             "profile= of hetero-interleave-checkpoints"),
    cl::value_desc("FILE"), cl::init(""), cl::cat(category));
static cl::opt<std::string> checkpointOption(
    "checkpoint",
    cl::desc("Keep in-memory checkpoints (Gemini) of the pipeline's step and "
             "resume from them after a failure: replicas=m,every=n"
             "[,placement=group|ring|mixed][,costs=F|profile=F]"
             "[,interleaving=gemini|naive|blocking][,bandwidth_mbps=B]"
             "[,alpha_ms=a][,mu=u][,buffer_mb=R][,parts=p][,agents=DIR|none]"
             "[,disk=DIR,disk_every=K] (docs/checkpointing.md)"),
    cl::init(""), cl::cat(category));

static cl::opt<std::string> pruneOption(
    "prune",
    cl::desc("ZERO-resizing of a module that hetero-resize expanded: "
             "ratio=a (a fixed share in [0, 1))[,ranks=r+r...] (the pruning "
             "world ranks, 0..63; default all), or target=min|mean (each "
             "tensor-parallel rank's share planned online, Eq. 1) "
             "[,policy=prune|migrate|semi] (what a straggler does with "
             "it; migrate and semi: target=min only); migrate=m (a fixed "
             "share the ranks "
             "of ranks= hand to the others of their tensor-parallel group; "
             "needs hetero-partition-tp{migration=true}); "
             "[,epoch=n] (new columns every n iterations; default never) "
             "[,order=random|priority] (ZERO-Rd's draw, or ZERO-Pri's "
             "columns that changed least over the last epoch; needs epoch= "
             "and hetero-resize{priority=true}) [,epsilon=e] (PriDiff: "
             "prune more of layers whose columns changed less than "
             "epoch x e) [,pretest=n] (policy=semi: before training, n "
             "rounds of iterations at the spec's sample shares fit Eq. 2 "
             "and 3's costs; their updates are undone) (docs/resizing.md)"),
    cl::init(""), cl::cat(category));

namespace {

/// --prune's settings for hrt_resize_configure.
struct PruneConfig {
  double ratio = 0;
  unsigned long long ranks = 0;
  long long epoch = 0;
  /// target=: planned online towards the group's mean (0) or min (1).
  std::optional<int> target;
  /// policy=: what the online planner has a straggler do.
  int policy = HRT_RESIZE_PRUNE;
  bool policySet = false;
  /// migrate=: the fixed share the ranks of `ranks` migrate.
  double migrate = 0;
  bool migrates = false;
  /// order=priority: ZERO-Pri; epsilon=: PriDiff's micro-threshold.
  bool priority = false;
  double epsilon = 0;
  bool epsilonSet = false;
  /// pretest=: rounds of SEMI's pre-test before training.
  long long pretest = 0;
  /// Whether the module's ranks talk to the others of their tensor-parallel
  /// group about it.
  bool needsGroup() const {
    return target.has_value() || migrates || policy != HRT_RESIZE_PRUNE;
  }
};

/// Parses --prune; returns what is wrong, or "".
std::string parsePruneConfig(StringRef text, PruneConfig &config) {
  SmallVector<StringRef> items;
  text.split(items, ',', -1, /*KeepEmpty=*/false);
  bool ratio = false;
  for (StringRef item : items) {
    auto [key, value] = item.split('=');
    key = key.trim();
    value = value.trim();
    if (value.empty())
      return "'" + item.str() + "' is not key=value";
    if (key == "ratio") {
      if (value.getAsDouble(config.ratio) || !(config.ratio >= 0) ||
          !(config.ratio < 1))
        return "ratio must be a number in [0, 1), got '" + value.str() + "'";
      ratio = true;
    } else if (key == "ranks") {
      SmallVector<StringRef> ranks;
      value.split(ranks, '+');
      for (StringRef rank : ranks) {
        unsigned number;
        if (rank.trim().getAsInteger(10, number) || number > 63)
          return "ranks must be world ranks 0..63 joined by '+', got '" +
                 value.str() + "'";
        config.ranks |= 1ULL << number;
      }
    } else if (key == "migrate") {
      if (value.getAsDouble(config.migrate) || !(config.migrate > 0) ||
          !(config.migrate < 1))
        return "migrate must be a number in (0, 1), got '" + value.str() + "'";
      config.migrates = true;
    } else if (key == "policy") {
      if (value != "prune" && value != "migrate" && value != "semi")
        return "policy must be prune, migrate or semi, got '" + value.str() +
               "'";
      config.policy = value == "migrate" ? HRT_RESIZE_MIGRATE
                      : value == "semi"  ? HRT_RESIZE_SEMI
                                         : HRT_RESIZE_PRUNE;
      config.policySet = true;
    } else if (key == "target") {
      if (value != "min" && value != "mean")
        return "target must be min or mean, got '" + value.str() + "'";
      config.target = value == "min" ? 1 : 0;
    } else if (key == "epoch") {
      if (value.getAsInteger(10, config.epoch) || config.epoch < 1)
        return "epoch must be a whole number of iterations >= 1, got '" +
               value.str() + "'";
    } else if (key == "order") {
      if (value != "random" && value != "priority")
        return "order must be random or priority, got '" + value.str() + "'";
      config.priority = value == "priority";
    } else if (key == "epsilon") {
      if (value.getAsDouble(config.epsilon) || !(config.epsilon > 0) ||
          !std::isfinite(config.epsilon))
        return "epsilon must be a number > 0, got '" + value.str() + "'";
      config.epsilonSet = true;
    } else if (key == "pretest") {
      if (value.getAsInteger(10, config.pretest) || config.pretest < 1)
        return "pretest must be a whole number of rounds >= 1, got '" +
               value.str() + "'";
    } else {
      return "unknown key '" + key.str() +
             "', expected ratio, ranks, migrate, target, policy, epoch, "
             "order, epsilon or pretest";
    }
  }
  if (config.target && (ratio || config.ranks || config.migrates))
    return "target= plans every rank's shares online; it excludes ratio=, "
           "migrate= and ranks=";
  if (config.policySet && !config.target)
    return "policy= chooses what the online planner does; it needs "
           "target=min|mean";
  if (config.policy != HRT_RESIZE_PRUNE && config.target != 1)
    return std::string("policy=") +
           (config.policy == HRT_RESIZE_SEMI ? "semi" : "migrate") +
           " balances against the fastest rank; expected target=min";
  if (config.migrates && !config.ranks)
    return "migrate= needs ranks=: the ranks that keep their columns "
           "receive the migrated ones";
  if (!ratio && !config.target && !config.migrates)
    return "missing ratio=a, migrate=m or target=min|mean";
  if (config.epsilonSet && !config.priority)
    return "epsilon= differentiates the layers' ratios by their priority "
           "statistics; it needs order=priority";
  if (config.priority && config.epoch < 1)
    return "order=priority ranks the columns by their change over an epoch; "
           "it needs epoch=n";
  if (config.pretest && config.policy != HRT_RESIZE_SEMI)
    return "pretest= fits SEMI's extraction and communication costs; it "
           "needs target=min,policy=semi";
  return "";
}

/// Hands --prune's settings to the runtime: the online planner, or fixed
/// shares (and fixed migration over `group`).
bool configureResize(const PruneConfig &config, hrt_comm group,
                     unsigned long long drawSeed) {
  bool configured =
      config.target
          ? hrt_resize_configure_online(group, *config.target, config.policy,
                                        config.epoch, drawSeed) == HRT_SUCCESS
          : hrt_resize_configure(config.ratio, config.ranks, config.epoch,
                                 drawSeed) == HRT_SUCCESS &&
                (!config.migrates ||
                 hrt_resize_configure_migration(group, config.migrate,
                                                config.ranks) == HRT_SUCCESS);
  return configured && (!config.priority || hrt_resize_configure_priority(
                                                config.epsilon) == HRT_SUCCESS);
}

/// A global the step writes, and its bytes: what SEMI's pre-test undoes.
struct WritableGlobal {
  std::string name;
  size_t bytes;
};

/// Every global of `module` that the program may write, made visible to
/// the JIT's symbol lookup.
std::vector<WritableGlobal> collectWritableGlobals(ModuleOp module) {
  std::vector<WritableGlobal> globals;
  for (auto global : module.getOps<memref::GlobalOp>()) {
    MemRefType type = global.getType();
    if (global.getConstant() || global.isExternal() || !type.hasStaticShape())
      continue;
    SymbolTable::setSymbolVisibility(global, SymbolTable::Visibility::Public);
    size_t element =
        std::max<size_t>(1, (type.getElementTypeBitWidth() + 7) / 8);
    globals.push_back(
        {global.getSymName().str(), size_t(type.getNumElements()) * element});
  }
  return globals;
}

/// What the entry function takes and returns.
enum class ResultKind { None, F32, F64, I32, I64 };

struct EntrySignature {
  unsigned arguments = 0;
  ResultKind result = ResultKind::None;
};

FailureOr<EntrySignature> checkEntry(func::FuncOp function) {
  EntrySignature signature;
  FunctionType type = function.getFunctionType();
  signature.arguments = type.getNumInputs();
  for (Type input : type.getInputs())
    if (!input.isInteger(64) || signature.arguments > 2)
      return function.emitError()
             << "hetero-run: the entry takes (), (i64 iteration) or (i64 "
                "iteration, i64 seed), not "
             << type;
  if (type.getNumResults() > 1)
    return function.emitError()
           << "hetero-run: the entry returns at most one scalar, not " << type;
  if (type.getNumResults() == 1) {
    Type result = type.getResult(0);
    if (result.isF32())
      signature.result = ResultKind::F32;
    else if (result.isF64())
      signature.result = ResultKind::F64;
    else if (result.isInteger(32))
      signature.result = ResultKind::I32;
    else if (result.isInteger(64))
      signature.result = ResultKind::I64;
    else
      return function.emitError()
             << "hetero-run: the entry returns f32, f64, i32, i64 or nothing, "
                "not "
             << result;
  }
  return signature;
}

/// Calls the entry once; returns the printed part of its result.
llvm::Expected<std::string> invoke(ExecutionEngine &engine,
                                   const EntrySignature &signature,
                                   int64_t iteration, StringRef name) {
  auto call = [&](auto... results) -> llvm::Error {
    switch (signature.arguments) {
    case 0:
      return engine.invoke(name, results...);
    case 1:
      return engine.invoke(name, iteration, results...);
    default:
      return engine.invoke(name, iteration, int64_t(seed), results...);
    }
  };
  char text[64] = "";
  switch (signature.result) {
  case ResultKind::None:
    if (llvm::Error error = call())
      return std::move(error);
    break;
  case ResultKind::F32: {
    float value = 0;
    if (llvm::Error error = call(ExecutionEngine::result(value)))
      return std::move(error);
    std::snprintf(text, sizeof(text), "loss %.6g", value);
    break;
  }
  case ResultKind::F64: {
    double value = 0;
    if (llvm::Error error = call(ExecutionEngine::result(value)))
      return std::move(error);
    std::snprintf(text, sizeof(text), "loss %.12g", value);
    break;
  }
  case ResultKind::I32: {
    int32_t value = 0;
    if (llvm::Error error = call(ExecutionEngine::result(value)))
      return std::move(error);
    std::snprintf(text, sizeof(text), "result %d", value);
    break;
  }
  case ResultKind::I64: {
    int64_t value = 0;
    if (llvm::Error error = call(ExecutionEngine::result(value)))
      return std::move(error);
    std::snprintf(text, sizeof(text), "result %lld", (long long)value);
    break;
  }
  }
  return std::string(text);
}

/// What hetero-run needs of the pipeline it trains.
struct PipelineFacts {
  std::string name;
  std::string gridName;
  int64_t devices = 1; // the grid's size
  int64_t replicas = 1;
  /// Tensor-parallel shards per replica (grid axis 2).
  int64_t shards = 1;
  /// The ranks of one stage: its replicas' shards, which hold the same
  /// parameters and optimizer state.
  int64_t perStage() const { return replicas * shards; }
  hetero::RankLayout layout() const { return {replicas, shards, stagesOf}; }
  /// The stages of each pipeline rank, where one holds several.
  std::vector<std::vector<int64_t>> stagesOf;
  int64_t stages = 1;
  int64_t microbatches = 1;
  /// Whether its replicas sync in dynamic groups (#hetero.sync).
  bool dynamicSync = false;
  struct Parameter {
    std::string global;
    /// The whole parameter's shape; a sharded one (hetero.shard_dim) holds
    /// the slice of its shard index along `shardDim`.
    std::vector<int64_t> shape;
    /// The pipeline rank (grid axis 0) whose stage holds it.
    int64_t pipelineRank;
    int64_t shardDim = -1;
  };
  std::vector<Parameter> params;
};

/// The facts of the module's executable pipeline, after lowering it to its
/// step when the module does not hold the step yet. Fails after a message.
FailureOr<std::optional<PipelineFacts>>
preparePipeline(ModuleOp module, const hetero::CheckpointConfig &checkpoint) {
  SmallVector<hetero::PipelineOp> pipelines;
  for (auto pipeline : module.getOps<hetero::PipelineOp>())
    if (pipeline.isExecutable())
      pipelines.push_back(pipeline);
  if (pipelines.empty())
    return std::optional<PipelineFacts>();
  if (pipelines.size() > 1) {
    llvm::errs() << "hetero-run: " << inputFile << " holds " << pipelines.size()
                 << " executable pipelines; hetero-run trains one\n";
    return failure();
  }
  hetero::PipelineOp pipeline = pipelines.front();
  PipelineFacts facts;
  facts.name = pipeline.getSymName().str();
  facts.microbatches = pipeline.getNumMicrobatches();
  facts.dynamicSync =
      pipeline.getSyncAttr() && pipeline.getSyncAttr().isDynamic();
  bool lowered = bool(module.lookupSymbol<func::FuncOp>(facts.name + "_step"));
  if (checkpoint.enabled && lowered && !pipeline.getCheckpointAttr()) {
    llvm::errs() << "hetero-run: --checkpoint: the module's @" << facts.name
                 << "_step was lowered without checkpoints; give pipeline @"
                 << facts.name
                 << " its checkpoint clause before hetero-lower-pipeline, or "
                    "run the module before lowering\n";
    return failure();
  }
  // Before lowering the clause is set; after, it is checked.
  if (checkpoint.enabled &&
      failed(hetero::applyCheckpointClause(pipeline, checkpoint)))
    return failure();
  if (!lowered) {
    PassManager pm(module.getContext());
    // Stages written forward-only get their backward derived.
    bool derive =
        llvm::any_of(
            pipeline.getBody().getOps<hetero::StageOp>(),
            [](hetero::StageOp stage) { return !stage.hasBackward(); }) ||
        llvm::any_of(pipeline.getBody().getOps<hetero::StageVariantOp>(),
                     [](hetero::StageVariantOp variant) {
                       return !variant.hasBackward();
                     });
    if (derive) {
      hetero::HeteroDeriveBackwardOptions deriveOptions;
      deriveOptions.split = splitBackward;
      deriveOptions.residuals = residualsOption;
      pm.addPass(hetero::createHeteroDeriveBackward(deriveOptions));
    }
    hetero::HeteroLowerPipelineOptions options;
    options.reference = true;
    pm.addPass(hetero::createHeteroLowerPipeline(options));
    if (failed(pm.run(module)))
      return failure();
  }
  // hetero-lower-pipeline gives every pipeline it lowers a grid.
  auto grid = pipeline.getGridAttr()
                  ? module.lookupSymbol<shard::GridOp>(pipeline.getGridAttr())
                  : shard::GridOp();
  if (!grid) {
    llvm::errs() << "hetero-run: pipeline @" << facts.name
                 << " names no shard.grid, but the module already holds @"
                 << facts.name
                 << "_step; give the pipeline its grid (on @grid)\n";
    return failure();
  }
  facts.gridName = grid.getSymName().str();
  facts.devices = ShapedType::getNumElements(grid.getShape());
  if (grid.getShape().size() > 1)
    facts.replicas = grid.getShape()[1];
  if (grid.getShape().size() > 2)
    facts.shards = grid.getShape()[2];
  facts.stages = pipeline.getNumStages();
  // The partition decides which parameters each tensor-parallel rank holds
  // a slice of (hetero-lower-to-cpu would partition later, alike).
  PassManager partition(module.getContext());
  partition.addPass(hetero::createHeteroPartitionTensorParallel());
  if (failed(partition.run(module)))
    return failure();
  hetero::HeteroDialect &dialect =
      hetero::getHeteroDialect(module.getContext());
  hetero::schedule::Placement placement = pipeline.getStagePlacement();
  if (!placement.onePerRank())
    for (int64_t r = 0; r < placement.ranks; ++r)
      facts.stagesOf.push_back(placement.stagesOf(r));
  for (int64_t s = 0; s < pipeline.getNumStages(); ++s)
    for (FlatSymbolRefAttr param : pipeline.getStage(s).getParamSymbols()) {
      auto global = module.lookupSymbol<memref::GlobalOp>(param.getAttr());
      // Visible to the JIT's symbol lookup, for --save and --load.
      SymbolTable::setSymbolVisibility(global, SymbolTable::Visibility::Public);
      PipelineFacts::Parameter fact{
          param.getValue().str(),
          std::vector<int64_t>(global.getType().getShape().begin(),
                               global.getType().getShape().end()),
          placement.rankOf[s]};
      if (IntegerAttr dim = dialect.getShardDimAttrHelper().getAttr(global)) {
        fact.shardDim = dim.getInt();
        fact.shape[size_t(fact.shardDim)] *= facts.shards;
      }
      facts.params.push_back(std::move(fact));
    }
  if (checkpoint.enabled &&
      failed(hetero::placeCheckpointChunks(module, checkpoint)))
    return failure();
  return std::optional<PipelineFacts>(facts);
}

/// SEMI's pre-test (Algorithm 2, line 1): before training, after one
/// warm-up, `rounds` rounds of iterations at the spec's sample shares (none;
/// every rank pruning 1/8 to 7/8; the group's last rank migrating 1/8 to
/// 3/4) whose measurements fit Eq. 2 and 3's extraction and communication
/// costs. Every writable global is restored afterwards, so that training
/// starts where it would have. Collective; false after a message.
bool runPretest(ExecutionEngine &engine, const EntrySignature &signature,
                StringRef entry, int64_t rounds, hrt_comm group,
                const std::vector<WritableGlobal> &globals, bool printer,
                const hetero::DeviceMemory &memory) {
  std::vector<std::vector<char>> saved;
  std::vector<char *> addresses;
  for (const WritableGlobal &global : globals) {
    llvm::Expected<void *> address = engine.lookup(global.name);
    if (!address) {
      llvm::errs() << "hetero-run: --prune pretest=: cannot find @"
                   << global.name << " in the compiled program: "
                   << llvm::toString(address.takeError()) << "\n";
      return false;
    }
    addresses.push_back(static_cast<char *>(*address));
    saved.emplace_back(addresses.back(), addresses.back() + global.bytes);
  }
  int size = 1;
  hrt_comm_size(group, &size);
  struct Share {
    double prune, migrate;
  };
  static constexpr Share kShares[] = {
      {0, 0},     {0.125, 0}, {0.25, 0}, {0.5, 0}, {0.75, 0},
      {0.875, 0}, {0, 0.125}, {0, 0.25}, {0, 0.5}, {0, 0.75}};
  auto fail = [](llvm::Twine what) {
    llvm::errs() << "hetero-run: --prune pretest=: " << what << "\n";
    return false;
  };
  int64_t count = 0;
  for (int64_t round = -1; round < rounds; ++round) {
    // Round -1 warms up: first touches would pass for extraction. (On a
    // GPU the globals' device copies are made then, from the saved values.)
    for (const Share &share : kShares) {
      if (hrt_resize_begin_iteration(0) != HRT_SUCCESS ||
          (round >= 0 &&
           hrt_resize_pretest(share.migrate > 0 ? size - 1 : -1, share.prune,
                              share.migrate) != HRT_SUCCESS))
        return fail(hrt_last_error());
      if (llvm::Expected<std::string> printed =
              invoke(engine, signature, 0, entry);
          !printed)
        return fail(llvm::toString(printed.takeError()));
      if (round < 0)
        break;
      int changed = 0;
      if (hrt_resize_end_iteration(nullptr, nullptr, 0, &changed) !=
          HRT_SUCCESS)
        return fail(hrt_last_error());
      ++count;
    }
  }
  for (size_t i = 0; i < globals.size(); ++i)
    std::copy(saved[i].begin(), saved[i].end(), addresses[i]);
  memory.toDevice();
  double extract = 0, communicate = 0;
  if (hrt_resize_end_pretest(0.5, &extract, &communicate) != HRT_SUCCESS)
    return fail(hrt_last_error());
  if (printer)
    std::printf("pre-test: %lld iterations; E(0.5) = %.3f ms, Comm(0.5) = "
                "%.3f ms\n",
                (long long)count, extract, communicate);
  return true;
}

/// Reads (--load) or writes (--save) the parameters this rank owns: on the
/// step, the rank of replica 0 of each stage writes that stage's; on any
/// other entry, rank 0 writes all. Every rank reads all. A sharded
/// parameter is gathered over `shardGroup` (the ranks of one replica of a
/// stage, in shard order) for its writer, and each rank reads its slice.
bool exchangeParameters(ExecutionEngine &engine, const PipelineFacts &facts,
                        const std::string &directory, bool save, int rank,
                        bool isStep, hrt_comm shardGroup) {
  if (save) {
    if (std::error_code error = llvm::sys::fs::create_directories(directory)) {
      llvm::errs() << "hetero-run: cannot create " << directory << ": "
                   << error.message() << "\n";
      return false;
    }
  }
  for (const PipelineFacts::Parameter &param : facts.params) {
    bool owner = isStep ? (rank % facts.perStage() == 0 &&
                           rank / facts.perStage() == param.pipelineRank)
                        : rank == 0;
    bool sharded = param.shardDim >= 0;
    if (save && !owner && !sharded)
      continue;
    llvm::Expected<void *> address = engine.lookup(param.global);
    if (!address) {
      llvm::errs() << "hetero-run: cannot find parameter @" << param.global
                   << " in the compiled program: "
                   << llvm::toString(address.takeError()) << "\n";
      return false;
    }
    llvm::SmallString<256> path(directory);
    llvm::sys::path::append(path, param.global + ".npy");
    float *data = static_cast<float *>(*address);
    std::string problem;
    if (!sharded) {
      problem = save ? hetero::npy::write(path.str().str(), param.shape, data)
                     : hetero::npy::read(path.str().str(), param.shape, data);
    } else {
      hetero::ShardLayout layout(param.shape, param.shardDim, facts.shards);
      std::vector<float> whole;
      if (save) {
        // Every rank of the group sends its slice; the writer joins them.
        std::string gathered =
            hetero::gatherShards(data, layout, shardGroup, whole);
        if (!gathered.empty()) {
          llvm::errs() << "hetero-run: --save: " << gathered << "\n";
          return false;
        }
        if (owner)
          problem =
              hetero::npy::write(path.str().str(), param.shape, whole.data());
      } else {
        whole.resize(layout.sliceElements() * size_t(facts.shards));
        problem =
            hetero::npy::read(path.str().str(), param.shape, whole.data());
        if (problem.empty())
          hetero::sliceShard(whole, layout, rank % facts.shards, data);
      }
    }
    if (!problem.empty()) {
      llvm::errs() << "hetero-run: " << (save ? "--save" : "--load") << ": "
                   << problem << "\n";
      return false;
    }
  }
  return true;
}

/// After a run with dynamic sync groups (hetero.group_sync, policy =
/// dynamic): the groups of all workers, their mean size, and the
/// coordinator's enforced and ignored validations. Collective.
bool printSyncGroups(hrt_comm world, bool printer,
                     const hrt_sync_stats &stats) {
  int64_t totals[2] = {stats.groups, stats.members};
  if (hrt_all_reduce(totals, totals, 2, HRT_INT64, HRT_SUM, world) !=
      HRT_SUCCESS) {
    llvm::errs() << "hetero-run: " << hrt_last_error() << "\n";
    return false;
  }
  if (printer) {
    std::printf("sync groups: %lld, mean size: %.3f, enforced: %ld, "
                "ignored: %ld\n",
                (long long)totals[0],
                totals[0] ? double(totals[1]) / double(totals[0]) : 0.0,
                stats.enforced, stats.ignored);
    std::fflush(stdout);
  }
  return true;
}

/// --blas-profile: writes this rank's products (FILE, or FILE.<rank> in a
/// job of several ranks) and prints their share of the iterations' `seconds`
/// and their rate.
static bool writeBlasProfile(const std::string &file, int rank, hrt_comm world,
                             double seconds) {
  hrt_blas_profile(0);
  int ranks = 1;
  hrt_comm_size(world, &ranks);
  std::string path = ranks > 1 ? file + "." + std::to_string(rank) : file;
  long long calls = 0;
  double flops = 0, productSeconds = 0;
  hrt_blas_profile_totals(&calls, &flops, &productSeconds);
  if (hrt_blas_profile_write(path.c_str()) != 0) {
    llvm::errs() << "hetero-run: --blas-profile: cannot write " << path << ": "
                 << std::strerror(errno) << "\n";
    return false;
  }
  if (rank == 0) {
    std::printf("products: %lld calls, %.3f GFLOP in %.3f s of %.3f s "
                "(%.1f%%): %.1f GFLOP/s\n",
                calls, flops * 1e-9, productSeconds, seconds,
                seconds > 0 ? 100.0 * productSeconds / seconds : 0.0,
                productSeconds > 0 ? flops * 1e-9 / productSeconds : 0.0);
    std::fflush(stdout);
  }
  return true;
}

int run() {
  hrt_backend kind;
  if (backend == "mpi")
    kind = HRT_BACKEND_MPI;
  else if (backend == "nccl")
    kind = HRT_BACKEND_NCCL;
  else {
    llvm::errs() << "hetero-run: unknown backend '" << backend
                 << "', expected mpi or nccl\n";
    return 1;
  }
  bool onGpu = device == "gpu";
  if (device != "cpu" && !onGpu) {
    llvm::errs() << "hetero-run: unknown device '" << device
                 << "', expected cpu or gpu\n";
    return 1;
  }
  if (kind == HRT_BACKEND_NCCL && !onGpu) {
    llvm::errs() << "hetero-run: --backend nccl moves device buffers, but "
                    "the step runs on the CPU (--device cpu); use --device "
                    "gpu, or --backend mpi for a CPU step\n";
    return 1;
  }
  if (onGpu && !hetero::DeviceMemory::available()) {
    llvm::errs() << "hetero-run: --device gpu: this hetero-run was built "
                    "without CUDA (HETERO_ENABLE_CUDA is off)\n";
    return 1;
  }
  std::optional<hetero::CpuMatmul> cpuMatmul;
  if (!matmul.empty()) {
    if (matmul == "blas") {
      cpuMatmul = hetero::CpuMatmul::blas;
    } else if (matmul == "loops") {
      cpuMatmul = hetero::CpuMatmul::loops;
    } else {
      llvm::errs() << "hetero-run: unknown --matmul '" << matmul
                   << "', expected blas or loops\n";
      return 1;
    }
    if (onGpu) {
      llvm::errs() << "hetero-run: --matmul chooses how the CPU step's "
                      "products run; a GPU step (--device gpu) runs them "
                      "with cuBLAS\n";
      return 1;
    }
  }
  if (residualsOption != "recompute" && residualsOption != "save") {
    llvm::errs() << "hetero-run: unknown --residuals '" << residualsOption
                 << "', expected recompute or save\n";
    return 1;
  }
  if (optLevel > 3) {
    llvm::errs() << "hetero-run: -O" << optLevel
                 << ": expected an optimisation level from 0 to 3\n";
    return 1;
  }
  int threads = threadsOption();
  if (threads < 1) {
    llvm::errs() << "hetero-run: --threads " << threads
                 << ": expected at least 1 thread per rank\n";
    return 1;
  }
  if (hrt_init(kind, nullptr, nullptr) != HRT_SUCCESS) {
    llvm::errs() << "hetero-run: " << hrt_last_error() << "\n";
    return 1;
  }
  hrt_blas_set_threads(threads);
  hrt_comm world;
  int rank = 0;
  hrt_comm_world(&world);
  hrt_comm_rank(world, &rank);
  bool printer = allRanks || rank == 0;

  DialectRegistry registry;
  hetero::registerToolDialects(registry);
  MLIRContext context(registry);

  std::string errorMessage;
  auto file = openInputFile(inputFile, &errorMessage);
  if (!file) {
    llvm::errs() << "hetero-run: " << errorMessage << "\n";
    return 1;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  // Diagnostics as file:line:col with the offending source line.
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;
  hetero::CheckpointConfig checkpointConfig;
  if (!checkpointOption.empty()) {
    if (std::string problem =
            hetero::parseCheckpointConfig(checkpointOption, checkpointConfig);
        !problem.empty()) {
      llvm::errs() << "hetero-run: --checkpoint: " << problem << "\n";
      return 1;
    }
  }
  std::optional<PruneConfig> prune;
  if (!pruneOption.empty()) {
    prune.emplace();
    if (std::string problem = parsePruneConfig(pruneOption, *prune);
        !problem.empty()) {
      llvm::errs() << "hetero-run: --prune: " << problem << "\n";
      return 1;
    }
    bool resized = false, migrating = false, observed = false;
    module->walk([&](hetero::PrunePlanOp) { resized = true; });
    module->walk([&](hetero::MigrationPlanOp) { migrating = true; });
    module->walk([&](hetero::ObserveWeightOp) { observed = true; });
    if (!resized) {
      llvm::errs() << "hetero-run: --prune: the module has no "
                      "hetero.prune_plan; expand its prunable matmuls with "
                      "hetero-resize first\n";
      return 1;
    }
    if (prune->priority && !observed) {
      llvm::errs() << "hetero-run: --prune: order=priority: the module "
                      "shows the runtime no weights; expand it with "
                      "hetero-resize{priority=true}\n";
      return 1;
    }
    if ((prune->migrates || prune->policy != HRT_RESIZE_PRUNE) && !migrating) {
      llvm::errs() << "hetero-run: --prune: the module has no "
                      "hetero.migration_plan; partition it with "
                      "hetero-partition-tp{migration=true} to migrate\n";
      return 1;
    }
  }
  FailureOr<std::optional<PipelineFacts>> pipeline =
      preparePipeline(*module, checkpointConfig);
  if (failed(pipeline))
    return 1;
  if (!*pipeline && (!saveDirectory.empty() || !loadDirectory.empty())) {
    llvm::errs() << "hetero-run: --save and --load need a module with an "
                    "executable hetero.pipeline\n";
    return 1;
  }
  if (*pipeline && entry.getNumOccurrences() == 0)
    entry = (*pipeline)->name + "_step";
  // The online planner's group: the tensor-parallel ranks of one replica of
  // one stage; without a pipeline, every rank.
  hrt_comm resizeGroup = nullptr;
  if (prune && prune->needsGroup()) {
    int ranks = 1;
    hrt_comm_size(world, &ranks);
    int64_t shards = *pipeline ? (*pipeline)->shards : ranks;
    StringRef what = prune->target ? "target=" : "migrate=";
    if (shards < 2) {
      if (*pipeline)
        llvm::errs() << "hetero-run: --prune " << what << ": pipeline @"
                     << (*pipeline)->name
                     << " has no tensor-parallel shards to balance; expected "
                        "a grid with axis 2 (hetero-gen --tp)\n";
      else
        llvm::errs() << "hetero-run: --prune " << what
                     << ": a job of one rank has no other rank to balance "
                        "against; expected 2 or more\n";
      return 1;
    }
    // Group rank = shard index, the source hetero.migration_plan names.
    if (hrt_comm_split(world, int(rank / shards), int(rank % shards),
                       &resizeGroup) != HRT_SUCCESS) {
      llvm::errs() << "hetero-run: --prune: " << hrt_last_error() << "\n";
      return 1;
    }
  }
  bool configured =
      !prune || configureResize(*prune, resizeGroup, (unsigned long long)seed);
  if (!configured) {
    llvm::errs() << "hetero-run: --prune: " << hrt_last_error() << "\n";
    return 1;
  }
  // A step of the pipeline (the default one or a plan's) runs on the grid;
  // its reference runs anywhere.
  bool isStep = false;
  hetero::HeteroDialect &dialect = hetero::getHeteroDialect(&context);
  if (*pipeline)
    if (auto candidate = module->lookupSymbol<func::FuncOp>(entry))
      if (FlatSymbolRefAttr owner =
              dialect.getPipelineAttrHelper().getAttr(candidate))
        isStep = owner.getValue() == (*pipeline)->name &&
                 dialect.getGridAttrHelper().isAttrPresent(candidate);
  if (isStep) {
    int size = 0;
    hrt_comm_size(world, &size);
    if (size != (*pipeline)->devices) {
      // Every rank finds the mismatch; one says it, so that the message is
      // not interleaved with its copies on the job's shared stderr.
      if (rank == 0)
        llvm::errs() << "hetero-run: pipeline @" << (*pipeline)->name
                     << " runs on grid @" << (*pipeline)->gridName << " of "
                     << (*pipeline)->devices << " devices, but the job has "
                     << size << " ranks; run it with mpirun -np "
                     << (*pipeline)->devices << "\n";
      // Every rank found it: no rank aborts the job before rank 0 said it.
      hrt_barrier(world);
      return 1;
    }
  }
  auto function = module->lookupSymbol<func::FuncOp>(entry);
  if (!function || function.isDeclaration()) {
    llvm::errs() << "hetero-run: " << inputFile << " has no function @" << entry
                 << " to run (choose one with --entry)\n";
    return 1;
  }
  FailureOr<EntrySignature> signature = checkEntry(function);
  if (failed(signature))
    return 1;
  if (checkpointConfig.enabled && (!isStep || signature->arguments == 0)) {
    llvm::errs() << "hetero-run: --checkpoint checkpoints the step of an "
                    "executable hetero.pipeline, and @"
                 << entry << " is not one\n";
    return 1;
  }
  std::vector<std::vector<hetero::StateGlobal>> stateGlobals;
  if (checkpointConfig.enabled)
    stateGlobals = hetero::Checkpointing::collectStateGlobals(
        *module, (*pipeline)->stages);
  function->setAttr("llvm.emit_c_interface", UnitAttr::get(&context));
  // --adaptive: the plans of the entry's plan table (hetero-lower-pipeline
  // of a pipeline with a hetero.plan_set), by position.
  std::vector<hrt_plan> plans;
  std::vector<std::string> planSteps;
  int64_t stages = 0;
  if (adaptive && *pipeline && (*pipeline)->dynamicSync) {
    llvm::errs() << "hetero-run: --adaptive re-plans with a collective over "
                    "every rank after each iteration, which a replica "
                    "waiting in a dynamic sync group never joins; pipeline @"
                 << (*pipeline)->name
                 << " syncs with policy = dynamic, so run it without "
                    "--adaptive\n";
    return 1;
  }
  if (adaptive) {
    ArrayAttr table = dialect.getPlanTableAttrHelper().getAttr(function);
    IntegerAttr stagesAttr = dialect.getStagesAttrHelper().getAttr(function);
    if (!table || table.empty() || !stagesAttr) {
      llvm::errs() << "hetero-run: --adaptive needs an entry with a plan "
                      "table: a pipeline with a hetero.plan_set (for example "
                      "from hetero-opt --hetero-kfkb-schedule=group-sizes=1,"
                      "2,4); @"
                   << entry << " has none\n";
      return 1;
    }
    stages = stagesAttr.getInt();
    for (Attribute plan : table) {
      auto entryOf = dyn_cast<DictionaryAttr>(plan);
      auto step = entryOf ? entryOf.getAs<FlatSymbolRefAttr>("step")
                          : FlatSymbolRefAttr();
      auto candidate =
          step ? module->lookupSymbol<func::FuncOp>(step) : func::FuncOp();
      if (!candidate || !entryOf.getAs<IntegerAttr>("group_size") ||
          !entryOf.getAs<IntegerAttr>("microbatches")) {
        function.emitError()
            << "hetero-run: every entry of the plan table needs a step that "
               "the module defines, a group_size and a micro-batch count; "
               "got "
            << plan;
        return 1;
      }
      if (failed(checkEntry(candidate)))
        return 1;
      candidate->setAttr("llvm.emit_c_interface", UnitAttr::get(&context));
      planSteps.push_back(step.getValue().str());
      // A plan of M' micro-batches holds M / M' of the pipeline's in each,
      // run as `tasks` tasks of the stage functions (or of a variant of
      // larger micro-batches). Without a micro-batch size in samples, b
      // counts the pipeline's micro-batches.
      int64_t count = entryOf.getAs<IntegerAttr>("microbatches").getInt();
      int64_t factor = std::max<int64_t>(1, (*pipeline)->microbatches / count);
      auto tasksAttr = entryOf.getAs<IntegerAttr>("tasks");
      int64_t tasks = tasksAttr ? tasksAttr.getInt() : factor;
      auto size = entryOf.getAs<IntegerAttr>("microbatch_size");
      int64_t samples = size && tasks > 0 && size.getInt() % tasks == 0
                            ? size.getInt()
                            : factor;
      plans.push_back({int(entryOf.getAs<IntegerAttr>("group_size").getInt()),
                       int(samples), int(count),
                       int(std::max<int64_t>(1, tasks))});
    }
    if (replanEvery < 1) {
      llvm::errs() << "hetero-run: --replan-every must be at least 1\n";
      return 1;
    }
  }
  FailureOr<EntrySignature> finalSignature;
  if (!then.empty()) {
    auto final = module->lookupSymbol<func::FuncOp>(then);
    if (!final || final.isDeclaration()) {
      llvm::errs() << "hetero-run: " << inputFile << " has no function @"
                   << then << " to run after the iterations\n";
      return 1;
    }
    finalSignature = checkEntry(final);
    if (failed(finalSignature))
      return 1;
    if (finalSignature->arguments != 0 ||
        finalSignature->result == ResultKind::None) {
      final.emitError() << "hetero-run: --then needs a function () -> "
                           "scalar";
      return 1;
    }
    final->setAttr("llvm.emit_c_interface", UnitAttr::get(&context));
  }

  // SEMI's pre-test undoes what its iterations write.
  std::vector<WritableGlobal> pretestGlobals;
  if (prune && prune->pretest)
    pretestGlobals = collectWritableGlobals(*module);
  // Sharded parameters take their slices of the initial values before
  // --load may replace them.
  constexpr llvm::StringLiteral kShardInit = "__hetero_shard_init";
  auto shardInit = module->lookupSymbol<func::FuncOp>(kShardInit);
  if (shardInit)
    shardInit->setAttr("llvm.emit_c_interface", UnitAttr::get(&context));

  PassManager pm(&context);
  if (onGpu) {
    hetero::GpuPipelineOptions gpuOptions;
    gpuOptions.deviceCollectives = kind == HRT_BACKEND_NCCL;
    gpuOptions.blockingCollectives = blockingCollectives;
    if (failed(hetero::buildLowerToGpuPipeline(pm, gpuOptions)))
      return 1;
  } else {
    hetero::CpuPipelineOptions cpuOptions;
    cpuOptions.blockingCollectives = blockingCollectives;
    cpuOptions.reassociateReductions = reassociateReductions;
    cpuOptions.gpuKernelsOnHost = gpuKernelsOnHost;
    if (!matmul.empty())
      cpuOptions.matmul = *cpuMatmul;
    if (failed(hetero::buildLowerToCpuPipeline(pm, cpuOptions)))
      return 1;
  }
  if (failed(pm.run(*module)))
    return 1;
  if (!dumpLowered.empty()) {
    auto output = openOutputFile(dumpLowered, &errorMessage);
    if (!output) {
      llvm::errs() << "hetero-run: " << errorMessage << "\n";
      return 1;
    }
    module->print(output->os());
    output->keep();
  }

  // The step is compiled for this host's CPU and its vector extensions
  // (HostCompiler.h).
  llvm::Expected<hetero::HostCompiler> host =
      hetero::makeHostCompiler(optLevel);
  if (!host) {
    llvm::errs() << "hetero-run: cannot compile for this host's CPU: "
                 << llvm::toString(host.takeError()) << "\n";
    return 1;
  }
  ExecutionEngineOptions options;
  options.transformer = host->optimize;
  options.jitCodeGenOptLevel = host->codeGenLevel;
  llvm::SmallVector<llvm::StringRef> libraries = {HETERO_C_RUNNER_UTILS};
  libraries.append(host->libraries.begin(), host->libraries.end());
  options.sharedLibPaths = libraries;
  // The device copies of the globals, which --load and --save move; the
  // library is loaded into the process, where the program finds it.
  hetero::DeviceMemory memory;
  if (onGpu && !memory.bind())
    return 1;
  auto engine =
      ExecutionEngine::create(*module, options, std::move(host->targetMachine));
  if (!engine) {
    llvm::errs() << "hetero-run: cannot compile " << inputFile << ": "
                 << llvm::toString(engine.takeError()) << "\n";
    return 1;
  }
  // Loads the kernels (the module's constructors).
  if (onGpu)
    (*engine)->initialize();
  if (shardInit) {
    if (llvm::Error error = (*engine)->invoke(kShardInit)) {
      llvm::errs() << "hetero-run: " << kShardInit << ": "
                   << llvm::toString(std::move(error)) << "\n";
      return 1;
    }
  }
  // The ranks of one replica of a stage, in shard order: they hold the
  // slices of a sharded parameter, which --load and --save exchange.
  hrt_comm shardGroup = nullptr;
  // --save, --load and disk checkpoints gather and slice sharded globals.
  bool wholeFiles =
      !loadDirectory.empty() || !saveDirectory.empty() ||
      (checkpointConfig.enabled && !checkpointConfig.disk.empty());
  if (wholeFiles && *pipeline &&
      llvm::any_of((*pipeline)->params,
                   [](const PipelineFacts::Parameter &param) {
                     return param.shardDim >= 0;
                   })) {
    int64_t shards = (*pipeline)->shards;
    if (hrt_comm_split(world, int(rank / shards), int(rank % shards),
                       &shardGroup) != HRT_SUCCESS) {
      llvm::errs() << "hetero-run: " << hrt_last_error() << "\n";
      return 1;
    }
  }
  hrt_planner planner = nullptr;
  std::optional<hetero::AdaptivePlanning> planning;
  if (adaptive) {
    if (hrt_planner_create_plans(int(stages), plans.data(), int(plans.size()),
                                 int(replanEvery), int(replanEvery),
                                 &planner) != HRT_SUCCESS ||
        hrt_planner_set_min_gain(planner, replanMinGain) != HRT_SUCCESS ||
        hrt_planner_set_shared_medium(planner, sharedLink) != HRT_SUCCESS) {
      llvm::errs() << "hetero-run: " << hrt_last_error() << "\n";
      return 1;
    }
    planning.emplace(planner, world, rank, (*pipeline)->perStage(),
                     int(replanEvery), plans);
    if (!planning->start())
      return 1;
  }
  if (!loadDirectory.empty()) {
    if (!exchangeParameters(**engine, **pipeline, loadDirectory,
                            /*save=*/false, rank, isStep, shardGroup))
      return 1;
    memory.toDevice();
  }
  if (!corpus.empty() && hrt_data_open(corpus.c_str()) != HRT_SUCCESS) {
    llvm::errs() << "hetero-run: --corpus: " << hrt_last_error() << "\n";
    return 1;
  }
  if (hrt_sample_begin(prompt.c_str(), temperature,
                       static_cast<unsigned long long>(seed)) != HRT_SUCCESS) {
    llvm::errs() << "hetero-run: --prompt/--temperature: " << hrt_last_error()
                 << "\n";
    return 1;
  }
  std::optional<hetero::Checkpointing> checkpointing;
  int64_t firstStep = 0;
  if (checkpointConfig.enabled) {
    // The program and the job: a checkpoint of another is never restored.
    llvm::StringRef text =
        sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())->getBuffer();
    uint64_t fingerprint =
        llvm::xxh3_64bits(text) ^ uint64_t((*pipeline)->devices) * 0x9E37;
    llvm::SmallString<256> agent(
        llvm::sys::fs::getMainExecutable(nullptr, nullptr));
    llvm::sys::path::remove_filename(agent);
    llvm::sys::path::append(agent, "hetero-ckpt-agent");
    checkpointing.emplace(
        checkpointConfig, world, rank, (*pipeline)->layout(), shardGroup,
        (*pipeline)->dynamicSync, std::move(stateGlobals), fingerprint,
        agent.str().str(), onGpu ? hetero::DeviceMemory::stateCopy() : nullptr);
    if (!checkpointing->start(**engine, printer, firstStep))
      return 1;
  }
  std::optional<hetero::ProfiledTimeline> profiled;
  constexpr int64_t kProfiledIterations = 20;
  if (!profileTimeline.empty()) {
    if (!isStep || iterations < 2) {
      llvm::errs() << "hetero-run: --profile-timeline measures a pipeline's "
                      "step over at least 2 iterations (the first warms up)\n";
      return 1;
    }
    profiled.emplace(world, (*pipeline)->layout());
  }
  auto profiling = [&](int64_t i) {
    return profiled && i > firstStep && i <= firstStep + kProfiledIterations;
  };
  bool timeline = !timelineDirectory.empty();
  if (timeline && rank == 0 &&
      !hetero::prepareTimelineDirectory(timelineDirectory))
    return 1;
  if (!blasProfile.empty() && (onGpu || iterations - firstStep < 2)) {
    llvm::errs() << "hetero-run: --blas-profile times a CPU step's products "
                    "over at least 2 iterations (the first warms up)\n";
    return 1;
  }
  if (measureThroughput && (!isStep || iterations < 2)) {
    llvm::errs() << "hetero-run: --throughput times a pipeline's step over "
                    "at least 2 iterations (the first warms up)\n";
    return 1;
  }
  if (prune && prune->pretest &&
      !runPretest(**engine, *signature, entry, prune->pretest, resizeGroup,
                  pretestGlobals, printer, memory))
    return 1;
  // No collective over every rank runs between two steps: a replica that
  // waits in a dynamic sync group (docs/sync-groups.md) for others would
  // never join it. So each rank times its own iterations.
  double timedFrom = 0.0;
  for (int64_t i = firstStep; i < iterations; ++i) {
    if (i == firstStep + 1) {
      timedFrom = hrt_wtime();
      if (!blasProfile.empty())
        hrt_blas_profile(1);
    }
    // --timeline keeps the spans of the last iteration only.
    if (timeline || profiling(i))
      hrt_timeline_begin_iteration();
    if (hrt_resize_begin_iteration(i) != HRT_SUCCESS) {
      llvm::errs() << "hetero-run: --prune: " << hrt_last_error() << "\n";
      return 1;
    }
    std::string name = entry;
    if (planner) {
      name = planSteps[size_t(hrt_planner_plan_index(planner))];
      hrt_task_times_reset();
    }
    double start = hrt_wtime();
    llvm::Expected<std::string> printed = invoke(**engine, *signature, i, name);
    if (!printed) {
      llvm::errs() << "hetero-run: iteration " << i << " on rank " << rank
                   << ": " << llvm::toString(printed.takeError()) << "\n";
      return 1;
    }
    double milliseconds = (hrt_wtime() - start) * 1e3;
    std::string plan;
    int switched = 0;
    if (planning) {
      plan = planning->describe();
      // The first iteration warms up (first touches of every buffer, lazy
      // initialisation): its times would mislead the planner.
      if (!planning->afterIteration(/*warmup=*/i == 0 && iterations > 1,
                                    switched))
        return 1;
    }
    // The online resize planner reads each iteration but the warm-up.
    std::vector<double> ratios, migrated;
    int resized = 0;
    if (prune && prune->target && !(i == firstStep && iterations > 1)) {
      int groupSize = 1;
      hrt_comm_size(resizeGroup, &groupSize);
      ratios.resize(size_t(groupSize));
      migrated.resize(size_t(groupSize));
      if (hrt_resize_end_iteration(ratios.data(), migrated.data(), groupSize,
                                   &resized) != HRT_SUCCESS) {
        llvm::errs() << "hetero-run: --prune: " << hrt_last_error() << "\n";
        return 1;
      }
    }
    if (printer) {
      std::printf("%siteration %lld: %s%s%.3f ms%s\n",
                  allRanks ? ("rank " + std::to_string(rank) + ": ").c_str()
                           : "",
                  (long long)i, printed->c_str(), printed->empty() ? "" : ", ",
                  milliseconds, plan.c_str());
      if (planning && replanVerbose && planning->replanned())
        std::printf("predicted after iteration %lld: %s\n", (long long)i,
                    planning->predictions().c_str());
      if (switched)
        std::printf("re-planned after iteration %lld: %s\n", (long long)i,
                    planning->describe().substr(2).c_str());
      if (resized) {
        // ZERO prints the pruned shares, MIG the migrated ones, SEMI both.
        std::printf("re-sized after iteration %lld:", (long long)i);
        if (prune->policy != HRT_RESIZE_MIGRATE) {
          std::printf(" alpha =");
          for (double ratio : ratios)
            std::printf(" %.4f", ratio);
        }
        if (prune->policy != HRT_RESIZE_PRUNE) {
          std::printf("%s migrated =",
                      prune->policy == HRT_RESIZE_SEMI ? ";" : "");
          for (double ratio : migrated)
            std::printf(" %.4f", ratio);
        }
        std::printf("\n");
      }
      std::fflush(stdout);
    }
    if (checkpointing && !checkpointing->afterStep(**engine, i))
      return 1;
    if (profiling(i) && !profiled->add())
      return 1;
  }
  if (profiled && !profiled->write(profileTimeline))
    return 1;
  if (!blasProfile.empty() &&
      !writeBlasProfile(blasProfile, rank, world, hrt_wtime() - timedFrom))
    return 1;
  // Every worker departs from its sync groups before the next collective,
  // so that none waits in an enforced sync for one that has finished.
  double timedUntil = hrt_wtime();
  hrt_sync_stats syncStats{};
  bool synced = hrt_mlir_sync_stats(&syncStats);
  hrt_mlir_sync_finish();
  if (timeline && iterations > 0 &&
      !hetero::writeTimeline(world, timelineDirectory, iterations - 1,
                             isStep ? (*pipeline)->layout()
                                    : hetero::RankLayout()))
    return 1;
  if (planner)
    hrt_planner_destroy(planner);
  if (measureThroughput) {
    double seconds = timedUntil - timedFrom;
    if (hrt_all_reduce(&seconds, &seconds, 1, HRT_FLOAT64, HRT_MAX, world) !=
        HRT_SUCCESS) {
      llvm::errs() << "hetero-run: " << hrt_last_error() << "\n";
      return 1;
    }
    double microbatches =
        double((*pipeline)->replicas * (*pipeline)->microbatches *
               (iterations - firstStep - 1));
    if (printer) {
      std::printf("throughput: %.6g\n", microbatches / seconds);
      std::fflush(stdout);
    }
  }
  if (prune && printer) {
    hrt_resize_stats resized{};
    hrt_resize_get_stats(&resized);
    std::printf("%scolumns: kept %lld of %lld, migrated %lld\n",
                allRanks ? ("rank " + std::to_string(rank) + ": ").c_str() : "",
                resized.columns_kept, resized.columns_asked,
                resized.columns_migrated);
    if (prune->priority)
      std::printf("%spriority: %lld rankings of a layer's columns\n",
                  allRanks ? ("rank " + std::to_string(rank) + ": ").c_str()
                           : "",
                  resized.rankings);
    std::fflush(stdout);
  }
  if (resizeGroup)
    hrt_comm_free(resizeGroup);
  if (synced && !printSyncGroups(world, printer, syncStats))
    return 1;
  if (checkpointing && !checkpointing->finish(printer))
    return 1;
  // Text that hetero.sample_next generated, stream by stream.
  for (long long stream = 0; printer && stream < hrt_sample_streams();
       ++stream) {
    std::string text = hrt_sample_text(stream);
    std::printf("sample %lld (%zu characters):\n%s\n", stream, text.size(),
                text.c_str());
    std::fflush(stdout);
  }
  if (!saveDirectory.empty()) {
    memory.toHost();
    if (!exchangeParameters(**engine, **pipeline, saveDirectory,
                            /*save=*/true, rank, isStep, shardGroup))
      return 1;
  }
  if (!then.empty()) {
    llvm::Expected<std::string> printed =
        invoke(**engine, *finalSignature, /*iteration=*/0, then);
    if (!printed) {
      llvm::errs() << "hetero-run: @" << then << " on rank " << rank << ": "
                   << llvm::toString(printed.takeError()) << "\n";
      return 1;
    }
    if (printer) {
      // "loss 1.5" / "result 3": print the bare value under the name.
      std::string value = printed->substr(printed->find(' ') + 1);
      std::printf("%s: %s\n", then.c_str(), value.c_str());
      std::fflush(stdout);
    }
  }
  memory.release();
  return 0;
}

} // namespace

/// The compiled step allocates its temporaries with malloc and frees them
/// before it returns. glibc serves blocks above a threshold with mmap and
/// gives them back on free, and trims the heap's top, so that every step
/// would fault in (and the kernel zero) fresh pages for the same buffers.
/// With the threshold at its largest (32 MiB) and no trimming, the second
/// step reuses the first step's memory.
static void keepFreedMemory() {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, INT_MAX);
#endif
}

int main(int argc, char **argv) {
  keepFreedMemory();
  llvm::InitLLVM init(argc, argv);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  hetero::registerAllPasses();
  threadsOption();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "hetero-run: compile and run a hetero program\n");
  int code = run();
  if (hrt_initialized()) {
    if (code != 0)
      hrt_abort(code); // the other ranks may wait for this one
    hrt_finalize();
  }
  return code;
}
