//===- Runtime.cpp - the hrt_ C entry points ------------------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Validates arguments, keeps the error state and the timeout, and hands the
// work to the backend chosen at hrt_init.
//
//===----------------------------------------------------------------------===//

#include "Runtime.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <mutex>
#include <sstream>
#include <thread>
#include <unistd.h>

struct hrt_request_impl {
  std::unique_ptr<hetero::rt::PendingOperation> pending;
};

namespace hetero::rt {
namespace {

struct State {
  std::unique_ptr<Backend> backend;
  hrt_backend kind = HRT_BACKEND_MPI;
  hrt_comm_impl world;
  bool ownsMpi = false;
  double timeout = 0.0;
};

State *state = nullptr;

/// HETERO_RT_FAULT="<rank>:<kill|exit>:<n>": the rank dies (SIGKILL) or
/// exits without finalising at its n-th communicating call, so that tests
/// can lose a rank mid-step at a point of their choosing.
struct Fault {
  int rank = -1;
  bool kill = true;
  long at = 0;
  long calls = 0;
};
Fault fault;

/// What WaitScope records for the stop report: plain values only, read by
/// a signal handler.
struct WaitRecord {
  volatile std::sig_atomic_t active = 0;
  const char *operation = "";
  const char *peerRole = "peer";
  int worldRank = 0;
  size_t bytes = 0;
  int peer = CallSite::kUnset;
  int tag = CallSite::kUnset;
  timespec start{};
};
WaitRecord waitRecord;
struct sigaction previousTerm, previousInt;
bool stopReportInstalled = false;
/// MPI cannot be initialised twice, so a failed hrt_init leaves it running
/// and the hrt_finalize that ends a later successful init finalises it.
bool runtimeInitializedMpi = false;
thread_local std::string lastError;

bool validDtype(hrt_dtype dtype) {
  return dtype >= HRT_FLOAT32 && dtype <= HRT_BFLOAT16;
}

bool validOp(hrt_reduce_op op) { return op >= HRT_SUM && op <= HRT_AVG; }

} // namespace

hrt_status checkCall(const CallSite &site, const void *buffer, size_t count,
                     hrt_dtype dtype, bool needsMember) {
  if (!state)
    return fail(HRT_ERROR_NOT_INITIALIZED, site,
                "the runtime is not initialised; call hrt_init first");
  if (!site.comm)
    return fail(HRT_ERROR_INVALID_ARGUMENT, site, "the communicator is null");
  if (needsMember && site.comm->size == 0)
    return fail(HRT_ERROR_INVALID_ARGUMENT, site,
                "this rank is not a member of the communicator (hrt_comm_split "
                "gave it a negative color)");
  if (fault.at > 0 && state->world.rank == fault.rank &&
      ++fault.calls == fault.at) {
    if (fault.kill)
      std::raise(SIGKILL);
    std::_Exit(0);
  }
  if (!validDtype(dtype))
    return fail(HRT_ERROR_INVALID_ARGUMENT, site,
                "unknown data type " + std::to_string(int(dtype)));
  if (count > size_t(std::numeric_limits<int>::max()))
    return fail(HRT_ERROR_INVALID_ARGUMENT, site,
                "the count " + std::to_string(count) +
                    " exceeds the 2^31-1 elements one call can move");
  if (count > 0 && !buffer)
    return fail(HRT_ERROR_INVALID_ARGUMENT, site,
                "the buffer is null but the count is " + std::to_string(count));
  return HRT_SUCCESS;
}

namespace {

/// checkCall for collectives with a send and a receive buffer.
hrt_status checkBuffers(const CallSite &site, const void *send,
                        const void *recv, size_t count, hrt_dtype dtype) {
  if (hrt_status status = checkCall(site, send, count, dtype))
    return status;
  return checkCall(site, recv, count, dtype);
}

hrt_status checkRank(const CallSite &site, const char *what, int rank) {
  if (rank >= 0 && rank < site.comm->size)
    return HRT_SUCCESS;
  return fail(HRT_ERROR_INVALID_ARGUMENT, site,
              std::string(what) + " " + std::to_string(rank) +
                  " is outside the communicator of " +
                  std::to_string(site.comm->size) + " ranks");
}

hrt_status checkOp(const CallSite &site, hrt_reduce_op op) {
  if (validOp(op))
    return HRT_SUCCESS;
  return fail(HRT_ERROR_INVALID_ARGUMENT, site,
              "unknown reduction " + std::to_string(int(op)));
}

/// Appends `text` to the report being built in `buffer`.
void append(char *buffer, size_t capacity, size_t &length, const char *text) {
  while (*text && length + 1 < capacity)
    buffer[length++] = *text++;
}

/// Appends `value` in decimal (async-signal-safe, unlike snprintf).
void appendNumber(char *buffer, size_t capacity, size_t &length,
                  long long value) {
  char digits[24];
  char *first = digits + sizeof(digits) - 1;
  *first = '\0';
  unsigned long long magnitude =
      value < 0 ? 0ULL - (unsigned long long)value : (unsigned long long)value;
  do
    *--first = char('0' + magnitude % 10);
  while (magnitude /= 10);
  if (value < 0)
    *--first = '-';
  append(buffer, capacity, length, first);
}

extern "C" void reportStop(int signal, siginfo_t *info, void *context) {
  char text[512];
  size_t length = 0;
  const size_t capacity = sizeof(text);
  append(text, capacity, length, "hetero-rt: rank ");
  appendNumber(text, capacity, length, waitRecord.worldRank);
  append(text, capacity, length, " stopped by signal ");
  appendNumber(text, capacity, length, signal);
  if (waitRecord.active) {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    long long ms = (now.tv_sec - waitRecord.start.tv_sec) * 1000LL +
                   (now.tv_nsec - waitRecord.start.tv_nsec) / 1000000LL;
    append(text, capacity, length, " after waiting ");
    appendNumber(text, capacity, length, ms);
    append(text, capacity, length, " ms in ");
    append(text, capacity, length, waitRecord.operation);
    append(text, capacity, length, " (");
    appendNumber(text, capacity, length, (long long)waitRecord.bytes);
    append(text, capacity, length, " bytes");
    if (waitRecord.peer != CallSite::kUnset) {
      append(text, capacity, length, ", ");
      append(text, capacity, length, waitRecord.peerRole);
      append(text, capacity, length, " ");
      appendNumber(text, capacity, length, waitRecord.peer);
    }
    if (waitRecord.tag != CallSite::kUnset) {
      append(text, capacity, length, ", tag ");
      appendNumber(text, capacity, length, waitRecord.tag);
    }
    append(text, capacity, length, ")");
  } else {
    append(text, capacity, length, " outside any runtime wait");
  }
  append(text, capacity, length,
         ": a rank of the job was lost or the job was cancelled\n");
  ssize_t written = ::write(STDERR_FILENO, text, length);
  (void)written;
  // Then whatever handled the signal before (LLVM's clean-up in tools
  // built on it, say), or die of it.
  struct sigaction &previous = signal == SIGTERM ? previousTerm : previousInt;
  sigaction(signal, &previous, nullptr);
  if (previous.sa_flags & SA_SIGINFO) {
    previous.sa_sigaction(signal, info, context);
    return;
  }
  if (previous.sa_handler != SIG_DFL) {
    previous.sa_handler(signal);
    return;
  }
  std::raise(signal);
}

/// Installs reportStop for SIGTERM and SIGINT, in front of the handlers in
/// place (unless the program ignores the signal).
void installStopReport() {
  if (stopReportInstalled)
    return;
  for (int signal : {SIGTERM, SIGINT}) {
    struct sigaction &previous = signal == SIGTERM ? previousTerm : previousInt;
    sigaction(signal, nullptr, &previous);
    if (!(previous.sa_flags & SA_SIGINFO) && previous.sa_handler == SIG_IGN)
      continue;
    struct sigaction action{};
    action.sa_sigaction = reportStop;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    sigaction(signal, &action, nullptr);
  }
  stopReportInstalled = true;
}

/// Reads HETERO_RT_TIMEOUT (seconds, 0 waits forever) into the state.
hrt_status configureTimeout(const CallSite &here) {
  const char *text = std::getenv("HETERO_RT_TIMEOUT");
  if (!text || !*text)
    return HRT_SUCCESS;
  char *end = nullptr;
  double seconds = std::strtod(text, &end);
  if (*end != '\0' || !(seconds >= 0.0))
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                std::string("HETERO_RT_TIMEOUT='") + text +
                    "' is not a number of seconds >= 0 (0 waits forever)");
  state->timeout = seconds;
  return HRT_SUCCESS;
}

/// Parses HETERO_RT_FAULT.
hrt_status configureFault(const CallSite &here) {
  fault = Fault{};
  const char *text = std::getenv("HETERO_RT_FAULT");
  if (!text || !*text)
    return HRT_SUCCESS;
  char kind[8] = {0};
  int rank = -1;
  long at = 0;
  char extra = 0;
  if (std::sscanf(text, "%d:%7[a-z]:%ld%c", &rank, kind, &at, &extra) != 3 ||
      rank < 0 || at < 1 ||
      (std::strcmp(kind, "kill") != 0 && std::strcmp(kind, "exit") != 0))
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                std::string("HETERO_RT_FAULT='") + text +
                    "': expected <rank>:<kill|exit>:<n>, a rank >= 0 that "
                    "dies or exits at its n-th communicating call (n >= 1)");
  fault.rank = rank;
  fault.kill = std::strcmp(kind, "kill") == 0;
  fault.at = at;
  return HRT_SUCCESS;
}

CallSite site(const char *operation, hrt_comm comm, size_t count,
              hrt_dtype dtype, int peer = CallSite::kUnset,
              int tag = CallSite::kUnset) {
  size_t bytes = count * hrt_dtype_size(dtype);
  return CallSite{operation, comm, bytes, peer, tag};
}

/// The call site of a rooted collective.
CallSite rootedSite(const char *operation, hrt_comm comm, size_t count,
                    hrt_dtype dtype, int root) {
  CallSite rooted = site(operation, comm, count, dtype, root);
  rooted.peerRole = "root";
  return rooted;
}

/// Frees `comm`'s backend resources and the communicators derived from it
/// (the object itself stays); reports the first failure.
hrt_status releaseCommunicator(hrt_comm comm) {
  hrt_status status = HRT_SUCCESS;
  for (auto &[nodeSize, derived] : comm->nodeComms)
    for (hrt_comm part : {derived.first, derived.second}) {
      hrt_status released = releaseCommunicator(part);
      delete part;
      if (status == HRT_SUCCESS)
        status = released;
    }
  comm->nodeComms.clear();
  hrt_status freed = state->backend->free(comm);
  return status == HRT_SUCCESS ? freed : status;
}

} // namespace

hrt_status fail(hrt_status status, const CallSite &site,
                const std::string &detail) {
  std::ostringstream os;
  os << site.operation;
  if (site.comm && site.comm->size > 0)
    os << " on rank " << site.comm->rank;
  else if (site.comm)
    os << " outside the communicator";
  os << " (" << site.bytes << " bytes";
  if (site.peer != CallSite::kUnset)
    os << ", " << site.peerRole << " " << site.peer;
  if (site.tag != CallSite::kUnset)
    os << ", tag " << site.tag;
  os << "): " << detail;
  lastError = os.str();
  return status;
}

hrt_status failWith(hrt_status status, const std::string &message) {
  lastError = message;
  return status;
}

std::string mpiErrorString(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    return "MPI error " + std::to_string(code);
  return std::string(text, length);
}

double timeoutSeconds() { return state ? state->timeout : 0.0; }

int worldRank() { return state ? state->world.rank : 0; }

bool mpiThreadMultiple() {
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  return provided >= MPI_THREAD_MULTIPLE;
}

hrt_status Backend::createGroup(hrt_comm parent, const std::vector<int> &, int,
                                hrt_comm) {
  return fail(HRT_ERROR_UNAVAILABLE, {"hrt_comm_create_group", parent, 0},
              "only the MPI backend creates communicators among a group");
}

hrt_status Backend::isendCopy(const void *, size_t, hrt_dtype,
                              const CallSite &site,
                              std::unique_ptr<PendingOperation> &) {
  return fail(HRT_ERROR_UNAVAILABLE, site,
              "this backend has no buffered sends of its own");
}

bool mpiBackendActive() { return state && state->kind == HRT_BACKEND_MPI; }

hrt_status Backend::requireHost(const void *, size_t, const char *,
                                const CallSite &) {
  return HRT_SUCCESS;
}

namespace {
std::atomic<void *(*)(void)> computeStreamOf{nullptr};
} // namespace

void *computeStream() {
  void *(*current)(void) = computeStreamOf.load();
  return current ? current() : nullptr;
}

hrt_status checkHostCollective(const CallSite &site) {
  return checkCall(site, nullptr, 0, HRT_UINT8);
}

hrt_status checkHostCollective(const CallSite &site,
                               std::initializer_list<HostBuffer> buffers) {
  if (hrt_status status = checkHostCollective(site))
    return status;
  for (const HostBuffer &buffer : buffers)
    if (buffer.data && buffer.bytes)
      if (hrt_status status = state->backend->requireHost(
              buffer.data, buffer.bytes, buffer.role, site))
        return status;
  return HRT_SUCCESS;
}

namespace {
thread_local bool hostBuffersOpen = false;
} // namespace

HostBuffers::HostBuffers() : previous(hostBuffersOpen) {
  hostBuffersOpen = true;
}
HostBuffers::~HostBuffers() { hostBuffersOpen = previous; }
bool HostBuffers::allowed() { return hostBuffersOpen; }

hrt_status waitWithTimeout(PendingOperation &pending) {
  WaitScope waiting(pending.site);
  double timeout = timeoutSeconds();
  auto start = std::chrono::steady_clock::now();
  int spins = 0;
  while (true) {
    bool done = false;
    if (hrt_status status = pending.test(done); status != HRT_SUCCESS)
      return status;
    if (done)
      return HRT_SUCCESS;
    // Checkpoint traffic belongs to the application's thread.
    if (!onCommunicationThread())
      pollCheckpointTraffic();
    std::chrono::duration<double> waited =
        std::chrono::steady_clock::now() - start;
    if (timeout > 0.0 && waited.count() > timeout) {
      pending.abandon();
      std::ostringstream detail;
      detail << "timed out after " << timeout
             << " s: the peer never arrived (is it alive, and does it post "
                "the matching call?)";
      return fail(HRT_ERROR_TIMEOUT, pending.site, detail.str());
    }
    pauseBetweenPolls(spins);
  }
}

void pauseBetweenPolls(int &polls) {
  constexpr int kSpins = 1000, kYields = 2000;
  if (polls <= kSpins + kYields)
    ++polls;
  if (polls > kSpins + kYields)
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  else if (polls > kSpins)
    std::this_thread::yield();
}

WaitScope::WaitScope(const CallSite &site) {
  // The report names where the application's thread waits.
  if (onCommunicationThread())
    return;
  waitRecord.operation = site.operation;
  waitRecord.peerRole = site.peerRole;
  waitRecord.bytes = site.bytes;
  waitRecord.peer = site.peer;
  waitRecord.tag = site.tag;
  clock_gettime(CLOCK_MONOTONIC, &waitRecord.start);
  waitRecord.active = 1;
}

WaitScope::~WaitScope() {
  if (!onCommunicationThread())
    waitRecord.active = 0;
}

namespace {
/// An operation that completed when it was posted.
class CompletedOperation : public PendingOperation {
public:
  hrt_status test(bool &done) override {
    done = true;
    return HRT_SUCCESS;
  }
  void abandon() override {}
};
} // namespace

hrt_status Backend::iallReduce(const void *send, void *recv, size_t count,
                               hrt_dtype dtype, hrt_reduce_op op,
                               const CallSite &site,
                               std::unique_ptr<PendingOperation> &pending) {
  if (hrt_status status = allReduce(send, recv, count, dtype, op, site))
    return status;
  pending = std::make_unique<CompletedOperation>();
  return HRT_SUCCESS;
}

hrt_request requestFor(std::unique_ptr<PendingOperation> pending) {
  if (!pending)
    pending = std::make_unique<CompletedOperation>();
  return new hrt_request_impl{std::move(pending)};
}

} // namespace hetero::rt

using namespace hetero::rt;

//===----------------------------------------------------------------------===//
// Lifecycle, errors, timers
//===----------------------------------------------------------------------===//

extern "C" hrt_status hrt_init(hrt_backend backend, int *argc, char ***argv) {
  CallSite here{"hrt_init", nullptr, 0};
  if (state)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here, "already initialised");
  int mpiReady = 0;
  MPI_Initialized(&mpiReady);
  if (!mpiReady) {
    int provided = 0;
    // Runtime threads (the sync-group coordinator) call MPI beside the
    // application.
    int code = MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    if (code != MPI_SUCCESS)
      return fail(HRT_ERROR_BACKEND, here,
                  "MPI_Init_thread failed: " + mpiErrorString(code));
    runtimeInitializedMpi = true;
  }
  std::unique_ptr<Backend> implementation;
  if (backend == HRT_BACKEND_MPI)
    implementation = createMpiBackend();
  else if (backend == HRT_BACKEND_NCCL)
    implementation = createNcclBackend();
  else
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "unknown backend " + std::to_string(int(backend)));
  if (!implementation) {
    return fail(HRT_ERROR_UNAVAILABLE, here,
                "this libhetero_rt was built without the NCCL backend "
                "(HETERO_ENABLE_NCCL=OFF)");
  }
  auto *created = new State;
  created->backend = std::move(implementation);
  created->kind = backend;
  created->ownsMpi = runtimeInitializedMpi;
  created->world.isWorld = true;
  state = created;
  // The environment's settings; the first bad one fails hrt_init.
  hrt_status configured = configureTimeout(here);
  if (configured == HRT_SUCCESS)
    configured = configureLinkModelFromEnvironment(here);
  if (configured == HRT_SUCCESS)
    configured = configureComputeFromEnvironment(here);
  if (configured == HRT_SUCCESS)
    configured = configureSlowGemmFromEnvironment(here);
  setLinkMeasurement(false);
  if (configured == HRT_SUCCESS)
    configured = configureFault(here);
  if (configured == HRT_SUCCESS && linkModelActive() &&
      backend != HRT_BACKEND_MPI)
    configured = fail(HRT_ERROR_UNAVAILABLE, here,
                      "HETERO_RT_LINK emulates links for the MPI backend's "
                      "host buffers only");
  if (configured != HRT_SUCCESS) {
    std::string message = lastError;
    delete state;
    state = nullptr;
    lastError = message;
    return configured;
  }
  if (hrt_status status = state->backend->initWorld(&state->world);
      status != HRT_SUCCESS) {
    // Keep the message of the failure, not of the clean-up.
    std::string message = lastError;
    if (state->world.mpi != MPI_COMM_NULL)
      MPI_Comm_free(&state->world.mpi);
    delete state;
    state = nullptr;
    lastError = message;
    return status;
  }
  waitRecord.worldRank = state->world.rank;
  installStopReport();
  return HRT_SUCCESS;
}

extern "C" hrt_status hrt_finalize(void) {
  CallSite here{"hrt_finalize", nullptr, 0};
  if (!state)
    return fail(HRT_ERROR_NOT_INITIALIZED, here, "not initialised");
  // The coordinator learns that this worker departed; then every buffered
  // send completes before the communicators go.
  // Collectives still on the communication thread complete first.
  stopCommunicationThread();
  hrt_status status = finishCompiledSync();
  if (hrt_status flushed = flushBufferedSends(); status == HRT_SUCCESS)
    status = flushed;
  releaseCheckpoints();
  hrt_status released = releaseCommunicator(&state->world);
  if (status == HRT_SUCCESS)
    status = released;
  if (status == HRT_SUCCESS)
    status = state->backend->finalize();
  bool ownsMpi = state->ownsMpi;
  delete state;
  state = nullptr;
  if (ownsMpi) {
    MPI_Finalize();
    runtimeInitializedMpi = false;
  }
  return status;
}

extern "C" int hrt_initialized(void) { return state != nullptr; }

extern "C" void hrt_abort(int code) {
  int mpiReady = 0;
  MPI_Initialized(&mpiReady);
  if (mpiReady)
    MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

extern "C" hrt_status hrt_set_timeout(double seconds) {
  CallSite here{"hrt_set_timeout", nullptr, 0};
  if (!state)
    return fail(HRT_ERROR_NOT_INITIALIZED, here, "not initialised");
  if (!(seconds >= 0.0))
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "the timeout must be >= 0 seconds (0 waits forever)");
  state->timeout = seconds;
  return HRT_SUCCESS;
}

extern "C" double hrt_get_timeout(void) { return timeoutSeconds(); }

extern "C" const char *hrt_status_string(hrt_status status) {
  switch (status) {
  case HRT_SUCCESS:
    return "success";
  case HRT_ERROR_INVALID_ARGUMENT:
    return "invalid argument";
  case HRT_ERROR_NOT_INITIALIZED:
    return "not initialised";
  case HRT_ERROR_UNAVAILABLE:
    return "unavailable";
  case HRT_ERROR_BACKEND:
    return "backend error";
  case HRT_ERROR_TIMEOUT:
    return "timeout";
  }
  return "unknown status";
}

extern "C" const char *hrt_last_error(void) { return lastError.c_str(); }

extern "C" size_t hrt_dtype_size(hrt_dtype dtype) {
  switch (dtype) {
  case HRT_FLOAT32:
  case HRT_INT32:
    return 4;
  case HRT_FLOAT64:
  case HRT_INT64:
    return 8;
  case HRT_UINT8:
    return 1;
  case HRT_FLOAT16:
  case HRT_BFLOAT16:
    return 2;
  }
  return 0;
}

extern "C" double hrt_wtime(void) {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

//===----------------------------------------------------------------------===//
// Communicators
//===----------------------------------------------------------------------===//

extern "C" hrt_status hrt_comm_world(hrt_comm *comm) {
  CallSite here{"hrt_comm_world", nullptr, 0};
  if (!state)
    return fail(HRT_ERROR_NOT_INITIALIZED, here, "not initialised");
  if (!comm)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here, "the output is null");
  *comm = &state->world;
  return HRT_SUCCESS;
}

extern "C" hrt_status hrt_comm_split(hrt_comm parent, int color, int key,
                                     hrt_comm *out) {
  CallSite here{"hrt_comm_split", parent, 0};
  if (hrt_status status = checkCall(here, nullptr, 0, HRT_UINT8))
    return status;
  if (!out)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here, "the output is null");
  auto comm = std::make_unique<hrt_comm_impl>();
  if (hrt_status status = state->backend->split(parent, color, key, comm.get()))
    return status;
  *out = comm.release();
  return HRT_SUCCESS;
}

extern "C" hrt_status hrt_comm_free(hrt_comm comm) {
  CallSite here{"hrt_comm_free", comm, 0};
  if (hrt_status status =
          checkCall(here, nullptr, 0, HRT_UINT8, /*needsMember=*/false))
    return status;
  if (comm->isWorld)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "the world communicator belongs to the runtime");
  hrt_status status = releaseCommunicator(comm);
  delete comm;
  return status;
}

extern "C" hrt_status hrt_comm_create_group(hrt_comm parent, const int *ranks,
                                            int count, int tag, hrt_comm *out) {
  CallSite here{"hrt_comm_create_group", parent, 0};
  here.tag = tag;
  if (hrt_status status = checkCall(here, nullptr, 0, HRT_UINT8))
    return status;
  if (!out || !ranks || count < 1)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "needs at least one rank and an output");
  if (tag < 0 || tag > 32767)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "the tag must be in [0, 32767], the range MPI guarantees");
  std::vector<int> members(ranks, ranks + count);
  bool self = false;
  for (int i = 0; i < count; ++i) {
    if (hrt_status status = checkRank(here, "rank", members[i]))
      return status;
    if (std::count(members.begin(), members.end(), members[i]) > 1)
      return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                  "rank " + std::to_string(members[i]) + " is listed twice");
    self |= members[i] == parent->rank;
  }
  if (!self)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "the calling rank " + std::to_string(parent->rank) +
                    " is not among the listed ranks");
  auto comm = std::make_unique<hrt_comm_impl>();
  if (hrt_status status =
          state->backend->createGroup(parent, members, tag, comm.get()))
    return status;
  *out = comm.release();
  return HRT_SUCCESS;
}

extern "C" hrt_status hrt_comm_rank(hrt_comm comm, int *rank) {
  if (!comm || !rank)
    return fail(HRT_ERROR_INVALID_ARGUMENT, {"hrt_comm_rank", comm, 0},
                "null argument");
  *rank = comm->rank;
  return HRT_SUCCESS;
}

extern "C" hrt_status hrt_comm_size(hrt_comm comm, int *size) {
  if (!comm || !size)
    return fail(HRT_ERROR_INVALID_ARGUMENT, {"hrt_comm_size", comm, 0},
                "null argument");
  *size = comm->size;
  return HRT_SUCCESS;
}

//===----------------------------------------------------------------------===//
// Point to point
//===----------------------------------------------------------------------===//

/// isend, irecv and bsend share their checks and their request handling.
/// The posted operation goes to a new `*request`, or to `*kept` when the
/// runtime keeps it (a buffered send has no request).
template <typename Buffer, typename Post>
static hrt_status
postTransfer(const char *operation, Buffer buffer, size_t count,
             hrt_dtype dtype, int peer, int tag, hrt_comm comm,
             hrt_request *request, Post post,
             std::unique_ptr<PendingOperation> *kept = nullptr) {
  CallSite here = site(operation, comm, count, dtype, peer, tag);
  if (hrt_status status = checkCall(here, buffer, count, dtype))
    return status;
  if (hrt_status status = checkRank(here, "peer", peer))
    return status;
  if (tag < 0)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here, "the tag must be >= 0");
  if (!request && !kept)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here, "the request is null");
  std::unique_ptr<PendingOperation> pending;
  if (hrt_status status = post(here, pending))
    return status;
  pending->site = here;
  if (kept)
    *kept = std::move(pending);
  else
    *request = new hrt_request_impl{std::move(pending)};
  return HRT_SUCCESS;
}

extern "C" hrt_status hrt_isend(const void *buffer, size_t count,
                                hrt_dtype dtype, int peer, int tag,
                                hrt_comm comm, hrt_request *request) {
  return postTransfer(
      "hrt_send", buffer, count, dtype, peer, tag, comm, request,
      [&](const CallSite &here, std::unique_ptr<PendingOperation> &pending) {
        return postSend(*state->backend, buffer, count, dtype, here,
                        /*copy=*/false, pending);
      });
}

extern "C" hrt_status hrt_irecv(void *buffer, size_t count, hrt_dtype dtype,
                                int peer, int tag, hrt_comm comm,
                                hrt_request *request) {
  return postTransfer(
      "hrt_recv", buffer, count, dtype, peer, tag, comm, request,
      [&](const CallSite &here, std::unique_ptr<PendingOperation> &pending) {
        return postRecv(*state->backend, buffer, count, dtype, here, pending);
      });
}

extern "C" hrt_status hrt_wait(hrt_request *request) {
  if (!request || !*request)
    return fail(HRT_ERROR_INVALID_ARGUMENT, {"hrt_wait", nullptr, 0},
                "the request is null");
  hrt_status status = waitWithTimeout(*(*request)->pending);
  delete *request;
  *request = nullptr;
  return status;
}

extern "C" hrt_status hrt_send(const void *buffer, size_t count,
                               hrt_dtype dtype, int peer, int tag,
                               hrt_comm comm) {
  hrt_request request = nullptr;
  if (hrt_status status =
          hrt_isend(buffer, count, dtype, peer, tag, comm, &request))
    return status;
  return hrt_wait(&request);
}

extern "C" hrt_status hrt_bsend(const void *buffer, size_t count,
                                hrt_dtype dtype, int peer, int tag,
                                hrt_comm comm) {
  std::unique_ptr<PendingOperation> posted;
  // A backend on device buffers copies on the device and sends the copy
  // without waiting for the receiver either.
  if (state && state->kind != HRT_BACKEND_MPI) {
    if (hrt_status status = postTransfer(
            "hrt_bsend", buffer, count, dtype, peer, tag, comm,
            /*request=*/nullptr,
            [&](const CallSite &here,
                std::unique_ptr<PendingOperation> &pending) {
              return state->backend->isendCopy(buffer, count, dtype, here,
                                               pending);
            },
            &posted))
      return status;
    return keepBufferedSend(std::move(posted));
  }
  if (hrt_status status = postTransfer(
          "hrt_bsend", buffer, count, dtype, peer, tag, comm,
          /*request=*/nullptr,
          [&](const CallSite &here,
              std::unique_ptr<PendingOperation> &pending) {
            return postSend(*state->backend, buffer, count, dtype, here,
                            /*copy=*/true, pending);
          },
          &posted))
    return status;
  return keepBufferedSend(std::move(posted));
}

extern "C" hrt_status hrt_flush_sends(void) {
  if (!state)
    return fail(HRT_ERROR_NOT_INITIALIZED, {"hrt_flush_sends", nullptr, 0},
                "not initialised");
  return flushBufferedSends();
}

extern "C" size_t hrt_sends_in_flight(void) {
  return state ? bufferedSendsInFlight() : 0;
}

extern "C" hrt_status hrt_set_link_model(double megabytes_per_second,
                                         double latency_ms) {
  CallSite here{"hrt_set_link_model", nullptr, 0};
  if (!state)
    return fail(HRT_ERROR_NOT_INITIALIZED, here, "not initialised");
  if (state->kind != HRT_BACKEND_MPI &&
      (megabytes_per_second > 0.0 || latency_ms > 0.0))
    return fail(HRT_ERROR_UNAVAILABLE, here,
                "link emulation covers the MPI backend's host buffers only");
  if (hrt_status status = flushBufferedSends())
    return status;
  return configureLinkModel(megabytes_per_second, latency_ms,
                            /*sharedNic=*/false, here);
}

extern "C" hrt_status hrt_link_measure(int enable) {
  CallSite here{"hrt_link_measure", nullptr, 0};
  if (!state)
    return fail(HRT_ERROR_NOT_INITIALIZED, here, "not initialised");
  if (state->kind != HRT_BACKEND_MPI && enable)
    return fail(HRT_ERROR_UNAVAILABLE, here,
                "links are measured on the MPI backend's host buffers only");
  if (hrt_status status = flushBufferedSends())
    return status;
  setLinkMeasurement(enable != 0);
  return HRT_SUCCESS;
}

extern "C" hrt_status hrt_recv(void *buffer, size_t count, hrt_dtype dtype,
                               int peer, int tag, hrt_comm comm) {
  hrt_request request = nullptr;
  if (hrt_status status =
          hrt_irecv(buffer, count, dtype, peer, tag, comm, &request))
    return status;
  return hrt_wait(&request);
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

extern "C" hrt_status hrt_all_reduce(const void *send, void *recv, size_t count,
                                     hrt_dtype dtype, hrt_reduce_op op,
                                     hrt_comm comm) {
  CallSite here = site("hrt_all_reduce", comm, count, dtype);
  if (hrt_status status = checkBuffers(here, send, recv, count, dtype))
    return status;
  if (hrt_status status = checkOp(here, op))
    return status;
  if (!linkModelActive())
    return state->backend->allReduce(send, recv, count, dtype, op, here);
  std::unique_ptr<PendingOperation> pending;
  if (hrt_status status = state->backend->iallReduce(send, recv, count, dtype,
                                                     op, here, pending))
    return status;
  pending->site = here;
  return waitWithTimeout(*throughLinkModel(std::move(pending), here));
}

extern "C" hrt_status hrt_iall_reduce(const void *send, void *recv,
                                      size_t count, hrt_dtype dtype,
                                      hrt_reduce_op op, hrt_comm comm,
                                      hrt_request *request) {
  CallSite here = site("hrt_iall_reduce", comm, count, dtype);
  if (hrt_status status = checkBuffers(here, send, recv, count, dtype))
    return status;
  if (hrt_status status = checkOp(here, op))
    return status;
  if (!request)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here, "the request is null");
  std::unique_ptr<PendingOperation> pending;
  if (hrt_status status = state->backend->iallReduce(send, recv, count, dtype,
                                                     op, here, pending))
    return status;
  pending->site = here;
  *request = new hrt_request_impl{throughLinkModel(std::move(pending), here)};
  return HRT_SUCCESS;
}

extern "C" hrt_status hrt_all_gather(const void *send, void *recv, size_t count,
                                     hrt_dtype dtype, hrt_comm comm) {
  CallSite here = site("hrt_all_gather", comm, count, dtype);
  if (hrt_status status = checkBuffers(here, send, recv, count, dtype))
    return status;
  return state->backend->allGather(send, recv, count, dtype, here);
}

extern "C" hrt_status hrt_reduce_scatter(const void *send, void *recv,
                                         size_t count, hrt_dtype dtype,
                                         hrt_reduce_op op, hrt_comm comm) {
  CallSite here = site("hrt_reduce_scatter", comm, count, dtype);
  if (hrt_status status = checkBuffers(here, send, recv, count, dtype))
    return status;
  if (hrt_status status = checkOp(here, op))
    return status;
  return state->backend->reduceScatter(send, recv, count, dtype, op, here);
}

extern "C" hrt_status hrt_broadcast(void *buffer, size_t count, hrt_dtype dtype,
                                    int root, hrt_comm comm) {
  CallSite here = rootedSite("hrt_broadcast", comm, count, dtype, root);
  if (hrt_status status = checkCall(here, buffer, count, dtype))
    return status;
  if (hrt_status status = checkRank(here, "root", root))
    return status;
  return state->backend->broadcast(buffer, count, dtype, root, here);
}

extern "C" hrt_status hrt_reduce(const void *send, void *recv, size_t count,
                                 hrt_dtype dtype, hrt_reduce_op op, int root,
                                 hrt_comm comm) {
  CallSite here = rootedSite("hrt_reduce", comm, count, dtype, root);
  if (hrt_status status = checkCall(here, send, count, dtype))
    return status;
  if (hrt_status status = checkRank(here, "root", root))
    return status;
  if (comm->rank == root)
    if (hrt_status status = checkCall(here, recv, count, dtype))
      return status;
  if (hrt_status status = checkOp(here, op))
    return status;
  return state->backend->reduce(send, recv, count, dtype, op, root, here);
}

extern "C" hrt_status hrt_all_to_all(const void *send, void *recv, size_t count,
                                     hrt_dtype dtype, hrt_comm comm) {
  CallSite here = site("hrt_all_to_all", comm, count, dtype);
  if (hrt_status status = checkBuffers(here, send, recv, count, dtype))
    return status;
  return state->backend->allToAll(send, recv, count, dtype, here);
}

extern "C" hrt_status hrt_barrier(hrt_comm comm) {
  CallSite here = site("hrt_barrier", comm, 0, HRT_UINT8);
  if (hrt_status status = checkCall(here, nullptr, 0, HRT_UINT8))
    return status;
  return state->backend->barrier(here);
}

extern "C" void hrt_register_compute_stream(void *(*current)(void)) {
  hetero::rt::computeStreamOf.store(current);
}
