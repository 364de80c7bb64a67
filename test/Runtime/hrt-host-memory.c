/*===- hrt-host-memory.c - the buffers of compiled CPU code -----------------===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* RUN: hrt-host-memory | FileCheck %s
 * RUN: env HETERO_RT_CACHE_BYTES=128 hrt-host-memory small-limit | FileCheck %s --check-prefix=LIMIT
 *
 * The allocator behind memref.alloc and memref.dealloc of compiled CPU code
 * (include/hetero-rt/memory.h): 64-byte alignment, a freed buffer handed
 * out again (last freed first) at the next allocation of its rounded size
 * and never at another size, a step's pattern of allocations served from
 * the lists from its second iteration on, foreign pointers passed to
 * free(), and the cache's limit.
 * CHECK: aligned: ok
 * CHECK: reuse: last freed first, same rounded size only: ok
 * CHECK: step 1: 6 allocations, 0 reused
 * CHECK: step 2: 6 allocations, 6 reused
 * CHECK: step 3: 6 allocations, 6 reused
 * CHECK: contents writable after reuse: ok
 * CHECK: foreign pointer freed: ok
 * CHECK: limit 0: cached 0 bytes, reused 0
 * LIMIT: limit from the environment: 128
 * LIMIT: over the limit: cached 128 bytes
 */

#include "hetero-rt/memory.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

static void expect(int condition, const char *what) {
  if (!condition) {
    printf("FAILED: %s\n", what);
    ++failures;
  }
}

static hrt_host_memory stats(void) {
  hrt_host_memory s;
  hrt_host_memory_stats(&s);
  return s;
}

/* One "step": the sizes a small stage function allocates, freed in another
 * order than allocated. */
static void step(int index) {
  static const size_t sizes[] = {4096, 200, 65536, 4096, 3000, 300000};
  enum { N = sizeof(sizes) / sizeof(sizes[0]) };
  void *buffers[N];
  hrt_host_memory before = stats();
  for (int i = 0; i < N; ++i) {
    buffers[i] = _mlir_memref_to_llvm_aligned_alloc(64, sizes[i]);
    memset(buffers[i], 0x5a, sizes[i]);
  }
  for (int i = N - 1; i >= 0; i -= 2)
    _mlir_memref_to_llvm_free(buffers[i]);
  for (int i = N - 2; i >= 0; i -= 2)
    _mlir_memref_to_llvm_free(buffers[i]);
  hrt_host_memory after = stats();
  printf("step %d: %llu allocations, %llu reused\n", index,
         (unsigned long long)(after.allocations - before.allocations),
         (unsigned long long)(after.reused - before.reused));
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "small-limit") == 0) {
    printf("limit from the environment: %llu\n",
           (unsigned long long)stats().cache_limit);
    void *a = _mlir_memref_to_llvm_alloc(64);
    void *b = _mlir_memref_to_llvm_alloc(128);
    void *c = _mlir_memref_to_llvm_alloc(64);
    _mlir_memref_to_llvm_free(a); /* 64 cached */
    _mlir_memref_to_llvm_free(b); /* 192 > 128: freed */
    _mlir_memref_to_llvm_free(c); /* 128 cached */
    printf("over the limit: cached %llu bytes\n",
           (unsigned long long)stats().cached_bytes);
    return 0;
  }

  int aligned = 1;
  void *blocks[8];
  for (int i = 0; i < 8; ++i) {
    blocks[i] = i % 2 ? _mlir_memref_to_llvm_alloc((size_t)i * 13 + 1)
                      : _mlir_memref_to_llvm_aligned_alloc(16, (size_t)i * 7);
    aligned &= ((uintptr_t)blocks[i] % 64) == 0;
  }
  /* An alignment above 64 is honoured too. */
  void *wide = _mlir_memref_to_llvm_aligned_alloc(4096, 100);
  aligned &= ((uintptr_t)wide % 4096) == 0;
  _mlir_memref_to_llvm_free(wide);
  for (int i = 0; i < 8; ++i)
    _mlir_memref_to_llvm_free(blocks[i]);
  expect(aligned, "every buffer 64-byte aligned");
  printf("aligned: %s\n", aligned ? "ok" : "FAILED");

  /* 1000 and 1020 bytes round to the same 1024; 1100 to 1152. */
  void *x = _mlir_memref_to_llvm_alloc(1000);
  void *y = _mlir_memref_to_llvm_alloc(1000);
  _mlir_memref_to_llvm_free(x);
  _mlir_memref_to_llvm_free(y);
  void *other = _mlir_memref_to_llvm_alloc(1100);
  void *first = _mlir_memref_to_llvm_alloc(1020);
  void *second = _mlir_memref_to_llvm_alloc(1000);
  int reuse = first == y && second == x && other != x && other != y;
  expect(reuse, "reuse order and size classes");
  printf("reuse: last freed first, same rounded size only: %s\n",
         reuse ? "ok" : "FAILED");
  _mlir_memref_to_llvm_free(other);
  _mlir_memref_to_llvm_free(first);
  _mlir_memref_to_llvm_free(second);

  for (int i = 1; i <= 3; ++i)
    step(i);

  /* A reused buffer is fully usable (the lists keep nothing inside it). */
  unsigned char *again = _mlir_memref_to_llvm_alloc(65536);
  memset(again, 1, 65536);
  int sum = 0;
  for (int i = 0; i < 65536; ++i)
    sum += again[i];
  _mlir_memref_to_llvm_free(again);
  printf("contents writable after reuse: %s\n", sum == 65536 ? "ok" : "FAILED");

  /* A pointer from malloc (a buffer the runtime handed to compiled code)
   * goes to free(). */
  hrt_host_memory before = stats();
  void *foreign = malloc(4096);
  _mlir_memref_to_llvm_free(foreign);
  hrt_host_memory after = stats();
  int untouched = after.cached_bytes == before.cached_bytes &&
                  after.live_bytes == before.live_bytes;
  expect(untouched, "foreign pointer left the lists alone");
  printf("foreign pointer freed: %s\n", untouched ? "ok" : "FAILED");

  /* Limit 0: the lists are emptied and stay empty. */
  hrt_host_memory_set_cache_limit(0);
  hrt_host_memory reset = stats();
  void *z = _mlir_memref_to_llvm_alloc(4096);
  _mlir_memref_to_llvm_free(z);
  void *w = _mlir_memref_to_llvm_alloc(4096);
  _mlir_memref_to_llvm_free(w);
  hrt_host_memory off = stats();
  printf("limit 0: cached %llu bytes, reused %llu\n",
         (unsigned long long)(reset.cached_bytes + off.cached_bytes),
         (unsigned long long)(off.reused - reset.reused));
  expect(off.live_bytes == 0, "nothing live at the end");
  return failures ? 1 : 0;
}
