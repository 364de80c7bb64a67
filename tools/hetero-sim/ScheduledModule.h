//===- ScheduledModule.h - the schedules of an MLIR module ------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_TOOLS_HETERO_SIM_SCHEDULEDMODULE_H
#define HETERO_TOOLS_HETERO_SIM_SCHEDULEDMODULE_H

#include "hetero/Schedule/Kfkb.h"

#include <string>
#include <vector>

namespace hetero {

struct NamedSchedule {
  std::string name;
  std::vector<std::vector<schedule::Action>> programs;
  /// The schedule's `microbatch_size`, 0 when it states none.
  int64_t microbatchSize = 0;
  /// Where its pipeline's stages run; `programs` has one per rank.
  schedule::Placement placement;
};

/// Reads the hetero.schedule ops of the module in `path` and verifies each.
/// Problems (parse errors, unsound schedules) are reported on stderr as
/// "<file>:<line>:<col>: error: ..."; returns false after any.
bool readScheduledModule(const std::string &path,
                         std::vector<NamedSchedule> &schedules);

} // namespace hetero

#endif // HETERO_TOOLS_HETERO_SIM_SCHEDULEDMODULE_H
