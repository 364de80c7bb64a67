//===- Timeline.cpp - the spans of a measured iteration -------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Between hrt_timeline_begin_iteration and hrt_timeline_gather each rank
// records when its compute tasks ran (from hrt_mlir_task_mark) and when its
// compiled code sat in communication calls (from the hrt_mlir_ entry
// points); the gather brings every rank's spans to rank 0, from which
// hetero-run draws the iteration (--timeline). Gathering uses the MPI
// communicator under `comm` on either backend: the spans are host data.
//
//===----------------------------------------------------------------------===//

#include "Runtime.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

namespace hetero::rt {
namespace {

/// This rank's spans of the iteration being recorded.
struct Recorder {
  std::mutex mutex;
  /// Read without the lock on every call of compiled code.
  std::atomic<bool> recording{false};
  double lastMark = 0.0;
  double lastCommunicationEnd = 0.0;
  std::vector<hrt_timeline_span> spans;
  size_t dropped = 0;
  /// On rank 0, what the last gather brought.
  std::vector<hrt_timeline_span> gathered;

  /// Keeps `span` unless the iteration has all the spans it may keep. The
  /// lock is held.
  void add(double start, double end, hrt_timeline_kind kind,
           long long microbatch) {
    if (spans.size() >= HRT_TIMELINE_MAX_SPANS) {
      ++dropped;
      return;
    }
    spans.push_back({start, end, /*rank=*/-1, kind, microbatch});
  }
};

Recorder &recorder() {
  static Recorder instance;
  return instance;
}

/// An MPI collective posted on a host buffer, polled by waitWithTimeout.
class PostedCollective : public PendingOperation {
public:
  explicit PostedCollective(const CallSite &where) { site = where; }
  hrt_status test(bool &done) override {
    int flag = 0;
    int code = MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
    if (code != MPI_SUCCESS)
      return fail(HRT_ERROR_BACKEND, site, mpiErrorString(code));
    done = flag != 0;
    return HRT_SUCCESS;
  }
  // A collective can be neither cancelled nor freed: the abort that follows
  // a timeout ends it.
  void abandon() override {}
  MPI_Request request = MPI_REQUEST_NULL;
};

/// Runs the collective that `post` posts on `request` to completion.
template <typename Post>
hrt_status runCollective(const CallSite &site, Post post) {
  PostedCollective pending(site);
  if (int code = post(&pending.request); code != MPI_SUCCESS)
    return fail(HRT_ERROR_BACKEND, site, mpiErrorString(code));
  return waitWithTimeout(pending);
}

} // namespace

void recordTask(hrt_timeline_kind kind, long long microbatch, double end) {
  Recorder &state = recorder();
  if (!state.recording.load(std::memory_order_relaxed))
    return;
  std::lock_guard<std::mutex> lock(state.mutex);
  state.add(std::max(state.lastMark, state.lastCommunicationEnd), end, kind,
            microbatch);
  state.lastMark = end;
}

void recordCommunication(hrt_timeline_kind kind, double start, double end) {
  Recorder &state = recorder();
  if (!state.recording.load(std::memory_order_relaxed))
    return;
  std::lock_guard<std::mutex> lock(state.mutex);
  state.add(start, end, kind, /*microbatch=*/-1);
  state.lastCommunicationEnd = std::max(state.lastCommunicationEnd, end);
}

void recordBackground(hrt_timeline_kind kind, double start, double end,
                      size_t bytes) {
  Recorder &state = recorder();
  if (!state.recording.load(std::memory_order_relaxed))
    return;
  std::lock_guard<std::mutex> lock(state.mutex);
  state.add(start, end, kind, (long long)bytes);
}

} // namespace hetero::rt

using namespace hetero::rt;

extern "C" const char *hrt_timeline_kind_string(hrt_timeline_kind kind) {
  switch (kind) {
  case HRT_TIMELINE_FORWARD:
    return "forward";
  case HRT_TIMELINE_BACKWARD:
    return "backward";
  case HRT_TIMELINE_SEND:
    return "send";
  case HRT_TIMELINE_RECV:
    return "recv";
  case HRT_TIMELINE_WAIT:
    return "wait";
  case HRT_TIMELINE_COLLECTIVE:
    return "collective";
  case HRT_TIMELINE_POSTED:
    return "posted";
  case HRT_TIMELINE_BACKGROUND:
    return "background";
  }
  return "unknown";
}

extern "C" hrt_status hrt_timeline_begin_iteration(void) {
  Recorder &state = recorder();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.spans.clear();
  state.dropped = 0;
  state.lastMark = state.lastCommunicationEnd = hrt_wtime();
  state.recording = true;
  return HRT_SUCCESS;
}

extern "C" hrt_status hrt_timeline_gather(hrt_comm comm,
                                          const hrt_timeline_span **spans,
                                          size_t *count, size_t *dropped) {
  CallSite here{"hrt_timeline_gather", comm, 0};
  if (!hrt_initialized())
    return fail(HRT_ERROR_NOT_INITIALIZED, here,
                "the runtime is not initialised; call hrt_init first");
  if (!comm || !spans || !count)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here, "null argument");
  if (comm->size == 0)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "this rank is not a member of the communicator");
  Recorder &state = recorder();
  std::vector<hrt_timeline_span> mine;
  long long header[2];
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    state.recording = false;
    mine.swap(state.spans);
    header[0] = (long long)mine.size();
    header[1] = (long long)state.dropped;
    state.dropped = 0;
  }
  for (hrt_timeline_span &span : mine)
    span.rank = comm->rank;
  here.bytes = mine.size() * sizeof(hrt_timeline_span);

  // Each rank's span and drop counts, then the spans themselves.
  bool root = comm->rank == 0;
  std::vector<long long> headers(root ? 2 * size_t(comm->size) : 0);
  if (hrt_status status = runCollective(here, [&](MPI_Request *request) {
        return MPI_Igather(header, 2, MPI_LONG_LONG, headers.data(), 2,
                           MPI_LONG_LONG, 0, comm->mpi, request);
      }))
    return status;
  std::vector<int> counts(headers.size() / 2), offsets(counts.size());
  size_t total = 0, droppedTotal = 0;
  for (size_t r = 0; r < counts.size(); ++r) {
    counts[r] = int(headers[2 * r]);
    offsets[r] = int(total);
    total += size_t(counts[r]);
    droppedTotal += size_t(headers[2 * r + 1]);
  }
  state.gathered.assign(total, hrt_timeline_span{});
  MPI_Datatype spanType;
  MPI_Type_contiguous(int(sizeof(hrt_timeline_span)), MPI_BYTE, &spanType);
  MPI_Type_commit(&spanType);
  hrt_status status = runCollective(here, [&](MPI_Request *request) {
    return MPI_Igatherv(mine.data(), int(mine.size()), spanType,
                        state.gathered.data(), counts.data(), offsets.data(),
                        spanType, 0, comm->mpi, request);
  });
  MPI_Type_free(&spanType);
  if (status != HRT_SUCCESS)
    return status;
  *spans = root ? state.gathered.data() : nullptr;
  *count = total;
  if (dropped)
    *dropped = droppedTotal;
  return HRT_SUCCESS;
}
