// The GPU pipeline's options reach gpu-module-to-binary: the kernel format
// (a typed option: a name outside isa, bin, fatbin is refused) and the CUDA
// toolkit, set on the pass rather than through the environment. Device
// buffers, cuBLAS products and the block size are pipeline options too.
// RUN: hetero-opt %s --hetero-lower-to-gpu="format=fatbin toolkit=/opt/cuda-x" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s
// RUN: hetero-opt %s --hetero-lower-to-gpu --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEFAULT
// RUN: not hetero-opt %s --hetero-lower-to-gpu=format=ptx 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: hetero-opt %s --hetero-lower-to-gpu="device-buffers=false matmul=kernel threads-per-block=128" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=HOST

// CHECK: gpu-module-to-binary{format=fatbin {{.*}}toolkit=/opt/cuda-x}
// DEFAULT: hetero-gpu-split-reductions
// DEFAULT: hetero-gpu-device-buffers
// DEFAULT: hetero-matmul-to-cublas
// DEFAULT: hetero-gpu-map-loops{threads-per-block=256}
// DEFAULT: gpu-module-to-binary{format=bin
// HOST-NOT: hetero-gpu-device-buffers
// HOST-NOT: hetero-matmul-to-cublas
// HOST: hetero-gpu-map-loops{threads-per-block=128}
// BAD: for the --format option: Cannot find option named 'ptx'!

module {}
