//===- LinkCosts.cpp - what each incoming link costs, measured ------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Ada-Grouper needs what a message between two stages costs on the network
// the job really runs on. Nothing here knows the network: every message
// carries its post time, and a receiver that was already waiting when the
// message arrived times it (PointToPoint.cpp decides which arrivals were
// waited for). A message that queued behind the link's previous one is
// timed from that one's arrival, as the simulator counts a link's time.
// Probes separate the latency from the time per byte and measure the offset
// between the sender's clock and ours (NTP's four timestamps), so that the
// timings also hold between hosts; lib/Sim's fitLink turns the window of
// timed messages into alpha and beta.
//
//===----------------------------------------------------------------------===//

#include "Runtime.h"

#include "hetero/Sim/PlanModel.h"

#include <algorithm>
#include <deque>
#include <fstream>
#include <map>
#include <optional>

namespace hetero::rt {
namespace {

struct SenderLink {
  std::deque<sim::TimedMessage> window;
  /// When the link's previous buffered message was handed over, and
  /// whether the receiver was waiting for it then.
  double lastObserved = -1.0;
  bool lastPrecise = false;
  /// The latency of the last kProbeHistory probes; the least counts (a
  /// windowed minimum, as TCP's congestion control keeps the round trip).
  std::deque<double> probedAlphaMs;
  double offsetSeconds = 0.0;
  std::optional<double> alphaMs() const {
    if (probedAlphaMs.empty())
      return std::nullopt;
    return *std::min_element(probedAlphaMs.begin(), probedAlphaMs.end());
  }
};

struct LinkCostsState {
  bool measuring = false;
  size_t window = 32;
  std::map<int, SenderLink> links;
};

LinkCostsState &linkCosts() {
  static LinkCostsState instance;
  return instance;
}

/// Tags of the probe's ping and pong: above any pipeline's.
constexpr int kPingTag = 32760;
constexpr int kPongTag = 32761;
/// The shortest of these round trips counts: the others met a peer that
/// was descheduled or busy.
constexpr int kProbeRounds = 8;
constexpr size_t kProbeHistory = 4;

/// Identifies this machine's monotonic clock: ranks under one kernel (the
/// same boot) read the same CLOCK_MONOTONIC, so their offset is 0 exactly.
uint64_t clockIdentity() {
  static uint64_t identity = [] {
    std::ifstream boot("/proc/sys/kernel/random/boot_id");
    std::string id;
    std::getline(boot, id);
    uint64_t hash = 1469598103934665603ULL; // FNV-1a
    for (unsigned char c : id)
      hash = (hash ^ c) * 1099511628211ULL;
    return id.empty() ? 0 : hash;
  }();
  return identity;
}

struct Ping {
  double sent;
  uint64_t clock;
};
struct Pong {
  double pingSent, pingReceived, sent;
  uint64_t clock;
};

} // namespace

bool linkMeasurementActive() { return linkCosts().measuring; }

void setLinkMeasurement(bool enable) { linkCosts().measuring = enable; }

void noteArrival(const MessageStamp &stamp, size_t bytes, double observed,
                 bool precise) {
  if (!stamp.timed)
    return;
  SenderLink &link = linkCosts().links[stamp.sender];
  double posted = stamp.posted - link.offsetSeconds;
  bool queued = link.lastObserved > posted;
  // Behind a message handed over late, the link was free earlier than we
  // know: this one's start is unknown.
  if (precise && (!queued || link.lastPrecise)) {
    double seconds = observed - std::max(posted, link.lastObserved);
    link.window.push_back({double(bytes), std::max(0.0, seconds) * 1e3});
    while (link.window.size() > linkCosts().window)
      link.window.pop_front();
    noteTransfer(std::max(0.0, seconds));
  }
  link.lastObserved = observed;
  link.lastPrecise = precise;
}

} // namespace hetero::rt

using namespace hetero::rt;

extern "C" hrt_status hrt_link_probe(hrt_comm comm, const int *peers,
                                     int count) {
  CallSite here{"hrt_link_probe", comm, 0};
  if (hrt_status status = checkHostCollective(here))
    return status;
  if (!mpiBackendActive())
    return fail(HRT_ERROR_UNAVAILABLE, here,
                "links are probed with host messages over the MPI backend "
                "only");
  if (!stampedMessages())
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "links are not measured: call hrt_link_measure(1) first");
  if (count < 0 || (count > 0 && !peers))
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "needs a list of peers (count >= 0)");
  size_t n = size_t(count);
  std::vector<int> senders(n, 0);
  MPI_Group group, worldGroup;
  MPI_Comm_group(comm->mpi, &group);
  MPI_Comm_group(MPI_COMM_WORLD, &worldGroup);
  for (int i = 0; i < count; ++i) {
    if (peers[i] < 0 || peers[i] >= comm->size || peers[i] == comm->rank) {
      MPI_Group_free(&group);
      MPI_Group_free(&worldGroup);
      return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                  "peer " + std::to_string(peers[i]) +
                      " is not another rank of the communicator's " +
                      std::to_string(comm->size));
    }
    MPI_Group_translate_ranks(group, 1, &peers[i], worldGroup, &senders[i]);
  }
  MPI_Group_free(&group);
  MPI_Group_free(&worldGroup);

  // Per peer, the round with the shortest network delay wins.
  std::vector<double> bestDelay(n, -1.0), bestOffset(n);
  std::vector<bool> sameClock(n, false);
  for (int round = 0; round < kProbeRounds; ++round) {
    std::vector<Ping> pingIn(n), pingOut(n);
    std::vector<Pong> pongIn(n), pongOut(n);
    std::vector<hrt_request> pings(n), pongs(n), sends;
    sends.reserve(2 * n);
    for (int i = 0; i < count; ++i) {
      if (hrt_status status = hrt_irecv(&pingIn[i], sizeof(Ping), HRT_UINT8,
                                        peers[i], kPingTag, comm, &pings[i]))
        return status;
      if (hrt_status status = hrt_irecv(&pongIn[i], sizeof(Pong), HRT_UINT8,
                                        peers[i], kPongTag, comm, &pongs[i]))
        return status;
    }
    for (int i = 0; i < count; ++i) {
      pingOut[i] = {hrt_wtime(), clockIdentity()};
      sends.emplace_back();
      if (hrt_status status =
              hrt_isend(&pingOut[i], sizeof(Ping), HRT_UINT8, peers[i],
                        kPingTag, comm, &sends.back()))
        return status;
    }
    for (int i = 0; i < count; ++i) {
      if (hrt_status status = hrt_wait(&pings[i]))
        return status;
      double received = hrt_wtime();
      pongOut[i] = {pingIn[i].sent, received, hrt_wtime(), clockIdentity()};
      sends.emplace_back();
      if (hrt_status status =
              hrt_isend(&pongOut[i], sizeof(Pong), HRT_UINT8, peers[i],
                        kPongTag, comm, &sends.back()))
        return status;
    }
    for (int i = 0; i < count; ++i) {
      if (hrt_status status = hrt_wait(&pongs[i]))
        return status;
      double t4 = hrt_wtime();
      const Pong &pong = pongIn[i];
      double delay = (t4 - pong.pingSent) - (pong.sent - pong.pingReceived);
      sameClock[i] = pong.clock != 0 && pong.clock == clockIdentity();
      if (bestDelay[i] < 0.0 || delay < bestDelay[i]) {
        bestDelay[i] = delay;
        bestOffset[i] =
            ((pong.pingReceived - pong.pingSent) + (pong.sent - t4)) / 2.0;
      }
    }
    for (hrt_request &send : sends)
      if (hrt_status status = hrt_wait(&send))
        return status;
  }
  for (int i = 0; i < count; ++i) {
    SenderLink &link = linkCosts().links[senders[i]];
    link.probedAlphaMs.push_back(std::max(0.0, bestDelay[i]) / 2.0 * 1e3);
    while (link.probedAlphaMs.size() > kProbeHistory)
      link.probedAlphaMs.pop_front();
    link.offsetSeconds = sameClock[i] ? 0.0 : bestOffset[i];
  }
  return HRT_SUCCESS;
}

extern "C" int hrt_link_estimates(hrt_link_estimate *estimates, int capacity) {
  int count = 0;
  for (const auto &[sender, link] : linkCosts().links) {
    if (link.window.empty() && link.probedAlphaMs.empty())
      continue;
    if (estimates && count < capacity) {
      std::vector<hetero::sim::TimedMessage> messages(link.window.begin(),
                                                      link.window.end());
      hetero::sim::LinkCost cost =
          hetero::sim::fitLink(messages, link.alphaMs());
      hrt_link_estimate &out = estimates[count];
      out.sender = sender;
      out.messages = int(messages.size());
      out.alpha_ms = cost.alphaMs;
      out.ms_per_byte = cost.msPerByte;
      out.message_bytes = 0.0;
      out.message_ms = 0.0;
      for (const hetero::sim::TimedMessage &message : messages) {
        out.message_bytes += message.bytes / double(messages.size());
        out.message_ms += message.ms / double(messages.size());
      }
      out.clock_offset_ms = link.offsetSeconds * 1e3;
      out.probed = !link.probedAlphaMs.empty();
    }
    ++count;
  }
  return count;
}

extern "C" void hrt_link_estimates_reset(void) {
  for (auto &[sender, link] : linkCosts().links) {
    link.window.clear();
    link.lastObserved = -1.0;
    link.lastPrecise = false;
  }
}
