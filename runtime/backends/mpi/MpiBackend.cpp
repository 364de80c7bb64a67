//===- MpiBackend.cpp - hrt_ over MPI, on host buffers --------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Without a timeout, collectives call the blocking MPI collectives (the
// fastest path the MPI library has). With one, they post the non-blocking
// forms and poll them against the deadline. Point-to-point transfers are
// always non-blocking underneath. Communicators return MPI errors instead of
// aborting, so every failure reaches the caller as a status and a message.
//
//===----------------------------------------------------------------------===//

#include "../../Runtime.h"

#include "hetero-rt/compress.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <vector>

namespace hetero::rt {
namespace {

/// Turns an MPI return code into a status and a message.
hrt_status check(int code, const CallSite &site) {
  if (code == MPI_SUCCESS)
    return HRT_SUCCESS;
  return fail(HRT_ERROR_BACKEND, site, "MPI: " + mpiErrorString(code));
}

MPI_Datatype mpiType(hrt_dtype dtype) {
  switch (dtype) {
  case HRT_FLOAT32:
    return MPI_FLOAT;
  case HRT_FLOAT64:
    return MPI_DOUBLE;
  case HRT_INT32:
    return MPI_INT32_T;
  case HRT_INT64:
    return MPI_INT64_T;
  case HRT_UINT8:
    return MPI_UINT8_T;
  case HRT_FLOAT16:
  case HRT_BFLOAT16:
    return MPI_UINT16_T; // reduced by sixteenBitOp's operations
  }
  return MPI_DATATYPE_NULL;
}

/// 16-bit floats travel as MPI_UINT16_T and are reduced by user-defined
/// operations: each pair of blocks is widened to float, combined and rounded
/// back (to nearest even), as a GPU reduction in that format does.
template <bool Brain, hrt_reduce_op Op>
void reduceSixteenBit(void *in, void *inout, int *length, MPI_Datatype *) {
  size_t n = size_t(*length);
  std::vector<float> a(n), b(n);
  auto widen = Brain ? hrt_from_bf16 : hrt_from_fp16;
  auto narrow = Brain ? hrt_to_bf16 : hrt_to_fp16;
  widen(static_cast<const uint16_t *>(in), n, a.data());
  widen(static_cast<const uint16_t *>(inout), n, b.data());
  for (size_t i = 0; i < n; ++i) {
    switch (Op) {
    case HRT_SUM:
    case HRT_AVG:
      b[i] += a[i];
      break;
    case HRT_PROD:
      b[i] *= a[i];
      break;
    case HRT_MAX:
      b[i] = std::max(a[i], b[i]);
      break;
    case HRT_MIN:
      b[i] = std::min(a[i], b[i]);
      break;
    }
  }
  narrow(b.data(), n, static_cast<uint16_t *>(inout));
}

/// The user-defined operations, created on first use and kept for the life
/// of the process (MPI frees them at MPI_Finalize).
hrt_status sixteenBitOp(hrt_reduce_op op, hrt_dtype dtype, const CallSite &site,
                        MPI_Op &result) {
  using Function = void (*)(void *, void *, int *, MPI_Datatype *);
  static const Function functions[2][4] = {
      {reduceSixteenBit<false, HRT_SUM>, reduceSixteenBit<false, HRT_PROD>,
       reduceSixteenBit<false, HRT_MAX>, reduceSixteenBit<false, HRT_MIN>},
      {reduceSixteenBit<true, HRT_SUM>, reduceSixteenBit<true, HRT_PROD>,
       reduceSixteenBit<true, HRT_MAX>, reduceSixteenBit<true, HRT_MIN>}};
  static MPI_Op created[2][4] = {
      {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL},
      {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL}};
  int format = dtype == HRT_BFLOAT16 ? 1 : 0;
  int index = 0;
  switch (op) {
  case HRT_SUM:
  case HRT_AVG:
    index = 0;
    break;
  case HRT_PROD:
    index = 1;
    break;
  case HRT_MAX:
    index = 2;
    break;
  case HRT_MIN:
    index = 3;
    break;
  }
  MPI_Op &slot = created[format][index];
  if (slot == MPI_OP_NULL)
    if (hrt_status status =
            check(MPI_Op_create(functions[format][index], /*commute=*/1, &slot),
                  site))
      return status;
  result = slot;
  return HRT_SUCCESS;
}

/// The MPI reduction of `op`; avg is a sum scaled afterwards.
hrt_status mpiOp(hrt_reduce_op op, hrt_dtype dtype, const CallSite &site,
                 MPI_Op &result) {
  bool floating = dtype == HRT_FLOAT32 || dtype == HRT_FLOAT64 ||
                  dtype == HRT_FLOAT16 || dtype == HRT_BFLOAT16;
  if (op == HRT_AVG && !floating)
    return fail(HRT_ERROR_INVALID_ARGUMENT, site,
                "avg needs a floating-point type");
  if (dtype == HRT_FLOAT16 || dtype == HRT_BFLOAT16)
    return sixteenBitOp(op, dtype, site, result);
  switch (op) {
  case HRT_SUM:
  case HRT_AVG:
    result = MPI_SUM;
    break;
  case HRT_PROD:
    result = MPI_PROD;
    break;
  case HRT_MAX:
    result = MPI_MAX;
    break;
  case HRT_MIN:
    result = MPI_MIN;
    break;
  }
  return HRT_SUCCESS;
}

/// Divides the `count` elements of `buffer` by `ranks` (avg reductions).
void scaleForAverage(void *buffer, size_t count, hrt_dtype dtype, int ranks) {
  if (dtype == HRT_FLOAT32) {
    auto *values = static_cast<float *>(buffer);
    float scale = 1.0f / float(ranks);
    for (size_t i = 0; i < count; ++i)
      values[i] *= scale;
  } else if (dtype == HRT_FLOAT64) {
    auto *values = static_cast<double *>(buffer);
    double scale = 1.0 / double(ranks);
    for (size_t i = 0; i < count; ++i)
      values[i] *= scale;
  } else {
    // 16-bit floats: scaled in float, rounded once.
    auto *values = static_cast<uint16_t *>(buffer);
    bool brain = dtype == HRT_BFLOAT16;
    std::vector<float> wide(count);
    (brain ? hrt_from_bf16 : hrt_from_fp16)(values, count, wide.data());
    float scale = 1.0f / float(ranks);
    for (float &value : wide)
      value *= scale;
    (brain ? hrt_to_bf16 : hrt_to_fp16)(wide.data(), count, values);
  }
}

/// An MPI request polled by waitWithTimeout.
class MpiPending : public PendingOperation {
public:
  explicit MpiPending(bool cancellable) : cancellable(cancellable) {}
  ~MpiPending() override {
    if (request == MPI_REQUEST_NULL)
      return;
    int done = 0;
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    // A collective that has not completed (after a timeout) can be neither
    // cancelled nor freed: MPI may still write into its buffers. It is left
    // to the abort that follows.
    if (!done && cancellable)
      MPI_Request_free(&request);
  }
  hrt_status test(bool &done) override {
    int flag = 0;
    MPI_Status status;
    if (hrt_status result = check(MPI_Test(&request, &flag, &status), site))
      return result;
    done = flag != 0;
    if (done && onComplete) {
      onComplete();
      onComplete = nullptr;
    }
    return HRT_SUCCESS;
  }
  void abandon() override {
    if (cancellable && request != MPI_REQUEST_NULL)
      MPI_Cancel(&request);
  }
  MPI_Request request = MPI_REQUEST_NULL;
  /// Runs once, when the operation has completed.
  std::function<void()> onComplete;

private:
  bool cancellable;
};

/// Runs a collective: blocking when no timeout is set, otherwise posted
/// non-blocking and polled against the deadline.
template <typename Blocking, typename NonBlocking>
hrt_status runCollective(const CallSite &site, Blocking blocking,
                         NonBlocking nonBlocking) {
  if (timeoutSeconds() <= 0.0) {
    WaitScope waiting(site);
    return check(blocking(), site);
  }
  MpiPending pending(/*cancellable=*/false);
  pending.site = site;
  if (hrt_status status = check(nonBlocking(&pending.request), site))
    return status;
  return waitWithTimeout(pending);
}

/// All-gather and all-to-all move `count` elements per rank pair with the
/// same MPI signature; they differ only in the MPI functions.
using BlockExchange = int (*)(const void *, int, MPI_Datatype, void *, int,
                              MPI_Datatype, MPI_Comm);
using BlockExchangeStart = int (*)(const void *, int, MPI_Datatype, void *, int,
                                   MPI_Datatype, MPI_Comm, MPI_Request *);
hrt_status exchangeBlocks(const void *send, void *recv, size_t count,
                          hrt_dtype dtype, const CallSite &site,
                          BlockExchange blocking,
                          BlockExchangeStart nonBlocking) {
  MPI_Comm comm = site.comm->mpi;
  MPI_Datatype type = mpiType(dtype);
  return runCollective(
      site,
      [&] {
        return blocking(send, int(count), type, recv, int(count), type, comm);
      },
      [&](MPI_Request *request) {
        return nonBlocking(send, int(count), type, recv, int(count), type, comm,
                           request);
      });
}

const void *inPlace(const void *send, const void *recv) {
  return send == recv ? MPI_IN_PLACE : send;
}

class MpiBackend : public Backend {
public:
  hrt_status finalize() override { return HRT_SUCCESS; }

  hrt_status initWorld(hrt_comm world) override {
    CallSite here{"hrt_init", nullptr, 0};
    if (hrt_status status =
            check(MPI_Comm_dup(MPI_COMM_WORLD, &world->mpi), here))
      return status;
    return describe(world, here);
  }

  hrt_status split(hrt_comm parent, int color, int key, hrt_comm out) override {
    CallSite here{"hrt_comm_split", parent, 0};
    if (hrt_status status =
            check(MPI_Comm_split(parent->mpi, color < 0 ? MPI_UNDEFINED : color,
                                 key, &out->mpi),
                  here))
      return status;
    if (out->mpi == MPI_COMM_NULL) {
      out->rank = -1;
      out->size = 0;
      return HRT_SUCCESS;
    }
    return describe(out, here);
  }

  hrt_status createGroup(hrt_comm parent, const std::vector<int> &ranks,
                         int tag, hrt_comm out) override {
    CallSite here{"hrt_comm_create_group", parent, 0};
    here.tag = tag;
    MPI_Group all, members;
    if (hrt_status status = check(MPI_Comm_group(parent->mpi, &all), here))
      return status;
    hrt_status status = check(
        MPI_Group_incl(all, int(ranks.size()), ranks.data(), &members), here);
    MPI_Group_free(&all);
    if (status != HRT_SUCCESS)
      return status;
    status = check(MPI_Comm_create_group(parent->mpi, members, tag, &out->mpi),
                   here);
    MPI_Group_free(&members);
    if (status != HRT_SUCCESS)
      return status;
    return describe(out, here);
  }

  hrt_status free(hrt_comm comm) override {
    if (comm->mpi == MPI_COMM_NULL)
      return HRT_SUCCESS;
    return check(MPI_Comm_free(&comm->mpi), {"hrt_comm_free", comm, 0});
  }

  hrt_status isend(const void *buffer, size_t count, hrt_dtype dtype,
                   const CallSite &site,
                   std::unique_ptr<PendingOperation> &pending) override {
    return post(site, pending, [&](MPI_Request *request) {
      return MPI_Isend(buffer, int(count), mpiType(dtype), site.peer, site.tag,
                       site.comm->mpi, request);
    });
  }

  hrt_status irecv(void *buffer, size_t count, hrt_dtype dtype,
                   const CallSite &site,
                   std::unique_ptr<PendingOperation> &pending) override {
    return post(site, pending, [&](MPI_Request *request) {
      return MPI_Irecv(buffer, int(count), mpiType(dtype), site.peer, site.tag,
                       site.comm->mpi, request);
    });
  }

  hrt_status allReduce(const void *send, void *recv, size_t count,
                       hrt_dtype dtype, hrt_reduce_op op,
                       const CallSite &site) override {
    MPI_Op reduction;
    if (hrt_status status = mpiOp(op, dtype, site, reduction))
      return status;
    MPI_Comm comm = site.comm->mpi;
    const void *source = inPlace(send, recv);
    hrt_status status = runCollective(
        site,
        [&] {
          return MPI_Allreduce(source, recv, int(count), mpiType(dtype),
                               reduction, comm);
        },
        [&](MPI_Request *request) {
          return MPI_Iallreduce(source, recv, int(count), mpiType(dtype),
                                reduction, comm, request);
        });
    if (status == HRT_SUCCESS && op == HRT_AVG)
      scaleForAverage(recv, count, dtype, site.comm->size);
    return status;
  }

  hrt_status iallReduce(const void *send, void *recv, size_t count,
                        hrt_dtype dtype, hrt_reduce_op op, const CallSite &site,
                        std::unique_ptr<PendingOperation> &pending) override {
    MPI_Op reduction;
    if (hrt_status status = mpiOp(op, dtype, site, reduction))
      return status;
    auto posted = std::make_unique<MpiPending>(/*cancellable=*/false);
    if (hrt_status status =
            check(MPI_Iallreduce(inPlace(send, recv), recv, int(count),
                                 mpiType(dtype), reduction, site.comm->mpi,
                                 &posted->request),
                  site))
      return status;
    if (op == HRT_AVG) {
      int size = site.comm->size;
      posted->onComplete = [=] { scaleForAverage(recv, count, dtype, size); };
    }
    pending = std::move(posted);
    return HRT_SUCCESS;
  }

  hrt_status allGather(const void *send, void *recv, size_t count,
                       hrt_dtype dtype, const CallSite &site) override {
    return exchangeBlocks(send, recv, count, dtype, site, MPI_Allgather,
                          MPI_Iallgather);
  }

  hrt_status reduceScatter(const void *send, void *recv, size_t count,
                           hrt_dtype dtype, hrt_reduce_op op,
                           const CallSite &site) override {
    MPI_Op reduction;
    if (hrt_status status = mpiOp(op, dtype, site, reduction))
      return status;
    MPI_Comm comm = site.comm->mpi;
    hrt_status status = runCollective(
        site,
        [&] {
          return MPI_Reduce_scatter_block(send, recv, int(count),
                                          mpiType(dtype), reduction, comm);
        },
        [&](MPI_Request *request) {
          return MPI_Ireduce_scatter_block(
              send, recv, int(count), mpiType(dtype), reduction, comm, request);
        });
    if (status == HRT_SUCCESS && op == HRT_AVG)
      scaleForAverage(recv, count, dtype, site.comm->size);
    return status;
  }

  hrt_status broadcast(void *buffer, size_t count, hrt_dtype dtype, int root,
                       const CallSite &site) override {
    MPI_Comm comm = site.comm->mpi;
    return runCollective(
        site,
        [&] {
          return MPI_Bcast(buffer, int(count), mpiType(dtype), root, comm);
        },
        [&](MPI_Request *request) {
          return MPI_Ibcast(buffer, int(count), mpiType(dtype), root, comm,
                            request);
        });
  }

  hrt_status reduce(const void *send, void *recv, size_t count, hrt_dtype dtype,
                    hrt_reduce_op op, int root, const CallSite &site) override {
    MPI_Op reduction;
    if (hrt_status status = mpiOp(op, dtype, site, reduction))
      return status;
    MPI_Comm comm = site.comm->mpi;
    bool isRoot = site.comm->rank == root;
    const void *source = isRoot ? inPlace(send, recv) : send;
    hrt_status status = runCollective(
        site,
        [&] {
          return MPI_Reduce(source, recv, int(count), mpiType(dtype), reduction,
                            root, comm);
        },
        [&](MPI_Request *request) {
          return MPI_Ireduce(source, recv, int(count), mpiType(dtype),
                             reduction, root, comm, request);
        });
    if (status == HRT_SUCCESS && op == HRT_AVG && isRoot)
      scaleForAverage(recv, count, dtype, site.comm->size);
    return status;
  }

  hrt_status allToAll(const void *send, void *recv, size_t count,
                      hrt_dtype dtype, const CallSite &site) override {
    return exchangeBlocks(send, recv, count, dtype, site, MPI_Alltoall,
                          MPI_Ialltoall);
  }

  hrt_status barrier(const CallSite &site) override {
    MPI_Comm comm = site.comm->mpi;
    return runCollective(
        site, [&] { return MPI_Barrier(comm); },
        [&](MPI_Request *request) { return MPI_Ibarrier(comm, request); });
  }

private:
  /// Posts a cancellable point-to-point request.
  template <typename Start>
  static hrt_status post(const CallSite &site,
                         std::unique_ptr<PendingOperation> &pending,
                         Start start) {
    auto posted = std::make_unique<MpiPending>(/*cancellable=*/true);
    if (hrt_status status = check(start(&posted->request), site))
      return status;
    pending = std::move(posted);
    return HRT_SUCCESS;
  }

  /// Makes MPI return errors on `comm` and records its rank and size.
  static hrt_status describe(hrt_comm comm, const CallSite &site) {
    if (hrt_status status =
            check(MPI_Comm_set_errhandler(comm->mpi, MPI_ERRORS_RETURN), site))
      return status;
    if (hrt_status status = check(MPI_Comm_rank(comm->mpi, &comm->rank), site))
      return status;
    return check(MPI_Comm_size(comm->mpi, &comm->size), site);
  }
};

} // namespace

std::unique_ptr<Backend> createMpiBackend() {
  return std::make_unique<MpiBackend>();
}

} // namespace hetero::rt
