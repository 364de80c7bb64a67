#!/usr/bin/env bash
# A GPT training step on GPUs against the same step on the CPU.
#
# usage: bench/gpu-step.sh [BUILD] [LAYERS HIDDEN SEQ]
#
# hetero-gen builds a GPT (default 4 layers, hidden 256, 8 heads, sequence
# 128, 2 stages, 8 micro-batches, 1 replica); hetero-run trains it for 6
# iterations with --throughput (micro-batches a second, the first iteration
# left out), once with --device cpu and once with --device gpu (MPI
# backend, staged), on 2 ranks. Prints both and the ratio GPU / CPU.
# With two or more devices it also runs --backend nccl and prints its ratio.
# The GPU runs need a device; without one the script says so and stops
# after the CPU run.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
LAYERS="${2:-4}"
HIDDEN="${3:-256}"
SEQ="${4:-128}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

"$BUILD/bin/hetero-gen" gpt --layers "$LAYERS" --hidden "$HIDDEN" --heads 8 \
  --seq "$SEQ" --stages 2 --microbatches 8 --dp 1 -o "$WORK/gpt.mlir"

throughput() { # DEVICE BACKEND
  "${LAUNCH[@]}" -np 2 "$BUILD/bin/hetero-run" "$WORK/gpt.mlir" \
    --device "$1" --backend "$2" --iterations 6 --throughput |
    sed -n 's/^throughput: //p'
}

echo "GPT: $LAYERS layers, hidden $HIDDEN, sequence $SEQ, 2 stages, 8 micro-batches"
cpu="$(throughput cpu mpi)"
echo "cpu (mpi):  $cpu micro-batches/s"
if [[ ! -e /dev/nvidia0 && ! -e /dev/nvidiactl ]]; then
  echo "no GPU on this machine: the GPU runs are skipped"
  exit 0
fi
gpu="$(throughput gpu mpi)"
echo "gpu (mpi):  $gpu micro-batches/s"
"$PYTHON" -c "print(f'ratio gpu/cpu (mpi): {$gpu / $cpu:.2f}')"
if [[ -e /dev/nvidia1 ]]; then
  nccl="$(throughput gpu nccl)"
  echo "gpu (nccl): $nccl micro-batches/s"
  "$PYTHON" -c "print(f'ratio gpu/cpu (nccl): {$nccl / $cpu:.2f}')"
fi
