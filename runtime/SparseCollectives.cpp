//===- SparseCollectives.cpp - Zen's sparse all-reduce --------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Push: every rank routes its non-zero (index, value) pairs to the owner
// of their hash partition, finding and partitioning them in one parallel
// pass over the gradient (Alg 3.2's hierarchical hashing). The all-to-all
// moves one fixed-size slot per peer (a count, then the pairs), padded to
// the largest partition of any rank; the hash keeps that padding small
// even for skewed indices.
// Aggregate: the owner sums the pairs of each index in rank order, in
// place, and reads its partition out along the partition's members.
// Pull: every owner's sums are all-gathered, as pairs (COO) or as the hash
// bitmap of the partition's members plus the values in index order.
// AGsparse, the centralised baseline, all-gathers every rank's pairs and
// every rank sums them. The online format shares the ranks' non-zero
// counts and link estimates and runs the cheapest scheme of Zen's cost
// model.
//
//===----------------------------------------------------------------------===//

#include "Runtime.h"
#include "hetero-rt/compress.h"
#include "hetero/Sparse/SparseCost.h"
#include "hetero/Sparse/Zen.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <tuple>
#include <vector>

using namespace hetero;

namespace {

size_t lastPushed = 0, lastPulled = 0;
int lastFormat = 0;
/// The link hrt_sparse_set_link gave; negative: not set.
sparse::SparseLink configuredLink{-1.0, -1.0};

/// The seeds of `comm`, chosen by its rank 0 on first use and kept with
/// `comm`.
hrt_status seedsOf(hrt_comm comm, sparse::HashSeeds &seeds) {
  if (!comm->sparseSeeds) {
    std::array<uint64_t, 4> words;
    std::random_device device;
    for (uint64_t &word : words)
      word = (uint64_t(device()) << 32) | device();
    if (hrt_status status =
            hrt_broadcast(words.data(), words.size(), HRT_INT64, 0, comm))
      return status;
    comm->sparseSeeds = words;
  }
  const std::array<uint64_t, 4> &words = *comm->sparseSeeds;
  seeds.partition = words[0];
  std::copy(words.begin() + 1, words.end(), seeds.probe);
  return HRT_SUCCESS;
}

hrt_status maxOver(hrt_comm comm, int64_t &value) {
  return hrt_all_reduce(&value, &value, 1, HRT_INT64, HRT_MAX, comm);
}

/// A slot of `pairs` pairs: a uint32 count, the indices, the values.
size_t slotBytes(size_t pairs) { return 4 + 8 * pairs; }

void writeSlot(char *slot, size_t capacity,
               const std::vector<uint32_t> &indices, const float *values) {
  uint32_t count = uint32_t(indices.size());
  std::memcpy(slot, &count, 4);
  std::memcpy(slot + 4, indices.data(), 4 * indices.size());
  std::memcpy(slot + 4 + 4 * capacity, values, 4 * indices.size());
}

/// Calls visit(index, value) for each pair of a slot, in order.
template <typename Visit>
void readSlot(const char *slot, size_t capacity, Visit visit) {
  uint32_t count;
  std::memcpy(&count, slot, 4);
  for (uint32_t j = 0; j < count; ++j) {
    uint32_t index;
    float value;
    std::memcpy(&index, slot + 4 + 4 * j, 4);
    std::memcpy(&value, slot + 4 + 4 * capacity + 4 * j, 4);
    visit(index, value);
  }
}

} // namespace

namespace {

/// Every partition's members of a gradient of `n` elements: a function of
/// the size and the communicator's seeds alone, so computed once (the
/// last 8 shapes are kept; a caller keeps its lists alive while another
/// thread's call evicts them).
using Members = std::shared_ptr<const std::vector<std::vector<uint32_t>>>;
Members partitionMembers(size_t n, int size, const sparse::HashSeeds &seeds) {
  using Key = std::tuple<size_t, int, uint64_t>;
  static std::mutex mutex;
  static std::map<Key, Members> cache;
  static std::vector<Key> order;
  Key key{n, size, seeds.partition};
  std::lock_guard<std::mutex> lock(mutex);
  auto found = cache.find(key);
  if (found != cache.end())
    return found->second;
  if (order.size() == 8) {
    cache.erase(order.front());
    order.erase(order.begin());
  }
  order.push_back(key);
  return cache[key] = std::make_shared<std::vector<std::vector<uint32_t>>>(
             sparse::allPartitionMembers(int64_t(n), size, seeds));
}

/// Threads for hashing a gradient of `n` elements: one per 2^16 elements,
/// at most one per core.
int hashThreads(size_t n) {
  size_t cores = std::max(1u, std::thread::hardware_concurrency());
  return int(std::clamp<size_t>(n >> 16, 1, cores));
}

/// Zen: push to the hash partitions' owners, aggregate, pull.
hrt_status zenAllReduce(float *data, size_t n, hrt_sparse_format format,
                        hrt_reduce_op op, int rank, int size, hrt_comm comm) {
  sparse::HashSeeds seeds;
  if (hrt_status status = seedsOf(comm, seeds))
    return status;
  // Push: Alg 3.2 finds the non-zeros and partitions them in one pass.
  std::vector<std::vector<uint32_t>> parts =
      sparse::hierarchicalHash(data, n, size, seeds, hashThreads(n));
  int64_t capacity = 0;
  for (const auto &part : parts)
    capacity = std::max<int64_t>(capacity, part.size());
  if (hrt_status status = maxOver(comm, capacity))
    return status;
  size_t slot = slotBytes(capacity);
  std::vector<char> outgoing(slot * size), incoming(slot * size);
  for (int p = 0; p < size; ++p) {
    std::vector<float> values;
    for (uint32_t index : parts[p])
      values.push_back(data[index]);
    writeSlot(outgoing.data() + p * slot, capacity, parts[p], values.data());
  }
  if (hrt_status status = hrt_all_to_all(outgoing.data(), incoming.data(), slot,
                                         HRT_UINT8, comm))
    return status;
  lastPushed = outgoing.size();

  // Aggregate this rank's partition in place, each index's pairs summed in
  // rank order, and read it out in index order along the partition's
  // members (the pairs arrive in the senders' memory order).
  Members kept = partitionMembers(n, size, seeds);
  const std::vector<std::vector<uint32_t>> &members = *kept;
  std::fill(data, data + n, 0.0f);
  std::vector<uint8_t> received(n, 0);
  for (int r = 0; r < size; ++r)
    readSlot(incoming.data() + r * slot, capacity,
             [&](uint32_t index, float value) {
               data[index] += value;
               received[index] = 1;
             });
  std::vector<uint32_t> owned;
  std::vector<float> summed;
  for (uint32_t index : members[rank])
    if (received[index]) {
      owned.push_back(index);
      summed.push_back(data[index]);
    }

  // Pull.
  int64_t pulledCapacity = int64_t(owned.size());
  if (hrt_status status = maxOver(comm, pulledCapacity))
    return status;
  std::fill(data, data + n, 0.0f);
  float scale = op == HRT_AVG ? 1.0f / float(size) : 1.0f;
  if (format == HRT_SPARSE_COO) {
    size_t pullSlot = slotBytes(pulledCapacity);
    std::vector<char> mine(pullSlot), all(pullSlot * size);
    writeSlot(mine.data(), pulledCapacity, owned, summed.data());
    if (hrt_status status =
            hrt_all_gather(mine.data(), all.data(), pullSlot, HRT_UINT8, comm))
      return status;
    lastPulled = mine.size();
    for (int p = 0; p < size; ++p)
      readSlot(
          all.data() + p * pullSlot, pulledCapacity,
          [&](uint32_t index, float value) { data[index] = value * scale; });
    return HRT_SUCCESS;
  }
  // Hash bitmap: the words of the largest partition, then the values.
  size_t words = 0;
  for (const auto &member : members)
    words = std::max(words, (member.size() + 31) / 32);
  size_t pullSlot = 4 * words + 4 * size_t(pulledCapacity);
  std::vector<char> mine(pullSlot, 0), all(pullSlot * size);
  std::vector<uint32_t> bitmap = sparse::encodeHashBitmap(owned, members[rank]);
  std::memcpy(mine.data(), bitmap.data(), 4 * bitmap.size());
  std::memcpy(mine.data() + 4 * words, summed.data(), 4 * summed.size());
  if (hrt_status status =
          hrt_all_gather(mine.data(), all.data(), pullSlot, HRT_UINT8, comm))
    return status;
  lastPulled = mine.size();
  for (int p = 0; p < size; ++p) {
    const char *from = all.data() + p * pullSlot;
    std::vector<uint32_t> received((members[p].size() + 31) / 32);
    std::memcpy(received.data(), from, 4 * received.size());
    std::vector<uint32_t> indices =
        sparse::decodeHashBitmap(received, members[p]);
    for (size_t j = 0; j < indices.size(); ++j) {
      float value;
      std::memcpy(&value, from + 4 * words + 4 * j, 4);
      data[indices[j]] = value * scale;
    }
  }
  return HRT_SUCCESS;
}

/// AGsparse: every rank's pairs to every rank, summed in rank order.
hrt_status allGatherSparse(float *data, size_t n,
                           const std::vector<uint32_t> &nonZero,
                           hrt_reduce_op op, int size, hrt_comm comm) {
  int64_t capacity = int64_t(nonZero.size());
  if (hrt_status status = maxOver(comm, capacity))
    return status;
  size_t slot = slotBytes(capacity);
  std::vector<float> values;
  for (uint32_t index : nonZero)
    values.push_back(data[index]);
  std::vector<char> mine(slot, 0), all(slot * size);
  writeSlot(mine.data(), capacity, nonZero, values.data());
  if (hrt_status status =
          hrt_all_gather(mine.data(), all.data(), slot, HRT_UINT8, comm))
    return status;
  lastPushed = 0;
  lastPulled = mine.size();
  std::fill(data, data + n, 0.0f);
  for (int r = 0; r < size; ++r)
    readSlot(all.data() + r * slot, capacity,
             [&](uint32_t index, float value) { data[index] += value; });
  if (op == HRT_AVG)
    for (size_t i = 0; i < n; ++i)
      data[i] /= float(size);
  return HRT_SUCCESS;
}

/// This rank's view of the link: as configured, else its measured links'
/// mean, else 0.05 ms and 1 GB/s.
sparse::SparseLink localLink() {
  sparse::SparseLink link{0.05, 1e-6};
  std::vector<hrt_link_estimate> estimates(64);
  int count = std::min(hrt_link_estimates(estimates.data(), 64), 64);
  if (count > 0) {
    link = {0.0, 0.0};
    for (int i = 0; i < count; ++i) {
      link.alphaMs += estimates[i].alpha_ms / count;
      link.msPerByte += estimates[i].ms_per_byte / count;
    }
  }
  if (configuredLink.alphaMs >= 0.0)
    link.alphaMs = configuredLink.alphaMs;
  if (configuredLink.msPerByte >= 0.0)
    link.msPerByte = configuredLink.msPerByte;
  return link;
}

/// The scheme every rank runs, from every rank's count and link: 0 for
/// dense, else a format.
hrt_status chooseOnline(size_t nonZeros, size_t n, int size, hrt_comm comm,
                        hrt_sparse_format &format) {
  sparse::SparseLink link = localLink();
  double mine[3] = {double(nonZeros), link.alphaMs, link.msPerByte};
  std::vector<double> all(3 * size_t(size));
  if (hrt_status status =
          hrt_all_gather(mine, all.data(), 3, HRT_FLOAT64, comm))
    return status;
  sparse::SparseShape shape;
  shape.ranks = size;
  shape.elements = int64_t(n);
  sparse::SparseLink shared{0.0, 0.0};
  for (int r = 0; r < size; ++r) {
    int64_t count = int64_t(all[3 * r]);
    shape.maxNonZeros = std::max(shape.maxNonZeros, count);
    shape.totalNonZeros += count;
    shared.alphaMs += all[3 * r + 1] / size;
    shared.msPerByte += all[3 * r + 2] / size;
  }
  shape.unionNonZeros = std::clamp(
      sparse::expectedUnion(shape.elements, shape.totalNonZeros / size, size),
      shape.maxNonZeros, std::min(shape.totalNonZeros, shape.elements));
  switch (sparse::chooseSparseScheme(shape, shared)) {
  case sparse::SparseScheme::AllGather:
    format = HRT_SPARSE_ALLGATHER;
    break;
  case sparse::SparseScheme::ZenCoo:
    format = HRT_SPARSE_COO;
    break;
  case sparse::SparseScheme::ZenBitmap:
    format = HRT_SPARSE_HASH_BITMAP;
    break;
  default:
    format = hrt_sparse_format(0);
    break;
  }
  return HRT_SUCCESS;
}

} // namespace

extern "C" void hrt_sparse_last_traffic(size_t *pushed, size_t *pulled) {
  if (pushed)
    *pushed = lastPushed;
  if (pulled)
    *pulled = lastPulled;
}

extern "C" int hrt_sparse_last_format(void) { return lastFormat; }

extern "C" hrt_status hrt_sparse_set_link(double alpha_ms, double ms_per_byte) {
  if (std::isnan(alpha_ms) || std::isnan(ms_per_byte))
    return HRT_ERROR_INVALID_ARGUMENT;
  configuredLink = {alpha_ms, ms_per_byte};
  return HRT_SUCCESS;
}

extern "C" hrt_status hrt_sparse_all_reduce(float *data, size_t n,
                                            hrt_sparse_format format,
                                            hrt_reduce_op op, hrt_comm comm) {
  rt::CallSite here{"hrt_sparse_all_reduce", comm, n * sizeof(float)};
  if (hrt_status status =
          rt::checkHostCollective(here, {{data, n * sizeof(float), "data"}}))
    return status;
  rt::HostBuffers hostBuffers;
  if (!data && n)
    return rt::fail(HRT_ERROR_INVALID_ARGUMENT, here,
                    "the data must not be null");
  if (format < HRT_SPARSE_COO || format > HRT_SPARSE_ONLINE)
    return rt::fail(HRT_ERROR_INVALID_ARGUMENT, here,
                    "unknown sparse format " + std::to_string(int(format)));
  if (op != HRT_SUM && op != HRT_AVG)
    return rt::fail(HRT_ERROR_INVALID_ARGUMENT, here,
                    "sparse gradients are summed or averaged, not reduced "
                    "with operation " +
                        std::to_string(int(op)));
  if (n > size_t(UINT32_MAX))
    return rt::fail(HRT_ERROR_INVALID_ARGUMENT, here,
                    "sparse indices address at most 2^32 elements");
  int rank = 0, size = 1;
  if (hrt_status status = hrt_comm_rank(comm, &rank))
    return status;
  if (hrt_status status = hrt_comm_size(comm, &size))
    return status;
  auto nonZeroIndices = [&] {
    std::vector<uint32_t> nonZero;
    for (size_t i = 0; i < n; ++i)
      if (data[i] != 0.0f)
        nonZero.push_back(uint32_t(i));
    return nonZero;
  };
  if (format == HRT_SPARSE_ONLINE) {
    size_t nonZeros = 0;
    for (size_t i = 0; i < n; ++i)
      nonZeros += data[i] != 0.0f;
    if (hrt_status status = chooseOnline(nonZeros, n, size, comm, format))
      return status;
    if (format == hrt_sparse_format(0)) {
      lastFormat = 0;
      lastPushed = lastPulled = 0;
      return hrt_all_reduce(data, data, n, HRT_FLOAT32, op, comm);
    }
  }
  lastFormat = int(format);
  if (format == HRT_SPARSE_ALLGATHER)
    return allGatherSparse(data, n, nonZeroIndices(), op, size, comm);
  return zenAllReduce(data, n, format, op, rank, size, comm);
}
