/*===- gpu.h - libhetero_rt_cuda's entry points for compiled code -*- C -*-===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* What the host code of hetero-lower-to-gpu calls besides the mgpu* launch
 * wrappers, in libhetero_rt_cuda. Every calling thread works on one device,
 * chosen once: the one mgpuSetDefaultDevice named, else the local rank
 * (OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID or LOCAL_RANK)
 * modulo the number of devices, else device 0. Kernels, copies and library
 * calls of a thread share one stream, so they run in program order. */

#ifndef HETERO_RT_GPU_H
#define HETERO_RT_GPU_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The device this thread's work runs on (selecting it on the first call). */
int hrt_cuda_device(void);

/* This thread's stream (a CUstream, also usable as a cudaStream_t). */
void *hrt_cuda_stream(void);

/* C = A B + beta C for row-major f32 matrices on the device: A is m x k
 * with rows `lda` elements apart, B is k x n (rows `ldb` apart), C is m x n
 * (rows `ldc` apart). cuBLAS in full f32 precision (no TF32), on this
 * thread's stream; returns when C is written. A failure prints the cuBLAS
 * status with the shapes and aborts: compiled code has no error path. */
void hrt_cuda_sgemm(int64_t m, int64_t n, int64_t k, const float *a,
                    int64_t lda, const float *b, int64_t ldb, float beta,
                    float *c, int64_t ldc);

#ifdef __cplusplus
}
#endif

#endif /* HETERO_RT_GPU_H */
