//===- PointToPoint.cpp - buffered sends and link emulation --------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Point-to-point messages between pipeline stages.
//
// A buffered send copies the message and returns at once, as a NIC with its
// own queue would: a stage goes on computing while its activations travel.
// Pipeline schedules are verified under exactly that model (a send never
// waits for its receive), and a rendezvous-mode blocking send would deadlock
// 1F1B on messages above the MPI eager limit.
//
// The link model emulates a slower network on one host. Each directed link
// (communicator, peer) carries one message at a time at the configured
// bandwidth, plus a fixed latency; with `nic`, every message and collective
// a rank sends shares one link instead, as one network card per machine
// would (training and checkpoint traffic then queue behind each other). The
// sender stamps each message with its arrival time on the shared monotonic
// clock; the receiver hands the message over no earlier than that. Messages
// then take the time a real link of that bandwidth would take, whatever the
// underlying transport.
//
// Under the link model, or while links are measured (LinkCosts.cpp), every
// message carries a MessageStamp after its payload: the emulated arrival,
// the post time and the sender. The receiver times the messages it waited
// for from those stamps.
//
// All-reduces take the time of a ring over the communicator's own link: from
// this rank's post (or when the link's previous collective ends), 2 (n - 1)
// latencies plus 2 (n - 1) / n of the buffer at the bandwidth, and never
// less than the backend's own completion, which waits for the last rank.
//
//===----------------------------------------------------------------------===//

#include "Runtime.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

namespace hetero::rt {
namespace {

constexpr size_t kStampBytes = sizeof(MessageStamp);

/// A message handed over to a receiver that was waiting for it arrived
/// between the previous poll and this one, and is timed as arriving midway
/// when that gap is at most 250 us or a quarter of its time since the post
/// (so off by at most 12.5%: a busy machine deschedules waiting ranks for
/// milliseconds).
constexpr double kPreciseGapSeconds = 250e-6;
constexpr double kPreciseGapFraction = 0.25;

struct LinkModel {
  double bytesPerSecond = 0.0; // 0: unlimited
  double latencySeconds = 0.0;
  bool sharedNic = false;
  bool active() const { return bytesPerSecond > 0.0 || latencySeconds > 0.0; }
};

struct PointToPointState {
  LinkModel link;
  /// When each directed link is next free, in hrt_wtime seconds.
  std::map<std::pair<hrt_comm, int>, double> linkFree;
  /// Buffered sends not yet known to be complete, oldest first.
  std::vector<std::unique_ptr<PendingOperation>> outstanding;
};

PointToPointState &p2p() {
  static PointToPointState instance;
  return instance;
}

/// When the link to `peer` of `comm` (-1: the communicator's collectives)
/// is next free.
double &linkFree(hrt_comm comm, int peer) {
  PointToPointState &state = p2p();
  return state.link.sharedNic ? state.linkFree[{nullptr, -2}]
                              : state.linkFree[{comm, peer}];
}

/// A send from a copy of the caller's message, with its arrival stamp when
/// the link model is active.
class StagedSend final : public PendingOperation {
public:
  std::vector<char> storage;
  std::unique_ptr<PendingOperation> inner;

  hrt_status test(bool &done) override { return inner->test(done); }
  void abandon() override { inner->abandon(); }
};

/// A receive of a stamped message: it lands in a staging buffer and is
/// handed over no earlier than its emulated arrival. A poll that finds it
/// still missing shows that the receiver waits for it; handed over soon
/// enough after the previous poll, the message is timed.
class StampedRecv final : public PendingOperation {
public:
  std::vector<char> storage;
  void *destination = nullptr;
  size_t bytes = 0;
  std::unique_ptr<PendingOperation> inner;
  bool received = false;
  bool waitedFor = false;
  double lastPoll = 0.0;

  hrt_status test(bool &done) override {
    done = false;
    double now = hrt_wtime();
    double previousPoll = lastPoll;
    lastPoll = now;
    if (!received) {
      if (hrt_status status = inner->test(received))
        return status;
      if (!received) {
        waitedFor = true;
        return HRT_SUCCESS;
      }
    }
    MessageStamp stamp;
    std::memcpy(&stamp, storage.data() + bytes, kStampBytes);
    if (now < stamp.arrival) {
      waitedFor = true;
      return HRT_SUCCESS;
    }
    std::memcpy(destination, storage.data(), bytes);
    // An emulated message arrives at its stamp, if it was waited for.
    double arrival = std::max(stamp.arrival, (previousPoll + now) / 2.0);
    double gap = now - std::max(stamp.arrival, previousPoll);
    noteArrival(stamp, bytes, arrival,
                waitedFor &&
                    (gap <= kPreciseGapSeconds ||
                     gap <= kPreciseGapFraction * (now - stamp.posted)));
    done = true;
    return HRT_SUCCESS;
  }
  void abandon() override {
    if (!received)
      inner->abandon();
  }
};

/// Completes the buffered sends that have finished, oldest first, and
/// reports the first failure.
hrt_status reapCompleted() {
  auto &outstanding = p2p().outstanding;
  hrt_status failure = HRT_SUCCESS;
  auto kept = outstanding.begin();
  for (auto &pending : outstanding) {
    bool done = false;
    hrt_status status = pending->test(done);
    if (status != HRT_SUCCESS && failure == HRT_SUCCESS)
      failure = status;
    if (!done && status == HRT_SUCCESS)
      *kept++ = std::move(pending);
  }
  outstanding.erase(kept, outstanding.end());
  return failure;
}

} // namespace

hrt_status configureLinkModel(double megabytesPerSecond, double latencyMs,
                              bool sharedNic, const CallSite &site) {
  if (!(megabytesPerSecond >= 0.0) || !(latencyMs >= 0.0))
    return fail(HRT_ERROR_INVALID_ARGUMENT, site,
                "the link bandwidth (MB/s) and latency (ms) must be >= 0 "
                "(0 bandwidth: unlimited)");
  LinkModel &link = p2p().link;
  link.bytesPerSecond = megabytesPerSecond * 1024.0 * 1024.0;
  link.latencySeconds = latencyMs / 1000.0;
  link.sharedNic = sharedNic;
  p2p().linkFree.clear();
  return HRT_SUCCESS;
}

hrt_status configureLinkModelFromEnvironment(const CallSite &site) {
  const char *text = std::getenv("HETERO_RT_LINK");
  if (!text || !*text)
    return configureLinkModel(0.0, 0.0, false, site);
  char *end = nullptr;
  double bandwidth = std::strtod(text, &end);
  double latency = 0.0;
  bool valid = end != text, nic = false;
  if (valid && *end == ',') {
    const char *latencyText = end + 1;
    latency = std::strtod(latencyText, &end);
    valid = end != latencyText;
  }
  if (valid && std::strcmp(end, ",nic") == 0) {
    nic = true;
    end += 4;
  }
  if (!valid || *end != '\0')
    return fail(HRT_ERROR_INVALID_ARGUMENT, site,
                std::string("HETERO_RT_LINK='") + text +
                    "' is not '<MB/s>[,<latency ms>[,nic]]'");
  return configureLinkModel(bandwidth, latency, nic, site);
}

bool linkModelActive() { return p2p().link.active(); }

bool stampedMessages() {
  return p2p().link.active() || linkMeasurementActive();
}

namespace {
/// A collective through the link model: complete when the backend has
/// completed it and its emulated time on the link has passed.
class EmulatedCollective final : public PendingOperation {
public:
  EmulatedCollective(std::unique_ptr<PendingOperation> inner, double readyAt)
      : inner(std::move(inner)), readyAt(readyAt) {}

  hrt_status test(bool &done) override {
    done = false;
    if (!innerDone) {
      if (hrt_status status = inner->test(innerDone))
        return status;
      if (!innerDone)
        return HRT_SUCCESS;
    }
    done = hrt_wtime() >= readyAt;
    return HRT_SUCCESS;
  }
  void abandon() override {
    if (!innerDone)
      inner->abandon();
  }

private:
  std::unique_ptr<PendingOperation> inner;
  double readyAt;
  bool innerDone = false;
};
} // namespace

std::unique_ptr<PendingOperation>
throughLinkModel(std::unique_ptr<PendingOperation> pending,
                 const CallSite &site) {
  const LinkModel &link = p2p().link;
  int ranks = site.comm ? site.comm->size : 1;
  if (!link.active() || ranks < 2)
    return pending;
  // A ring all-reduce: every rank sends and receives 2 (n - 1) / n of the
  // buffer in 2 (n - 1) steps. The communicator's link carries one
  // collective at a time, from this rank's post on.
  double steps = 2.0 * (ranks - 1);
  double seconds = steps * link.latencySeconds;
  if (link.bytesPerSecond > 0.0)
    seconds += steps / ranks * double(site.bytes) / link.bytesPerSecond;
  double &free = linkFree(site.comm, -1);
  double start = std::max(hrt_wtime(), free);
  free = start + seconds;
  auto emulated =
      std::make_unique<EmulatedCollective>(std::move(pending), start + seconds);
  emulated->site = site;
  return emulated;
}

hrt_status postSend(Backend &backend, const void *buffer, size_t count,
                    hrt_dtype dtype, const CallSite &site, bool copy,
                    std::unique_ptr<PendingOperation> &pending) {
  const LinkModel &link = p2p().link;
  bool stamped = stampedMessages();
  if (!copy && !stamped)
    return backend.isend(buffer, count, dtype, site, pending);
  size_t bytes = count * hrt_dtype_size(dtype);
  auto staged = std::make_unique<StagedSend>();
  staged->storage.resize(bytes + (stamped ? kStampBytes : 0));
  if (bytes)
    std::memcpy(staged->storage.data(), buffer, bytes);
  if (stamped) {
    MessageStamp stamp{0.0, hrt_wtime(), worldRank(), copy ? 1 : 0};
    if (link.active()) {
      double &free = linkFree(site.comm, site.peer);
      double start = std::max(stamp.posted, free);
      free = start + (link.bytesPerSecond > 0.0
                          ? double(bytes) / link.bytesPerSecond
                          : 0.0);
      stamp.arrival = free + link.latencySeconds;
    }
    std::memcpy(staged->storage.data() + bytes, &stamp, kStampBytes);
  }
  if (hrt_status status =
          backend.isend(staged->storage.data(), staged->storage.size(),
                        HRT_UINT8, site, staged->inner))
    return status;
  pending = std::move(staged);
  return HRT_SUCCESS;
}

hrt_status postRecv(Backend &backend, void *buffer, size_t count,
                    hrt_dtype dtype, const CallSite &site,
                    std::unique_ptr<PendingOperation> &pending) {
  if (!stampedMessages())
    return backend.irecv(buffer, count, dtype, site, pending);
  auto emulated = std::make_unique<StampedRecv>();
  emulated->bytes = count * hrt_dtype_size(dtype);
  emulated->destination = buffer;
  emulated->storage.resize(emulated->bytes + kStampBytes);
  if (hrt_status status =
          backend.irecv(emulated->storage.data(), emulated->storage.size(),
                        HRT_UINT8, site, emulated->inner))
    return status;
  emulated->lastPoll = hrt_wtime();
  pending = std::move(emulated);
  return HRT_SUCCESS;
}

hrt_status keepBufferedSend(std::unique_ptr<PendingOperation> pending) {
  p2p().outstanding.push_back(std::move(pending));
  return reapCompleted();
}

hrt_status flushBufferedSends() {
  auto &outstanding = p2p().outstanding;
  hrt_status failure = HRT_SUCCESS;
  for (auto &pending : outstanding) {
    hrt_status status = waitWithTimeout(*pending);
    if (status != HRT_SUCCESS && failure == HRT_SUCCESS)
      failure = status;
  }
  outstanding.clear();
  return failure;
}

size_t bufferedSendsInFlight() {
  reapCompleted();
  return p2p().outstanding.size();
}

} // namespace hetero::rt
