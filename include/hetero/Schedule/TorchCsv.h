//===- TorchCsv.h - schedules in torch.distributed.pipelining's CSV -------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// MLIR-free. torch.distributed.pipelining stores a pipeline order as CSV:
// one row per rank, one cell per action written
// [stage][type][micro-batch] (`0F0`, `2I3`, `1W3`, `3B1`, `0SEND_F2`,
// `1RECV_B0`), `(a;b)OVERLAP_F_B` for a forward and a backward run as one
// pair, and `UNSHARD`, `RESHARD`, `REDUCE_GRAD` for FSDP (which hetero
// does not have: they are read and have no effect). An empty cell is an
// idle slot. PyTorch's current names are I (input gradient), W (weight
// gradient) and B (whole backward); files written before the rename use B
// for the input gradient and BW for the whole backward. A file is read in
// the older names when it has a BW cell, or W cells and no I cell.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_SCHEDULE_TORCHCSV_H
#define HETERO_SCHEDULE_TORCHCSV_H

#include "hetero/Schedule/Kfkb.h"

#include <string>
#include <vector>

namespace hetero::schedule {

/// The CSV of `programs` (rank r on row r) with their transfers, in the
/// current names: the "compute_comms" format PyTorch's `_load_csv` reads.
std::string exportTorchCsv(const std::vector<std::vector<Action>> &programs);

struct ImportedSchedule {
  /// The program of every row (rank).
  std::vector<std::vector<Action>> programs;
  /// The rows (ranks) of the file, once its cells are read.
  int64_t rows = 0;
  /// The rank each stage runs on.
  std::vector<int64_t> rankOf;
  /// Whether the file held compute actions only (its transfers added).
  bool computeOnly = false;
  /// Whether it was read in the names before PyTorch's rename.
  bool olderNames = false;
  /// "line L, column C: <problem>" when the CSV cannot be read; empty
  /// otherwise.
  std::string error;
};

/// The cells of a CSV as they are written: per row (rank), the tasks of each
/// compute cell in order (one, or the two of an overlapped pair), and every
/// transfer cell as its own entry; idle slots and FSDP actions are left
/// out. `error` says what cannot be read.
struct CsvCells {
  std::vector<std::vector<std::vector<Action>>> rows;
  bool olderNames = false;
  std::string error;
};
CsvCells readTorchCsv(const std::string &text, int64_t stages,
                      int64_t microbatches);

/// Reads a CSV of one row per rank for a pipeline of `stages` stages and
/// `microbatches` micro-batches. A file of compute actions only gets its
/// transfers as PyTorch's lowering adds them: an input gradient right
/// before its own weight gradient becomes one whole backward, then the
/// ranks are run in turn, a task once what it needs is there; its send
/// follows it and the peer's receive is placed where the peer stands. A
/// file with transfers is taken as it is. The result is not verified: run
/// verifyPrograms on it.
ImportedSchedule importTorchCsv(const std::string &text, int64_t stages,
                                int64_t microbatches);

/// The transfers of compute-only programs (each entry one task, or the
/// tasks of an overlapped pair), placed as importTorchCsv places them;
/// `error` says where the order cannot go on.
std::vector<std::vector<Action>>
addTransfersInTurn(const std::vector<std::vector<std::vector<Task>>> &order,
                   const Placement &placement, std::string &error);

} // namespace hetero::schedule

#endif // HETERO_SCHEDULE_TORCHCSV_H
