/*===- host-cuda.h - a CUDA driver of host memory, for tests -----*- C -*-===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* What host-cuda.c (libcuda.so.1 of host memory) offers host-cublas.c
 * besides the driver's entry points. */

#ifndef HETERO_TEST_HOST_CUDA_H
#define HETERO_TEST_HOST_CUDA_H

#include <cuda.h>
#include <stddef.h>

/* Makes `bytes` bytes of device memory at `address`, within one live
 * allocation, readable and writable by the caller until hostCudaClose;
 * null after a message ("host-cuda: <call>: <what> ...") when they are not
 * device memory or leave the allocation. Holds the driver's (recursive)
 * lock until hostCudaClose. */
void *hostCudaOpen(const char *call, const char *what, const void *address,
                   size_t bytes);
void hostCudaClose(void *opened);

/* Counts a product for the report. */
void hostCudaCountProduct(void);

#endif /* HETERO_TEST_HOST_CUDA_H */
