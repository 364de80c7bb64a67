//===- Checkpointing.cpp - hetero-run --checkpoint ------------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "Checkpointing.h"
#include "Shards.h"

#include "hetero/Checkpoint/Checksum.h"
#include "hetero/Passes/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <fstream>
#include <map>
#include <unistd.h>

using namespace mlir;

namespace hetero {
namespace {

/// A whole number >= 1 from `text`.
bool readCount(llvm::StringRef text, int64_t &value) {
  return !text.getAsInteger(10, value) && value >= 1;
}

void say(bool printer, const std::string &line) {
  if (!printer)
    return;
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

/// The bytes of a state global's array.
size_t bytesOf(const StateGlobal &global) {
  size_t bytes = global.dtype == npy::Dtype::Float32 ? 4 : 8;
  for (int64_t extent : global.shape)
    bytes *= size_t(extent);
  return bytes;
}

std::string bytesText(double bytes) {
  char text[32];
  if (bytes >= 1 << 20)
    std::snprintf(text, sizeof(text), "%.2f MiB", bytes / (1 << 20));
  else if (bytes >= 1 << 10)
    std::snprintf(text, sizeof(text), "%.2f KiB", bytes / (1 << 10));
  else
    std::snprintf(text, sizeof(text), "%.0f B", bytes);
  return text;
}

} // namespace

std::string parseCheckpointConfig(const std::string &text,
                                  CheckpointConfig &config) {
  config.enabled = true;
  llvm::SmallVector<llvm::StringRef> items;
  llvm::StringRef(text).split(items, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef item : items) {
    auto [key, value] = item.split('=');
    key = key.trim();
    value = value.trim();
    if (value.empty())
      return "'" + item.str() + "' is not key=value";
    if (key == "replicas" || key == "every" || key == "disk_every") {
      int64_t &target = key == "replicas" ? config.replicas
                        : key == "every"  ? config.every
                                          : config.diskEvery;
      if (!readCount(value, target))
        return key.str() + " must be a whole number >= 1, got '" + value.str() +
               "'";
    } else if (key == "placement") {
      if (value != "group" && value != "ring" && value != "mixed")
        return "placement must be group, ring or mixed, got '" + value.str() +
               "'";
      config.placement = value.str();
    } else if (key == "interleaving") {
      if (value != "gemini" && value != "naive" && value != "blocking")
        return "interleaving must be gemini, naive or blocking, got '" +
               value.str() + "'";
      config.interleaving = value.str();
    } else if (key == "bandwidth_mbps" || key == "alpha_ms" || key == "mu" ||
               key == "buffer_mb") {
      double number;
      if (value.getAsDouble(number) || !(number >= 0) ||
          (key != "alpha_ms" && number == 0) || (key == "mu" && number > 1))
        return key.str() + " must be a number " +
               (key == "alpha_ms" ? ">= 0"
                : key == "mu"     ? "in (0, 1]"
                                  : "> 0") +
               ", got '" + value.str() + "'";
      (key == "bandwidth_mbps" ? config.bandwidthMbps
       : key == "alpha_ms"     ? config.alphaMs
       : key == "mu"           ? config.mu
                               : config.bufferMb) = number;
    } else if (key == "parts") {
      if (!readCount(value, config.parts))
        return "parts must be a whole number >= 1, got '" + value.str() + "'";
    } else if (key == "costs") {
      config.costs = value.str();
    } else if (key == "profile") {
      config.profile = value.str();
    } else if (key == "agents") {
      config.agents = value.str();
    } else if (key == "disk") {
      config.disk = value.str();
    } else {
      return "unknown key '" + key.str() +
             "', expected replicas, every, placement, costs, profile, "
             "interleaving, bandwidth_mbps, alpha_ms, mu, buffer_mb, parts, "
             "agents, disk or disk_every";
    }
  }
  if (!config.costs.empty() && !config.profile.empty())
    return "give costs= or profile=, not both";
  if (config.disk.empty() != (config.diskEvery == 0))
    return "disk=DIR and disk_every=K go together";
  if (config.agents.empty()) {
    const char *user = std::getenv("USER");
    config.agents = std::string("/tmp/hetero-ckpt-") +
                    (user && *user ? user : std::to_string(getuid()));
  }
  return "";
}

LogicalResult applyCheckpointClause(PipelineOp pipeline,
                                    const CheckpointConfig &config) {
  MLIRContext *context = pipeline.getContext();
  std::optional<ReplicaPlacement> placement;
  if (!config.placement.empty())
    placement = symbolizeReplicaPlacement(config.placement);
  if (CheckpointAttr existing = pipeline.getCheckpointAttr()) {
    auto disagrees = [&](llvm::StringRef key, std::string value) {
      llvm::errs() << "hetero-run: --checkpoint " << key << "=" << value
                   << " disagrees with pipeline @" << pipeline.getSymName()
                   << "'s checkpoint " << existing << "\n";
      return failure();
    };
    if (config.replicas && config.replicas != existing.getReplicas())
      return disagrees("replicas", std::to_string(config.replicas));
    if (config.every && config.every != existing.getEvery())
      return disagrees("every", std::to_string(config.every));
    if (placement && *placement != existing.getPlacement())
      return disagrees("placement", config.placement);
    return success();
  }
  pipeline.setCheckpointAttr(
      CheckpointAttr::get(context, config.replicas ? config.replicas : 2,
                          placement.value_or(ReplicaPlacement::mixed),
                          config.every ? config.every : 1));
  // The module: the clause is checked against the pipeline's grid there.
  return verify(pipeline->getParentOp());
}

LogicalResult placeCheckpointChunks(ModuleOp module,
                                    const CheckpointConfig &config) {
  bool unplaced = false;
  module.walk([&](CheckpointOp checkpoint) {
    bool committed = false;
    for (Operation *op = checkpoint->getNextNode(); op && !committed;
         op = op->getNextNode())
      committed = isa<CkptCommitOp>(op);
    unplaced |= !committed;
  });
  if (!unplaced)
    return success();
  if (config.costs.empty() && config.profile.empty() &&
      config.interleaving != "blocking") {
    llvm::errs() << "hetero-run: --checkpoint places its chunks into the "
                    "step's idle network spans, so it needs the step's "
                    "timeline: costs=<pipeline profile.json>, "
                    "profile=<timeline.json> (from hetero-run --timeline), or "
                    "interleaving=blocking\n";
    return failure();
  }
  HeteroInterleaveCheckpointsOptions options;
  options.costs = config.costs;
  options.profile = config.profile;
  options.interleaving = config.interleaving;
  if (config.bandwidthMbps > 0)
    options.bandwidthBytesPerMs = config.bandwidthMbps * 1048576.0 / 1000.0;
  if (config.alphaMs >= 0)
    options.alphaMs = config.alphaMs;
  if (config.mu > 0)
    options.mu = config.mu;
  if (config.bufferMb > 0)
    options.bufferBytes = int64_t(config.bufferMb * 1048576.0);
  if (config.parts > 0)
    options.parts = config.parts;
  PassManager pm(module.getContext());
  pm.addPass(createHeteroInterleaveCheckpoints(options));
  return pm.run(module);
}

//===----------------------------------------------------------------------===//
// Checkpointing
//===----------------------------------------------------------------------===//

Checkpointing::Checkpointing(const CheckpointConfig &config, hrt_comm world,
                             int rank, RankLayout layout, hrt_comm shardGroup,
                             bool dynamicSync,
                             std::vector<std::vector<StateGlobal>> stageGlobals,
                             uint64_t fingerprint, std::string agentProgram,
                             void (*copyState)(void *, long long, int))
    : config(config), world(world), rank(rank), layout(layout),
      shardGroup(shardGroup), dynamicSync(dynamicSync),
      stageGlobals(std::move(stageGlobals)), fingerprint(fingerprint),
      agentProgram(std::move(agentProgram)), copyState(copyState) {}

std::vector<std::vector<StateGlobal>>
Checkpointing::collectStateGlobals(ModuleOp module, int64_t stages) {
  std::vector<std::vector<StateGlobal>> globals(stages);
  HeteroDialect &dialect = getHeteroDialect(module.getContext());
  for (auto function : module.getOps<func::FuncOp>()) {
    IntegerAttr stage = dialect.getStageAttrHelper().getAttr(function);
    if (!stage || function.isExternal() || stage.getInt() >= stages)
      continue;
    for (auto checkpoint : function.getBody().getOps<CheckpointOp>()) {
      std::vector<StateGlobal> &list = globals[stage.getInt()];
      list.clear();
      for (Value tensor : checkpoint.getTensors()) {
        auto toTensor = tensor.getDefiningOp<bufferization::ToTensorOp>();
        auto get =
            toTensor ? toTensor.getBuffer().getDefiningOp<memref::GetGlobalOp>()
                     : memref::GetGlobalOp();
        auto global =
            get ? module.lookupSymbol<memref::GlobalOp>(get.getNameAttr())
                : memref::GlobalOp();
        if (!global)
          continue;
        SymbolTable::setSymbolVisibility(global,
                                         SymbolTable::Visibility::Public);
        MemRefType type = global.getType();
        IntegerAttr dim = dialect.getShardDimAttrHelper().getAttr(global);
        list.push_back({global.getSymName().str(),
                        std::vector<int64_t>(type.getShape().begin(),
                                             type.getShape().end()),
                        type.getElementType().isF32() ? npy::Dtype::Float32
                                                      : npy::Dtype::Int64,
                        dim ? dim.getInt() : -1});
      }
    }
  }
  return globals;
}

std::string Checkpointing::stepDirectory(int64_t step) const {
  llvm::SmallString<256> path(config.disk);
  llvm::sys::path::append(path, "step-" + std::to_string(step));
  return path.str().str();
}

int64_t Checkpointing::newestOnDisk(int64_t below) const {
  int64_t newest = -1;
  std::error_code error;
  for (llvm::sys::fs::directory_iterator entry(config.disk, error), end;
       !error && entry != end; entry.increment(error)) {
    llvm::StringRef name = llvm::sys::path::filename(entry->path());
    int64_t step;
    if (!name.consume_front("step-") || name.getAsInteger(10, step) ||
        step >= below || step <= newest)
      continue;
    llvm::SmallString<256> complete(entry->path());
    llvm::sys::path::append(complete, "COMPLETE");
    if (llvm::sys::fs::exists(complete))
      newest = step;
  }
  return newest;
}

namespace {
/// The whole shape of a global of which a rank holds `global.shape`.
std::vector<int64_t> wholeShape(const StateGlobal &global, int64_t shards) {
  std::vector<int64_t> shape = global.shape;
  if (global.shardDim >= 0)
    shape[size_t(global.shardDim)] *= shards;
  return shape;
}
} // namespace

bool Checkpointing::writeToDisk(ExecutionEngine &engine, int64_t step) {
  std::string directory = stepDirectory(step);
  int64_t shards = layout.shards;
  int64_t stage = rank / (layout.replicas * shards);
  // Replica 0 of each stage writes it: its shards gather each sharded
  // global for shard 0, which writes the whole.
  bool writing = (rank / shards) % layout.replicas == 0;
  bool writer = writing && rank % shards == 0;
  std::string problem;
  if (writer)
    if (std::error_code error = llvm::sys::fs::create_directories(directory))
      problem = "cannot create " + directory + ": " + error.message();
  std::string manifest;
  const std::vector<StateGlobal> none;
  for (const StateGlobal &global : writing ? stageGlobals[stage] : none) {
    llvm::Expected<void *> address = engine.lookup(global.name);
    if (!address) {
      problem = "cannot find @" + global.name + " in the compiled program: " +
                llvm::toString(address.takeError());
      break;
    }
    if (copyState)
      copyState(*address, (long long)bytesOf(global), /*toDevice=*/0);
    bool sharded = global.shardDim >= 0 && shards > 1;
    std::vector<int64_t> shape = wholeShape(global, shards);
    const void *data = *address;
    std::vector<float> whole;
    if (sharded) {
      // Every shard takes part, whatever went wrong on the writer.
      std::string gathered = gatherShards(
          static_cast<const float *>(data),
          ShardLayout(shape, global.shardDim, shards), shardGroup, whole);
      if (!gathered.empty()) {
        problem = gathered;
        break;
      }
      data = whole.data();
    }
    if (!writer || !problem.empty())
      continue;
    llvm::SmallString<256> path(directory);
    llvm::sys::path::append(path, global.name + ".npy");
    problem = npy::write(path.str().str(), shape, data, global.dtype);
    size_t bytes = bytesOf(global) * size_t(sharded ? shards : 1);
    manifest += global.name + ".npy " +
                llvm::utohexstr(checkpoint::checksum(data, bytes)) + "\n";
  }
  if (writer && problem.empty()) {
    llvm::SmallString<256> path(directory);
    llvm::sys::path::append(path, "MANIFEST-stage" + std::to_string(stage));
    std::ofstream file(path.str().str());
    file << manifest;
    if (!file.flush())
      problem = "cannot write " + path.str().str();
  }
  int64_t ok = problem.empty();
  if (hrt_all_reduce(&ok, &ok, 1, HRT_INT64, HRT_MIN, world) != HRT_SUCCESS) {
    llvm::errs() << "hetero-run: " << hrt_last_error() << "\n";
    return false;
  }
  if (!problem.empty())
    llvm::errs() << "hetero-run: --checkpoint disk: " << problem << "\n";
  if (!ok)
    return false;
  ++diskWrites;
  if (rank != 0)
    return true;
  // Complete once every stage's files are: older ones but the previous
  // complete checkpoint go.
  llvm::SmallString<256> complete(directory);
  llvm::sys::path::append(complete, "COMPLETE");
  std::ofstream(complete.str().str()) << step << "\n";
  int64_t previous = newestOnDisk(step);
  for (int64_t older = newestOnDisk(previous); older >= 0;
       older = newestOnDisk(older))
    llvm::sys::fs::remove_directories(stepDirectory(older));
  return true;
}

bool Checkpointing::loadFromDisk(ExecutionEngine &engine, int64_t step,
                                 std::string &problem) {
  std::string directory = stepDirectory(step);
  int64_t shards = layout.shards;
  int64_t stage = rank / (layout.replicas * shards);
  llvm::SmallString<256> manifestPath(directory);
  llvm::sys::path::append(manifestPath,
                          "MANIFEST-stage" + std::to_string(stage));
  std::map<std::string, std::string> checksums;
  std::ifstream manifest(manifestPath.str().str());
  for (std::string file, sum; manifest >> file >> sum;)
    checksums[file] = sum;
  for (const StateGlobal &global : stageGlobals[stage]) {
    std::string file = global.name + ".npy";
    llvm::SmallString<256> path(directory);
    llvm::sys::path::append(path, file);
    bool sharded = global.shardDim >= 0 && shards > 1;
    size_t bytes = bytesOf(global) * size_t(sharded ? shards : 1);
    std::vector<int64_t> shape = wholeShape(global, shards);
    // Floats, so that a sharded global's slice can be taken from them.
    std::vector<float> data((bytes + sizeof(float) - 1) / sizeof(float));
    problem = npy::read(path.str().str(), shape, data.data(), global.dtype);
    if (!problem.empty())
      return false;
    if (!checksums.count(file) ||
        checksums[file] !=
            llvm::utohexstr(checkpoint::checksum(data.data(), bytes))) {
      problem = path.str().str() + " does not match the checksum in " +
                manifestPath.str().str();
      return false;
    }
    llvm::Expected<void *> address = engine.lookup(global.name);
    if (!address) {
      problem = "cannot find @" + global.name + " in the compiled program: " +
                llvm::toString(address.takeError());
      return false;
    }
    if (sharded)
      sliceShard(data, ShardLayout(shape, global.shardDim, shards),
                 rank % shards, static_cast<float *>(*address));
    else
      std::memcpy(*address, data.data(), bytes);
    if (copyState)
      copyState(*address, (long long)bytesOf(global), /*toDevice=*/1);
  }
  return true;
}

bool Checkpointing::start(ExecutionEngine &engine, bool printer,
                          int64_t &firstStep) {
  firstStep = 0;
  auto failed = [](const std::string &what) {
    llvm::errs() << "hetero-run: --checkpoint: " << what << "\n";
    return false;
  };
  if (!config.disk.empty() && dynamicSync)
    return failed("disk checkpoints hold one copy of each stage, but the "
                  "replicas of a pipeline with dynamic sync groups differ");
  bool agents = config.agents != "none";
  if (agents)
    if (std::error_code error =
            llvm::sys::fs::create_directories(config.agents))
      return failed("cannot create " + config.agents + ": " + error.message());
  hrt_ckpt_options options{agents ? config.agents.c_str() : nullptr,
                           agentProgram.c_str(), fingerprint, copyState};
  if (hrt_ckpt_configure(&options) != HRT_SUCCESS)
    return failed(hrt_last_error());

  // The disk's newest step: memory, which is faster, recovers it or a newer
  // one.
  long long disk = -1;
  if (!config.disk.empty() && rank == 0)
    disk = newestOnDisk(INT64_MAX);
  if (hrt_broadcast(&disk, 1, HRT_INT64, 0, world) != HRT_SUCCESS)
    return failed(hrt_last_error());
  long long step = -1;
  int fromPeer = 0;
  double start = hrt_wtime();
  auto took = [&] {
    char text[48];
    std::snprintf(text, sizeof(text), ", restored in %.1f ms",
                  (hrt_wtime() - start) * 1e3);
    return std::string(text);
  };
  if (hrt_ckpt_recover(disk - 1, &step, &fromPeer) != HRT_SUCCESS)
    return failed(hrt_last_error());
  if (step >= 0) {
    int64_t peers = fromPeer;
    if (hrt_all_reduce(&peers, &peers, 1, HRT_INT64, HRT_SUM, world) !=
        HRT_SUCCESS)
      return failed(hrt_last_error());
    say(printer, "checkpoint: resuming at step " + std::to_string(step) +
                     " from CPU memory (" + std::to_string(peers) +
                     (peers == 1 ? " rank" : " ranks") +
                     " restored from a peer)" + took());
    firstStep = step;
    return true;
  }
  while (disk >= 0) {
    std::string problem;
    int64_t ok = loadFromDisk(engine, disk, problem);
    if (!ok)
      llvm::errs() << "hetero-run: --checkpoint: rank " << rank << ": "
                   << problem << "\n";
    if (hrt_all_reduce(&ok, &ok, 1, HRT_INT64, HRT_MIN, world) != HRT_SUCCESS)
      return failed(hrt_last_error());
    if (ok) {
      say(printer, "checkpoint: resuming at step " + std::to_string(disk) +
                       " from disk " + stepDirectory(disk) +
                       " (no checkpoint as new is complete in CPU memory)" +
                       took());
      firstStep = disk;
      return true;
    }
    say(printer, "checkpoint: " + stepDirectory(disk) +
                     " is damaged; trying an older one");
    if (rank == 0)
      disk = newestOnDisk(disk);
    if (hrt_broadcast(&disk, 1, HRT_INT64, 0, world) != HRT_SUCCESS)
      return failed(hrt_last_error());
  }
  say(printer, "checkpoint: starting at step 0 (no complete checkpoint in "
               "CPU memory or on disk)");
  return true;
}

bool Checkpointing::afterStep(ExecutionEngine &engine, int64_t step) {
  if (config.disk.empty() || (step + 1) % config.diskEvery != 0)
    return true;
  return writeToDisk(engine, step + 1);
}

bool Checkpointing::finish(bool printer) {
  hrt_ckpt_stats stats{};
  hrt_ckpt_get_stats(&stats);
  double totals[2] = {double(stats.bytes_sent), double(stats.chunks_sent)};
  double wait = stats.commit_wait_seconds;
  if (hrt_all_reduce(totals, totals, 2, HRT_FLOAT64, HRT_SUM, world) !=
          HRT_SUCCESS ||
      hrt_all_reduce(&wait, &wait, 1, HRT_FLOAT64, HRT_MAX, world) !=
          HRT_SUCCESS) {
    llvm::errs() << "hetero-run: " << hrt_last_error() << "\n";
    return false;
  }
  if (stats.commits > 0) {
    double perStep = double(stats.commits);
    char line[256];
    std::snprintf(line, sizeof(line),
                  "checkpoint: %lld steps committed in CPU memory, %lld on "
                  "disk; per step %.0f chunks and %s sent, commit wait %.3f "
                  "ms",
                  stats.commits, (long long)diskWrites, totals[1] / perStep,
                  bytesText(totals[0] / perStep).c_str(), wait / perStep * 1e3);
    say(printer, line);
  }
  if (hrt_ckpt_finish(config.agents != "none") != HRT_SUCCESS) {
    llvm::errs() << "hetero-run: " << hrt_last_error() << "\n";
    return false;
  }
  return true;
}

} // namespace hetero
