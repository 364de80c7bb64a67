/*===- hetero-rt/memory.h - the buffers of compiled CPU code --------*- C
-*-===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
|* hetero-lower-to-cpu allocates a step's temporaries through MLIR's generic *|
|* allocation functions, which libhetero_rt defines: a step allocates the    *|
|* same sizes in the same order every iteration, so a freed buffer is kept   *|
|* on a free list of its size and handed out again at the next allocation of *|
|* that size, still in cache, without a trip through malloc's bins.          *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef HETERO_RT_MEMORY_H
#define HETERO_RT_MEMORY_H

#include "hetero-rt/hrt.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* memref.alloc of compiled code (LowerToLLVMOptions::useGenericFunctions).
 * Every buffer is aligned to at least 64 bytes; a null result means the
 * system is out of memory. */
HRT_EXPORT void *_mlir_memref_to_llvm_alloc(size_t size);
HRT_EXPORT void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                    size_t size);
/* memref.dealloc: the buffer goes onto its size's free list, or back to the
 * system when the lists would hold more than the cache's limit. A pointer
 * these functions did not hand out is passed to free(). */
HRT_EXPORT void _mlir_memref_to_llvm_free(void *pointer);

typedef struct hrt_host_memory {
  uint64_t allocations;  /* allocations so far */
  uint64_t reused;       /* of those, served from a free list */
  uint64_t live_bytes;   /* bytes handed out and not yet freed */
  uint64_t cached_bytes; /* bytes on the free lists */
  uint64_t cache_limit;  /* the most the free lists may hold, in bytes */
} hrt_host_memory;

/* The counts above, at this moment. */
HRT_EXPORT void hrt_host_memory_stats(hrt_host_memory *stats);

/* The most the free lists may hold (default 1 GiB, or the environment's
 * HETERO_RT_CACHE_BYTES); a smaller limit frees what is over it now. 0
 * turns the cache off. */
HRT_EXPORT void hrt_host_memory_set_cache_limit(uint64_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* HETERO_RT_MEMORY_H */
