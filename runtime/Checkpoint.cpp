//===- Checkpoint.cpp - Gemini's in-memory checkpoints --------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The runtime of hetero.checkpoint, hetero.ckpt_chunk and hetero.ckpt_commit
// (hrt_mlir_ckpt_*), and the recovery that hetero-run asks for before the
// first step (hrt_ckpt_*).
//
// Every rank (a "machine") keeps, per checkpoint shard it holds (its own and
// those of the peers whose replica set it is in), one segment of CPU memory:
// a header and two slots, the last complete checkpoint and the one in
// progress. The segments live in the rank's checkpoint agent
// (CheckpointAgent.h) when one is configured, so that they survive the
// rank, else in the process.
//
// The checkpoint opened at step s holds the state before step s. Its local
// copy is made when it opens; its remote copies arrive as chunks on a
// communicator of their own, each with a header and a checksum, and are
// drained into the holder's slot whenever the runtime polls (every wait) and
// at the commit. The commit waits for this rank's outgoing chunks and for
// every chunk of the shards it hosts, agrees with all ranks (a MIN
// all-reduce) that the step's checkpoint is complete everywhere, and only
// then marks the slots complete; the previous checkpoint is overwritten by
// the next step's, never before. A slot still being written is never
// restored.
//
// Recovery finds the newest step whose checkpoint of every rank's shard is
// complete (and its checksum right) in some rank's memory, restores each
// rank's shard from its own memory, else from the lowest-ranked peer that
// holds it, and hands it to the next checkpoint that opens, which copies it
// into the state before the step runs.
//
//===----------------------------------------------------------------------===//

#include "CheckpointAgent.h"
#include "Runtime.h"

#include "hetero/Checkpoint/Checksum.h"
#include "hetero/Checkpoint/Placement.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <sstream>

#include <sys/mman.h>
#include <unistd.h>

using namespace hetero;
using namespace hetero::rt;

namespace {

constexpr uint64_t kSegmentMagic = 0x3130305450434b48ULL; // "HCKPT001"
constexpr uint64_t kChunkMagic = 0x3130304b4e484348ULL;   // "HCHNK001"
constexpr int kChunkTag = 7301;
constexpr int kRestoreTag = 7302;
constexpr size_t kHeaderBytes = 4096;

enum SlotState : int64_t { kEmpty = 0, kWriting = 1, kComplete = 2 };

struct SlotHeader {
  std::atomic<int64_t> state;
  int64_t step;
  uint64_t checksum;
  int64_t received;
  /// The run that writes the slot: a slot a dead run left half written is
  /// started afresh, not added to.
  uint64_t run;
};

struct SegmentHeader {
  uint64_t magic;
  uint64_t fingerprint;
  int64_t owner;
  int64_t shardBytes;
  SlotHeader slots[2];
};
static_assert(sizeof(SegmentHeader) <= kHeaderBytes);

struct ChunkHeader {
  uint64_t magic;
  uint64_t run;
  int64_t owner;
  int64_t step;
  int64_t offset;
  int64_t bytes;
  int64_t shardBytes;
  uint64_t checksum;
  int64_t copy;
};

[[noreturn]] void fatal(const std::string &message) {
  std::fprintf(stderr, "hetero runtime error: %s\n", message.c_str());
  std::fflush(stderr);
  hrt_abort(1);
  __builtin_unreachable();
}

void orFatal(hrt_status status) {
  if (status != HRT_SUCCESS)
    fatal(hrt_last_error());
}

/// The two slots of one owner's shard in one rank's memory.
class Segment {
public:
  ~Segment() {
    if (base)
      munmap(base, mapped);
  }
  SegmentHeader &header() { return *static_cast<SegmentHeader *>(base); }
  char *slot(int index) {
    return static_cast<char *>(base) + kHeaderBytes +
           size_t(index) * size_t(header().shardBytes);
  }
  /// The slot that holds the newest complete checkpoint, or -1.
  int newestComplete() {
    int best = -1;
    for (int s = 0; s < 2; ++s)
      if (header().slots[s].state.load(std::memory_order_acquire) ==
              kComplete &&
          (best < 0 || header().slots[s].step > header().slots[best].step))
        best = s;
    return best;
  }
  /// The slot to write the checkpoint of `step` into: the one this run is
  /// already writing for it, else the one without the newest complete one.
  int slotFor(int64_t step, uint64_t run) {
    for (int s = 0; s < 2; ++s)
      if (header().slots[s].state.load(std::memory_order_acquire) == kWriting &&
          header().slots[s].step == step && header().slots[s].run == run)
        return s;
    int newest = newestComplete();
    int slot = newest < 0 ? 0 : 1 - newest;
    SlotHeader &target = header().slots[slot];
    target.state.store(kWriting, std::memory_order_release);
    target.step = step;
    target.received = 0;
    target.checksum = 0;
    target.run = run;
    return slot;
  }
  void commit(int slot) {
    SlotHeader &target = header().slots[slot];
    target.checksum =
        checkpoint::checksum(this->slot(slot), size_t(header().shardBytes));
    target.state.store(kComplete, std::memory_order_release);
  }

  void *base = nullptr;
  size_t mapped = 0;
};

/// A chunk received before its emulated arrival (the link model).
struct Landed {
  std::vector<char> message;
  double arrival;
  int64_t step;
};

struct Tensor {
  char *data;
  size_t bytes;
  size_t offset;
};

struct State {
  // Configuration (hrt_ckpt_configure).
  std::string agentSocket;
  uint64_t fingerprint = 0;
  void (*copyState)(void *host, long long bytes, int toDevice) = nullptr;
  std::unique_ptr<agent::Client> client;
  // The communicator of checkpoint traffic, over the world.
  hrt_comm comm = nullptr;
  int rank = 0;
  int size = 1;
  /// Identifies this run's chunks and slots, the same on every rank.
  uint64_t run = 0;

  // The checkpoint opened by the last hrt_mlir_ckpt_begin.
  int64_t step = -1;
  bool active = false;
  int64_t expectedTensors = 0;
  std::vector<Tensor> tensors;
  size_t shardBytes = 0;
  checkpoint::Placement placement;
  std::vector<int64_t> hostedOwners;
  int ownSlot = -1;
  std::unique_ptr<Segment> own;
  std::map<int64_t, std::unique_ptr<Segment>> hosted;
  std::vector<std::pair<std::vector<char>, hrt_request>> sends;
  std::deque<Landed> landed;
  bool corruptChunk = false;
  bool draining = false;

  // The agreement on the last commit: a MIN all-reduce of "complete here"
  // posted at the commit and settled before any slot of an older
  // checkpoint is overwritten (the next opening, or a newer step's chunk).
  hrt_request agreement = nullptr;
  int64_t agreementStep = -1;
  int64_t agreementFlag = 0;
  std::vector<std::pair<Segment *, int>> agreedSlots;

  // A recovered shard, restored when the checkpoint of its step opens.
  int64_t restoreStep = -1;
  std::vector<char> restoreBytes;

  hrt_ckpt_stats stats{};
};

State &ckpt() {
  static State instance;
  return instance;
}

std::string segmentName(int64_t owner) {
  return "ckpt-r" + std::to_string(owner);
}

/// Maps segment `name` of `owner`'s shard of `shardBytes` bytes: from the
/// agent, else anonymous memory. A segment of another program or size
/// starts empty.
std::unique_ptr<Segment> openSegment(int64_t owner, size_t shardBytes) {
  State &s = ckpt();
  auto segment = std::make_unique<Segment>();
  segment->mapped = kHeaderBytes + 2 * shardBytes;
  bool fresh = true;
  if (s.client) {
    int fd = -1;
    std::string error;
    if (!s.client->open(segmentName(owner), segment->mapped, fd, fresh, error))
      fatal("rank " + std::to_string(s.rank) +
            ": cannot open the checkpoint memory of rank " +
            std::to_string(owner) + ": " + error);
    segment->base = mmap(nullptr, segment->mapped, PROT_READ | PROT_WRITE,
                         MAP_SHARED, fd, 0);
    close(fd);
  } else {
    segment->base = mmap(nullptr, segment->mapped, PROT_READ | PROT_WRITE,
                         MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  }
  if (segment->base == MAP_FAILED) {
    segment->base = nullptr;
    fatal("rank " + std::to_string(s.rank) +
          ": cannot map the checkpoint memory of rank " +
          std::to_string(owner) + ": " + std::strerror(errno));
  }
  SegmentHeader &header = segment->header();
  if (fresh || header.magic != kSegmentMagic ||
      header.fingerprint != s.fingerprint || header.owner != owner ||
      header.shardBytes != int64_t(shardBytes)) {
    std::memset(segment->base, 0, kHeaderBytes);
    header.magic = kSegmentMagic;
    header.fingerprint = s.fingerprint;
    header.owner = owner;
    header.shardBytes = int64_t(shardBytes);
  }
  return segment;
}

void ensureComm() {
  State &s = ckpt();
  if (s.comm)
    return;
  hrt_comm world = nullptr;
  orFatal(hrt_comm_world(&world));
  orFatal(hrt_comm_rank(world, &s.rank));
  // A communicator of its own: chunks never match the training's messages.
  orFatal(hrt_comm_split(world, 0, s.rank, &s.comm));
  orFatal(hrt_comm_size(s.comm, &s.size));
  int64_t run = int64_t(
      uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()) ^
      uint64_t(getpid()) << 32);
  orFatal(hrt_broadcast(&run, 1, HRT_INT64, 0, s.comm));
  s.run = uint64_t(run);
}

/// Writes a received chunk into its holder's slot.
void applyChunk(const std::vector<char> &message) {
  State &s = ckpt();
  ChunkHeader header;
  std::memcpy(&header, message.data(), sizeof(header));
  const char *payload = message.data() + sizeof(header);
  if (checkpoint::checksum(payload, size_t(header.bytes)) != header.checksum) {
    std::fprintf(stderr,
                 "hetero runtime: rank %d: a checkpoint chunk of rank %lld "
                 "for step %lld is corrupt (checksum mismatch); that "
                 "checkpoint will not be committed\n",
                 s.rank, (long long)header.owner, (long long)header.step);
    s.corruptChunk = true;
    return;
  }
  std::unique_ptr<Segment> &segment = s.hosted[header.owner];
  if (!segment || segment->header().shardBytes != header.shardBytes)
    segment = openSegment(header.owner, size_t(header.shardBytes));
  if (header.run != s.run)
    return; // sent by a run that died before this one
  int slot = segment->slotFor(header.step, s.run);
  std::memcpy(segment->slot(slot) + header.offset, payload,
              size_t(header.bytes));
  segment->header().slots[slot].received += header.bytes;
  s.stats.chunks_received += 1;
  s.stats.bytes_received += header.bytes;
}

/// Receives every chunk that has come, and applies those that have arrived
/// (the link model delays them to their emulated arrival).
void drain() {
  State &s = ckpt();
  if (!s.comm || s.draining)
    return;
  s.draining = true;
  while (true) {
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kChunkTag, s.comm->mpi, &flag, &status);
    if (!flag)
      break;
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    std::vector<char> message(static_cast<size_t>(count));
    MPI_Recv(message.data(), count, MPI_BYTE, status.MPI_SOURCE, kChunkTag,
             s.comm->mpi, MPI_STATUS_IGNORE);
    ChunkHeader header;
    if (message.size() < sizeof(header))
      fatal("rank " + std::to_string(s.rank) + ": a checkpoint message of " +
            std::to_string(count) + " bytes is shorter than its header");
    std::memcpy(&header, message.data(), sizeof(header));
    size_t expected = sizeof(header) + size_t(header.bytes);
    if (header.magic != kChunkMagic ||
        (message.size() != expected &&
         message.size() != expected + 2 * sizeof(double)))
      fatal("rank " + std::to_string(s.rank) +
            ": a malformed checkpoint message from rank " +
            std::to_string(status.MPI_SOURCE));
    double arrival = 0;
    if (message.size() > expected)
      std::memcpy(&arrival, message.data() + expected, sizeof(double));
    s.landed.push_back({std::move(message), arrival, header.step});
  }
  // A chunk of a newer step than the unsettled commit would overwrite the
  // slot that commit keeps: it waits until the agreement is in.
  double now = hrt_wtime();
  while (!s.landed.empty() && s.landed.front().arrival <= now &&
         (!s.agreement || s.landed.front().step <= s.agreementStep)) {
    applyChunk(s.landed.front().message);
    s.landed.pop_front();
  }
  s.draining = false;
}

/// Waits for the agreement on the last commit. Where some rank could not
/// complete that checkpoint, its slots go back to being written, so that
/// they are neither restored nor kept over the previous checkpoint.
void settleAgreement() {
  State &s = ckpt();
  if (!s.agreement)
    return;
  orFatal(hrt_wait(&s.agreement));
  s.agreement = nullptr;
  if (s.agreementFlag) {
    s.stats.commits += 1;
    s.stats.last_committed_step = s.agreementStep;
  } else {
    for (auto [segment, slot] : s.agreedSlots)
      segment->header().slots[slot].state.store(kWriting,
                                                std::memory_order_release);
    s.stats.incomplete += 1;
    if (s.rank == 0)
      std::fprintf(stderr,
                   "hetero runtime: the checkpoint of step %lld is incomplete "
                   "on some rank; the previous one stays\n",
                   (long long)s.agreementStep);
  }
  s.agreedSlots.clear();
  drain();
}

/// Opens this rank's checkpoint once its tensors are known.
void openCheckpoint() {
  State &s = ckpt();
  s.shardBytes = 0;
  for (Tensor &tensor : s.tensors) {
    tensor.offset = s.shardBytes;
    s.shardBytes += tensor.bytes;
  }
  if (s.restoreStep >= 0) {
    if (s.restoreStep != s.step || s.restoreBytes.size() != s.shardBytes)
      fatal("rank " + std::to_string(s.rank) +
            ": the recovered checkpoint is "
            "of step " +
            std::to_string(s.restoreStep) + " (" +
            std::to_string(s.restoreBytes.size()) + " bytes), but step " +
            std::to_string(s.step) + " opened one of " +
            std::to_string(s.shardBytes) +
            " bytes; resume the training at the recovered step");
    for (const Tensor &tensor : s.tensors) {
      std::memcpy(tensor.data, s.restoreBytes.data() + tensor.offset,
                  tensor.bytes);
      if (s.copyState)
        s.copyState(tensor.data, (long long)tensor.bytes, 1);
    }
    s.restoreStep = -1;
    s.restoreBytes = {};
  }
  if (!s.active)
    return;
  // The chunks read the host buffers from here to the commit.
  if (s.copyState)
    for (const Tensor &tensor : s.tensors)
      s.copyState(tensor.data, (long long)tensor.bytes, 0);
  if (!s.own || s.own->header().shardBytes != int64_t(s.shardBytes))
    s.own = openSegment(s.rank, s.shardBytes);
  s.ownSlot = s.own->slotFor(s.step, s.run);
  // The local copy.
  for (const Tensor &tensor : s.tensors)
    std::memcpy(s.own->slot(s.ownSlot) + tensor.offset, tensor.data,
                tensor.bytes);
  s.own->header().slots[s.ownSlot].received = int64_t(s.shardBytes);
  drain();
}

/// The commit's wait for the chunks of the shards this rank hosts.
void awaitHostedChunks() {
  State &s = ckpt();
  double timeout = timeoutSeconds();
  auto start = std::chrono::steady_clock::now();
  int polls = 0;
  while (true) {
    drain();
    bool complete = true;
    std::string missing;
    for (int64_t owner : s.hostedOwners) {
      auto found = s.hosted.find(owner);
      int64_t received = 0, total = -1;
      if (found != s.hosted.end()) {
        Segment &segment = *found->second;
        total = segment.header().shardBytes;
        for (int slot = 0; slot < 2; ++slot)
          if (segment.header().slots[slot].state == kWriting &&
              segment.header().slots[slot].step == s.step &&
              segment.header().slots[slot].run == s.run)
            received = segment.header().slots[slot].received;
      }
      if (total < 0 || received < total) {
        complete = false;
        missing = "rank " + std::to_string(owner) + " (" +
                  std::to_string(received) + " of " +
                  (total < 0 ? std::string("?") : std::to_string(total)) +
                  " bytes)";
        break;
      }
    }
    if (complete)
      return;
    std::chrono::duration<double> waited =
        std::chrono::steady_clock::now() - start;
    if (timeout > 0 && waited.count() > timeout)
      fatal("hrt_mlir_ckpt_commit on rank " + std::to_string(s.rank) +
            ": timed out after " + std::to_string(timeout) +
            " s waiting for the checkpoint chunks of step " +
            std::to_string(s.step) + " from " + missing);
    pauseBetweenPolls(polls);
  }
}

} // namespace

namespace hetero::rt {
void pollCheckpointTraffic() {
  if (ckpt().comm)
    drain();
}

void releaseCheckpoints() {
  State &s = ckpt();
  if (s.agreement)
    hrt_wait(&s.agreement);
  s.agreement = nullptr;
  s.own.reset();
  s.hosted.clear();
  s.client.reset();
  s.comm = nullptr; // freed with the runtime's communicators
}
} // namespace hetero::rt

//===----------------------------------------------------------------------===//
// Compiled code
//===----------------------------------------------------------------------===//

extern "C" void hrt_mlir_ckpt_begin(long long step, long long replicas,
                                    long long world, int placement,
                                    long long every, long long tensors) {
  State &s = ckpt();
  ensureComm();
  if (world != s.size)
    fatal("hrt_mlir_ckpt_begin: the checkpoint spans " + std::to_string(world) +
          " ranks, but the job has " + std::to_string(s.size));
  auto layout = std::array{checkpoint::Layout::Group, checkpoint::Layout::Ring,
                           checkpoint::Layout::Mixed};
  static_assert(HRT_CKPT_GROUP == 0 && HRT_CKPT_RING == 1 &&
                    HRT_CKPT_MIXED == 2,
                "the layouts are indexed by hrt_ckpt_placement");
  if (placement < HRT_CKPT_GROUP || placement > HRT_CKPT_MIXED || every < 1 ||
      tensors < 1 ||
      !checkpoint::checkPlacement(world, replicas, layout[placement]).empty())
    fatal("hrt_mlir_ckpt_begin: invalid checkpoint (" +
          std::to_string(replicas) + " replicas of " + std::to_string(world) +
          ", placement " + std::to_string(placement) + ", every " +
          std::to_string(every) + ")");
  if (s.placement.machines != world || s.placement.replicas != replicas ||
      s.placement.layout != layout[placement]) {
    s.placement = checkpoint::place(world, replicas, layout[placement]);
    s.hostedOwners = s.placement.hostedBy(s.rank);
  }
  settleAgreement();
  s.step = step;
  s.active = step % every == 0;
  s.expectedTensors = tensors;
  s.tensors.clear();
  s.corruptChunk = false;
}

extern "C" void hrt_mlir_ckpt_tensor(void *data, long long bytes) {
  State &s = ckpt();
  if (int64_t(s.tensors.size()) >= s.expectedTensors || bytes < 0)
    fatal("hrt_mlir_ckpt_tensor: more tensors than hrt_mlir_ckpt_begin "
          "announced, or a negative size");
  s.tensors.push_back({static_cast<char *>(data), size_t(bytes), 0});
  if (int64_t(s.tensors.size()) == s.expectedTensors)
    openCheckpoint();
}

extern "C" void hrt_mlir_ckpt_chunk(const void *data, long long offset,
                                    long long bytes, long long copy) {
  State &s = ckpt();
  if (!s.active)
    return;
  auto tensor = std::find_if(s.tensors.begin(), s.tensors.end(),
                             [&](const Tensor &t) { return t.data == data; });
  std::vector<int64_t> peers = s.placement.peersOf(s.rank);
  if (tensor == s.tensors.end() || offset < 0 || bytes <= 0 ||
      size_t(offset + bytes) > tensor->bytes || copy < 0 ||
      copy >= int64_t(peers.size()))
    fatal("hrt_mlir_ckpt_chunk on rank " + std::to_string(s.rank) +
          ": bytes [" + std::to_string(offset) + ", " +
          std::to_string(offset + bytes) + ") of copy " + std::to_string(copy) +
          " are not part of the open checkpoint");
  ChunkHeader header{kChunkMagic,
                     s.run,
                     s.rank,
                     s.step,
                     int64_t(tensor->offset) + offset,
                     bytes,
                     int64_t(s.shardBytes),
                     checkpoint::checksum(tensor->data + offset, size_t(bytes)),
                     copy};
  std::vector<char> message(sizeof(header) + size_t(bytes));
  std::memcpy(message.data(), &header, sizeof(header));
  std::memcpy(message.data() + sizeof(header), tensor->data + offset,
              size_t(bytes));
  hrt_request request = nullptr;
  orFatal(hrt_isend(message.data(), message.size(), HRT_UINT8, int(peers[copy]),
                    kChunkTag, s.comm, &request));
  s.sends.emplace_back(std::move(message), request);
  s.stats.chunks_sent += 1;
  s.stats.bytes_sent += bytes;
  drain();
}

extern "C" void hrt_mlir_ckpt_commit(void) {
  State &s = ckpt();
  if (!s.active)
    return;
  double start = hrt_wtime();
  for (auto &[message, request] : s.sends)
    orFatal(hrt_wait(&request));
  s.sends.clear();
  awaitHostedChunks();
  // Complete here: the slots are marked now, and the MIN all-reduce that
  // says whether they are complete everywhere is settled before anything
  // overwrites the previous checkpoint.
  s.own->commit(s.ownSlot);
  s.agreedSlots = {{s.own.get(), s.ownSlot}};
  for (int64_t owner : s.hostedOwners) {
    Segment &segment = *s.hosted.at(owner);
    int slot = segment.slotFor(s.step, s.run);
    segment.commit(slot);
    s.agreedSlots.push_back({&segment, slot});
  }
  s.agreementStep = s.step;
  s.agreementFlag = s.corruptChunk ? 0 : 1;
  orFatal(hrt_iall_reduce(&s.agreementFlag, &s.agreementFlag, 1, HRT_INT64,
                          HRT_MIN, s.comm, &s.agreement));
  s.active = false;
  s.stats.commit_wait_seconds += hrt_wtime() - start;
}

//===----------------------------------------------------------------------===//
// hetero-run
//===----------------------------------------------------------------------===//

extern "C" hrt_status hrt_ckpt_configure(const hrt_ckpt_options *options) {
  CallSite here{"hrt_ckpt_configure", nullptr, 0};
  if (!hrt_initialized())
    return fail(HRT_ERROR_NOT_INITIALIZED, here, "not initialised");
  if (!options)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here, "the options are null");
  State &s = ckpt();
  ensureComm();
  s.fingerprint = options->fingerprint;
  s.copyState = options->copy_state;
  s.client.reset();
  if (!options->agents || !*options->agents)
    return HRT_SUCCESS;
  s.agentSocket = std::string(options->agents) + "/agent-" +
                  std::to_string(s.rank) + ".sock";
  std::string error;
  s.client = agent::Client::connect(s.agentSocket, error);
  if (!s.client && options->agent_program && *options->agent_program) {
    if (!agent::spawn(options->agent_program, s.agentSocket, error))
      return fail(HRT_ERROR_UNAVAILABLE, here, error);
    s.client = agent::Client::connect(s.agentSocket, error);
  }
  if (!s.client)
    return fail(HRT_ERROR_UNAVAILABLE, here, error);
  return HRT_SUCCESS;
}

namespace {
/// One complete checkpoint in a rank's memory: (owner, step, bytes).
using Holding = std::array<int64_t, 3>;

/// The complete, intact checkpoints in this rank's agent.
std::vector<Holding>
inventory(std::map<int64_t, std::unique_ptr<Segment>> &held) {
  State &s = ckpt();
  std::vector<Holding> holdings;
  if (!s.client)
    return holdings;
  std::vector<std::pair<std::string, size_t>> segments;
  std::string error;
  if (!s.client->list(segments, error))
    fatal("rank " + std::to_string(s.rank) + ": " + error);
  for (auto &[name, bytes] : segments) {
    long long owner = -1;
    if (std::sscanf(name.c_str(), "ckpt-r%lld", &owner) != 1 || owner < 0 ||
        owner >= s.size || bytes <= kHeaderBytes)
      continue;
    std::unique_ptr<Segment> segment =
        openSegment(owner, (bytes - kHeaderBytes) / 2);
    for (int slot = 0; slot < 2; ++slot) {
      SlotHeader &header = segment->header().slots[slot];
      int64_t state = header.state.load(std::memory_order_acquire);
      if (state == kWriting && header.received > 0)
        std::fprintf(stderr,
                     "hetero runtime: rank %d: the checkpoint of rank %lld "
                     "for step %lld in CPU memory was never committed (%lld "
                     "of %lld bytes arrived); skipped\n",
                     s.rank, owner, (long long)header.step,
                     (long long)header.received,
                     (long long)segment->header().shardBytes);
      if (state != kComplete)
        continue;
      size_t shard = size_t(segment->header().shardBytes);
      if (checkpoint::checksum(segment->slot(slot), shard) != header.checksum) {
        std::fprintf(stderr,
                     "hetero runtime: rank %d: the checkpoint of rank %lld "
                     "for step %lld in CPU memory is corrupt (checksum "
                     "mismatch); skipped\n",
                     s.rank, owner, (long long)header.step);
        continue;
      }
      holdings.push_back({owner, header.step, int64_t(shard)});
    }
    held[owner] = std::move(segment);
  }
  return holdings;
}
} // namespace

extern "C" hrt_status hrt_ckpt_recover(long long newer_than, long long *step,
                                       int *from_peer) {
  CallSite here{"hrt_ckpt_recover", nullptr, 0};
  if (!hrt_initialized())
    return fail(HRT_ERROR_NOT_INITIALIZED, here, "not initialised");
  if (!step || !from_peer)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here, "an output is null");
  State &s = ckpt();
  ensureComm();
  here.comm = s.comm;
  *step = -1;
  *from_peer = 0;
  std::map<int64_t, std::unique_ptr<Segment>> held;
  std::vector<Holding> mine = inventory(held);
  // Every rank's holdings, padded to the most any rank has.
  int64_t count = int64_t(mine.size()), most = 0;
  if (hrt_status status =
          hrt_all_reduce(&count, &most, 1, HRT_INT64, HRT_MAX, s.comm))
    return status;
  std::vector<int64_t> table(size_t(most) * 3, -1), all(table.size() * s.size);
  for (size_t i = 0; i < mine.size(); ++i)
    std::copy(mine[i].begin(), mine[i].end(), table.begin() + 3 * long(i));
  if (most > 0)
    if (hrt_status status = hrt_all_gather(table.data(), all.data(),
                                           table.size(), HRT_INT64, s.comm))
      return status;
  // holders[(owner, step)] = the ranks that hold it.
  std::map<std::pair<int64_t, int64_t>, std::vector<int>> holders;
  std::map<std::pair<int64_t, int64_t>, int64_t> sizes;
  for (int rank = 0; rank < s.size; ++rank)
    for (int64_t i = 0; i < most; ++i) {
      const int64_t *entry =
          &all[(size_t(rank) * size_t(most) + size_t(i)) * 3];
      if (entry[0] < 0)
        continue;
      holders[{entry[0], entry[1]}].push_back(rank);
      sizes[{entry[0], entry[1]}] = entry[2];
    }
  std::set<int64_t, std::greater<>> steps;
  for (auto &[key, ranks] : holders)
    steps.insert(key.second);
  int64_t chosen = -1;
  for (int64_t candidate : steps) {
    if (candidate <= newer_than)
      break;
    bool everyone = true;
    for (int64_t owner = 0; owner < s.size && everyone; ++owner)
      everyone = holders.count({owner, candidate}) > 0;
    if (everyone) {
      chosen = candidate;
      break;
    }
  }
  if (chosen < 0)
    return HRT_SUCCESS;

  // The shard of every owner from itself, else from its lowest holder.
  auto sourceOf = [&](int64_t owner) {
    const std::vector<int> &ranks = holders[{owner, chosen}];
    return std::count(ranks.begin(), ranks.end(), int(owner)) ? int(owner)
                                                              : ranks.front();
  };
  auto slotOf = [&](Segment &segment) {
    for (int slot = 0; slot < 2; ++slot)
      if (segment.header().slots[slot].state == kComplete &&
          segment.header().slots[slot].step == chosen)
        return segment.slot(slot);
    return static_cast<char *>(nullptr);
  };
  s.restoreBytes.assign(size_t(sizes[{s.rank, chosen}]), 0);
  hrt_request incoming = nullptr;
  int source = sourceOf(s.rank);
  if (source == s.rank) {
    std::memcpy(s.restoreBytes.data(), slotOf(*held.at(s.rank)),
                s.restoreBytes.size());
  } else if (hrt_status status =
                 hrt_irecv(s.restoreBytes.data(), s.restoreBytes.size(),
                           HRT_UINT8, source, kRestoreTag, s.comm, &incoming)) {
    return status;
  }
  for (int64_t owner = 0; owner < s.size; ++owner)
    if (owner != s.rank && sourceOf(owner) == s.rank)
      if (hrt_status status =
              hrt_send(slotOf(*held.at(owner)), size_t(sizes[{owner, chosen}]),
                       HRT_UINT8, int(owner), kRestoreTag, s.comm))
        return status;
  if (incoming)
    if (hrt_status status = hrt_wait(&incoming))
      return status;
  s.restoreStep = chosen;
  s.stats.restored_step = chosen;
  *step = chosen;
  *from_peer = source != s.rank;
  return HRT_SUCCESS;
}

extern "C" hrt_status hrt_ckpt_get_stats(hrt_ckpt_stats *stats) {
  if (!stats)
    return fail(HRT_ERROR_INVALID_ARGUMENT, {"hrt_ckpt_get_stats", nullptr, 0},
                "the output is null");
  settleAgreement();
  *stats = ckpt().stats;
  return HRT_SUCCESS;
}

extern "C" hrt_status hrt_ckpt_finish(int stop_agent) {
  CallSite here{"hrt_ckpt_finish", nullptr, 0};
  State &s = ckpt();
  if (!s.comm)
    return HRT_SUCCESS;
  here.comm = s.comm;
  settleAgreement();
  // Nobody needs a checkpoint once every rank is done.
  if (hrt_status status = hrt_barrier(s.comm))
    return status;
  s.own.reset();
  s.hosted.clear();
  if (s.client && stop_agent) {
    std::string error;
    if (!s.client->quit(error))
      return fail(HRT_ERROR_UNAVAILABLE, here, error);
    s.client.reset();
  }
  return HRT_SUCCESS;
}
