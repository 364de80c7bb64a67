//===- hetero-sim.cpp - simulate hetero schedules -------------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
//   hetero-sim pipeline --stages S --microbatches M --group-size k
//                       [--family 1f1b|interleaved|looped-bfs|zb1p|zbv|
//                        dualpipev] [--pipeline-ranks R --placement loop|v]
//                       --forward-ms F --backward-ms B --comm-ms C
//                       [--trace file] [--chrome-trace out.json]
//                       [--svg out.svg]
//
//   hetero-sim <scheduled.mlir> --profile profile.json [--schedule name]
//                       [--chrome-trace out.json] [--svg out.svg]
//   hetero-sim fusion <profile.json> [--threshold-mb T]
//   hetero-sim espresso <profile.json>
//   hetero-sim sdpipe --stages M --pipelines N --microbatches K
//                     --forward-ms F --backward-ms B
//                     --heterogeneity none|A|B --policy sdpipe|allreduce|adpsgd
//                     [--lock on|off] [--period P] [--seed s] [...]
//   hetero-sim checkpoint --machines N --replicas m --failures k
//                     [--placement mixed|group|ring]
//   hetero-sim checkpoint-plan --spans-ms t1,t2,... --checkpoint-bytes C
//                     --copies c --buffer-bytes R --parts p
//                     --bandwidth-bytes-per-ms B --alpha-ms a --mu u
//                     [--interleaving gemini|naive|blocking]
//                     [--copy-bytes-per-ms b]
//   hetero-sim resize --times T0,T1,... --gemm C0,C1,... --target mean|min
//   hetero-sim migrate --ranks n --straggler s --columns c
//   hetero-sim resize-sweep --ranks n --deltas d1,d2,... [model options]
//
// Prints `iteration_ms: <value>`, `bubble_fraction: <value>`,
// `peak_inflight: <per rank>` (the micro-batch stashes it holds at most)
// and, per directed link between ranks, its idle spans. A split backward's
// input and weight gradients take half of --backward-ms each.
// `--group-size adaptive` picks k with the simulator (Ada-Grouper). The
// second form simulates the verified hetero.schedule ops of a module (as
// hetero-kfkb-schedule or hetero-import-schedule leave them) with the
// measured costs of a pipeline profile (hetero/Profile/PipelineProfile.h).
// `fusion` of {"sets": [p0, p1, ...]} (each set may give its "start_ms")
// puts every set's transfers on one shared link and prints, per strategy
// (optimal, per_tensor, single_group, threshold_<T>MB) and set, its groups
// and where its last transfer ends (`<strategy> set <i> end_ms: x`).
// `fusion` solves Cupcake's gradient-fusion problem of a profile
// (hetero/Profile/FusionProfile.h) exactly and prints `groups: [i-j] ...`
// and `iteration_ms: <end of last transfer>`, then the same two lines,
// prefixed by their name, for each baseline: per_tensor, single_group,
// threshold_<T>MB (DDP / Horovod buckets, T = 25 by default) and even_<m>
// (the best split into m equal tensor counts); with the profile's
// "dense_comm", fp32_<M>MB, hipress_<K>KB and joint, each with a
// `compressed:` line. `espresso` decides each gradient of an Espresso
// profile (hetero/Profile/EspressoProfile.h) over the whole decision tree
// with the thesis's Alg 4.1 and 4.2 and each divisible scheme's best
// number of parts, and over the options the runtime executes with the
// project's search: `options: <count>`, then for `espresso` and `runtime`
// an `iteration_ms:` line and one `tensor <i> <name>: <decision>` line per
// gradient (`espresso undivided iteration_ms:` between them: Alg 4.1 and
// 4.2 alone), then `dense iteration_ms:`. `sdpipe` runs the
// data-parallel sync model of hetero/Sim/SyncSim.h and prints
// `throughput: <micro-batches per second>`, `mean_group_size: <value>` and
// `stalled: yes|no`. `checkpoint` prints Gemini's exact probability of
// recovering from CPU memory when k machines fail at once,
// `recovery_probability: <value>` (hetero/Checkpoint/Placement.h);
// `checkpoint-plan` prints Algorithm 6.2's chunks in send order, one
// `chunk <span> <copy> <bytes>` line each (hetero/Checkpoint/Partition.h).
// `resize` prints ZERO-resizing's Eq. 1 ratio of every rank from its busy
// and GEMM times, `alpha: <a0> <a1> ...` (hetero/Resize/Ratio.h);
// `migrate` the block of migrated columns each receiver computes, `rank
// <r>: <start> <end>` ([start, end)) in increasing virtual number
// (hetero/Resize/Migration.h); `resize-sweep` the iteration of tensor
// parallelism with one rank slowed by each delta under every policy
// (baseline, zero-mean, zero-min, mig, semi; hetero/Resize/TpSim.h), one
// `delta <d> <policy> iteration_ms: <t> ratio: <t / T(1)> prune: <a>
// migrate: <m>` line each.
//
// The simulators are MLIR-free; MLIR only reads the module.
//
//===----------------------------------------------------------------------===//

#include "ScheduledModule.h"

#include "hetero/Checkpoint/Partition.h"
#include "hetero/Checkpoint/Placement.h"
#include "hetero/Compression/Espresso.h"
#include "hetero/Profile/EspressoProfile.h"
#include "hetero/Profile/FusionProfile.h"
#include "hetero/Profile/PipelineProfile.h"
#include "hetero/Resize/Migration.h"
#include "hetero/Resize/Ratio.h"
#include "hetero/Resize/TpSim.h"
#include "hetero/Schedule/Families.h"
#include "hetero/Sim/PipelineSim.h"
#include "hetero/Sim/SyncSim.h"
#include "hetero/Sim/Timeline.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace hetero;

namespace {

int usage(const std::string &problem) {
  std::fprintf(stderr,
               "hetero-sim: %s\n"
               "usage: hetero-sim pipeline --stages S --microbatches M "
               "--group-size k|adaptive [--family F] [--pipeline-ranks R "
               "--placement loop|v] --forward-ms F --backward-ms B "
               "--comm-ms C [--trace file] [--memory-cap N] "
               "[--chrome-trace out.json] [--svg out.svg]\n"
               "       hetero-sim <scheduled.mlir> --profile profile.json "
               "[--schedule name] [--chrome-trace out.json] [--svg out.svg]\n"
               "       hetero-sim fusion <profile.json> [--threshold-mb T]\n"
               "       hetero-sim espresso <profile.json>\n"
               "       hetero-sim sdpipe --stages M --pipelines N "
               "--microbatches K --forward-ms F --backward-ms B "
               "--heterogeneity none|A|B --policy sdpipe|allreduce|adpsgd "
               "[--lock on|off] [--period P] [--seed s] "
               "[--semantics sliding|periodic] [--window-ms T] "
               "[--sync-every n] [--step-microbatches m] [--stage-mb S] "
               "[--bandwidth-gbps G] "
               "[--latency-ms a] [--p2p-ms p] [--rpc-ms r] "
               "[--sync-table out.csv]\n"
               "       hetero-sim checkpoint --machines N --replicas m "
               "--failures k [--placement mixed|group|ring]\n"
               "       hetero-sim checkpoint-plan --spans-ms t1,t2,... "
               "--checkpoint-bytes C --copies c --buffer-bytes R --parts p "
               "--bandwidth-bytes-per-ms B --alpha-ms a --mu u "
               "[--interleaving gemini|naive|blocking] "
               "[--copy-bytes-per-ms b]\n"
               "       hetero-sim resize --times T0,T1,... --gemm C0,C1,... "
               "--target mean|min [--max-ratio a]\n"
               "       hetero-sim migrate --ranks n --straggler s "
               "--columns c\n"
               "       hetero-sim resize-sweep --ranks n --deltas d1,d2,... "
               "[--straggler s] [--linears L] [--gemm-ms g] [--other-ms o] "
               "[--allreduce-ms a] [--migrate-ms m] [--latency-ms l] "
               "[--extract-ms e] [--tolerable-ratio t] [--noise-guard g] "
               "[--receivers others|nonstraggler]\n",
               problem.c_str());
  return 1;
}

/// A problem with the inputs rather than the command line.
int failure(const std::string &problem) {
  std::fprintf(stderr, "hetero-sim: %s\n", problem.c_str());
  return 1;
}

/// Parses "--name value" pairs; returns an error message or "".
std::string parseOptions(int argc, char **argv,
                         std::map<std::string, std::string> &options) {
  for (int i = 2; i < argc; i += 2) {
    std::string name = argv[i];
    if (name.rfind("--", 0) != 0)
      return "unexpected argument '" + name + "'";
    if (i + 1 >= argc)
      return "option " + name + " needs a value";
    options[name.substr(2)] = argv[i + 1];
  }
  return "";
}

bool readNumber(const std::map<std::string, std::string> &options,
                const std::string &name, double &value, std::string &error) {
  auto found = options.find(name);
  if (found == options.end()) {
    error = "missing --" + name;
    return false;
  }
  char *end = nullptr;
  value = std::strtod(found->second.c_str(), &end);
  if (end == found->second.c_str() || *end != '\0') {
    error = "--" + name + " expects a number, got '" + found->second + "'";
    return false;
  }
  return true;
}

/// Reads "--name v0,v1,..." of finite numbers >= `least`.
bool readList(const std::map<std::string, std::string> &options,
              const std::string &name, double least,
              std::vector<double> &values, std::string &error) {
  auto found = options.find(name);
  if (found == options.end()) {
    error = "missing --" + name;
    return false;
  }
  llvm::SmallVector<llvm::StringRef> items;
  llvm::StringRef(found->second).split(items, ',');
  values.clear();
  for (llvm::StringRef item : items) {
    double value;
    if (item.trim().getAsDouble(value) || !std::isfinite(value) ||
        value < least) {
      std::ostringstream bound;
      bound << least;
      error = "--" + name + " expects numbers >= " + bound.str() +
              " separated by commas, got '" + item.str() + "'";
      return false;
    }
    values.push_back(value);
  }
  return true;
}

std::string readFile(const std::string &path, std::string &text) {
  std::ifstream file(path);
  if (!file)
    return "cannot read '" + path + "'";
  std::stringstream contents;
  contents << file.rdbuf();
  text = contents.str();
  return "";
}

/// Prints the simulated figures and writes the pictures asked for.
int report(const sim::Result &result,
           std::map<std::string, std::string> &options) {
  std::printf("iteration_ms: %.6g\n", result.iterationMs);
  std::printf("bubble_fraction: %.6g\n", result.bubbleFraction);
  std::printf("peak_inflight:");
  for (int64_t peak : result.peakInflight)
    std::printf(" %lld", (long long)peak);
  std::printf("\n");
  for (const sim::Result::Link &link : result.links) {
    double idle = 0.0;
    for (const sim::Span &span : link.idle)
      idle += span.endMs - span.startMs;
    std::printf(
        "link %lld->%lld: idle_ms %.6g in %zu spans:", (long long)link.from,
        (long long)link.to, idle, link.idle.size());
    for (const sim::Span &span : link.idle)
      std::printf(" [%.6g, %.6g]", span.startMs, span.endMs);
    std::printf("\n");
  }
  if (options.count("chrome-trace")) {
    std::ofstream out(options["chrome-trace"]);
    if (!out)
      return failure("cannot write '" + options["chrome-trace"] + "'");
    timeline::writeChromeTrace(timeline::rowsOf(result), out);
  }
  if (options.count("svg")) {
    std::ofstream out(options["svg"]);
    if (!out)
      return failure("cannot write '" + options["svg"] + "'");
    timeline::writeSvg(timeline::rowsOf(result), out);
  }
  return 0;
}

int runPipeline(int argc, char **argv) {
  std::map<std::string, std::string> options;
  if (std::string error = parseOptions(argc, argv, options); !error.empty())
    return usage(error);
  double stages, microbatches, forward, backward, comm, memoryCap = 0;
  std::string error;
  if (!readNumber(options, "stages", stages, error) ||
      !readNumber(options, "microbatches", microbatches, error) ||
      !readNumber(options, "forward-ms", forward, error) ||
      !readNumber(options, "backward-ms", backward, error) ||
      !readNumber(options, "comm-ms", comm, error))
    return usage(error);
  if (options.count("memory-cap") &&
      !readNumber(options, "memory-cap", memoryCap, error))
    return usage(error);
  if (stages < 1 || microbatches < 1 || forward < 0 || backward < 0 || comm < 0)
    return usage("stages and micro-batches must be >= 1 and times >= 0");

  sim::Costs costs;
  costs.forwardMs = forward;
  costs.backwardMs = backward;
  costs.commMs = comm;
  if (options.count("trace")) {
    std::string text;
    if (std::string error = readFile(options["trace"], text); !error.empty())
      return failure(error);
    if (std::string problem = sim::parseTrace(text, int64_t(stages), costs);
        !problem.empty())
      return failure(options["trace"] + ":" + problem.substr(5));
  }

  // The family, and where its stages run: one per rank unless
  // --pipeline-ranks says fewer ranks (then a loop, or a V).
  std::string familyName =
      options.count("family") ? options["family"] : std::string("1f1b");
  std::optional<schedule::Family> family = schedule::parseFamily(familyName);
  if (!family)
    return usage("--family must be one of " + schedule::familyNames() +
                 ", got '" + familyName + "'");
  double ranks = stages;
  if (options.count("pipeline-ranks") &&
      (!readNumber(options, "pipeline-ranks", ranks, error) || ranks < 1 ||
       ranks > stages))
    return usage(error.empty() ? "--pipeline-ranks must be 1..stages" : error);
  std::string shape =
      options.count("placement") ? options["placement"] : std::string("loop");
  if (shape != "loop" && shape != "v")
    return usage("--placement must be loop or v, got '" + shape + "'");
  schedule::Placement placement =
      shape == "v" ? schedule::Placement::vShape(int64_t(ranks))
                   : schedule::Placement::loop(int64_t(stages), int64_t(ranks));
  if (placement.stages() != int64_t(stages))
    return usage("--placement v needs twice as many stages as ranks");

  int64_t groupSize = 0;
  std::string group = options.count("group-size") ? options["group-size"] : "";
  if (group == "adaptive") {
    if (*family != schedule::Family::OneFOneB)
      return usage("--group-size adaptive chooses among 1f1b schedules");
    sim::Choice choice = sim::chooseGroupSize(
        int64_t(stages), int64_t(microbatches), costs, int64_t(memoryCap));
    groupSize = choice.groupSize;
    std::printf("group_size: %lld (adaptive)\n", (long long)groupSize);
  } else {
    double k;
    if (!readNumber(options, "group-size", k, error) || k < 1)
      return usage(error.empty() ? "--group-size must be >= 1 or adaptive"
                                 : error);
    groupSize = int64_t(k);
  }
  std::vector<std::vector<schedule::Action>> programs =
      schedule::familyPrograms(*family, placement, int64_t(microbatches),
                               groupSize, error);
  if (!error.empty())
    return failure(error);
  std::vector<schedule::Problem> problems =
      schedule::verifyPrograms(programs, placement, int64_t(microbatches));
  if (!problems.empty())
    return failure("the " + familyName +
                   " schedule is unsound: " + problems.front().message);
  return report(sim::simulate(programs, costs, placement), options);
}

int runScheduledModule(int argc, char **argv) {
  std::map<std::string, std::string> options;
  if (std::string error = parseOptions(argc, argv, options); !error.empty())
    return usage(error);
  if (!options.count("profile"))
    return usage("missing --profile profile.json");
  std::vector<NamedSchedule> schedules;
  if (!readScheduledModule(argv[1], schedules))
    return 1;
  if (options.count("schedule")) {
    std::string wanted = options["schedule"];
    llvm::erase_if(schedules, [&](const NamedSchedule &schedule) {
      return schedule.name != wanted;
    });
    if (schedules.empty())
      return failure(std::string(argv[1]) + " has no schedule '" + wanted +
                     "'");
  }
  if (schedules.size() > 1 &&
      (options.count("chrome-trace") || options.count("svg")))
    return usage("the module has several schedules: pick one with "
                 "--schedule for --chrome-trace or --svg");
  std::string text;
  if (std::string error = readFile(options["profile"], text); !error.empty())
    return failure(error);
  for (const NamedSchedule &schedule : schedules) {
    sim::Costs costs;
    int64_t measuredSize = 0;
    if (std::string problem = profile::parsePipelineProfile(
            text, schedule.placement.stages(), costs, &measuredSize);
        !problem.empty())
      return failure(options["profile"] + ": " + problem);
    // A schedule of another micro-batch size than the profile's runs the
    // measured costs scaled to its size.
    if (schedule.microbatchSize && measuredSize)
      costs =
          costs.scaled(double(schedule.microbatchSize) / double(measuredSize));
    else if (schedule.microbatchSize && !measuredSize &&
             llvm::any_of(schedules, [&](const NamedSchedule &other) {
               return other.microbatchSize != schedule.microbatchSize;
             }))
      return failure(
          options["profile"] +
          ": the schedules run micro-batches of different sizes (@" +
          schedule.name + ": " + std::to_string(schedule.microbatchSize) +
          " samples), but the profile does not say at which size its times "
          "were measured; add \"microbatch_size\"");
    std::printf("schedule: @%s\n", schedule.name.c_str());
    if (int status =
            report(sim::simulate(schedule.programs, costs, schedule.placement),
                   options))
      return status;
  }
  return 0;
}

void printFusionPlan(const std::string &prefix, const fusion::Plan &plan) {
  std::printf("%sgroups: %s\n", prefix.c_str(),
              fusion::formatGroups(plan.groups).c_str());
  std::printf("%siteration_ms: %.6g\n", prefix.c_str(), plan.iterationMs);
}

/// The sets of {"sets": [...]} with their "start_ms", on one shared link:
/// each strategy's groups per set and where its last transfer ends.
int runSharedFusion(const std::string &path, const llvm::json::Array &sets,
                    double thresholdMb) {
  std::vector<fusion::Problem> problems;
  std::vector<double> starts;
  for (const llvm::json::Value &set : sets) {
    std::string where =
        path + ": $.sets[" + std::to_string(starts.size()) + "]";
    problems.emplace_back();
    if (std::string bad = profile::parseFusionProfile(
            llvm::formatv("{0}", set).str(), problems.back());
        !bad.empty())
      return failure(where + ": " + bad);
    const llvm::json::Object *object = set.getAsObject();
    std::optional<double> start =
        object ? object->getNumber("start_ms") : std::nullopt;
    if (object && object->get("start_ms") && (!start || *start < 0))
      return failure(where + ".start_ms: expected a number >= 0");
    starts.push_back(start.value_or(0.0));
  }
  std::ostringstream threshold;
  threshold << "threshold_" << thresholdMb << "MB";
  std::vector<std::pair<std::string,
                        std::function<fusion::Plan(const fusion::Problem &)>>>
      strategies = {{"optimal", fusion::optimalPlan},
                    {"per_tensor", fusion::perTensorPlan},
                    {"single_group", fusion::singleGroupPlan},
                    {threshold.str(), [&](const fusion::Problem &problem) {
                       return fusion::thresholdPlan(
                           problem, int64_t(thresholdMb * fusion::kBytesPerMB));
                     }}};
  for (const auto &[name, plan] : strategies) {
    std::vector<std::vector<fusion::Group>> groups;
    for (const fusion::Problem &problem : problems)
      groups.push_back(plan(problem).groups);
    std::vector<double> ends = fusion::evaluateShared(problems, groups, starts);
    for (size_t set = 0; set < problems.size(); ++set) {
      std::printf("%s set %zu groups: %s\n", name.c_str(), set,
                  fusion::formatGroups(groups[set]).c_str());
      std::printf("%s set %zu end_ms: %.6g\n", name.c_str(), set, ends[set]);
    }
  }
  return 0;
}

int runFusion(int argc, char **argv) {
  if (argc < 3 || llvm::StringRef(argv[2]).starts_with("--"))
    return usage("fusion needs a profile.json");
  std::map<std::string, std::string> options;
  // Options follow the profile.
  if (std::string error = parseOptions(argc - 1, argv + 1, options);
      !error.empty())
    return usage(error);
  double thresholdMb = 25.0;
  std::string error;
  if (options.count("threshold-mb") &&
      (!readNumber(options, "threshold-mb", thresholdMb, error) ||
       thresholdMb <= 0))
    return usage(error.empty() ? "--threshold-mb must be > 0" : error);
  std::string text;
  if (std::string problem = readFile(argv[2], text); !problem.empty())
    return failure(problem);
  // Several sets on one link.
  if (llvm::Expected<llvm::json::Value> root = llvm::json::parse(text)) {
    if (const llvm::json::Object *object = root->getAsObject())
      if (const llvm::json::Array *sets = object->getArray("sets")) {
        if (sets->empty())
          return failure(std::string(argv[2]) +
                         ": $.sets: expected at least one profile");
        return runSharedFusion(argv[2], *sets, thresholdMb);
      }
  } else {
    llvm::consumeError(root.takeError()); // the profile parser says where
  }
  fusion::Problem problem;
  if (std::string bad = profile::parseFusionProfile(text, problem);
      !bad.empty())
    return failure(std::string(argv[2]) + ": " + bad);
  printFusionPlan("", fusion::optimalPlan(problem));
  printFusionPlan("per_tensor ", fusion::perTensorPlan(problem));
  printFusionPlan("single_group ", fusion::singleGroupPlan(problem));
  std::ostringstream threshold;
  threshold << "threshold_" << thresholdMb << "MB ";
  printFusionPlan(threshold.str(),
                  fusion::thresholdPlan(
                      problem, int64_t(thresholdMb * fusion::kBytesPerMB)));
  fusion::Plan even = fusion::bestEvenPlan(problem);
  printFusionPlan("even_" + std::to_string(even.groups.size()) + " ", even);
  if (!problem.dense)
    return 0;
  // The baselines that leave tensors uncompressed: FP32 in the best bucket
  // size, and HiPress's size threshold.
  fusion::Plan fp32 = fusion::bestFp32Plan(problem);
  printFusionPlan("fp32_" + std::to_string(fp32.thresholdBytes >> 20) + "MB ",
                  fp32);
  fusion::Plan hipress = fusion::bestHipressPlan(problem);
  std::vector<fusion::Group> compressed;
  for (size_t g = 0; g < hipress.groups.size(); ++g)
    if (hipress.compressed[g])
      compressed.push_back(hipress.groups[g]);
  std::string prefix =
      "hipress_" + std::to_string(hipress.thresholdBytes >> 10) + "KB ";
  printFusionPlan(prefix, hipress);
  std::printf("%scompressed: %s\n", prefix.c_str(),
              fusion::formatGroups(compressed).c_str());
  fusion::Plan joint = fusion::jointPlan(problem);
  compressed.clear();
  for (size_t g = 0; g < joint.groups.size(); ++g)
    if (joint.compressed[g])
      compressed.push_back(joint.groups[g]);
  printFusionPlan("joint ", joint);
  std::printf("joint compressed: %s\n",
              fusion::formatGroups(compressed).c_str());
  return 0;
}

void printEspressoPlan(const std::string &prefix,
                       const espresso::Problem &problem,
                       const espresso::Plan &plan) {
  std::printf("%s iteration_ms: %.6g\n", prefix.c_str(), plan.iterationMs);
  for (size_t t = 0; t < plan.decisions.size(); ++t)
    std::printf("%s tensor %zu %s: %s\n", prefix.c_str(), t,
                problem.tensors[t].name.c_str(),
                espresso::describe(plan.decisions[t]).c_str());
}

int runEspresso(int argc, char **argv) {
  if (argc != 3 || llvm::StringRef(argv[2]).starts_with("--"))
    return usage("espresso needs a profile.json and nothing else");
  std::string text;
  if (std::string problem = readFile(argv[2], text); !problem.empty())
    return failure(problem);
  espresso::Problem problem;
  if (std::string bad = profile::parseEspressoProfile(text, problem);
      !bad.empty())
    return failure(std::string(argv[2]) + ": " + bad);
  std::printf("options: %zu\n", espresso::options(problem).size());
  espresso::Plan thesis =
      espresso::espressoPlan(problem, espresso::options(problem));
  printEspressoPlan("espresso", problem,
                    espresso::divisionPlan(problem, thesis));
  std::printf("espresso undivided iteration_ms: %.6g\n", thesis.iterationMs);
  printEspressoPlan(
      "runtime", problem,
      espresso::searchPlan(problem, espresso::lowerableOptions(problem)));
  std::printf("dense iteration_ms: %.6g\n",
              espresso::simulate(problem, std::vector<espresso::Decision>(
                                              problem.tensors.size())));
  espresso::Plan compressed =
      espresso::allCompressedPlan(problem, espresso::lowerableOptions(problem));
  std::printf("compressed iteration_ms: %.6g\n", compressed.iterationMs);
  if (!compressed.decisions.empty())
    std::printf("compressed option: %s\n",
                espresso::describe(compressed.decisions.front()).c_str());
  return 0;
}

/// Reads an option whose value is one of `choices`; returns its index.
bool readChoice(const std::map<std::string, std::string> &options,
                const std::string &name,
                const std::vector<std::string> &choices, size_t &choice,
                std::string &error) {
  auto found = options.find(name);
  if (found == options.end()) {
    error = "missing --" + name;
    return false;
  }
  for (choice = 0; choice < choices.size(); ++choice)
    if (choices[choice] == found->second)
      return true;
  error = "--" + name + " expects " + llvm::join(choices, "|") + ", got '" +
          found->second + "'";
  return false;
}

/// Writes the SyncTable: one row per group.
int writeSyncTable(const std::string &path, const sim::SyncResult &result) {
  std::ofstream out(path);
  if (!out)
    return failure("cannot write '" + path + "'");
  out << "stage,tick,dispatch_ms,mode,members\n";
  for (const sync::Group &group : result.table) {
    out << group.stage << ',' << group.tick << ',' << group.dispatchMs << ','
        << sync::modeName(group.mode) << ',';
    for (size_t i = 0; i < group.members.size(); ++i)
      out << (i ? " " : "") << group.members[i];
    out << '\n';
  }
  return 0;
}

int runSdpipe(int argc, char **argv) {
  std::map<std::string, std::string> options;
  if (std::string error = parseOptions(argc, argv, options); !error.empty())
    return usage(error);
  double stages, pipelines, microbatches, forward, backward;
  size_t heterogeneity, policy;
  std::string error;
  if (!readNumber(options, "stages", stages, error) ||
      !readNumber(options, "pipelines", pipelines, error) ||
      !readNumber(options, "microbatches", microbatches, error) ||
      !readNumber(options, "forward-ms", forward, error) ||
      !readNumber(options, "backward-ms", backward, error) ||
      !readChoice(options, "heterogeneity", {"none", "A", "B"}, heterogeneity,
                  error) ||
      !readChoice(options, "policy", {"sdpipe", "allreduce", "adpsgd"}, policy,
                  error))
    return usage(error);
  if (stages < 1 || pipelines < 1 || microbatches < 1 || forward < 0 ||
      backward < 0)
    return usage("stages, pipelines and micro-batches must be >= 1 and "
                 "times >= 0");

  sim::SyncConfig config;
  config.stages = int64_t(stages);
  config.pipelines = int64_t(pipelines);
  config.microbatches = int64_t(microbatches);
  config.forwardMs = forward;
  config.backwardMs = backward;
  config.policy =
      std::array{sim::SyncPolicy::SDPipe, sim::SyncPolicy::AllReduce,
                 sim::SyncPolicy::AdPsgd}[policy];
  // Optional numbers: name, destination, lower bound.
  struct Optional {
    const char *name;
    double *value;
    double least;
  };
  double period = double(config.scheduler.period), seed = 1, syncEvery = 1;
  double stepMicrobatches = 0;
  double bandwidthGbps = config.bandwidthBytesPerMs / 1e6;
  for (const Optional &option :
       {Optional{"period", &period, 1}, Optional{"seed", &seed, 0},
        Optional{"sync-every", &syncEvery, 1},
        Optional{"step-microbatches", &stepMicrobatches, 1},
        Optional{"bandwidth-gbps", &bandwidthGbps, 1e-9},
        Optional{"latency-ms", &config.latencyMs, 0},
        Optional{"p2p-ms", &config.p2pMs, 0},
        Optional{"rpc-ms", &config.rpcMs, 0}}) {
    if (!options.count(option.name))
      continue;
    if (!readNumber(options, option.name, *option.value, error))
      return usage(error);
    if (*option.value < option.least)
      return usage(std::string("--") + option.name +
                   " must be >= " + llvm::formatv("{0}", option.least).str());
  }
  config.scheduler.period = int64_t(period);
  config.seed = uint64_t(seed);
  config.syncEvery = int64_t(syncEvery);
  config.stepMicrobatches = int64_t(stepMicrobatches);
  // --stage-mb takes one size for every stage or one per stage.
  if (options.count("stage-mb")) {
    llvm::SmallVector<llvm::StringRef> sizes;
    llvm::StringRef(options["stage-mb"]).split(sizes, ',');
    if (sizes.size() != 1 && int64_t(sizes.size()) != config.stages)
      return usage("--stage-mb expects one size or one per stage (" +
                   std::to_string(config.stages) + "), got " +
                   std::to_string(sizes.size()));
    for (llvm::StringRef size : sizes) {
      double mb;
      if (size.trim().getAsDouble(mb) || mb < 0)
        return usage("--stage-mb expects sizes >= 0 in MB, got '" + size.str() +
                     "'");
      config.stageBytesPerStage.push_back(mb * 1e6);
    }
    if (sizes.size() == 1)
      config.stageBytesPerStage.assign(config.stages,
                                       config.stageBytesPerStage.front());
  }
  config.bandwidthBytesPerMs = bandwidthGbps * 1e6;
  if (options.count("lock")) {
    size_t lock;
    if (!readChoice(options, "lock", {"on", "off"}, lock, error))
      return usage(error);
    config.scheduler.lock = lock == 0;
  }
  if (options.count("semantics")) {
    size_t semantics;
    if (!readChoice(options, "semantics", {"sliding", "periodic"}, semantics,
                    error))
      return usage(error);
    config.scheduler.semantics =
        semantics == 0 ? sync::Semantics::Sliding : sync::Semantics::Periodic;
  }

  // hete-A and hete-B sleep 0.75 and 2.3 homogeneous iterations.
  sim::calibrate(config, std::array{0.0, 0.75, 2.3}[heterogeneity]);
  if (options.count("window-ms")) {
    double window;
    if (!readNumber(options, "window-ms", window, error) || window < 0)
      return usage(error.empty() ? "--window-ms must be >= 0" : error);
    config.scheduler.windowMaxMs = window;
  }

  sim::SyncResult result = sim::simulateSync(config);
  std::printf("throughput: %.6g\n", result.throughput);
  std::printf("mean_group_size: %.6g\n", result.meanGroupSize);
  std::printf("stalled: %s\n", result.stalled ? "yes" : "no");
  for (const std::string &blocked : result.blocked)
    std::fprintf(stderr, "hetero-sim: stalled: %s\n", blocked.c_str());
  if (options.count("sync-table"))
    return writeSyncTable(options["sync-table"], result);
  return 0;
}

/// Reads a whole number of at least `least`.
bool readCount(const std::map<std::string, std::string> &options,
               const std::string &name, int64_t least, int64_t &value,
               std::string &error) {
  double number;
  if (!readNumber(options, name, number, error))
    return false;
  if (number != std::floor(number) || number < double(least) || number > 9e18) {
    error = "--" + name +
            " expects a whole number >= " + std::to_string(least) + ", got '" +
            options.at(name) + "'";
    return false;
  }
  value = int64_t(number);
  return true;
}

int runCheckpoint(int argc, char **argv) {
  std::map<std::string, std::string> options;
  if (std::string error = parseOptions(argc, argv, options); !error.empty())
    return usage(error);
  int64_t machines, replicas, failures;
  std::string error;
  size_t layout = 0;
  if (!readCount(options, "machines", 1, machines, error) ||
      !readCount(options, "replicas", 1, replicas, error) ||
      !readCount(options, "failures", 0, failures, error) ||
      (options.count("placement") &&
       !readChoice(options, "placement", {"mixed", "group", "ring"}, layout,
                   error)))
    return usage(error);
  checkpoint::Layout chosen =
      std::array{checkpoint::Layout::Mixed, checkpoint::Layout::Group,
                 checkpoint::Layout::Ring}[layout];
  if (std::string problem =
          checkpoint::checkPlacement(machines, replicas, chosen);
      !problem.empty())
    return failure(problem);
  checkpoint::Probability probability;
  if (!checkpoint::recoveryProbability(
          checkpoint::place(machines, replicas, chosen), failures, probability,
          error))
    return failure(error);
  std::printf("recovery_probability: %s\n", probability.format(6).c_str());
  return 0;
}

int runCheckpointPlan(int argc, char **argv) {
  std::map<std::string, std::string> options;
  if (std::string error = parseOptions(argc, argv, options); !error.empty())
    return usage(error);
  checkpoint::PartitionProblem problem;
  std::string error;
  double alphaMs, copyBytesPerMs = 0;
  size_t interleaving = 0;
  if (!readCount(options, "checkpoint-bytes", 0, problem.checkpointBytes,
                 error) ||
      !readCount(options, "copies", 0, problem.copies, error) ||
      !readCount(options, "buffer-bytes", 1, problem.bufferBytes, error) ||
      !readCount(options, "parts", 1, problem.parts, error) ||
      !readNumber(options, "bandwidth-bytes-per-ms",
                  problem.bandwidthBytesPerMs, error) ||
      !readNumber(options, "alpha-ms", alphaMs, error) ||
      !readNumber(options, "mu", problem.mu, error) ||
      (options.count("copy-bytes-per-ms") &&
       !readNumber(options, "copy-bytes-per-ms", copyBytesPerMs, error)) ||
      (options.count("interleaving") &&
       !readChoice(options, "interleaving", {"gemini", "naive", "blocking"},
                   interleaving, error)))
    return usage(error);
  std::vector<double> spans;
  if (!readList(options, "spans-ms", 0, spans, error))
    return usage(error);
  for (double ms : spans)
    problem.spansNs.push_back(std::llround(ms * 1e6));
  if (!(alphaMs >= 0) || !std::isfinite(alphaMs))
    return usage("--alpha-ms must be >= 0");
  problem.alphaNs = std::llround(alphaMs * 1e6);
  problem.copyBytesPerMs = copyBytesPerMs;
  problem.interleaving = std::array{
      checkpoint::Interleaving::Gemini, checkpoint::Interleaving::Naive,
      checkpoint::Interleaving::Blocking}[interleaving];
  if (std::string problemText = checkpoint::checkPartitionProblem(problem);
      !problemText.empty())
    return failure(problemText);
  checkpoint::Partition plan = checkpoint::partition(problem);
  for (const checkpoint::Chunk &chunk : plan.chunks)
    std::printf("chunk %lld %lld %lld\n", (long long)chunk.span,
                (long long)chunk.copy, (long long)chunk.bytes);
  if (plan.overflowNs > 0)
    std::fprintf(stderr,
                 "hetero-sim: the checkpoint overflows the last span by "
                 "%.6g ms, which delays the optimizer update\n",
                 double(plan.overflowNs) / 1e6);
  return 0;
}

/// ZERO-resizing's Eq. 1 for every rank.
int runResize(int argc, char **argv) {
  std::map<std::string, std::string> options;
  if (std::string error = parseOptions(argc, argv, options); !error.empty())
    return usage(error);
  std::vector<double> busy, gemm;
  std::string error;
  size_t target = 0;
  double maxRatio = resize::kDefaultMaxRatio;
  if (!readList(options, "times", 0, busy, error) ||
      !readList(options, "gemm", 0, gemm, error) ||
      !readChoice(options, "target", {"mean", "min"}, target, error) ||
      (options.count("max-ratio") &&
       !readNumber(options, "max-ratio", maxRatio, error)))
    return usage(error);
  if (!(maxRatio >= 0 && maxRatio < 1))
    return usage("--max-ratio must be in [0, 1)");
  if (std::string problem = resize::checkTimes(busy, gemm); !problem.empty())
    return failure(problem);
  std::vector<double> ratios = resize::pruningRatios(
      busy, gemm, target == 0 ? resize::Target::Mean : resize::Target::Min,
      maxRatio);
  std::printf("alpha:");
  for (double ratio : ratios)
    std::printf(" %.4f", ratio);
  std::printf("\n");
  return 0;
}

/// Migration's blocks: which receiver computes which migrated columns.
int runMigrate(int argc, char **argv) {
  std::map<std::string, std::string> options;
  if (std::string error = parseOptions(argc, argv, options); !error.empty())
    return usage(error);
  int64_t ranks, straggler, columns;
  std::string error;
  if (!readCount(options, "ranks", 2, ranks, error) ||
      !readCount(options, "straggler", 0, straggler, error) ||
      !readCount(options, "columns", 0, columns, error))
    return usage(error);
  if (std::string problem = resize::checkMigration(ranks, straggler, columns);
      !problem.empty())
    return failure(problem);
  if (ranks > (1 << 20))
    return failure("at most 1048576 ranks, got " + std::to_string(ranks));
  for (const resize::Block &block :
       resize::migrationBlocks(ranks, straggler, columns))
    std::printf("rank %lld: %lld %lld\n", (long long)block.rank,
                (long long)block.begin, (long long)block.end);
  return 0;
}

/// Tensor parallelism with one slow rank under each policy, against its
/// slowdown.
int runResizeSweep(int argc, char **argv) {
  std::map<std::string, std::string> options;
  if (std::string error = parseOptions(argc, argv, options); !error.empty())
    return usage(error);
  resize::TpModel model;
  std::vector<double> deltas;
  std::string error;
  int64_t straggler = 0;
  resize::SemiOptions semi;
  size_t receivers = 0;
  auto optional = [&](const char *name, double &value) {
    return !options.count(name) || readNumber(options, name, value, error);
  };
  if (!readCount(options, "ranks", 2, model.ranks, error) ||
      !readList(options, "deltas", 1, deltas, error) ||
      (options.count("linears") &&
       !readCount(options, "linears", 1, model.linears, error)) ||
      (options.count("straggler") &&
       !readCount(options, "straggler", 0, straggler, error)) ||
      !optional("gemm-ms", model.gemmMs) ||
      !optional("other-ms", model.otherMs) ||
      !optional("allreduce-ms", model.allReduceMs) ||
      !optional("migrate-ms", model.migrateMs) ||
      !optional("latency-ms", model.latencyMs) ||
      !optional("extract-ms", model.extractMs) ||
      !optional("tolerable-ratio", semi.tolerableRatio) ||
      !optional("noise-guard", semi.noiseGuard) ||
      (options.count("receivers") &&
       !readChoice(options, "receivers", {"others", "nonstraggler"}, receivers,
                   error)))
    return usage(error);
  if (model.ranks > 4096)
    return failure("at most 4096 ranks, got " + std::to_string(model.ranks));
  if (straggler >= model.ranks)
    return failure("straggler " + std::to_string(straggler) +
                   " is not a rank of 0.." + std::to_string(model.ranks - 1));
  semi.receivers = receivers == 0 ? resize::Receivers::Others
                                  : resize::Receivers::NonStragglers;
  std::vector<double> slowdown(size_t(model.ranks), 1.0);
  if (std::string problem = resize::checkTpModel(model, slowdown);
      !problem.empty())
    return failure(problem);
  double reference = resize::tpIterationMs(
      model, slowdown,
      resize::tpPlan(model, slowdown, resize::TpPolicy::Baseline, semi));
  for (double delta : deltas) {
    slowdown[size_t(straggler)] = delta;
    for (resize::TpPolicy policy :
         {resize::TpPolicy::Baseline, resize::TpPolicy::ZeroMean,
          resize::TpPolicy::ZeroMin, resize::TpPolicy::Migration,
          resize::TpPolicy::Semi}) {
      std::vector<resize::RankPlan> plan =
          resize::tpPlan(model, slowdown, policy, semi);
      double ms = resize::tpIterationMs(model, slowdown, plan);
      std::printf("delta %g %s iteration_ms: %.4f ratio: %.4f prune: %.4f "
                  "migrate: %.4f\n",
                  delta, resize::policyName(policy), ms, ms / reference,
                  plan[size_t(straggler)].prune,
                  plan[size_t(straggler)].migrate);
    }
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2)
    return usage("missing command");
  std::string command = argv[1];
  if (command == "pipeline")
    return runPipeline(argc, argv);
  if (command == "fusion")
    return runFusion(argc, argv);
  if (command == "espresso")
    return runEspresso(argc, argv);
  if (command == "sdpipe")
    return runSdpipe(argc, argv);
  if (command == "checkpoint")
    return runCheckpoint(argc, argv);
  if (command == "checkpoint-plan")
    return runCheckpointPlan(argc, argv);
  if (command == "resize")
    return runResize(argc, argv);
  if (command == "migrate")
    return runMigrate(argc, argv);
  if (command == "resize-sweep")
    return runResizeSweep(argc, argv);
  if (llvm::StringRef(command).ends_with(".mlir") || command == "-")
    return runScheduledModule(argc, argv);
  return usage("unknown command '" + command +
               "', expected 'pipeline', 'fusion', 'espresso', 'sdpipe', "
               "'checkpoint', 'checkpoint-plan', 'resize', 'migrate', "
               "'resize-sweep' or a scheduled .mlir file");
}
