//===- SyncGroups.cpp - SDPipe's dynamic sync groups on MPI ranks ---------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Workers send READY to a coordinator thread on world rank 0 over a
// communicator of their own (a duplicate of the world), wait for their
// GROUP, and average over a communicator created among the group's members.
// The coordinator runs hetero::sync::Scheduler and owns the communicator
// cache's bookkeeping, so that the members of a set always agree on whether
// its communicator exists.
//
//===----------------------------------------------------------------------===//

#include "Runtime.h"

#include "hetero/SyncGroups/Scheduler.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

using namespace hetero::rt;

namespace {

constexpr int kCoordinator = 0;
constexpr int kTagReady = 1;
constexpr int kTagGroup = 2;
constexpr int kTagStop = 3;
/// hrt_comm_create_group's tag: a worker creates one communicator at a
/// time, so creations that share a rank never overlap.
constexpr int kCreateTag = 5151;
/// T_max until a stage's iteration time is measured (a worker's second
/// READY): generous, so that the first rounds of a homogeneous start form
/// whole groups instead of the singletons of a window far below the
/// iteration, and finite, so that a straggler in them delays the others
/// only so long.
constexpr double kInitialWindowMaxMs = 1000.0;
/// How long an idle poll sleeps, so that waiting never holds a core.
constexpr auto kPollSleep = std::chrono::microseconds(50);

/// The coordinator's view of one stage's cached communicators.
struct CacheEntry {
  int64_t id;
  uint64_t lastUse;
  bool pinned;
};

class Coordinator {
public:
  Coordinator(MPI_Comm control, const hetero::sync::Options &options,
              std::vector<int> rankOf, int capacity)
      : control(control), replicas(options.replicas), scheduler(options),
        rankOf(std::move(rankOf)), capacity(capacity), cache(options.stages),
        evictions(this->rankOf.size()) {
    int size = 0;
    MPI_Comm_size(control, &size);
    worldSize = size;
    thread = std::thread([this] { loop(); });
  }

  ~Coordinator() {
    if (thread.joinable())
      thread.join();
  }

  void join() { thread.join(); }
  void detach() { thread.detach(); }
  hetero::sync::Counters counters() const {
    return {0, enforced.load(), ignored.load(), 0};
  }

private:
  double nowMs() const {
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now() - start)
        .count();
  }

  [[noreturn]] void die(const std::string &what) {
    std::fprintf(stderr, "hrt_sync coordinator on rank 0: %s\n", what.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::abort();
  }

  void loop() {
    int stopped = 0;
    while (stopped < worldSize) {
      // Rank 0's own worker receives its GROUP on the same communicator, so
      // the coordinator looks for its two tags only.
      int flag = 0;
      MPI_Status status;
      for (int tag : {kTagReady, kTagStop}) {
        if (MPI_Iprobe(MPI_ANY_SOURCE, tag, control, &flag, &status) !=
            MPI_SUCCESS)
          die("MPI_Iprobe failed");
        if (flag)
          break;
      }
      if (flag) {
        int64_t message[3] = {0, 0, 0};
        MPI_Recv(message, 3, MPI_INT64_T, status.MPI_SOURCE, status.MPI_TAG,
                 control, MPI_STATUS_IGNORE);
        bool stop = status.MPI_TAG == kTagStop;
        if (trace)
          std::fprintf(stderr, "hrt_sync: %.3f ms: %s from (%lld, %lld)\n",
                       nowMs(), stop ? "STOP" : "READY", (long long)message[0],
                       (long long)message[1]);
        if (stop) {
          // A worker that stops has left for good: what waits for it goes.
          ++stopped;
          send(scheduler.depart(message[0], message[1], nowMs()));
          continue;
        }
        send(scheduler.ready(message[0], message[1], nowMs(), message[2] != 0));
        continue;
      }
      std::optional<double> deadline = scheduler.nextDeadline();
      if (deadline && *deadline <= nowMs()) {
        send(scheduler.advance(nowMs()));
        continue;
      }
      std::this_thread::sleep_for(kPollSleep);
    }
  }

  /// The communicator id of a group's member set, and whether it is new;
  /// evicts the least recently used unpinned set beyond the capacity.
  std::pair<int64_t, bool> communicatorOf(const hetero::sync::Group &group) {
    if (group.members.size() < 2)
      return {-1, false};
    uint64_t mask = 0;
    for (int64_t member : group.members)
      mask |= uint64_t(1) << member;
    std::map<uint64_t, CacheEntry> &entries = cache[group.stage];
    auto found = entries.find(mask);
    if (found != entries.end()) {
      found->second.lastUse = ++uses;
      return {found->second.id, false};
    }
    bool pinned =
        group.members.size() == 2 || int64_t(group.members.size()) == replicas;
    int64_t id = nextId++;
    entries[mask] = {id, ++uses, pinned};
    int64_t unpinned =
        std::count_if(entries.begin(), entries.end(),
                      [](const auto &entry) { return !entry.second.pinned; });
    if (unpinned > capacity) {
      auto victim = entries.end();
      for (auto it = entries.begin(); it != entries.end(); ++it)
        if (!it->second.pinned && it->first != mask &&
            (victim == entries.end() ||
             it->second.lastUse < victim->second.lastUse))
          victim = it;
      for (int64_t replica = 0; replica < replicas; ++replica)
        if (victim->first & (uint64_t(1) << replica))
          evictions[group.stage * replicas + replica].push_back(
              victim->second.id);
      entries.erase(victim);
    }
    return {id, true};
  }

  /// Sends each member its GROUP message: size, tick, communicator id (-1:
  /// none), whether to create it, its evictions, then the members.
  void send(const std::vector<hetero::sync::Group> &groups) {
    for (const hetero::sync::Group &group : groups) {
      if (trace) {
        std::fprintf(stderr, "hrt_sync: %.3f ms: stage %lld group", nowMs(),
                     (long long)group.stage);
        for (int64_t member : group.members)
          std::fprintf(stderr, " %lld", (long long)member);
        std::fprintf(stderr, " (%s)\n", hetero::sync::modeName(group.mode));
      }
      if (group.mode == hetero::sync::Mode::Enforced)
        ++enforced;
      if (group.mode == hetero::sync::Mode::Ignored)
        ++ignored;
      auto [id, create] = communicatorOf(group);
      for (int64_t member : group.members) {
        int64_t worker = group.stage * replicas + member;
        std::vector<int64_t> &evicted = evictions[worker];
        std::vector<int64_t> words = {int64_t(group.members.size()), group.tick,
                                      id, create ? 1 : 0,
                                      int64_t(evicted.size())};
        words.insert(words.end(), evicted.begin(), evicted.end());
        words.insert(words.end(), group.members.begin(), group.members.end());
        evicted.clear();
        // Small and eager: the send completes without the worker.
        if (MPI_Send(words.data(), int(words.size()), MPI_INT64_T,
                     rankOf[worker], kTagGroup, control) != MPI_SUCCESS)
          die("sending the group of worker (" + std::to_string(group.stage) +
              ", " + std::to_string(member) + ") failed");
      }
    }
  }

  MPI_Comm control;
  int64_t replicas;
  hetero::sync::Scheduler scheduler;
  std::vector<int> rankOf;
  int64_t capacity;
  std::vector<std::map<uint64_t, CacheEntry>> cache;
  std::vector<std::vector<int64_t>> evictions;
  int64_t nextId = 0;
  uint64_t uses = 0;
  int worldSize = 1;
  std::atomic<long> enforced{0}, ignored{0};
  /// HETERO_RT_SYNC_TRACE=1: every READY, STOP and group on stderr.
  bool trace = [] {
    const char *text = std::getenv("HETERO_RT_SYNC_TRACE");
    return text && *text && std::string(text) != "0";
  }();
  std::chrono::steady_clock::time_point start =
      std::chrono::steady_clock::now();
  std::thread thread;
};

} // namespace

struct hrt_sync_impl {
  hrt_comm world = nullptr;
  MPI_Comm control = MPI_COMM_NULL;
  int stages = 1, replicas = 1, stage = 0, replica = 0;
  std::vector<int> rankOf;
  std::map<int64_t, hrt_comm> comms;
  /// The group of the last hrt_sync_ready.
  int groupSize = 0;
  hrt_comm group = nullptr;
  hrt_sync_stats stats{};
  std::unique_ptr<Coordinator> coordinator;
};

extern "C" void hrt_sync_default_options(hrt_sync_options *options) {
  if (!options)
    return;
  options->period = 10;
  options->periodic = 0;
  options->enforce = 1;
  options->lock = 1;
  options->window_max_ms = -1.0;
  options->window_fraction = -1.0;
  options->liveness_ms = 0.0;
  options->cache_capacity = 32;
}

extern "C" hrt_status hrt_sync_create(hrt_comm world, int stages, int replicas,
                                      int stage, int replica,
                                      const hrt_sync_options *options,
                                      hrt_sync *out) {
  CallSite here{"hrt_sync_create", world, 0};
  if (hrt_status status = checkCall(here, nullptr, 0, HRT_UINT8))
    return status;
  if (!options || !out)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here, "null argument");
  if (stages < 1 || replicas < 1 || replicas > 64 || stage < 0 ||
      stage >= stages || replica < 0 || replica >= replicas)
    return fail(
        HRT_ERROR_INVALID_ARGUMENT, here,
        "worker (" + std::to_string(stage) + ", " + std::to_string(replica) +
            ") is outside a mesh of " + std::to_string(stages) + " stages x " +
            std::to_string(replicas) + " replicas (at most 64 replicas)");
  if (options->period < 1 || options->cache_capacity < 0 ||
      options->liveness_ms < 0)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "needs period >= 1, cache_capacity >= 0 and liveness_ms >= 0");
  if (world->size != stages * replicas)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "the communicator has " + std::to_string(world->size) +
                    " ranks but the mesh " + std::to_string(stages) + " x " +
                    std::to_string(replicas) + " workers (one rank each)");
  if (world->mpi == MPI_COMM_NULL || !mpiThreadMultiple())
    return fail(HRT_ERROR_UNAVAILABLE, here,
                "sync groups need the MPI backend with MPI_THREAD_MULTIPLE "
                "for the coordinator thread");

  auto sync = std::make_unique<hrt_sync_impl>();
  sync->world = world;
  sync->stages = stages;
  sync->replicas = replicas;
  sync->stage = stage;
  sync->replica = replica;
  if (MPI_Comm_dup(world->mpi, &sync->control) != MPI_SUCCESS)
    return fail(HRT_ERROR_BACKEND, here, "MPI_Comm_dup failed");
  // Who is which worker: every rank learns every rank's (stage, replica).
  int mine[2] = {stage, replica};
  std::vector<int> all(2 * world->size);
  MPI_Allgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, sync->control);
  sync->rankOf.assign(stages * replicas, -1);
  for (int rank = 0; rank < world->size; ++rank) {
    int worker = all[2 * rank] * replicas + all[2 * rank + 1];
    if (sync->rankOf[worker] >= 0) {
      MPI_Comm_free(&sync->control);
      return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                  "ranks " + std::to_string(sync->rankOf[worker]) + " and " +
                      std::to_string(rank) + " both claim worker (" +
                      std::to_string(all[2 * rank]) + ", " +
                      std::to_string(all[2 * rank + 1]) + ")");
    }
    sync->rankOf[worker] = rank;
  }
  if (world->rank == kCoordinator) {
    hetero::sync::Options scheduler;
    scheduler.stages = stages;
    scheduler.replicas = replicas;
    scheduler.period = options->period;
    scheduler.semantics = options->periodic ? hetero::sync::Semantics::Periodic
                                            : hetero::sync::Semantics::Sliding;
    scheduler.enforce = options->enforce != 0;
    scheduler.lock = options->lock != 0;
    if (options->window_max_ms >= 0)
      scheduler.windowMaxMs = options->window_max_ms;
    else
      scheduler.initialWindowMaxMs = kInitialWindowMaxMs;
    if (options->window_fraction >= 0)
      scheduler.windowFraction = options->window_fraction;
    scheduler.livenessMs = options->liveness_ms;
    sync->coordinator = std::make_unique<Coordinator>(
        sync->control, scheduler, sync->rankOf, options->cache_capacity);
  }
  *out = sync.release();
  return HRT_SUCCESS;
}

namespace {

/// Polls for a message of `tag` from the coordinator, sleeping between
/// polls, until the runtime's timeout.
hrt_status awaitGroup(hrt_sync sync, const CallSite &site,
                      std::vector<int64_t> &words) {
  WaitScope waiting(site);
  auto start = std::chrono::steady_clock::now();
  double timeout = timeoutSeconds();
  int polls = 0;
  while (true) {
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(kCoordinator, kTagGroup, sync->control, &flag, &status);
    if (flag) {
      int count = 0;
      MPI_Get_count(&status, MPI_INT64_T, &count);
      words.resize(count);
      MPI_Recv(words.data(), count, MPI_INT64_T, kCoordinator, kTagGroup,
               sync->control, MPI_STATUS_IGNORE);
      return HRT_SUCCESS;
    }
    std::chrono::duration<double> waited =
        std::chrono::steady_clock::now() - start;
    if (timeout > 0 && waited.count() > timeout)
      return fail(HRT_ERROR_TIMEOUT, site,
                  "no sync group within " + std::to_string(timeout) +
                      " s: the coordinator on rank 0 is waiting for other "
                      "replicas of stage " +
                      std::to_string(sync->stage) +
                      " (are they alive and still syncing?)");
    pauseBetweenPolls(polls);
  }
}

} // namespace

extern "C" hrt_status hrt_sync_ready(hrt_sync sync, int final, int *group_size,
                                     int *members) {
  CallSite here{"hrt_sync_ready", sync ? sync->world : nullptr, 0};
  if (!sync || !group_size)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here, "null argument");
  here.peer = kCoordinator;
  here.peerRole = "coordinator";
  int64_t ready[3] = {sync->stage, sync->replica, final ? 1 : 0};
  MPI_Request request;
  MPI_Isend(ready, 3, MPI_INT64_T, kCoordinator, kTagReady, sync->control,
            &request);
  std::vector<int64_t> words;
  hrt_status status = awaitGroup(sync, here, words);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  if (status != HRT_SUCCESS)
    return status;
  int64_t size = words[0], id = words[2], create = words[3];
  int64_t evicted = words[4];
  for (int64_t i = 0; i < evicted; ++i) {
    auto found = sync->comms.find(words[5 + i]);
    if (found == sync->comms.end())
      continue;
    if (hrt_status status = hrt_comm_free(found->second))
      return status;
    sync->comms.erase(found);
    ++sync->stats.evictions;
  }
  const int64_t *memberWords = words.data() + 5 + evicted;
  sync->groupSize = int(size);
  sync->group = nullptr;
  ++sync->stats.groups;
  sync->stats.members += long(size);
  if (members)
    for (int64_t i = 0; i < size; ++i)
      members[i] = int(memberWords[i]);
  *group_size = int(size);
  if (id < 0)
    return HRT_SUCCESS;
  if (create) {
    std::vector<int> ranks;
    for (int64_t i = 0; i < size; ++i)
      ranks.push_back(
          sync->rankOf[sync->stage * sync->replicas + memberWords[i]]);
    hrt_comm comm = nullptr;
    if (hrt_status status = hrt_comm_create_group(
            sync->world, ranks.data(), int(ranks.size()), kCreateTag, &comm))
      return status;
    sync->comms[id] = comm;
    ++sync->stats.communicators;
  }
  auto found = sync->comms.find(id);
  if (found == sync->comms.end())
    return fail(HRT_ERROR_BACKEND, here,
                "the coordinator named communicator " + std::to_string(id) +
                    ", which this worker does not hold");
  sync->group = found->second;
  return HRT_SUCCESS;
}

extern "C" hrt_status hrt_sync_average(hrt_sync sync, void *buffer,
                                       size_t count, hrt_dtype dtype) {
  CallSite here{"hrt_sync_average", sync ? sync->world : nullptr,
                count * hrt_dtype_size(dtype)};
  if (!sync)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here, "null argument");
  if (dtype != HRT_FLOAT32 && dtype != HRT_FLOAT64)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "averages f32 or f64 weights only");
  if (sync->groupSize == 0)
    return fail(HRT_ERROR_INVALID_ARGUMENT, here,
                "no group: call hrt_sync_ready first");
  if (!sync->group)
    return HRT_SUCCESS;
  if (hrt_status status =
          hrt_all_reduce(buffer, buffer, count, dtype, HRT_SUM, sync->group))
    return status;
  if (dtype == HRT_FLOAT32) {
    float scale = 1.0f / float(sync->groupSize);
    for (float *value = (float *)buffer, *end = value + count; value != end;
         ++value)
      *value *= scale;
  } else {
    double scale = 1.0 / double(sync->groupSize);
    for (double *value = (double *)buffer, *end = value + count; value != end;
         ++value)
      *value *= scale;
  }
  return HRT_SUCCESS;
}

extern "C" hrt_status hrt_sync_get_stats(hrt_sync sync, hrt_sync_stats *stats) {
  if (!sync || !stats)
    return fail(HRT_ERROR_INVALID_ARGUMENT, {"hrt_sync_get_stats", nullptr, 0},
                "null argument");
  *stats = sync->stats;
  if (sync->coordinator) {
    hetero::sync::Counters counters = sync->coordinator->counters();
    stats->enforced = counters.enforced;
    stats->ignored = counters.ignored;
  }
  return HRT_SUCCESS;
}

extern "C" hrt_status hrt_sync_destroy(hrt_sync sync) {
  if (!sync)
    return HRT_SUCCESS;
  std::unique_ptr<hrt_sync_impl> owned(sync);
  // STOP departs this worker; once every rank has sent it (the barrier,
  // under the runtime's timeout), the coordinator has stopped too.
  int64_t stop[3] = {sync->stage, sync->replica, 0};
  MPI_Send(stop, 3, MPI_INT64_T, kCoordinator, kTagStop, sync->control);
  if (hrt_status status = hrt_barrier(sync->world)) {
    // Another rank never arrives: the coordinator cannot be joined, and
    // the job is about to be aborted.
    if (sync->coordinator) {
      sync->coordinator->detach();
      (void)sync->coordinator.release(); // its thread still runs
    }
    return status;
  }
  if (sync->coordinator)
    sync->coordinator->join();
  hrt_status status = HRT_SUCCESS;
  for (auto &[id, comm] : sync->comms)
    if (hrt_status freed = hrt_comm_free(comm); status == HRT_SUCCESS)
      status = freed;
  MPI_Comm_free(&sync->control);
  return status;
}
