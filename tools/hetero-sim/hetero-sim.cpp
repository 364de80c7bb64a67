//===- hetero-sim.cpp - simulate hetero schedules
//--------------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
//   hetero-sim pipeline --stages S --microbatches M --group-size k
//                       --forward-ms F --backward-ms B --comm-ms C
//                       [--trace file] [--chrome-trace out.json]
//                       [--svg out.svg]
//
//   hetero-sim <scheduled.mlir> --profile profile.json [--schedule name]
//                       [--chrome-trace out.json] [--svg out.svg]
//   hetero-sim fusion <profile.json> [--threshold-mb T]
//
// Prints `iteration_ms: <value>`, `bubble_fraction: <value>`,
// `peak_inflight: <per stage>` and, per directed link, its idle spans.
// `--group-size adaptive` picks k with the simulator (Ada-Grouper). The
// second form simulates the verified hetero.schedule ops of a module (as
// hetero-kfkb-schedule or hetero-import-schedule leave them) with the
// measured costs of a pipeline profile (hetero/Profile/PipelineProfile.h).
// `fusion` solves Cupcake's gradient-fusion problem of a profile
// (hetero/Profile/FusionProfile.h) exactly and prints `groups: [i-j] ...`
// and `iteration_ms: <end of last transfer>`, then the same two lines,
// prefixed by their name, for each baseline: per_tensor, single_group,
// threshold_<T>MB (DDP / Horovod buckets, T = 25 by default) and even_<m>
// (the best split into m equal tensor counts).
//
// The simulators are MLIR-free; MLIR only reads the module.
//
//===----------------------------------------------------------------------===//

#include "ScheduledModule.h"

#include "hetero/Profile/FusionProfile.h"
#include "hetero/Profile/PipelineProfile.h"
#include "hetero/Sim/PipelineSim.h"
#include "hetero/Sim/Timeline.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

using namespace hetero;

namespace {

int usage(const std::string &problem) {
  std::fprintf(stderr,
               "hetero-sim: %s\n"
               "usage: hetero-sim pipeline --stages S --microbatches M "
               "--group-size k|adaptive --forward-ms F --backward-ms B "
               "--comm-ms C [--trace file] [--memory-cap N] "
               "[--chrome-trace out.json] [--svg out.svg]\n"
               "       hetero-sim <scheduled.mlir> --profile profile.json "
               "[--schedule name] [--chrome-trace out.json] [--svg out.svg]\n"
               "       hetero-sim fusion <profile.json> [--threshold-mb T]\n",
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

  int64_t groupSize = 0;
  std::string group = options.count("group-size") ? options["group-size"] : "";
  if (group == "adaptive") {
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
  return report(
      sim::simulate(
          sim::kfkbPrograms(int64_t(stages), int64_t(microbatches), groupSize),
          costs),
      options);
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
    if (std::string problem = profile::parsePipelineProfile(
            text, int64_t(schedule.programs.size()), costs);
        !problem.empty())
      return failure(options["profile"] + ": " + problem);
    std::printf("schedule: @%s\n", schedule.name.c_str());
    if (int status = report(sim::simulate(schedule.programs, costs), options))
      return status;
  }
  return 0;
}

void printFusionPlan(const std::string &prefix, const fusion::Plan &plan) {
  std::printf("%sgroups: %s\n", prefix.c_str(),
              fusion::formatGroups(plan.groups).c_str());
  std::printf("%siteration_ms: %.6g\n", prefix.c_str(), plan.iterationMs);
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
  if (llvm::StringRef(command).ends_with(".mlir") || command == "-")
    return runScheduledModule(argc, argv);
  return usage("unknown command '" + command +
               "', expected 'pipeline', 'fusion' or a scheduled .mlir file");
}
