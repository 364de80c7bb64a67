//===- PassOutput.h - the files passes read and write -----------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Internal to the passes: the reports a pass writes (schedules, summaries)
// and the JSON profiles it reads (costs, timelines), with their errors on
// the op the pass runs on.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_PASSES_PASSOUTPUT_H
#define HETERO_PASSES_PASSOUTPUT_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/ToolOutputFile.h"

#include <memory>
#include <string>
#include <vector>

namespace hetero {

/// Opens the file a reporting pass writes to ('-' is stdout); on failure
/// emits an error on `anchor` and returns null.
std::unique_ptr<llvm::ToolOutputFile> openPassOutput(mlir::Operation *anchor,
                                                     llvm::StringRef path);

/// Reads the profile a pass takes and hands its text to `parse`, which
/// returns "" or its problem; on failure emits "<pass>: <path>: <problem>"
/// (or the reason the file cannot be read) on `anchor`.
mlir::LogicalResult
readPassProfile(mlir::Operation *anchor, llvm::StringRef pass,
                llvm::StringRef path,
                llvm::function_ref<std::string(const std::string &)> parse);

/// readPassProfile for a profile of several sets: `{"sets": [p0, p1, ...]}`
/// hands each pi to `parse` in turn, anything else is one set.
mlir::LogicalResult
readPassProfileSets(mlir::Operation *anchor, llvm::StringRef pass,
                    llvm::StringRef path,
                    llvm::function_ref<std::string(const std::string &)> parse);

/// readPassProfileSets into `problems`, one per set, each read by
/// `parseOne(text, problem)`.
template <typename Problem>
mlir::LogicalResult
readPassProfiles(mlir::Operation *anchor, llvm::StringRef pass,
                 llvm::StringRef path,
                 std::string (*parseOne)(const std::string &, Problem &),
                 std::vector<Problem> &problems) {
  problems.clear();
  return readPassProfileSets(anchor, pass, path, [&](const std::string &text) {
    problems.emplace_back();
    return parseOne(text, problems.back());
  });
}

} // namespace hetero

#endif // HETERO_PASSES_PASSOUTPUT_H
