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

/* hrt_cpu_sgemm's product (hetero-rt/blas.h) on device buffers: for every
 * b in [0, batch), C_b = op(A_b) op(B_b) + beta C_b on row-major f32
 * matrices, op() transposing where transpose_a or transpose_b is non-zero,
 * matrix b at a + b stride_a (0: one matrix for every b), rows lda, ldb,
 * ldc elements apart. cuBLAS in full f32 precision (no TF32), on this
 * thread's stream, queued: later work on the stream, and copies the host
 * reads, see C written. A failure prints the cuBLAS status (or the
 * argument that is wrong) with the shapes and ends the process: compiled
 * code has no error path. */
void hrt_cuda_sgemm(int64_t batch, int64_t transpose_a, int64_t transpose_b,
                    int64_t m, int64_t n, int64_t k, const float *a,
                    int64_t lda, int64_t stride_a, const float *b, int64_t ldb,
                    int64_t stride_b, float beta, float *c, int64_t ldc,
                    int64_t stride_c);

/* The device copy of the host buffer `host` of `bytes` bytes (a global of
 * the program: a parameter, optimizer state, a constant): made and filled
 * from the host on the first call, the same one on every later call until
 * hrt_cuda_release. The
 * host buffer is not kept in step: hrt_cuda_mirrors_to_host and
 * hrt_cuda_mirrors_to_device copy every device copy one way. Asking for one
 * buffer with another size ends the process. */
void *hrt_cuda_mirror(void *host, int64_t bytes);

/* Copies the device copy of the host buffer `host` (`bytes` bytes, as it
 * was made) to it, or with `to_device` the other way, in order with this
 * thread's stream, and returns when it is copied. A buffer without a
 * device copy is left alone: its host buffer is the data. */
void hrt_cuda_mirror_copy(void *host, int64_t bytes, int to_device);

/* Copies every device copy to its host buffer, after the work queued on
 * this thread's stream (before the host reads parameters: --save, a
 * checkpoint). */
void hrt_cuda_mirrors_to_host(void);

/* Copies every host buffer to its device copy (after the host wrote
 * parameters: --load, a restored checkpoint). */
void hrt_cuda_mirrors_to_device(void);

/* Returns when the work queued on this thread's stream is done (before a
 * runtime call that may read device data on another stream). */
void hrt_cuda_synchronize(void);

/* How many buffers have a device copy, and their bytes. */
int64_t hrt_cuda_mirror_count(int64_t *bytes);

/* Frees what this library holds on the device for the process, after the
 * work queued on this thread's stream: every device copy (their values are
 * lost; hrt_cuda_mirrors_to_host first keeps them), the pinned staging
 * buffers not handed out, and the memory the device's pool kept for reuse.
 * A later hrt_cuda_mirror makes a fresh copy from the host buffer. No other
 * thread may use the device copies meanwhile. Returns the bytes of device
 * copies freed. */
int64_t hrt_cuda_release(void);

/* Copies `bytes` bytes between any two of host and device memory, in order
 * with this thread's stream, and returns when they are copied. */
void hrt_cuda_copy(void *destination, const void *source, int64_t bytes);

/* Host staging for a runtime call that reads or writes host memory: a
 * pinned host buffer of `bytes` bytes, holding a copy of `device` when
 * `copy_in` is nonzero. hrt_cuda_stage_out copies it back to `device` when
 * `copy_out` is nonzero and releases it (buffers are reused). */
void *hrt_cuda_stage_in(const void *device, int64_t bytes, int32_t copy_in);
void hrt_cuda_stage_out(void *host, void *device, int64_t bytes,
                        int32_t copy_out);

#ifdef __cplusplus
}
#endif

#endif /* HETERO_RT_GPU_H */
