// The GPU pipeline's options reach gpu-module-to-binary: the kernel format
// (a typed option: a name outside isa, bin, fatbin is refused) and the CUDA
// toolkit, set on the pass rather than through the environment.
// RUN: hetero-opt %s --hetero-lower-to-gpu="format=fatbin toolkit=/opt/cuda-x" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s
// RUN: hetero-opt %s --hetero-lower-to-gpu --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEFAULT
// RUN: not hetero-opt %s --hetero-lower-to-gpu=format=ptx 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK: gpu-module-to-binary{format=fatbin {{.*}}toolkit=/opt/cuda-x}
// DEFAULT: gpu-module-to-binary{format=bin
// BAD: for the --format option: Cannot find option named 'ptx'!

module {}
