//===- AdaptivePlanning.h - hetero-run --adaptive's measurements -*- C++
//-*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// What hetero-run --adaptive feeds the runtime's planner after each
// iteration: this rank's stage times (hrt_task_times) and the links into
// its stage as the runtime measured them (hrt_link_estimates), with a probe
// of the neighbouring stages' ranks before every re-plan. Rank r of a grid
// with `perStage` ranks per stage runs stage r / perStage, and its
// pipeline neighbours are r - perStage and r + perStage.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_TOOLS_HETERO_RUN_ADAPTIVEPLANNING_H
#define HETERO_TOOLS_HETERO_RUN_ADAPTIVEPLANNING_H

#include "hetero-rt/hrt.h"

#include <cstdint>
#include <string>
#include <vector>

namespace hetero {

class AdaptivePlanning {
public:
  AdaptivePlanning(hrt_planner planner, hrt_comm world, int rank,
                   int64_t perStage, int period, std::vector<hrt_plan> plans);

  /// Turns link measurement on and probes the neighbours; false after a
  /// message.
  bool start();
  /// Records this iteration's measurements (none when `warmup`) and ends
  /// the iteration in the planner; false after a message.
  bool afterIteration(bool warmup, int &switched);
  /// ", k = <k>" and, when the plans differ in micro-batch size,
  /// ", b = <b>": the plan in force.
  std::string describe() const;
  /// Whether the last iteration ended with a re-plan.
  bool replanned() const { return iterations % period == 0; }
  /// "k = <k>[, b = <b>]: <ms> ms" for every plan, as the last re-plan
  /// predicted them, separated by "; ".
  std::string predictions() const;

private:
  bool probe();

  hrt_planner planner;
  hrt_comm world;
  int rank;
  int64_t perStage;
  int period;
  int64_t iterations = 0;
  std::vector<int> neighbours;
  std::vector<hrt_plan> plans;
  bool sizesDiffer;
};

} // namespace hetero

#endif // HETERO_TOOLS_HETERO_RUN_ADAPTIVEPLANNING_H
