//===- HostMemory.cpp - a step's buffers, reused by size ------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// A compiled step allocates and frees the same buffers every iteration.
// malloc serves blocks of tens of kilobytes from its sorted bins, splitting
// and coalescing them each time; here a freed buffer waits on the free list
// of its size and is handed out again, last freed first (still in cache),
// at the next allocation of that size. The lists hold at most a limit of
// bytes; beyond it buffers go back to the system.
//
//===----------------------------------------------------------------------===//

#include "hetero-rt/memory.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace {

constexpr size_t kAlignment = 64;
constexpr uint64_t kDefaultCacheLimit = uint64_t(1) << 30;

struct HostMemory {
  std::mutex mutex;
  /// Each buffer handed out, with its rounded size.
  std::unordered_map<void *, size_t> live;
  /// Freed buffers by rounded size.
  std::unordered_map<size_t, std::vector<void *>> freeLists;
  hrt_host_memory stats{};

  HostMemory() {
    stats.cache_limit = kDefaultCacheLimit;
    if (const char *text = std::getenv("HETERO_RT_CACHE_BYTES")) {
      char *end = nullptr;
      unsigned long long bytes = std::strtoull(text, &end, 10);
      if (end != text && *end == '\0')
        stats.cache_limit = bytes;
    }
  }

  /// Frees cached buffers until the lists hold at most `limit` bytes.
  void trimTo(uint64_t limit) {
    for (auto &[size, list] : freeLists)
      while (stats.cached_bytes > limit && !list.empty()) {
        std::free(list.back());
        list.pop_back();
        stats.cached_bytes -= size;
      }
  }
};

/// Never destroyed: compiled code may free buffers while the process's
/// static objects are being torn down.
HostMemory &memory() {
  static HostMemory *state = new HostMemory;
  return *state;
}

/// `size` (at least 1) rounded up to a multiple of `alignment`, as
/// aligned_alloc asks.
size_t roundUp(size_t size, size_t alignment) {
  return (std::max<size_t>(size, 1) + alignment - 1) / alignment * alignment;
}

void *allocate(size_t alignment, size_t size) {
  if (alignment > kAlignment)
    // Rare (no buffer of hetero's asks for more); not cached: free() takes
    // it as any pointer it does not know.
    return std::aligned_alloc(alignment, roundUp(size, alignment));
  size_t rounded = roundUp(size, kAlignment);
  HostMemory &state = memory();
  std::lock_guard<std::mutex> lock(state.mutex);
  ++state.stats.allocations;
  void *pointer = nullptr;
  auto list = state.freeLists.find(rounded);
  if (list != state.freeLists.end() && !list->second.empty()) {
    pointer = list->second.back();
    list->second.pop_back();
    state.stats.cached_bytes -= rounded;
    ++state.stats.reused;
  } else {
    pointer = std::aligned_alloc(kAlignment, rounded);
    if (!pointer)
      return nullptr;
  }
  state.live.emplace(pointer, rounded);
  state.stats.live_bytes += rounded;
  return pointer;
}

} // namespace

extern "C" void *_mlir_memref_to_llvm_alloc(size_t size) {
  return allocate(kAlignment, size);
}

extern "C" void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                    size_t size) {
  return allocate(alignment, size);
}

extern "C" void _mlir_memref_to_llvm_free(void *pointer) {
  if (!pointer)
    return;
  HostMemory &state = memory();
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    auto found = state.live.find(pointer);
    if (found != state.live.end()) {
      size_t size = found->second;
      state.live.erase(found);
      state.stats.live_bytes -= size;
      if (state.stats.cached_bytes + size <= state.stats.cache_limit) {
        state.freeLists[size].push_back(pointer);
        state.stats.cached_bytes += size;
        return;
      }
    }
  }
  std::free(pointer);
}

extern "C" void hrt_host_memory_stats(hrt_host_memory *stats) {
  HostMemory &state = memory();
  std::lock_guard<std::mutex> lock(state.mutex);
  *stats = state.stats;
}

extern "C" void hrt_host_memory_set_cache_limit(uint64_t bytes) {
  HostMemory &state = memory();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.stats.cache_limit = bytes;
  state.trimTo(bytes);
}
