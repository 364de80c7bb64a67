#!/usr/bin/env bash
# hetero's device checks, from a bundle of scripts/device-bundle.sh, on a GPU
# machine without LLVM/MLIR or Open MPI (as root: it installs the runner
# utilities under /usr/lib/llvm-22/lib and links Open MPI's folders to
# /opt/hmpi where they are missing). The bundle sits in the repository, whose
# test inputs it reads.
#
# usage: bash BUNDLE/checks.sh   (SKIP_KERNELS=1 leaves out the kernel checks
#                                 and benchmarks of bench/gpu.sh)
# Writes everything to stdout and, where $OUT is set, to $OUT/device.log.
# The checks, in order (later ones are skipped when time runs short):
#   the device compression kernels against the host's; the generated
#   kernels against a host reference (both matmul modes); the MLP and the
#   GPT trained on the GPU against the CPU (gpu-training.test's runs, with
#   checkpoint recovery on the GPU), one
#   rank of the GPT on the NCCL backend against the CPU; bench/gpu-step.sh's
#   GPT on the GPU and the CPU; bench/gpu.sh's benchmarks;
#   compute-sanitizer on the MLP's GPU step.
cd "$(dirname "$0")"
if [[ -n "${OUT:-}" ]]; then exec > >(tee "$OUT/device.log") 2>&1; fi
T0=$SECONDS
step() { echo; echo "== [$((SECONDS - T0))s] $*"; }
left() { (( SECONDS - T0 < $1 )); }   # true while fewer than $1 s have passed
REF=../test/Integration/Inputs/training-reference.py
[[ -f $REF ]] || { echo "checks.sh: $REF not found: the bundle must sit in the repository"; exit 2; }

step setup
nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
mkdir -p /opt/hmpi && tar -xJf mpi.tar.xz -C /opt/hmpi
for d in /usr/lib/x86_64-linux-gnu/openmpi /usr/lib/x86_64-linux-gnu/pmix2 \
         /usr/lib/x86_64-linux-gnu/ucx /usr/share/openmpi /etc/openmpi; do
  [[ -e /opt/hmpi$d && ! -e $d ]] && ln -s /opt/hmpi$d $d
done
mkdir -p /usr/lib/llvm-22/lib && cp -a --update=none llvm/* /usr/lib/llvm-22/lib/ 2>/dev/null ||
  cp -a -n llvm/* /usr/lib/llvm-22/lib/
xz -d -k -f hr/bin/hetero-run.xz 2>/dev/null ||
  python3 -c 'import lzma,shutil;shutil.copyfileobj(lzma.open("hr/bin/hetero-run.xz"),open("hr/bin/hetero-run","wb"))'
chmod +x hr/bin/hetero-run
for m in models/*.xz; do xz -d -k -f "$m" 2>/dev/null ||
  python3 -c "import lzma,shutil,sys;shutil.copyfileobj(lzma.open(sys.argv[1]),open(sys.argv[1][:-3],'wb'))" "$m"; done
dirs=""
for lib in libcublas.so.13 libcublasLt.so.13 libcudart.so.13 libnccl.so.2; do
  found=$(find /usr/local /usr/lib /opt -name "$lib" 2>/dev/null | head -1)
  echo "$lib: ${found:-missing}"
  [[ -n "$found" ]] && dirs="$dirs:$(dirname "$found")"
done
nvcc_path=$(readlink -f "$(command -v nvcc)")
export CUDA_ROOT=$(dirname "$(dirname "$nvcc_path")")
[[ -f /usr/local/cuda/nvvm/libdevice/libdevice.10.bc ]] && export CUDA_ROOT=/usr/local/cuda
echo "CUDA_ROOT=$CUDA_ROOT ptxas=$(command -v ptxas) $(ls $CUDA_ROOT/nvvm/libdevice 2>&1)"
export PATH=/opt/hmpi/usr/bin:$CUDA_ROOT/bin:$PATH
export LD_LIBRARY_PATH="$PWD/hr/lib$dirs:/opt/hmpi/usr/lib/x86_64-linux-gnu:/opt/hmpi/usr/lib/x86_64-linux-gnu/openmpi/lib:/opt/hmpi/lib/x86_64-linux-gnu"
export OMPI_MCA_btl_vader_single_copy_mechanism=none PMIX_MCA_gds=hash
export OMPI_MCA_btl_base_warn_component_unused=0
MPIRUN=(orterun --allow-run-as-root --oversubscribe --bind-to none -x LD_LIBRARY_PATH -x CUDA_ROOT -x PATH)
RUN=$PWD/hr/bin/hetero-run
W=/tmp/w; mkdir -p $W

if [[ -z "$SKIP_KERNELS" ]]; then
step "device compression kernels against the host kernels"
timeout 90 hr/bin/hrt-cuda-compress; echo "rc=$?"
for mode in cublas kernel; do
  step "generated kernels against the host, matmul=$mode"
  timeout 60 bench-gpu/bin/gpu-bench-$mode check; echo "rc=$?"
done
fi

step "MLP on the CPU, 2 ranks (MPI smoke test)"
mlp() { timeout 120 "${MPIRUN[@]}" -np 2 $RUN models/mlp.mlir "$@"; }
mlp --iterations 5 --save $W/mlp.cpu > $W/mlp.cpu.txt; rc=$?; echo "rc=$rc"; cat $W/mlp.cpu.txt
if (( rc != 0 )); then
  export OMPI_MCA_btl=self,tcp
  step "retry with btl self,tcp"
  mlp --iterations 5 --save $W/mlp.cpu > $W/mlp.cpu.txt; echo "rc=$?"; cat $W/mlp.cpu.txt
fi
step "MLP on the GPU"
mlp --device gpu --iterations 5 --save $W/mlp.gpu > $W/mlp.gpu.txt; echo "rc=$?"; cat $W/mlp.gpu.txt
python3 $REF --tolerance 1e-4 runs $W/mlp.gpu.txt $W/mlp.gpu $W/mlp.cpu.txt $W/mlp.cpu
step "MLP: --load the CPU's step-5 parameters, one more step"
mlp --load $W/mlp.cpu --iterations 1 --save $W/mlp.cpu6 > $W/mlp.cpu6.txt; echo "rc=$?"
mlp --device gpu --load $W/mlp.cpu --iterations 1 --save $W/mlp.gpu6 > $W/mlp.gpu6.txt; echo "rc=$?"
python3 $REF --tolerance 1e-4 runs $W/mlp.gpu6.txt $W/mlp.gpu6 $W/mlp.cpu6.txt $W/mlp.cpu6

step "GPT (2 layers, hidden 32) 2 stages x 2 replicas on 4 ranks, CPU"
gpt() { timeout 180 "${MPIRUN[@]}" -np 4 $RUN models/gpt-test.mlir "$@"; }
gpt --iterations 5 --save $W/gpt.cpu > $W/gpt.cpu.txt; echo "rc=$?"; cat $W/gpt.cpu.txt
step "GPT on the GPU"
gpt --device gpu --iterations 5 --save $W/gpt.gpu > $W/gpt.gpu.txt; echo "rc=$?"; cat $W/gpt.gpu.txt
python3 $REF --tolerance 1e-3 runs $W/gpt.gpu.txt $W/gpt.gpu $W/gpt.cpu.txt $W/gpt.cpu
step "GPT with SGD: CPU, then GPU, within 1e-4"
sgd() { timeout 180 "${MPIRUN[@]}" -np 4 $RUN models/gpt-sgd.mlir "$@"; }
sgd --iterations 5 --save $W/sgd.cpu > $W/sgd.cpu.txt; echo "rc=$?"
sgd --device gpu --iterations 5 --save $W/sgd.gpu > $W/sgd.gpu.txt; echo "rc=$?"
python3 $REF --tolerance 1e-4 runs $W/sgd.gpu.txt $W/sgd.gpu $W/sgd.cpu.txt $W/sgd.cpu

step "checkpoints of the GPU's state through three failures (gpu-training.test)"
PATH=$PWD/hr/bin:$PATH HETERO_RUN_FLAGS="--device gpu" timeout 300 \
  ../test/Integration/Inputs/checkpoint-recovery.sh $W/recovery \
  ../test/Integration/Inputs/mlp-pipeline.mlir 8 100 "${MPIRUN[*]}" \
  replicas=2,costs=../test/Passes/Inputs/checkpoint-costs.json; echo "rc=$?"

step "GPT on one rank: CPU, then GPU with the NCCL backend (device collectives)"
one() { timeout 120 "${MPIRUN[@]}" -np 1 $RUN models/gpt-one.mlir "$@"; }
one --iterations 5 --save $W/one.cpu > $W/one.cpu.txt; echo "rc=$?"; cat $W/one.cpu.txt
one --device gpu --backend nccl --iterations 5 --save $W/one.nccl > $W/one.nccl.txt; echo "rc=$?"; cat $W/one.nccl.txt
python3 $REF --tolerance 1e-3 runs $W/one.nccl.txt $W/one.nccl $W/one.cpu.txt $W/one.cpu

step "compressed all-reduces on the NCCL backend, one rank (hrt-compressed-nccl.test)"
HETERO_TEST_BACKEND=nccl HETERO_RT_TIMEOUT=60 timeout 120 "${MPIRUN[@]}" \
  -x HETERO_TEST_BACKEND -x HETERO_RT_TIMEOUT -np 1 hr/bin/hrt-compressed > $W/compressed.txt
echo "rc=$?"; grep -c ": 0 mismatches" $W/compressed.txt; tail -2 $W/compressed.txt

bench() { timeout 200 "${MPIRUN[@]}" -np 2 $RUN models/gpt-bench.mlir --device "$1" --iterations 6 --throughput; }
if left 330; then
  step "bench gpu-step: GPT 4 layers, hidden 256, seq 128, 2 stages, 8 micro-batches; GPU"
  bench gpu; echo "rc=$?"
  step "bench gpu-step: the same on the CPU"
  bench cpu; echo "rc=$?"
fi
for mode in cublas kernel; do
  [[ -z "$SKIP_KERNELS" ]] && left 480 || break
  step "bench generated kernels, matmul=$mode"
  timeout 60 bench-gpu/bin/gpu-bench-$mode bench; echo "rc=$?"
done
if left 500; then
  step "compute-sanitizer memcheck: the MLP's GPU step"
  timeout 60 "${MPIRUN[@]}" -np 2 compute-sanitizer --tool memcheck --print-limit 5 \
    $RUN models/mlp.mlir --device gpu --iterations 2 2>&1 | tail -12
fi
step done
