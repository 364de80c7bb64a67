//===- Kfkb.cpp - kFkB pipeline schedules ---------------------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Schedule/Kfkb.h"

#include <algorithm>

namespace hetero::schedule {

std::vector<Task> kfkbProgram(int64_t stages, int64_t microbatches,
                              int64_t groupSize, int64_t stage) {
  int64_t groups = (microbatches + groupSize - 1) / groupSize;
  auto emitGroup = [&](std::vector<Task> &program, Task::Kind kind,
                       int64_t group) {
    int64_t first = group * groupSize;
    int64_t last = std::min(microbatches, first + groupSize);
    for (int64_t microbatch = first; microbatch < last; ++microbatch)
      program.push_back({kind, microbatch});
  };
  std::vector<Task> program;
  int64_t warmup = std::min(stages - 1 - stage, groups);
  int64_t forward = 0, backward = 0;
  for (; forward < warmup; ++forward)
    emitGroup(program, Task::Forward, forward);
  for (; forward < groups; ++forward, ++backward) {
    emitGroup(program, Task::Forward, forward);
    emitGroup(program, Task::Backward, backward);
  }
  for (; backward < groups; ++backward)
    emitGroup(program, Task::Backward, backward);
  return program;
}

std::string formatProgram(const std::vector<Task> &program) {
  std::string text;
  for (const Task &task : program) {
    if (!text.empty())
      text += ' ';
    text += task.kind == Task::Forward ? 'F' : 'B';
    text += std::to_string(task.microbatch);
  }
  return text;
}

} // namespace hetero::schedule
