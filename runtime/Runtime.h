//===- Runtime.h - internals shared by the runtime and its backends -------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_RUNTIME_RUNTIME_H
#define HETERO_RUNTIME_RUNTIME_H

#include "hetero-rt/compress.h"
#include "hetero-rt/hrt.h"

#include <mpi.h>

#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

/// A communicator: an MPI communicator, plus the NCCL communicator over the
/// same ranks when the NCCL backend is active.
struct hrt_comm_impl {
  MPI_Comm mpi = MPI_COMM_NULL;
  void *nccl = nullptr;
  int rank = 0;
  int size = 1;
  bool isWorld = false;
  /// State derived from this communicator, created collectively on first
  /// use and released with it, so that every rank finds the same: Zen's
  /// hash seeds, and per node size the node and cross-node communicators of
  /// hierarchical collectives.
  std::optional<std::array<uint64_t, 4>> sparseSeeds;
  std::map<int, std::pair<hrt_comm_impl *, hrt_comm_impl *>> nodeComms;
};

namespace hetero::rt {

/// Where a failing call was and what it moved: every error message names it.
struct CallSite {
  static constexpr int kUnset = std::numeric_limits<int>::min();
  const char *operation; // "hrt_all_reduce"
  hrt_comm comm;         // may be null
  size_t bytes;
  int peer = kUnset; // point to point: the peer; rooted calls: the root
  int tag = kUnset;
  const char *peerRole = "peer";
};

/// Records the calling thread's error message and returns `status`:
/// "<operation> on rank <r> (<bytes> bytes[, peer p][, tag t]): <detail>".
hrt_status fail(hrt_status status, const CallSite &site,
                const std::string &detail);

/// Records `message`, a complete error message (of a call that failed on
/// another thread), as the calling thread's error and returns `status`.
hrt_status failWith(hrt_status status, const std::string &message);

/// The text MPI gives for an error code.
std::string mpiErrorString(int code);

/// The configured timeout in seconds; 0 waits forever.
double timeoutSeconds();
/// This rank's rank in the world communicator (0 before hrt_init).
int worldRank();

/// Whether the runtime is initialised on the MPI backend.
bool mpiBackendActive();

/// Whether MPI runs with MPI_THREAD_MULTIPLE, so that runtime threads may
/// call it beside the application's.
bool mpiThreadMultiple();

/// The checks every communicating call shares; only hrt_comm_free takes a
/// communicator this rank is not a member of.
hrt_status checkCall(const CallSite &site, const void *buffer, size_t count,
                     hrt_dtype dtype, bool needsMember = true);

/// The checks of collectives that the runtime computes on host buffers
/// itself (compressed and sparse all-reduces): an initialised runtime and a
/// communicator this rank is a member of. Such a collective opens a
/// HostBuffers scope for its exchanges.
hrt_status checkHostCollective(const CallSite &site);
/// checkHostCollective, and the backend's word that each of `buffers` (its
/// address, bytes and role in the error) is memory the host may read and
/// write.
struct HostBuffer {
  const void *data;
  size_t bytes;
  const char *role;
};
hrt_status checkHostCollective(const CallSite &site,
                               std::initializer_list<HostBuffer> buffers);

/// The calling thread's compute stream (hrt_register_compute_stream), or
/// null when none is registered.
void *computeStream();

/// The device side of compressed all-reduces (hrt_register_device_
/// compression) when `data` is device memory and libhetero_rt_cuda has
/// registered it; else null.
const hrt_device_compression *deviceCompressionFor(const void *data);

/// While one lives on a thread, the collectives the thread calls may be
/// given host buffers: a backend that moves device memory only (NCCL) then
/// runs them on device copies, filled before and read back after the
/// operation. The runtime's own host collectives (compressed and sparse
/// all-reduces) open one around their exchanges; anywhere else NCCL refuses
/// a host buffer, naming it.
class HostBuffers {
public:
  HostBuffers();
  ~HostBuffers();
  HostBuffers(const HostBuffers &) = delete;
  HostBuffers &operator=(const HostBuffers &) = delete;
  /// Whether a scope is open on this thread.
  static bool allowed();

private:
  bool previous;
};

/// A pending operation of a backend.
class PendingOperation {
public:
  virtual ~PendingOperation() = default;
  /// Checks for completion without blocking.
  virtual hrt_status test(bool &done) = 0;
  /// Gives up on the operation after a timeout, where the backend can.
  virtual void abandon() = 0;
  CallSite site{"", nullptr, 0};
};

/// The hrt_ ABI's request for `pending`; a completed one when it is null.
hrt_request requestFor(std::unique_ptr<PendingOperation> pending);

/// Polls `pending` until it completes or the timeout passes.
hrt_status waitWithTimeout(PendingOperation &pending);

/// Between two polls of a wait: spins briefly for latency, then yields,
/// then sleeps 50 us a poll, so that a rank that waits long (oversubscribed
/// ranks, a coordinator's idle workers) leaves the cores to the others.
/// `polls` counts the polls of the wait so far.
void pauseBetweenPolls(int &polls);

/// Marks the calling thread as blocked in `site` for as long as it lives.
/// A rank stopped by a signal meanwhile (the launcher's SIGTERM when another
/// rank of the job is lost, or a user's SIGINT) prints which operation it
/// was waiting in, for how long, and on which peer, before it dies.
class WaitScope {
public:
  explicit WaitScope(const CallSite &site);
  ~WaitScope();
  WaitScope(const WaitScope &) = delete;
  WaitScope &operator=(const WaitScope &) = delete;
};

//===----------------------------------------------------------------------===//
// The communication thread (CommThread.cpp)
//===----------------------------------------------------------------------===//

/// Whether started collectives of compiled code run on the communication
/// thread: on the MPI backend with MPI_THREAD_MULTIPLE and without the link
/// emulation (whose emulated collectives already complete on their own
/// clock), unless HETERO_RT_COMM_THREAD=0.
bool communicationThreadEnabled();
/// Whether the caller is the communication thread.
bool onCommunicationThread();
/// Runs `work` on the communication thread after everything posted before
/// it; the returned operation completes when it has run, with its status and
/// error message.
std::unique_ptr<PendingOperation>
startOnCommunicationThread(std::function<hrt_status()> work,
                           const CallSite &site);
/// Blocks until everything posted to the thread so far has run: a blocking
/// collective of the caller then follows them on every communicator.
void drainCommunicationThread();
/// Runs what is left and ends the thread (hrt_finalize).
void stopCommunicationThread();

/// A communication backend. Arguments are validated before they get here.
class Backend {
public:
  virtual ~Backend() = default;
  virtual hrt_status finalize() = 0;
  virtual hrt_status initWorld(hrt_comm world) = 0;
  virtual hrt_status split(hrt_comm parent, int color, int key,
                           hrt_comm out) = 0;
  virtual hrt_status free(hrt_comm comm) = 0;
  /// A communicator over `ranks` of `parent`, collective over them only.
  /// The default reports that the backend cannot.
  virtual hrt_status createGroup(hrt_comm parent, const std::vector<int> &ranks,
                                 int tag, hrt_comm out);
  virtual hrt_status isend(const void *buffer, size_t count, hrt_dtype dtype,
                           const CallSite &site,
                           std::unique_ptr<PendingOperation> &pending) = 0;
  virtual hrt_status irecv(void *buffer, size_t count, hrt_dtype dtype,
                           const CallSite &site,
                           std::unique_ptr<PendingOperation> &pending) = 0;
  /// Posts a send of a copy of `buffer`, which the caller may reuse at
  /// once (hrt_bsend on a backend that moves device buffers). The default
  /// reports that the backend cannot; the MPI backend's buffered sends are
  /// staged in host memory by the caller instead.
  virtual hrt_status isendCopy(const void *buffer, size_t count,
                               hrt_dtype dtype, const CallSite &site,
                               std::unique_ptr<PendingOperation> &pending);
  /// Whether the host may read and write `buffer` of `bytes`, which the
  /// runtime computes on (a compressed all-reduce's data). The default
  /// (host memory only, MPI) accepts every buffer.
  virtual hrt_status requireHost(const void *buffer, size_t bytes,
                                 const char *role, const CallSite &site);
  virtual hrt_status allReduce(const void *send, void *recv, size_t count,
                               hrt_dtype dtype, hrt_reduce_op op,
                               const CallSite &site) = 0;
  /// Posts an all-reduce that completes with `pending`. The default runs
  /// the blocking one and hands back a completed operation.
  virtual hrt_status iallReduce(const void *send, void *recv, size_t count,
                                hrt_dtype dtype, hrt_reduce_op op,
                                const CallSite &site,
                                std::unique_ptr<PendingOperation> &pending);
  virtual hrt_status allGather(const void *send, void *recv, size_t count,
                               hrt_dtype dtype, const CallSite &site) = 0;
  virtual hrt_status reduceScatter(const void *send, void *recv, size_t count,
                                   hrt_dtype dtype, hrt_reduce_op op,
                                   const CallSite &site) = 0;
  virtual hrt_status broadcast(void *buffer, size_t count, hrt_dtype dtype,
                               int root, const CallSite &site) = 0;
  virtual hrt_status reduce(const void *send, void *recv, size_t count,
                            hrt_dtype dtype, hrt_reduce_op op, int root,
                            const CallSite &site) = 0;
  virtual hrt_status allToAll(const void *send, void *recv, size_t count,
                              hrt_dtype dtype, const CallSite &site) = 0;
  virtual hrt_status barrier(const CallSite &site) = 0;
};

std::unique_ptr<Backend> createMpiBackend();

//===----------------------------------------------------------------------===//
// Point to point (PointToPoint.cpp)
//===----------------------------------------------------------------------===//

/// Sets the emulated link: bandwidth in MB/s (0: unlimited) and latency in
/// milliseconds; both 0 turn the emulation off. `sharedNic`: all of a rank's
/// traffic shares one link.
hrt_status configureLinkModel(double megabytesPerSecond, double latencyMs,
                              bool sharedNic, const CallSite &site);
/// Reads HETERO_RT_LINK="<MB/s>[,<latency ms>[,nic]]".
hrt_status configureLinkModelFromEnvironment(const CallSite &site);
bool linkModelActive();
/// What a message carries after its payload while messages are stamped
/// (under the link model or while links are measured).
struct MessageStamp {
  double arrival; // on the emulated link (hrt_wtime seconds); 0: none
  double posted;  // the sender's hrt_wtime at the post
  int32_t sender; // the sender's world rank
  int32_t timed;  // a buffered send, which its receiver times
};
/// Whether messages carry a MessageStamp.
bool stampedMessages();
/// Posts a send; `copy` sends from a copy so that the caller's buffer is
/// free at once (a buffered send, which the receiver times). Stamped
/// messages carry their MessageStamp.
hrt_status postSend(Backend &backend, const void *buffer, size_t count,
                    hrt_dtype dtype, const CallSite &site, bool copy,
                    std::unique_ptr<PendingOperation> &pending);
hrt_status postRecv(Backend &backend, void *buffer, size_t count,
                    hrt_dtype dtype, const CallSite &site,
                    std::unique_ptr<PendingOperation> &pending);
/// An all-reduce posted as `pending`, completing no earlier than the link
/// model lets it (unchanged when the model is off).
std::unique_ptr<PendingOperation>
throughLinkModel(std::unique_ptr<PendingOperation> pending,
                 const CallSite &site);
/// Keeps a posted buffered send until it completes; reports the failure of
/// any earlier one.
hrt_status keepBufferedSend(std::unique_ptr<PendingOperation> pending);
/// Waits for every buffered send.
hrt_status flushBufferedSends();
/// The buffered sends not yet complete.
size_t bufferedSendsInFlight();

//===----------------------------------------------------------------------===//
// Task times (TaskTimes.cpp)
//===----------------------------------------------------------------------===//

/// Compiled code spent [start, end] (hrt_wtime seconds) in a communication
/// call of `kind`: excluded from its task's time when it is point to point,
/// and a span of the timeline.
void noteCommunication(hrt_timeline_kind kind, double start, double end);
/// Seconds compiled code has spent in communication calls so far (a rank's
/// time blocked on others or on the network).
double communicationSeconds();
/// Reads HETERO_RT_SLOW_GEMM: ranks whose resized GEMMs are emulated as
/// slower (Resize.cpp).
hrt_status configureSlowGemmFromEnvironment(const CallSite &site);
/// One timed message's time on its link.
void noteTransfer(double seconds);
/// Reads HETERO_RT_COMPUTE (emulated compute, a sleep at each task mark)
/// and HETERO_RT_SLOWDOWN (a rank's tasks take a factor longer).
hrt_status configureComputeFromEnvironment(const CallSite &site);

/// Reads `<rank>:<factor >= 1>[,<rank>:<factor>...]` from the environment
/// variable `variable` into `factors` (empty when it is unset); a malformed
/// value fails with a message naming the variable and the format.
hrt_status readRankFactors(const char *variable, const CallSite &site,
                           std::map<long, double> &factors);

/// Emulates a slower device: after work that took `seconds`, sleeps
/// (factor - 1) times as long. Sleeps shorter than a millisecond would
/// overshoot, so they add up until they reach one.
struct Slowdown {
  double factor = 1.0;
  double owedSeconds = 0;
  /// Returns the work's emulated time, factor x seconds.
  double pay(double seconds);
};

/// Notes the communication call of compiled code that runs for as long as
/// it lives.
class CommunicationScope {
public:
  explicit CommunicationScope(hrt_timeline_kind kind)
      : kind(kind), start(hrt_wtime()) {}
  ~CommunicationScope() { noteCommunication(kind, start, hrt_wtime()); }
  CommunicationScope(const CommunicationScope &) = delete;
  CommunicationScope &operator=(const CommunicationScope &) = delete;

private:
  hrt_timeline_kind kind;
  double start;
};

//===----------------------------------------------------------------------===//
// Measured links (LinkCosts.cpp)
//===----------------------------------------------------------------------===//

bool linkMeasurementActive();
void setLinkMeasurement(bool enable);
/// A stamped message of `bytes` was handed over at `observed`; `precise`
/// when the receiver was waiting for it, so that `observed` is its arrival.
void noteArrival(const MessageStamp &stamp, size_t bytes, double observed,
                 bool precise);

//===----------------------------------------------------------------------===//
// Timeline (Timeline.cpp)
//===----------------------------------------------------------------------===//

/// A task of `kind` (forward or backward) ended at `end`; it began at the
/// later of the previous task's end and the end of the last communication.
void recordTask(hrt_timeline_kind kind, long long microbatch, double end);
/// A communication call of `kind` ran from `start` to `end`.
void recordCommunication(hrt_timeline_kind kind, double start, double end);
/// Records a collective of `bytes` that runs beside the rank's tasks (posted:
/// an instant; background: its run on the communication thread), which
/// bounds no task span.
void recordBackground(hrt_timeline_kind kind, double start, double end,
                      size_t bytes);
/// Null when the library was built without NCCL.
std::unique_ptr<Backend> createNcclBackend();

/// Receives the checkpoint chunks that have come (Checkpoint.cpp): every
/// wait polls it, so that chunks land while a rank waits.
void pollCheckpointTraffic();
/// Unmaps the checkpoints and disconnects from the agent (hrt_finalize).
void releaseCheckpoints();

/// Destroys the sync groups of compiled code (hrt_mlir_sync_ready), if any:
/// collective over the world, called by hrt_finalize.
hrt_status finishCompiledSync();

} // namespace hetero::rt

#endif // HETERO_RUNTIME_RUNTIME_H
