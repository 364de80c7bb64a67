//===- MlirAbi.cpp - hrt_mlir_ entry points for compiled code -------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Thin wrappers over the hrt_ C ABI for code that hetero-lower-to-runtime
// emits: device-grid groups become cached split communicators, and a
// failure is reported with its message before the job is aborted.
//
//===----------------------------------------------------------------------===//

#include "Runtime.h"
#include "hetero-rt/compress.h"
#include "hetero-rt/hrt.h"

#include <array>
#include <climits>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

using hetero::rt::CommunicationScope;
using hetero::rt::PendingOperation;

namespace {

/// A blocking collective of compiled code, timed as one. It follows the
/// collectives still on the communication thread, so that every rank calls
/// the collectives of a communicator in program order.
struct BlockingCollective {
  BlockingCollective() { hetero::rt::drainCommunicationThread(); }
  CommunicationScope timed{HRT_TIMELINE_COLLECTIVE};
};

/// Aborts the job after a failed call, naming it.
void orAbort(hrt_status status) {
  if (status == HRT_SUCCESS)
    return;
  std::fprintf(stderr, "hetero runtime error: %s\n", hrt_last_error());
  std::fflush(stderr);
  hrt_abort(1);
}

[[noreturn]] void abortWith(const std::string &message) {
  std::fprintf(stderr, "hetero runtime error: %s\n", message.c_str());
  std::fflush(stderr);
  hrt_abort(1);
  __builtin_unreachable();
}

/// The request of `work` run on the communication thread (a completed
/// request when `work` is null).
hrt_request startedOnThread(const char *entry, size_t bytes,
                            std::function<hrt_status()> work) {
  hetero::rt::CallSite site{entry, nullptr, bytes};
  if (!work)
    return hetero::rt::requestFor(nullptr);
  return hetero::rt::requestFor(
      hetero::rt::startOnCommunicationThread(std::move(work), site));
}

/// A count from compiled code (an index, 64-bit) as the hrt_ ABI's size_t.
size_t countOf(const char *operation, long long count) {
  if (count < 0)
    abortWith(std::string(operation) + ": the element count " +
              std::to_string(count) + " is negative");
  return size_t(count);
}

/// A peer, root or tag from compiled code as the hrt_ ABI's int.
int intOf(const char *operation, const char *what, long long value) {
  if (value < INT_MIN || value > INT_MAX)
    abortWith(std::string(operation) + ": the " + what + " " +
              std::to_string(value) + " does not fit in an int");
  return int(value);
}

hrt_comm world() {
  hrt_comm comm = nullptr;
  orAbort(hrt_comm_world(&comm));
  return comm;
}

using GroupKey = std::array<long long, 6>;

/// Splits the world into the groups of `mask` over a grid of `ndims`
/// extents.
hrt_comm splitGroup(long long ndims, const long long *extents, long long mask) {
  hrt_comm all = world();
  int rank = 0;
  orAbort(hrt_comm_rank(all, &rank));
  // Row-major coordinates of this rank; the color numbers the coordinates
  // outside the group, the key orders the ranks inside it.
  long long remaining = rank, color = 0, order = 0;
  long long colorStride = 1, orderStride = 1;
  for (long long axis = ndims - 1; axis >= 0; --axis) {
    long long coordinate = remaining % extents[axis];
    remaining /= extents[axis];
    if (mask & (1LL << axis)) {
      order += coordinate * orderStride;
      orderStride *= extents[axis];
    } else {
      color += coordinate * colorStride;
      colorStride *= extents[axis];
    }
  }
  hrt_comm group = nullptr;
  orAbort(hrt_comm_split(all, int(color), int(order), &group));
  return group;
}

} // namespace

extern "C" hrt_comm hrt_mlir_world(void) { return world(); }

extern "C" hrt_comm hrt_mlir_group(long long ndims, long long d0, long long d1,
                                   long long d2, long long d3,
                                   long long axes_mask) {
  static std::map<GroupKey, hrt_comm> groups;
  if (ndims < 1 || ndims > 4)
    abortWith("a device grid needs 1 to 4 dimensions, got " +
              std::to_string(ndims));
  if (axes_mask < 0 || axes_mask >= (1LL << ndims))
    abortWith("the axes mask " + std::to_string(axes_mask) +
              " names axes outside the " + std::to_string(ndims) +
              "-dimensional device grid");
  if (axes_mask == 0)
    axes_mask = (1LL << ndims) - 1;
  GroupKey key = {ndims, d0, d1, d2, d3, axes_mask};
  if (auto found = groups.find(key); found != groups.end())
    return found->second;
  long long extents[4] = {d0, d1, d2, d3};
  long long devices = 1;
  for (long long i = 0; i < ndims; ++i) {
    if (extents[i] < 1 || extents[i] > INT_MAX)
      abortWith("device grid extent " + std::to_string(i) + " is " +
                std::to_string(extents[i]) + ", not a positive int");
    devices *= extents[i];
    if (devices > INT_MAX)
      abortWith("the device grid has more than 2^31-1 devices");
  }
  int size = 0;
  orAbort(hrt_comm_size(world(), &size));
  if (devices != size)
    abortWith("the device grid has " + std::to_string(devices) +
              " devices but the job has " + std::to_string(size) +
              " ranks; run it with mpirun -np " + std::to_string(devices));
  // Splitting is collective over the world, and ranks of different
  // pipeline stages reach their first collective on a group at different
  // points of their programs. So the first use of a grid, wherever it is,
  // creates the groups of every set of its axes, in one order on every
  // rank.
  for (long long mask = 1; mask < (1LL << ndims); ++mask) {
    GroupKey each = {ndims, d0, d1, d2, d3, mask};
    groups[each] = splitGroup(ndims, extents, mask);
  }
  return groups.at(key);
}

extern "C" long long hrt_mlir_rank(hrt_comm comm) {
  int rank = 0;
  orAbort(hrt_comm_rank(comm, &rank));
  return rank;
}

extern "C" long long hrt_mlir_size(hrt_comm comm) {
  int size = 0;
  orAbort(hrt_comm_size(comm, &size));
  return size;
}

extern "C" void hrt_mlir_all_reduce(hrt_comm comm, void *data, long long count,
                                    int dtype, int op) {
  BlockingCollective timed;
  orAbort(hrt_all_reduce(data, data, countOf("hrt_mlir_all_reduce", count),
                         hrt_dtype(dtype), hrt_reduce_op(op), comm));
}

extern "C" hrt_request hrt_mlir_all_reduce_start(hrt_comm comm, void *data,
                                                 long long count, int dtype,
                                                 int op) {
  size_t n = countOf("hrt_mlir_all_reduce_start", count);
  size_t bytes = n * hrt_dtype_size(hrt_dtype(dtype));
  double posted = hrt_wtime();
  hetero::rt::recordBackground(HRT_TIMELINE_POSTED, posted, posted, bytes);
  hrt_request request = nullptr;
  if (!hetero::rt::communicationThreadEnabled()) {
    orAbort(hrt_iall_reduce(data, data, n, hrt_dtype(dtype), hrt_reduce_op(op),
                            comm, &request));
    return request;
  }
  // Posted and completed on the communication thread, which progresses it
  // while this thread computes.
  return startedOnThread("hrt_mlir_all_reduce_start", bytes, [=] {
    hrt_request posted = nullptr;
    if (hrt_status status = hrt_iall_reduce(data, data, n, hrt_dtype(dtype),
                                            hrt_reduce_op(op), comm, &posted))
      return status;
    return hrt_wait(&posted);
  });
}

extern "C" void hrt_mlir_wait(hrt_request request) {
  CommunicationScope timed(HRT_TIMELINE_WAIT);
  orAbort(hrt_wait(&request));
}

extern "C" void hrt_mlir_all_gather(hrt_comm comm, const void *send, void *recv,
                                    long long count, int dtype) {
  BlockingCollective timed;
  orAbort(hrt_all_gather(send, recv, countOf("hrt_mlir_all_gather", count),
                         hrt_dtype(dtype), comm));
}

extern "C" void hrt_mlir_reduce_scatter(hrt_comm comm, const void *send,
                                        void *recv, long long count, int dtype,
                                        int op) {
  BlockingCollective timed;
  orAbort(hrt_reduce_scatter(send, recv,
                             countOf("hrt_mlir_reduce_scatter", count),
                             hrt_dtype(dtype), hrt_reduce_op(op), comm));
}

extern "C" void hrt_mlir_broadcast(hrt_comm comm, void *data, long long count,
                                   int dtype, long long root) {
  BlockingCollective timed;
  orAbort(hrt_broadcast(data, countOf("hrt_mlir_broadcast", count),
                        hrt_dtype(dtype),
                        intOf("hrt_mlir_broadcast", "root", root), comm));
}

extern "C" void hrt_mlir_reduce(hrt_comm comm, void *data, long long count,
                                int dtype, int op, long long root) {
  BlockingCollective timed;
  orAbort(hrt_reduce(data, data, countOf("hrt_mlir_reduce", count),
                     hrt_dtype(dtype), hrt_reduce_op(op),
                     intOf("hrt_mlir_reduce", "root", root), comm));
}

extern "C" void hrt_mlir_all_to_all(hrt_comm comm, const void *send, void *recv,
                                    long long count, int dtype) {
  BlockingCollective timed;
  orAbort(hrt_all_to_all(send, recv, countOf("hrt_mlir_all_to_all", count),
                         hrt_dtype(dtype), comm));
}

extern "C" void hrt_mlir_send(hrt_comm comm, const void *data, long long count,
                              int dtype, long long peer, long long tag) {
  // Buffered: a pipeline stage never waits for the receiver to be ready.
  CommunicationScope timed(HRT_TIMELINE_SEND);
  orAbort(hrt_bsend(data, countOf("hrt_mlir_send", count), hrt_dtype(dtype),
                    intOf("hrt_mlir_send", "peer", peer),
                    intOf("hrt_mlir_send", "tag", tag), comm));
}

extern "C" void hrt_mlir_recv(hrt_comm comm, void *data, long long count,
                              int dtype, long long peer, long long tag) {
  CommunicationScope timed(HRT_TIMELINE_RECV);
  orAbort(hrt_recv(data, countOf("hrt_mlir_recv", count), hrt_dtype(dtype),
                   intOf("hrt_mlir_recv", "peer", peer),
                   intOf("hrt_mlir_recv", "tag", tag), comm));
}

namespace {
/// The compression of a compressed all-reduce of compiled code. Per
/// compressed all-reduce of the program (its site): its residual and how
/// often it ran, from which every rank derives the same seed.
/// `placement` (0: the host, 1: the device) is the op's: data in device
/// memory is compressed there, where libhetero_rt_cuda is loaded; data in
/// host memory (a CPU run of the same program) on the host.
hrt_compression compressionOf(const char *entry, const void *data,
                              long long count, int dtype, int compressor,
                              double ratio, long long levels, int scheme,
                              int errorFeedback, long long nodeSize,
                              int placement, long long site) {
  if (dtype != HRT_FLOAT32)
    abortWith(std::string(entry) +
              ": a compressed all-reduce needs float32 data, got hrt_dtype " +
              std::to_string(dtype));
  if (placement != HRT_PLACEMENT_HOST && placement != HRT_PLACEMENT_DEVICE)
    abortWith(std::string(entry) + ": unknown placement " +
              std::to_string(placement) + ", expected 0 (host) or 1 (device)");
  const hrt_device_compression *device =
      placement == HRT_PLACEMENT_DEVICE ? hetero::rt::deviceCompressionFor(data)
                                        : nullptr;
  /// A device residual lives as long as the process, as the host one.
  struct SiteState {
    std::vector<float> residual;
    void *deviceResidual = nullptr;
    size_t deviceElements = 0;
    unsigned long long calls = 0;
  };
  static std::map<long long, SiteState> sites;
  size_t n = countOf(entry, count);
  SiteState &state = sites[site];
  // A site's residual is made once: a started all-reduce of the site may
  // still be using it on the communication thread.
  size_t kept = device ? state.deviceElements : state.residual.size();
  if (errorFeedback && kept != 0 && kept != n)
    abortWith(std::string(entry) + ": compressed all-reduce " +
              std::to_string(site) + " has " + std::to_string(n) +
              " elements, but " + std::to_string(kept) +
              " at its first call; a site's size is fixed");
  if (errorFeedback && !device && state.residual.empty())
    state.residual.assign(n, 0.0f);
  if (errorFeedback && device && !state.deviceResidual) {
    state.deviceResidual = device->allocate(n * sizeof(float));
    state.deviceElements = n;
    // Zeroed on this thread's stream before the communication thread's
    // kernels read it.
    device->synchronize();
  }
  hrt_compression spec;
  spec.compressor = hrt_compressor(compressor);
  spec.ratio = ratio;
  spec.levels = intOf(entry, "QSGD level count", levels);
  spec.scheme = hrt_scheme(scheme);
  spec.seed = (unsigned long long)site * 0x100000001b3ULL + state.calls++;
  spec.residual = !errorFeedback ? nullptr
                  : device       ? static_cast<float *>(state.deviceResidual)
                                 : state.residual.data();
  spec.node_size = intOf(entry, "node size", nodeSize);
  spec.placement = device ? HRT_PLACEMENT_DEVICE : HRT_PLACEMENT_HOST;
  return spec;
}
} // namespace

extern "C" void hrt_mlir_compressed_all_reduce(
    hrt_comm comm, void *data, long long count, int dtype, int op,
    int compressor, double ratio, long long levels, int scheme,
    int errorFeedback, long long nodeSize, int placement, long long site) {
  BlockingCollective timed;
  const char *entry = "hrt_mlir_compressed_all_reduce";
  hrt_compression spec =
      compressionOf(entry, data, count, dtype, compressor, ratio, levels,
                    scheme, errorFeedback, nodeSize, placement, site);
  orAbort(hrt_compressed_all_reduce(static_cast<float *>(data),
                                    countOf(entry, count), &spec,
                                    hrt_reduce_op(op), comm));
}

extern "C" hrt_request hrt_mlir_compressed_all_reduce_start(
    hrt_comm comm, void *data, long long count, int dtype, int op,
    int compressor, double ratio, long long levels, int scheme,
    int errorFeedback, long long nodeSize, int placement, long long site) {
  const char *entry = "hrt_mlir_compressed_all_reduce_start";
  hrt_compression spec =
      compressionOf(entry, data, count, dtype, compressor, ratio, levels,
                    scheme, errorFeedback, nodeSize, placement, site);
  size_t n = countOf(entry, count);
  double posted = hrt_wtime();
  hetero::rt::recordBackground(HRT_TIMELINE_POSTED, posted, posted,
                               n * sizeof(float));
  auto run = [=] {
    hrt_compression copy = spec;
    return hrt_compressed_all_reduce(static_cast<float *>(data), n, &copy,
                                     hrt_reduce_op(op), comm);
  };
  // Compression and communication run on the communication thread while
  // this thread computes; without it, the call completes here.
  if (hetero::rt::communicationThreadEnabled())
    return startedOnThread(entry, n * sizeof(float), run);
  {
    CommunicationScope timed(HRT_TIMELINE_COLLECTIVE);
    orAbort(run());
  }
  return startedOnThread(entry, 0, nullptr);
}

extern "C" void hrt_mlir_sparse_all_reduce(hrt_comm comm, void *data,
                                           long long count, int dtype, int op,
                                           int format) {
  BlockingCollective timed;
  if (dtype != HRT_FLOAT32)
    abortWith("a sparse all-reduce needs float32 data, got hrt_dtype " +
              std::to_string(dtype));
  orAbort(hrt_sparse_all_reduce(
      static_cast<float *>(data), countOf("hrt_mlir_sparse_all_reduce", count),
      hrt_sparse_format(format), hrt_reduce_op(op), comm));
}

extern "C" void hrt_mlir_corpus_batch(int *input, int *target,
                                      long long sequences, long long tokens,
                                      long long step, long long replica,
                                      long long microbatch, long long vocab,
                                      long long replicas) {
  orAbort(hrt_data_batch(step, replica, microbatch, replicas, vocab, sequences,
                         tokens, input, target));
}

extern "C" void hrt_mlir_sample_context(int *context, long long streams,
                                        long long tokens, long long vocab) {
  orAbort(hrt_sample_context(vocab, streams, tokens, context));
}

extern "C" float hrt_mlir_sample_next(const float *logits, long long rows,
                                      long long vocab) {
  float logProbability = 0.0f;
  orAbort(hrt_sample_next(logits, rows, vocab, &logProbability));
  return logProbability;
}

//===----------------------------------------------------------------------===//
// hetero.group_sync
//===----------------------------------------------------------------------===//

namespace {

/// The sync groups of compiled code: one per process, created by the first
/// hrt_mlir_sync_ready with the options every later call must repeat.
struct CompiledSync {
  long long stages = 0, replicas = 0, period = 0;
  int policy = -1, periodic = 0, lock = 0;
  double window = 0.0;
  hrt_sync sync = nullptr;
  /// policy = allreduce: the stage's replicas.
  hrt_comm replicaGroup = nullptr;
  long long groupSize = 0;
};

CompiledSync &compiledSync() {
  static CompiledSync state;
  return state;
}

} // namespace

extern "C" long long hrt_mlir_sync_ready(long long stages, long long replicas,
                                         int policy, long long period,
                                         int periodic, int lock,
                                         double window) {
  CommunicationScope timed(HRT_TIMELINE_WAIT);
  CompiledSync &state = compiledSync();
  if (state.policy < 0) {
    if (stages < 1 || replicas < 1 || stages > INT_MAX || replicas > INT_MAX)
      abortWith("hetero.group_sync: a grid of " + std::to_string(stages) +
                " stages x " + std::to_string(replicas) + " replicas");
    if (policy != 0 && policy != 1)
      abortWith("hetero.group_sync: unknown policy " + std::to_string(policy));
    state.stages = stages;
    state.replicas = replicas;
    state.policy = policy;
    state.period = period;
    state.periodic = periodic;
    state.lock = lock;
    state.window = window;
    if (policy == 0) {
      state.replicaGroup = hrt_mlir_group(2, stages, replicas, 1, 1, 2);
    } else {
      int rank = 0;
      orAbort(hrt_comm_rank(world(), &rank));
      hrt_sync_options options;
      hrt_sync_default_options(&options);
      options.period = intOf("hrt_mlir_sync_ready", "period", period);
      options.periodic = periodic;
      options.lock = lock;
      options.window_fraction = window;
      orAbort(hrt_sync_create(world(), int(stages), int(replicas),
                              int(rank / replicas), int(rank % replicas),
                              &options, &state.sync));
    }
  } else if (state.stages != stages || state.replicas != replicas ||
             state.policy != policy || state.period != period ||
             state.periodic != periodic || state.lock != lock ||
             state.window != window) {
    abortWith("hetero.group_sync: every sync of a program must use the "
              "options of its first one (grid, policy, period, semantics, "
              "lock, window)");
  }
  if (state.policy == 0) {
    state.groupSize = replicas;
    return replicas;
  }
  int size = 0;
  orAbort(hrt_sync_ready(state.sync, /*final=*/0, &size, nullptr));
  state.groupSize = size;
  return size;
}

extern "C" void hrt_mlir_sync_average(void *data, long long count, int dtype) {
  BlockingCollective timed;
  CompiledSync &state = compiledSync();
  if (state.groupSize == 0)
    abortWith("hrt_mlir_sync_average: no group; hrt_mlir_sync_ready comes "
              "first");
  size_t elements = countOf("hrt_mlir_sync_average", count);
  if (state.sync) {
    orAbort(hrt_sync_average(state.sync, data, elements, hrt_dtype(dtype)));
    return;
  }
  orAbort(hrt_all_reduce(data, data, elements, hrt_dtype(dtype), HRT_AVG,
                         state.replicaGroup));
}

extern "C" int hrt_mlir_sync_stats(hrt_sync_stats *stats) {
  CompiledSync &state = compiledSync();
  if (!state.sync || !stats)
    return 0;
  orAbort(hrt_sync_get_stats(state.sync, stats));
  return 1;
}

extern "C" void hrt_mlir_sync_finish(void) {
  orAbort(hetero::rt::finishCompiledSync());
}

hrt_status hetero::rt::finishCompiledSync() {
  CompiledSync &state = compiledSync();
  hrt_sync sync = state.sync;
  state = CompiledSync();
  return hrt_sync_destroy(sync);
}
