//===- MeasuredTimeline.cpp - hetero-run --timeline -----------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Turns the spans that the runtime measured on every rank (hrt_timeline_*)
// into the rows of hetero/Sim/Timeline.h, one per rank, and writes them as
// a Chrome trace and an SVG picture.
//
//===----------------------------------------------------------------------===//

#include "MeasuredTimeline.h"

#include "hetero/Sim/Timeline.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <vector>

namespace hetero {
namespace {

bool cannotWrite(llvm::StringRef path, const std::string &reason) {
  llvm::errs() << "hetero-run: --timeline: cannot write '" << path
               << "': " << reason << "\n";
  return false;
}

bool writeFile(llvm::StringRef path, const std::string &contents) {
  std::error_code error;
  llvm::raw_fd_ostream os(path, error);
  if (error)
    return cannotWrite(path, error.message());
  os << contents;
  os.close();
  if (os.has_error()) {
    std::string reason = os.error().message();
    os.clear_error();
    return cannotWrite(path, reason);
  }
  return true;
}

/// One row per rank of a job of `ranks`, in milliseconds from the earliest
/// span, then, per rank that posted collectives without waiting, a row of
/// their runs on the communication thread ("rank r communication") and one
/// of their posts as instants ("rank r posted"), each named by its bytes.
/// Posts and runs interleave differently from one iteration to the next,
/// so they keep rows of their own, in which spans follow program order.
/// Counts the compute tasks in `tasks`.
std::vector<timeline::Row> rowsOf(const hrt_timeline_span *spans, size_t count,
                                  int ranks, RankLayout layout, size_t &tasks) {
  std::vector<timeline::Row> rows(size_t(std::max(ranks, 0)));
  std::vector<timeline::Row> background(rows.size()), posts(rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    rows[r].id = int64_t(r);
    rows[r].name = layout.name(int64_t(r));
  }
  double origin = 0.0;
  for (size_t i = 0; i < count; ++i)
    origin = i == 0 ? spans[i].start : std::min(origin, spans[i].start);
  tasks = 0;
  for (size_t i = 0; i < count; ++i) {
    const hrt_timeline_span &span = spans[i];
    if (span.rank < 0 || size_t(span.rank) >= rows.size())
      continue;
    double startMs = (span.start - origin) * 1e3;
    double endMs = (span.end - origin) * 1e3;
    auto kind = hrt_timeline_kind(span.kind);
    if (kind == HRT_TIMELINE_POSTED || kind == HRT_TIMELINE_BACKGROUND) {
      timeline::Span posted = timeline::communicationSpan(
          hrt_timeline_kind_string(kind), hrt_timeline_kind_string(kind),
          startMs, endMs);
      posted.name = std::string(hrt_timeline_kind_string(kind)) + " " +
                    std::to_string(span.microbatch) + " B";
      posted.labelled = false;
      (kind == HRT_TIMELINE_POSTED ? posts : background)[size_t(span.rank)]
          .spans.push_back(posted);
      continue;
    }
    bool task = kind == HRT_TIMELINE_FORWARD || kind == HRT_TIMELINE_BACKWARD;
    rows[size_t(span.rank)].spans.push_back(
        task ? timeline::taskSpan(kind == HRT_TIMELINE_FORWARD, span.microbatch,
                                  startMs, endMs)
             : timeline::communicationSpan(hrt_timeline_kind_string(kind),
                                           "communication", startMs, endMs));
    tasks += task;
  }
  size_t rankRows = rows.size();
  for (size_t r = 0; r < rankRows; ++r) {
    if (background[r].spans.empty() && posts[r].spans.empty())
      continue;
    background[r].id = int64_t(rankRows + 2 * r);
    background[r].name = "rank " + std::to_string(r) + " communication";
    posts[r].id = int64_t(rankRows + 2 * r + 1);
    posts[r].name = "rank " + std::to_string(r) + " posted";
    rows.push_back(std::move(background[r]));
    rows.push_back(std::move(posts[r]));
  }
  for (timeline::Row &row : rows)
    std::stable_sort(row.spans.begin(), row.spans.end(),
                     [](const timeline::Span &a, const timeline::Span &b) {
                       return a.startMs < b.startMs;
                     });
  return rows;
}

} // namespace

bool prepareTimelineDirectory(const std::string &directory) {
  if (std::error_code error = llvm::sys::fs::create_directories(directory))
    return cannotWrite(directory, error.message());
  if (!llvm::sys::fs::is_directory(directory))
    return cannotWrite(
        directory, std::make_error_code(std::errc::not_a_directory).message());
  if (std::error_code error =
          llvm::sys::fs::access(directory, llvm::sys::fs::AccessMode::Write))
    return cannotWrite(directory, error.message());
  return true;
}

namespace {
/// Gathers every rank's spans since its hrt_timeline_begin_iteration; on
/// rank 0 (`gathered`) as rows. Collective; false after a message naming
/// `option`.
bool gatherRows(hrt_comm world, RankLayout layout, const char *option,
                bool &gathered, std::vector<timeline::Row> &rows, size_t &tasks,
                size_t &dropped) {
  const hrt_timeline_span *spans = nullptr;
  size_t count = 0;
  int rank = 0, ranks = 0;
  if (hrt_timeline_gather(world, &spans, &count, &dropped) != HRT_SUCCESS ||
      hrt_comm_rank(world, &rank) != HRT_SUCCESS ||
      hrt_comm_size(world, &ranks) != HRT_SUCCESS) {
    llvm::errs() << "hetero-run: " << option << ": " << hrt_last_error()
                 << "\n";
    return false;
  }
  gathered = rank == 0;
  if (gathered)
    rows = rowsOf(spans, count, ranks, layout, tasks);
  return true;
}
} // namespace

std::string RankLayout::name(int64_t rank) const {
  std::string text = "rank " + std::to_string(rank);
  if (replicas <= 0)
    return text;
  int64_t shard = rank % shards, replica = rank / shards % replicas;
  int64_t position = rank / shards / replicas;
  if (position < int64_t(stagesOf.size())) {
    const std::vector<int64_t> &stages = stagesOf[position];
    text += stages.size() == 1 ? " (stage " : " (stages ";
    for (size_t i = 0; i < stages.size(); ++i)
      text += (i ? ", " : "") + std::to_string(stages[i]);
  } else {
    text += " (stage " + std::to_string(position);
  }
  text += ", replica " + std::to_string(replica);
  if (shards > 1)
    text += ", shard " + std::to_string(shard);
  return text + ")";
}

bool writeTimeline(hrt_comm world, const std::string &directory,
                   int64_t iteration, RankLayout layout) {
  bool gathered = false;
  std::vector<timeline::Row> rows;
  size_t tasks = 0, dropped = 0;
  if (!gatherRows(world, layout, "--timeline", gathered, rows, tasks, dropped))
    return false;
  if (!gathered)
    return true;
  llvm::SmallString<256> tracePath(directory), svgPath(directory);
  llvm::sys::path::append(tracePath, "timeline.json");
  llvm::sys::path::append(svgPath, "timeline.svg");
  std::ostringstream trace, svg;
  timeline::writeChromeTrace(rows, trace);
  timeline::writeSvg(rows, svg);
  if (!writeFile(tracePath, trace.str()) || !writeFile(svgPath, svg.str()))
    return false;
  std::printf("timeline: %s, %s (iteration %lld, %zu tasks)\n",
              tracePath.c_str(), svgPath.c_str(), (long long)iteration, tasks);
  if (dropped)
    std::printf("timeline: %zu spans left out: a rank records at most %d an "
                "iteration\n",
                dropped, HRT_TIMELINE_MAX_SPANS);
  std::fflush(stdout);
  return true;
}

bool ProfiledTimeline::add() {
  bool gathered = false;
  std::vector<timeline::Row> rows;
  size_t tasks = 0, dropped = 0;
  if (!gatherRows(world, layout, "--profile-timeline", gathered, rows, tasks,
                  dropped))
    return false;
  if (!gathered)
    return true;
  if (sum.empty()) {
    sum = rows;
    iterations = 1;
    return true;
  }
  for (size_t r = 0; r < rows.size(); ++r)
    if (rows[r].spans.size() != sum[r].spans.size()) {
      ++skipped;
      return true;
    }
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t i = 0; i < rows[r].spans.size(); ++i) {
      sum[r].spans[i].startMs += rows[r].spans[i].startMs;
      sum[r].spans[i].endMs += rows[r].spans[i].endMs;
    }
  ++iterations;
  return true;
}

bool ProfiledTimeline::write(const std::string &path) const {
  int rank = 0;
  hrt_comm_rank(world, &rank);
  if (rank != 0 || iterations == 0)
    return true;
  std::vector<timeline::Row> mean = sum;
  size_t tasks = 0;
  for (timeline::Row &row : mean)
    for (timeline::Span &span : row.spans) {
      span.startMs /= double(iterations);
      span.endMs /= double(iterations);
      tasks += span.category == "forward" || span.category == "backward";
    }
  std::ostringstream trace;
  timeline::writeChromeTrace(mean, trace);
  if (!writeFile(path, trace.str()))
    return false;
  std::printf("profile timeline: %s (the mean of %lld iterations, %zu "
              "tasks)\n",
              path.c_str(), (long long)iterations, tasks);
  if (skipped)
    std::printf("profile timeline: %lld iterations left out: their spans "
                "differ in number from the first one's\n",
                (long long)skipped);
  std::fflush(stdout);
  return true;
}

} // namespace hetero
