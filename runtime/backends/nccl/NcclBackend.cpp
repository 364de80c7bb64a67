//===- NcclBackend.cpp - hrt_ over NCCL, on device buffers ----------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Communicators are bootstrapped over MPI: rank 0 of each MPI communicator
// creates the NCCL unique id and broadcasts it. Every operation is enqueued on
// the communicator's CUDA stream; a blocking call then polls the stream and
// NCCL's asynchronous error state until it completes or the timeout passes,
// in which case the NCCL communicator is aborted so that no rank hangs.
//
//===----------------------------------------------------------------------===//

#include "../../Runtime.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <string>
#include <vector>

namespace hetero::rt {
namespace {

/// An NCCL communicator and the stream its work is enqueued on, with the
/// event that orders it after the caller's compute stream.
struct Lane {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t computed = nullptr;
};

/// NCCL state of one communicator, hung off hrt_comm_impl::nccl:
/// collectives on `main`; point-to-point traffic towards higher ranks
/// (sends to them, receives from lower ones) on `up`, towards lower ranks
/// on `down`. NCCL runs the operations of one communicator in order, so a
/// send queued before a receive on one lane would wait for the peer's
/// receive, which may be queued behind the peer's own send to this rank:
/// two stages exchanging activations and gradients would deadlock. Along
/// one direction the waits only go one way.
struct NcclComm {
  Lane main, up, down;
  /// The lane of a transfer with `peer`, from this rank (`rank`).
  Lane &lane(int rank, int peer, bool sending) {
    return (peer > rank) == sending ? up : down;
  }
};

NcclComm &ncclOf(hrt_comm comm) { return *static_cast<NcclComm *>(comm->nccl); }

/// The device of this process's communicators (the local rank's), once the
/// world is attached. Operations may come from any thread (the runtime's
/// communication thread posts all-reduces), and CUDA's current device is
/// per thread: each one makes it current first.
int backendDevice = -1;
void onBackendDevice() {
  if (backendDevice >= 0)
    cudaSetDevice(backendDevice);
}

hrt_status checkNccl(ncclResult_t result, const CallSite &site) {
  if (result == ncclSuccess || result == ncclInProgress)
    return HRT_SUCCESS;
  return fail(HRT_ERROR_BACKEND, site,
              std::string("NCCL: ") + ncclGetErrorString(result));
}

hrt_status checkCuda(cudaError_t error, const CallSite &site) {
  if (error == cudaSuccess)
    return HRT_SUCCESS;
  return fail(HRT_ERROR_BACKEND, site,
              std::string("CUDA: ") + cudaGetErrorString(error));
}

/// The kind of memory `buffer` is, in `type`, or the error with which CUDA
/// says it does not know the address (then cleared: it is not sticky).
cudaError_t memoryType(const void *buffer, cudaMemoryType &type) {
  cudaPointerAttributes attributes{};
  cudaError_t error = cudaPointerGetAttributes(&attributes, buffer);
  if (error != cudaSuccess)
    cudaGetLastError();
  type = attributes.type;
  return error;
}

/// Whether NCCL can move memory of `type`.
bool onDevice(cudaMemoryType type) {
  return type == cudaMemoryTypeDevice || type == cudaMemoryTypeManaged;
}

/// NCCL moves device memory only: a host pointer handed to it fails deep
/// inside a kernel or hangs. Refuse it up front, naming the buffer.
hrt_status requireDevice(const void *buffer, size_t count, const char *role,
                         const CallSite &site) {
  if (count == 0)
    return HRT_SUCCESS;
  cudaMemoryType type;
  if (cudaError_t error = memoryType(buffer, type); error != cudaSuccess)
    return fail(HRT_ERROR_INVALID_ARGUMENT, site,
                std::string("the ") + role +
                    " buffer is not CUDA memory (CUDA: " +
                    cudaGetErrorString(error) + ")");
  if (!onDevice(type))
    return fail(HRT_ERROR_INVALID_ARGUMENT, site,
                std::string("the ") + role +
                    " buffer is host memory; the NCCL backend moves device "
                    "buffers only (use the MPI backend for host buffers)");
  return HRT_SUCCESS;
}

/// The host buffers of one collective, where a HostBuffers scope allows
/// them (the runtime's compressed and sparse all-reduces): each gets a
/// device copy, filled on the lane before the operation when the operation
/// reads it, and read back once the operation has completed when it writes
/// it. Device buffers are used as they are; a host buffer outside a scope
/// is refused as by requireDevice.
class Staging {
public:
  explicit Staging(const CallSite &site) : site(site) {}
  Staging(const Staging &) = delete;
  Staging &operator=(const Staging &) = delete;
  ~Staging() {
    for (const Copy &copy : copies)
      cudaFree(copy.device);
  }

  /// The address the operation uses for `buffer` of `bytes`, which it reads
  /// (`in`) or writes (`out`) or both.
  hrt_status address(const void *buffer, size_t bytes, bool in, bool out,
                     const char *role, void *&device) {
    device = const_cast<void *>(buffer);
    if (bytes == 0 || !HostBuffers::allowed())
      return requireDevice(buffer, bytes, role, site);
    cudaMemoryType type;
    if (memoryType(buffer, type) != cudaSuccess)
      return requireDevice(buffer, bytes, role, site); // reports it
    if (onDevice(type))
      return HRT_SUCCESS;
    for (Copy &copy : copies)
      if (copy.host == buffer && copy.bytes == bytes) { // in place
        copy.in |= in;
        copy.out |= out;
        device = copy.device;
        return HRT_SUCCESS;
      }
    onBackendDevice();
    if (hrt_status status = checkCuda(cudaMalloc(&device, bytes), site))
      return status;
    copies.push_back({buffer, device, bytes, in, out});
    return HRT_SUCCESS;
  }

  /// address() of a send buffer the operation reads and of a receive
  /// buffer it writes.
  hrt_status addresses(const void *send, size_t sendBytes, const void *recv,
                       size_t recvBytes, void *&in, void *&out) {
    if (hrt_status status = address(send, sendBytes, true, false, "send", in))
      return status;
    return address(recv, recvBytes, false, true, "receive", out);
  }

  /// Fills the device copies the operation reads, on `stream`.
  hrt_status copyIn(cudaStream_t stream) {
    for (const Copy &copy : copies)
      if (copy.in)
        if (hrt_status status =
                checkCuda(cudaMemcpyAsync(copy.device, copy.host, copy.bytes,
                                          cudaMemcpyHostToDevice, stream),
                          site))
          return status;
    return HRT_SUCCESS;
  }

  /// Reads back the copies the operation wrote, once it has completed.
  hrt_status copyOut() {
    for (const Copy &copy : copies)
      if (copy.out)
        if (hrt_status status =
                checkCuda(cudaMemcpy(const_cast<void *>(copy.host), copy.device,
                                     copy.bytes, cudaMemcpyDeviceToHost),
                          site))
          return status;
    return HRT_SUCCESS;
  }

private:
  struct Copy {
    const void *host;
    void *device;
    size_t bytes;
    bool in, out;
  };
  const CallSite &site;
  std::vector<Copy> copies;
};

ncclDataType_t ncclType(hrt_dtype dtype) {
  switch (dtype) {
  case HRT_FLOAT32:
    return ncclFloat32;
  case HRT_FLOAT64:
    return ncclFloat64;
  case HRT_INT32:
    return ncclInt32;
  case HRT_INT64:
    return ncclInt64;
  case HRT_UINT8:
    return ncclUint8;
  case HRT_FLOAT16:
    return ncclFloat16;
  case HRT_BFLOAT16:
    return ncclBfloat16;
  }
  return ncclFloat32;
}

ncclRedOp_t ncclOp(hrt_reduce_op op) {
  switch (op) {
  case HRT_SUM:
    return ncclSum;
  case HRT_PROD:
    return ncclProd;
  case HRT_MAX:
    return ncclMax;
  case HRT_MIN:
    return ncclMin;
  case HRT_AVG:
    return ncclAvg;
  }
  return ncclSum;
}

/// Work enqueued on a communicator's stream, complete when `event` is.
class NcclPending : public PendingOperation {
public:
  NcclPending(Lane &comm, cudaEvent_t event) : comm(comm), event(event) {}
  ~NcclPending() override { cudaEventDestroy(event); }
  hrt_status test(bool &done) override {
    ncclResult_t asyncError = ncclSuccess;
    if (hrt_status status =
            checkNccl(ncclCommGetAsyncError(comm.comm, &asyncError), site))
      return status;
    if (hrt_status status = checkNccl(asyncError, site))
      return status;
    cudaError_t query = cudaEventQuery(event);
    done = query == cudaSuccess;
    if (query == cudaErrorNotReady)
      return HRT_SUCCESS;
    return checkCuda(query, site);
  }
  void abandon() override { ncclCommAbort(comm.comm); }

private:
  Lane &comm;
  cudaEvent_t event;
};

/// Records an event after the work enqueued on `comm` and returns it as
/// pending.
hrt_status pendingAfter(Lane &comm, const CallSite &site,
                        std::unique_ptr<PendingOperation> &pending) {
  onBackendDevice();
  cudaEvent_t event = nullptr;
  if (hrt_status status = checkCuda(
          cudaEventCreateWithFlags(&event, cudaEventDisableTiming), site))
    return status;
  if (hrt_status status = checkCuda(cudaEventRecord(event, comm.stream), site))
    return status;
  pending = std::make_unique<NcclPending>(comm, event);
  pending->site = site;
  return HRT_SUCCESS;
}

/// Orders the work enqueued on `lane` from now on after the work queued on
/// the caller's compute stream (hrt_register_compute_stream), on the
/// device: the caller need not wait for its kernels before a collective.
hrt_status afterCompute(Lane &lane, const CallSite &site) {
  auto compute = static_cast<cudaStream_t>(computeStream());
  if (!compute)
    return HRT_SUCCESS;
  int device = -1;
  if (hrt_status status =
          checkCuda(cudaStreamGetDevice(compute, &device), site))
    return status;
  if (device != backendDevice)
    return fail(HRT_ERROR_BACKEND, site,
                "the calling thread's kernels run on device " +
                    std::to_string(device) +
                    " but this rank's NCCL communicators on device " +
                    std::to_string(backendDevice) +
                    " (its local rank's); launch with the local rank in the "
                    "environment (OMPI_COMM_WORLD_LOCAL_RANK, LOCAL_RANK, "
                    "...) or name the device with mgpuSetDefaultDevice");
  if (!lane.computed)
    if (hrt_status status = checkCuda(
            cudaEventCreateWithFlags(&lane.computed, cudaEventDisableTiming),
            site))
      return status;
  if (hrt_status status =
          checkCuda(cudaEventRecord(lane.computed, compute), site))
    return status;
  return checkCuda(cudaStreamWaitEvent(lane.stream, lane.computed, 0), site);
}

/// Enqueues `enqueue` on the collectives' lane, after the copies `staging`
/// fills, and waits for it under the timeout; then reads back what
/// `staging` holds for host buffers.
template <typename Enqueue>
hrt_status complete(const CallSite &site, Staging &staging, Enqueue enqueue) {
  onBackendDevice();
  Lane &lane = ncclOf(site.comm).main;
  if (hrt_status status = afterCompute(lane, site))
    return status;
  if (hrt_status status = staging.copyIn(lane.stream))
    return status;
  if (hrt_status status = checkNccl(enqueue(lane), site))
    return status;
  std::unique_ptr<PendingOperation> pending;
  if (hrt_status status = pendingAfter(lane, site, pending))
    return status;
  if (hrt_status status = waitWithTimeout(*pending))
    return status;
  return staging.copyOut();
}

class NcclBackend : public Backend {
public:
  NcclBackend() : mpi(createMpiBackend()) {}

  hrt_status finalize() override { return mpi->finalize(); }

  hrt_status initWorld(hrt_comm world) override {
    if (hrt_status status = mpi->initWorld(world))
      return status;
    return attach(world, {"hrt_init", world, 0});
  }

  hrt_status split(hrt_comm parent, int color, int key, hrt_comm out) override {
    if (hrt_status status = mpi->split(parent, color, key, out))
      return status;
    if (out->mpi == MPI_COMM_NULL)
      return HRT_SUCCESS;
    return attach(out, {"hrt_comm_split", out, 0});
  }

  hrt_status free(hrt_comm comm) override {
    CallSite here{"hrt_comm_free", comm, 0};
    if (auto *state = static_cast<NcclComm *>(comm->nccl)) {
      hrt_status status = HRT_SUCCESS;
      for (Lane *lane : {&state->main, &state->up, &state->down}) {
        if (lane->comm && status == HRT_SUCCESS)
          status = checkNccl(ncclCommDestroy(lane->comm), here);
        if (lane->stream)
          cudaStreamDestroy(lane->stream);
        if (lane->computed)
          cudaEventDestroy(lane->computed);
      }
      delete state;
      comm->nccl = nullptr;
      if (status != HRT_SUCCESS)
        return status;
    }
    return mpi->free(comm);
  }

  hrt_status isend(const void *buffer, size_t count, hrt_dtype dtype,
                   const CallSite &site,
                   std::unique_ptr<PendingOperation> &pending) override {
    return postPointToPoint(const_cast<void *>(buffer), count, dtype, site,
                            /*sending=*/true, pending);
  }

  /// The copy is stream-ordered: allocated and filled on the caller's
  /// compute stream where one is registered (the kernels queued after the
  /// send may then overwrite the buffer, and the compute stream never
  /// waits for a lane, which waits for the receiver), else on the send's
  /// lane; sent and freed on the lane, so nothing waits for the receiver.
  hrt_status isendCopy(const void *buffer, size_t count, hrt_dtype dtype,
                       const CallSite &site,
                       std::unique_ptr<PendingOperation> &pending) override {
    if (hrt_status status = requireDevice(buffer, count, "send", site))
      return status;
    onBackendDevice();
    Lane &lane = ncclOf(site.comm).lane(site.comm->rank, site.peer, true);
    auto compute = static_cast<cudaStream_t>(computeStream());
    cudaStream_t copying = compute ? compute : lane.stream;
    size_t bytes = count * hrt_dtype_size(dtype);
    void *copy = nullptr;
    if (bytes) {
      if (hrt_status status =
              checkCuda(cudaMallocAsync(&copy, bytes, copying), site))
        return status;
      if (hrt_status status =
              checkCuda(cudaMemcpyAsync(copy, buffer, bytes,
                                        cudaMemcpyDeviceToDevice, copying),
                        site))
        return status;
    }
    // The lane's send after the copy.
    if (hrt_status status = afterCompute(lane, site))
      return status;
    hrt_status sent = checkNccl(ncclSend(copy, count, ncclType(dtype),
                                         site.peer, lane.comm, lane.stream),
                                site);
    if (copy)
      cudaFreeAsync(copy, lane.stream);
    if (sent != HRT_SUCCESS)
      return sent;
    return pendingAfter(lane, site, pending);
  }

  hrt_status irecv(void *buffer, size_t count, hrt_dtype dtype,
                   const CallSite &site,
                   std::unique_ptr<PendingOperation> &pending) override {
    return postPointToPoint(buffer, count, dtype, site, /*sending=*/false,
                            pending);
  }

  hrt_status allReduce(const void *send, void *recv, size_t count,
                       hrt_dtype dtype, hrt_reduce_op op,
                       const CallSite &site) override {
    size_t bytes = count * hrt_dtype_size(dtype);
    Staging staging(site);
    void *in = nullptr, *out = nullptr;
    if (hrt_status status =
            staging.addresses(send, bytes, recv, bytes, in, out))
      return status;
    return complete(site, staging, [&](Lane &comm) {
      return ncclAllReduce(in, out, count, ncclType(dtype), ncclOp(op),
                           comm.comm, comm.stream);
    });
  }

  hrt_status allGather(const void *send, void *recv, size_t count,
                       hrt_dtype dtype, const CallSite &site) override {
    size_t bytes = count * hrt_dtype_size(dtype);
    Staging staging(site);
    void *in = nullptr, *out = nullptr;
    if (hrt_status status = staging.addresses(
            send, bytes, recv, bytes * size_t(site.comm->size), in, out))
      return status;
    return complete(site, staging, [&](Lane &comm) {
      return ncclAllGather(in, out, count, ncclType(dtype), comm.comm,
                           comm.stream);
    });
  }

  hrt_status reduceScatter(const void *send, void *recv, size_t count,
                           hrt_dtype dtype, hrt_reduce_op op,
                           const CallSite &site) override {
    size_t bytes = count * hrt_dtype_size(dtype);
    Staging staging(site);
    void *in = nullptr, *out = nullptr;
    if (hrt_status status = staging.addresses(
            send, bytes * size_t(site.comm->size), recv, bytes, in, out))
      return status;
    return complete(site, staging, [&](Lane &comm) {
      return ncclReduceScatter(in, out, count, ncclType(dtype), ncclOp(op),
                               comm.comm, comm.stream);
    });
  }

  hrt_status broadcast(void *buffer, size_t count, hrt_dtype dtype, int root,
                       const CallSite &site) override {
    Staging staging(site);
    void *data = nullptr;
    if (hrt_status status =
            staging.address(buffer, count * hrt_dtype_size(dtype), true, true,
                            "broadcast", data))
      return status;
    return complete(site, staging, [&](Lane &comm) {
      return ncclBroadcast(data, data, count, ncclType(dtype), root, comm.comm,
                           comm.stream);
    });
  }

  hrt_status reduce(const void *send, void *recv, size_t count, hrt_dtype dtype,
                    hrt_reduce_op op, int root, const CallSite &site) override {
    size_t bytes = count * hrt_dtype_size(dtype);
    Staging staging(site);
    void *in = nullptr, *out = nullptr;
    if (hrt_status status = staging.addresses(
            send, bytes, recv, site.comm->rank == root ? bytes : 0, in, out))
      return status;
    return complete(site, staging, [&](Lane &comm) {
      return ncclReduce(in, out, count, ncclType(dtype), ncclOp(op), root,
                        comm.comm, comm.stream);
    });
  }

  /// NCCL has no all-to-all: one grouped send and receive per peer.
  hrt_status allToAll(const void *send, void *recv, size_t count,
                      hrt_dtype dtype, const CallSite &site) override {
    size_t chunk = count * hrt_dtype_size(dtype);
    size_t bytes = chunk * size_t(site.comm->size);
    Staging staging(site);
    void *in = nullptr, *out = nullptr;
    if (hrt_status status =
            staging.addresses(send, bytes, recv, bytes, in, out))
      return status;
    return complete(site, staging, [&](Lane &comm) {
      ncclResult_t result = ncclGroupStart();
      for (int peer = 0; peer < site.comm->size && result == ncclSuccess;
           ++peer) {
        result = ncclSend(static_cast<const char *>(in) + peer * chunk, count,
                          ncclType(dtype), peer, comm.comm, comm.stream);
        if (result == ncclSuccess)
          result = ncclRecv(static_cast<char *>(out) + peer * chunk, count,
                            ncclType(dtype), peer, comm.comm, comm.stream);
      }
      ncclResult_t ended = ncclGroupEnd();
      return result != ncclSuccess ? result : ended;
    });
  }

  /// A barrier on the device: an all-reduce of one byte.
  hrt_status barrier(const CallSite &site) override {
    Staging none(site);
    return complete(site, none, [&](Lane &comm) {
      return ncclAllReduce(scratch, scratch, 1, ncclUint8, ncclSum, comm.comm,
                           comm.stream);
    });
  }

  /// The runtime compresses and sparsifies on the host: a device buffer
  /// there would be read as host memory.
  hrt_status requireHost(const void *buffer, size_t bytes, const char *role,
                         const CallSite &site) override {
    if (bytes == 0)
      return HRT_SUCCESS;
    cudaMemoryType type;
    if (memoryType(buffer, type) != cudaSuccess ||
        type != cudaMemoryTypeDevice) // unknown to CUDA: the host's
      return HRT_SUCCESS;
    return fail(HRT_ERROR_INVALID_ARGUMENT, site,
                std::string("the ") + role +
                    " buffer is device memory; compressed and sparse "
                    "all-reduces run on the host: pass a host copy (the "
                    "NCCL backend stages their exchanges)");
  }

private:
  /// A send or receive of `buffer` on its direction's lane.
  hrt_status postPointToPoint(void *buffer, size_t count, hrt_dtype dtype,
                              const CallSite &site, bool sending,
                              std::unique_ptr<PendingOperation> &pending) {
    if (hrt_status status =
            requireDevice(buffer, count, sending ? "send" : "receive", site))
      return status;
    onBackendDevice();
    Lane &lane = ncclOf(site.comm).lane(site.comm->rank, site.peer, sending);
    if (hrt_status status = afterCompute(lane, site))
      return status;
    ncclResult_t posted = sending ? ncclSend(buffer, count, ncclType(dtype),
                                             site.peer, lane.comm, lane.stream)
                                  : ncclRecv(buffer, count, ncclType(dtype),
                                             site.peer, lane.comm, lane.stream);
    if (hrt_status status = checkNccl(posted, site))
      return status;
    return pendingAfter(lane, site, pending);
  }

  /// Creates the NCCL communicator over the ranks of `comm`'s MPI
  /// communicator, on the device local rank mod device count.
  hrt_status attach(hrt_comm comm, const CallSite &site) {
    int devices = 0;
    if (hrt_status status = checkCuda(cudaGetDeviceCount(&devices), site))
      return status;
    if (devices == 0)
      return fail(HRT_ERROR_UNAVAILABLE, site, "no CUDA device is visible");
    if (comm->isWorld) {
      MPI_Comm local;
      MPI_Comm_split_type(comm->mpi, MPI_COMM_TYPE_SHARED, comm->rank,
                          MPI_INFO_NULL, &local);
      int localRank = 0;
      MPI_Comm_rank(local, &localRank);
      MPI_Comm_free(&local);
      if (hrt_status status =
              checkCuda(cudaSetDevice(localRank % devices), site))
        return status;
      backendDevice = localRank % devices;
      if (hrt_status status = checkCuda(cudaMalloc(&scratch, 1), site))
        return status;
    }
    // One id per lane, created by rank 0 and broadcast at once.
    ncclUniqueId ids[3];
    if (comm->rank == 0)
      for (ncclUniqueId &id : ids)
        if (hrt_status status = checkNccl(ncclGetUniqueId(&id), site))
          return status;
    int code = MPI_Bcast(ids, sizeof(ids), MPI_BYTE, 0, comm->mpi);
    if (code != MPI_SUCCESS)
      return fail(HRT_ERROR_BACKEND, site,
                  "broadcasting the NCCL ids over MPI: " +
                      mpiErrorString(code));
    auto state = std::make_unique<NcclComm>();
    Lane *lanes[3] = {&state->main, &state->up, &state->down};
    for (int i = 0; i < 3; ++i) {
      if (hrt_status status =
              checkCuda(cudaStreamCreateWithFlags(&lanes[i]->stream,
                                                  cudaStreamNonBlocking),
                        site))
        return status;
      if (hrt_status status = checkNccl(
              ncclCommInitRank(&lanes[i]->comm, comm->size, ids[i], comm->rank),
              site))
        return status;
    }
    comm->nccl = state.release();
    return HRT_SUCCESS;
  }

  std::unique_ptr<Backend> mpi;
  void *scratch = nullptr;
};

} // namespace

std::unique_ptr<Backend> createNcclBackend() {
  return std::make_unique<NcclBackend>();
}

} // namespace hetero::rt
