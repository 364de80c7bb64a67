/*===- host-cuda.c - a CUDA driver of host memory, for tests -------------===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* libcuda.so.1 for machines without a GPU: the driver entry points that
 * libhetero_rt_cuda calls, over host memory, so that a GPU step's host side
 * runs and can be checked. Kernels are loaded by name and their launches
 * counted and checked against the driver's limits, but not run: the values
 * a step computes are not the device's. The rest is checked as a device
 * would not forgive it:
 *
 * - device memory is mapped without access, and opened only for the
 *   driver's own copies: host code that reads or writes it directly stops
 *   with a message naming the allocation (the real device's host code
 *   would read garbage or fault);
 * - copies, fills and frees must lie within live allocations;
 * - a launch needs a grid of at least one block and at most 1024 threads a
 *   block.
 *
 * A broken rule prints "host-cuda: ..." and the call fails with
 * CUDA_ERROR_INVALID_VALUE, which libhetero_rt_cuda reports. With
 * HETERO_HOST_CUDA_REPORT set, each process prints what it did as it
 * exits, one line (see report()). libcublas.so.13 of the same directory
 * (host-cublas.c) computes products on this memory. */

#define _GNU_SOURCE
#include "host-cuda.h"

#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { kDevice = 1, kPinned = 2 };

typedef struct {
  uintptr_t base;
  size_t bytes;  /* asked for */
  size_t mapped; /* whole pages */
  int kind;
} Allocation;

/* Recursive: host-cublas.c opens several ranges at once. */
static pthread_mutex_t lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
/* Live allocations, sorted by base. */
static Allocation *live;
static size_t liveCount, liveCapacity;

static struct {
  long long launches, oneThread, largestBlock, products;
  long long allocations, streamOrdered, frees, waits;
  long long toDevice, toHost, onDevice; /* bytes copied */
  long long deviceBytes, peakDeviceBytes;
} counts;

static size_t pageSize(void) { return (size_t)sysconf(_SC_PAGESIZE); }

/* The live allocation that holds `address`, or null. */
static Allocation *holding(uintptr_t address) {
  size_t low = 0, high = liveCount;
  while (low < high) {
    size_t middle = (low + high) / 2;
    if (live[middle].base <= address)
      low = middle + 1;
    else
      high = middle;
  }
  if (low == 0)
    return NULL;
  Allocation *candidate = &live[low - 1];
  uintptr_t end = candidate->base + (candidate->bytes ? candidate->bytes : 1);
  return address < end ? candidate : NULL;
}

static CUresult refuse(const char *call, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
static CUresult refuse(const char *call, const char *format, ...) {
  va_list arguments;
  va_start(arguments, format);
  fprintf(stderr, "host-cuda: %s: ", call);
  vfprintf(stderr, format, arguments);
  fputc('\n', stderr);
  va_end(arguments);
  return CUDA_ERROR_INVALID_VALUE;
}

static void track(uintptr_t base, size_t bytes, size_t mapped, int kind) {
  if (liveCount == liveCapacity) {
    liveCapacity = liveCapacity ? 2 * liveCapacity : 64;
    live = realloc(live, liveCapacity * sizeof *live);
    if (!live)
      abort();
  }
  size_t at = 0;
  while (at < liveCount && live[at].base < base)
    ++at;
  memmove(&live[at + 1], &live[at], (liveCount - at) * sizeof *live);
  live[at] = (Allocation){base, bytes, mapped, kind};
  ++liveCount;
}

static CUresult allocate(const char *call, uintptr_t *out, size_t bytes,
                         int kind) {
  size_t page = pageSize();
  size_t mapped = (bytes + page - 1) / page * page;
  if (!mapped)
    mapped = page;
  void *memory =
      mmap(NULL, mapped, kind == kDevice ? PROT_NONE : PROT_READ | PROT_WRITE,
           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED)
    return refuse(call, "cannot map %zu bytes", bytes);
  track((uintptr_t)memory, bytes, mapped, kind);
  *out = (uintptr_t)memory;
  if (kind == kDevice) {
    ++counts.allocations;
    counts.deviceBytes += (long long)bytes;
    if (counts.deviceBytes > counts.peakDeviceBytes)
      counts.peakDeviceBytes = counts.deviceBytes;
  }
  return CUDA_SUCCESS;
}

static CUresult release(const char *call, uintptr_t base, int kind) {
  Allocation *found = holding(base);
  if (!found || found->base != base || found->kind != kind)
    return refuse(call, "%#lx is not a live %s allocation", (unsigned long)base,
                  kind == kDevice ? "device" : "pinned host");
  munmap((void *)found->base, found->mapped);
  if (kind == kDevice) {
    ++counts.frees;
    counts.deviceBytes -= (long long)found->bytes;
  }
  size_t at = (size_t)(found - live);
  memmove(&live[at], &live[at + 1], (liveCount - at - 1) * sizeof *live);
  --liveCount;
  return CUDA_SUCCESS;
}

/* Device memory of `bytes` bytes at `address`, within one allocation, made
 * accessible (closeRange() takes it back); null after a message otherwise. A
 * host address gives itself. */
static Allocation *openRange(const char *call, const char *what,
                             uintptr_t address, size_t bytes, int *isDevice) {
  Allocation *found = holding(address);
  *isDevice = found && found->kind == kDevice;
  if (!found) {
    if (address < 4096 && bytes) {
      refuse(call, "%s is a null pointer", what);
      return NULL;
    }
    return (Allocation *)-1; /* host memory the driver does not know */
  }
  if (address + bytes > found->base + found->bytes) {
    refuse(call, "%s: %zu bytes at +%zu of a %zu-byte allocation", what, bytes,
           (size_t)(address - found->base), found->bytes);
    return NULL;
  }
  if (*isDevice)
    mprotect((void *)found->base, found->mapped, PROT_READ | PROT_WRITE);
  return found;
}

static void closeRange(Allocation *opened, int isDevice) {
  if (isDevice)
    mprotect((void *)opened->base, opened->mapped, PROT_NONE);
}

static CUresult copy(const char *call, uintptr_t destination, uintptr_t source,
                     size_t bytes) {
  if (!bytes)
    return CUDA_SUCCESS;
  int toDevice, fromDevice;
  Allocation *to =
      openRange(call, "the destination", destination, bytes, &toDevice);
  if (!to)
    return CUDA_ERROR_INVALID_VALUE;
  Allocation *from = openRange(call, "the source", source, bytes, &fromDevice);
  if (!from) {
    closeRange(to, toDevice);
    return CUDA_ERROR_INVALID_VALUE;
  }
  memmove((void *)destination, (const void *)source, bytes);
  closeRange(from, fromDevice);
  closeRange(to, toDevice);
  if (toDevice && fromDevice)
    counts.onDevice += (long long)bytes;
  else if (toDevice)
    counts.toDevice += (long long)bytes;
  else if (fromDevice)
    counts.toHost += (long long)bytes;
  return CUDA_SUCCESS;
}

static CUresult fill(const char *call, uintptr_t destination, const void *value,
                     size_t width, size_t count) {
  int isDevice;
  Allocation *to =
      openRange(call, "the destination", destination, width * count, &isDevice);
  if (!to)
    return CUDA_ERROR_INVALID_VALUE;
  if (!isDevice) {
    closeRange(to, isDevice);
    return refuse(call, "%#lx is not device memory",
                  (unsigned long)destination);
  }
  for (size_t i = 0; i < count; ++i)
    memcpy((char *)destination + i * width, value, width);
  closeRange(to, isDevice);
  return CUDA_SUCCESS;
}

/*===-- Host code touching device memory ----------------------------------===*/

static struct sigaction previousSegv;

static void onFault(int signal, siginfo_t *info, void *context) {
  (void)context;
  uintptr_t address = (uintptr_t)info->si_addr;
  /* No lock: the faulting thread may hold it. A lookup only reads. */
  Allocation *found = holding(address);
  if (found && found->kind == kDevice) {
    char message[200];
    int length = snprintf(message, sizeof message,
                          "host-cuda: the host read or wrote device memory: "
                          "+%zu of a %zu-byte allocation\n",
                          (size_t)(address - found->base), found->bytes);
    if (write(STDERR_FILENO, message, (size_t)length) < 0) {
    }
    _exit(3);
  }
  /* Not ours: the handler before this one takes it when it faults again. */
  sigaction(signal, &previousSegv, NULL);
}

__attribute__((constructor)) static void install(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = onFault;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, &previousSegv);
}

/*===-- The report --------------------------------------------------------===*/

/* One line a process, as it exits (printed on one line):
 *   host-cuda: rank R: launches L (one thread T, largest block B),
 *   products P, waits W; device memory: A allocations and S stream-ordered,
 *   F frees, N live (X bytes), peak Y bytes; copied H to device, D to host,
 *   E on device; pinned host buffers: Q live
 * "rank R: " is there when the launcher exports the rank. L counts the
 * kernels launched, T those of one thread a block, B the largest block's
 * threads, P the cuBLAS products and W the waits for a stream. A counts
 * cuMemAlloc (device copies of globals), S cuMemAllocAsync (a step's
 * temporaries), F the frees of either, N and X what is left at exit;
 * copies count bytes. */
__attribute__((destructor)) static void report(void) {
  if (!getenv("HETERO_HOST_CUDA_REPORT"))
    return;
  /* The rank of an MPI job, when the launcher says it. */
  char rank[48] = "";
  const char *variables[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK",
                             "SLURM_PROCID"};
  for (int i = 0; i < 3 && !rank[0]; ++i)
    if (getenv(variables[i]))
      snprintf(rank, sizeof rank, "rank %s: ", getenv(variables[i]));
  pthread_mutex_lock(&lock);
  long long pinned = 0, device = 0;
  for (size_t i = 0; i < liveCount; ++i)
    ++*(live[i].kind == kDevice ? &device : &pinned);
  fprintf(stderr,
          "host-cuda: %slaunches %lld (one thread %lld, largest block %lld), "
          "products %lld, waits %lld; device memory: %lld allocations and "
          "%lld stream-ordered, %lld frees, %lld live (%lld bytes), peak "
          "%lld bytes; copied %lld to device, %lld to host, %lld on device; "
          "pinned host buffers: %lld live\n",
          rank, counts.launches, counts.oneThread, counts.largestBlock,
          counts.products, counts.waits,
          counts.allocations - counts.streamOrdered, counts.streamOrdered,
          counts.frees, device, counts.deviceBytes, counts.peakDeviceBytes,
          counts.toDevice, counts.toHost, counts.onDevice, pinned);
  pthread_mutex_unlock(&lock);
}

/*===-- For host-cublas.c -------------------------------------------------===*/

void *hostCudaOpen(const char *call, const char *what, const void *address,
                   size_t bytes) {
  pthread_mutex_lock(&lock);
  int isDevice;
  Allocation *opened =
      openRange(call, what, (uintptr_t)address, bytes, &isDevice);
  if (opened && !isDevice) {
    refuse(call, "%s is not device memory", what);
    opened = NULL;
  }
  if (!opened)
    pthread_mutex_unlock(&lock);
  return opened;
}

void hostCudaClose(void *opened) {
  closeRange((Allocation *)opened, 1);
  pthread_mutex_unlock(&lock);
}

void hostCudaCountProduct(void) {
  pthread_mutex_lock(&lock);
  ++counts.products;
  pthread_mutex_unlock(&lock);
}

/*===-- The driver's entry points -----------------------------------------===*/

#define LOCKED(expression)                                                     \
  do {                                                                         \
    pthread_mutex_lock(&lock);                                                 \
    CUresult result = (expression);                                            \
    pthread_mutex_unlock(&lock);                                               \
    return result;                                                             \
  } while (0)

CUresult cuInit(unsigned int flags) {
  (void)flags;
  return CUDA_SUCCESS;
}

CUresult cuGetErrorName(CUresult error, const char **name) {
  *name = error == CUDA_SUCCESS               ? "CUDA_SUCCESS"
          : error == CUDA_ERROR_INVALID_VALUE ? "CUDA_ERROR_INVALID_VALUE"
                                              : "CUDA_ERROR_NOT_SUPPORTED";
  return CUDA_SUCCESS;
}

CUresult cuGetErrorString(CUresult error, const char **text) {
  *text = error == CUDA_SUCCESS ? "no error"
          : error == CUDA_ERROR_INVALID_VALUE
              ? "invalid argument"
              : "operation not supported by the host driver";
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count) {
  *count = 1;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  if (ordinal != 0)
    return refuse("cuDeviceGet", "device %d of 1", ordinal);
  *device = 0;
  return CUDA_SUCCESS;
}

static int primaryContext;
CUresult cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device) {
  (void)device;
  *context = (CUcontext)&primaryContext;
  return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext context) {
  (void)context;
  return CUDA_SUCCESS;
}

/* Streams and events are handles; the work is done when it is queued. */
CUresult cuStreamCreate(CUstream *stream, unsigned int flags) {
  (void)flags;
  *stream = (CUstream)malloc(1);
  return CUDA_SUCCESS;
}

CUresult cuStreamDestroy(CUstream stream) {
  free(stream);
  return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize(CUstream stream) {
  (void)stream;
  pthread_mutex_lock(&lock);
  ++counts.waits;
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}

CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags) {
  (void)stream, (void)event, (void)flags;
  return CUDA_SUCCESS;
}

CUresult cuEventCreate(CUevent *event, unsigned int flags) {
  (void)flags;
  *event = (CUevent)malloc(1);
  return CUDA_SUCCESS;
}

CUresult cuEventDestroy(CUevent event) {
  free(event);
  return CUDA_SUCCESS;
}

CUresult cuEventRecord(CUevent event, CUstream stream) {
  (void)event, (void)stream;
  return CUDA_SUCCESS;
}

CUresult cuEventSynchronize(CUevent event) {
  (void)event;
  return CUDA_SUCCESS;
}

CUresult cuMemAlloc(CUdeviceptr *pointer, size_t bytes) {
  LOCKED(allocate("cuMemAlloc", (uintptr_t *)pointer, bytes, kDevice));
}

CUresult cuMemFree(CUdeviceptr pointer) {
  LOCKED(release("cuMemFree", (uintptr_t)pointer, kDevice));
}

CUresult cuMemAllocAsync(CUdeviceptr *pointer, size_t bytes, CUstream stream) {
  (void)stream;
  pthread_mutex_lock(&lock);
  ++counts.streamOrdered;
  CUresult result =
      allocate("cuMemAllocAsync", (uintptr_t *)pointer, bytes, kDevice);
  pthread_mutex_unlock(&lock);
  return result;
}

CUresult cuMemFreeAsync(CUdeviceptr pointer, CUstream stream) {
  (void)stream;
  LOCKED(release("cuMemFreeAsync", (uintptr_t)pointer, kDevice));
}

CUresult cuMemHostAlloc(void **pointer, size_t bytes, unsigned int flags) {
  (void)flags;
  LOCKED(allocate("cuMemHostAlloc", (uintptr_t *)pointer, bytes, kPinned));
}

CUresult cuMemFreeHost(void *pointer) {
  LOCKED(release("cuMemFreeHost", (uintptr_t)pointer, kPinned));
}

static int defaultPool;
CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice device) {
  (void)device;
  *pool = (CUmemoryPool)&defaultPool;
  return CUDA_SUCCESS;
}

CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attribute,
                               void *value) {
  (void)pool, (void)attribute, (void)value;
  return CUDA_SUCCESS;
}

/* Freed memory goes back at once: there is nothing to trim. */
CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep) {
  (void)pool, (void)keep;
  return CUDA_SUCCESS;
}

CUresult cuMemcpyAsync(CUdeviceptr destination, CUdeviceptr source,
                       size_t bytes, CUstream stream) {
  (void)stream;
  LOCKED(
      copy("cuMemcpyAsync", (uintptr_t)destination, (uintptr_t)source, bytes));
}

CUresult cuMemcpyHtoDAsync(CUdeviceptr destination, const void *source,
                           size_t bytes, CUstream stream) {
  (void)stream;
  LOCKED(copy("cuMemcpyHtoDAsync", (uintptr_t)destination, (uintptr_t)source,
              bytes));
}

CUresult cuMemcpyDtoHAsync(void *destination, CUdeviceptr source, size_t bytes,
                           CUstream stream) {
  (void)stream;
  LOCKED(copy("cuMemcpyDtoHAsync", (uintptr_t)destination, (uintptr_t)source,
              bytes));
}

CUresult cuMemsetD8Async(CUdeviceptr destination, unsigned char value,
                         size_t count, CUstream stream) {
  (void)stream;
  LOCKED(fill("cuMemsetD8Async", (uintptr_t)destination, &value, 1, count));
}

CUresult cuMemsetD16Async(CUdeviceptr destination, unsigned short value,
                          size_t count, CUstream stream) {
  (void)stream;
  LOCKED(fill("cuMemsetD16Async", (uintptr_t)destination, &value, 2, count));
}

CUresult cuMemsetD32Async(CUdeviceptr destination, unsigned int value,
                          size_t count, CUstream stream) {
  (void)stream;
  LOCKED(fill("cuMemsetD32Async", (uintptr_t)destination, &value, 4, count));
}

CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute,
                               CUdeviceptr pointer) {
  if (attribute != CU_POINTER_ATTRIBUTE_MEMORY_TYPE)
    return CUDA_ERROR_NOT_SUPPORTED;
  pthread_mutex_lock(&lock);
  Allocation *found = holding((uintptr_t)pointer);
  CUresult result = CUDA_SUCCESS;
  if (!found)
    result = CUDA_ERROR_INVALID_VALUE; /* as the driver: unknown memory */
  else
    *(CUmemorytype *)data =
        found->kind == kDevice ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
  pthread_mutex_unlock(&lock);
  return result;
}

/*===-- Modules and launches ----------------------------------------------===*/

typedef struct {
  char name[256];
} Function;

CUresult cuModuleLoadData(CUmodule *module, const void *image) {
  if (!image)
    return refuse("cuModuleLoadData", "no image");
  *module = (CUmodule)malloc(1);
  return CUDA_SUCCESS;
}

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image,
                            unsigned int count, CUjit_option *options,
                            void **values) {
  (void)count, (void)options, (void)values;
  return cuModuleLoadData(module, image);
}

CUresult cuModuleUnload(CUmodule module) {
  free(module);
  return CUDA_SUCCESS;
}

/* Each function is a handle of its own, kept for the process. */
CUresult cuModuleGetFunction(CUfunction *function, CUmodule module,
                             const char *name) {
  (void)module;
  Function *made = malloc(sizeof *made);
  snprintf(made->name, sizeof made->name, "%s", name);
  *function = (CUfunction)made;
  return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction function, unsigned int gridX,
                        unsigned int gridY, unsigned int gridZ,
                        unsigned int blockX, unsigned int blockY,
                        unsigned int blockZ, unsigned int sharedBytes,
                        CUstream stream, void **parameters, void **extra) {
  (void)stream, (void)parameters, (void)extra;
  const char *name = ((const Function *)function)->name;
  long long threads = (long long)blockX * blockY * blockZ;
  if (!gridX || !gridY || !gridZ)
    return refuse("cuLaunchKernel", "%s: a grid of %ux%ux%u blocks", name,
                  gridX, gridY, gridZ);
  if (gridY > 65535 || gridZ > 65535)
    return refuse("cuLaunchKernel", "%s: a grid of %ux%ux%u blocks", name,
                  gridX, gridY, gridZ);
  if (!threads || threads > 1024 || blockZ > 64)
    return refuse("cuLaunchKernel", "%s: a block of %ux%ux%u threads", name,
                  blockX, blockY, blockZ);
  if (sharedBytes > 48 * 1024)
    return refuse("cuLaunchKernel", "%s: %u bytes of shared memory", name,
                  sharedBytes);
  if (getenv("HETERO_HOST_CUDA_TRACE"))
    fprintf(stderr, "host-cuda: launch %s\n", name);
  pthread_mutex_lock(&lock);
  ++counts.launches;
  if (threads == 1)
    ++counts.oneThread;
  if (threads > counts.largestBlock)
    counts.largestBlock = threads;
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}
