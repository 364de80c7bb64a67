//===- TorchCsv.h - schedules in torch.distributed.pipelining's CSV -------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free. torch.distributed.pipelining stores a pipeline order as CSV: one
// row per rank, one cell per action written [stage][type][micro-batch], e.g.
// `0F0`, `1B3`, `0SEND_F2`, `1RECV_B0`; an empty cell is an idle slot. hetero
// maps one stage per rank (stage s on rank s).
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_SCHEDULE_TORCHCSV_H
#define HETERO_SCHEDULE_TORCHCSV_H

#include "hetero/Schedule/Kfkb.h"

#include <string>
#include <vector>

namespace hetero::schedule {

/// The CSV of `programs` (stage s on row s), with transfers.
std::string exportTorchCsv(const std::vector<std::vector<Action>> &programs);

struct ImportedSchedule {
  std::vector<std::vector<Action>> programs;
  /// "line L, column C: <problem>" when the CSV cannot be read; empty
  /// otherwise.
  std::string error;
};

/// Reads a CSV of one row per rank. Rows that hold only compute actions (the
/// "compute only" form) get their transfers added around each task. Split
/// backwards (I, W), UNSHARD/RESHARD, several stages per rank and
/// micro-batches outside 0..microbatches-1 are errors. The result is not
/// verified: run verifyPrograms on it.
ImportedSchedule importTorchCsv(const std::string &text, int64_t microbatches);

} // namespace hetero::schedule

#endif // HETERO_SCHEDULE_TORCHCSV_H
