#!/usr/bin/env bash
# Gradient synchronisation overlapped with the rest of the step, against the
# same compiled step waiting for every all-reduce where it stands
# (hetero-run --blocking-collectives), on 2 pipeline stages x 2
# data-parallel replicas (4 ranks) of the GPT over a link emulated by the
# runtime (HETERO_RT_LINK: point-to-point messages and all-reduces). In the
# blocking step a stage's last gradient send waits behind its all-reduce,
# so the all-reduces of the stages add up along the pipeline's drain; in
# the overlapped one they run beside it. Prints the median iteration time
# of each and their ratio (overlapped / blocking).
#
#   bench/overlap.sh [build dir]
#   BANDWIDTHS="unlimited 16 8"  MB/s of the emulated link
#   ITERATIONS=8                 per run; the median of all but the first 2
set -euo pipefail
BUILD="${1:-$(cd "$(dirname "$0")/.." && pwd)/build}"
BANDWIDTHS="${BANDWIDTHS:-unlimited 16 8}"
ITERATIONS="${ITERATIONS:-8}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
LAUNCH=(mpirun --oversubscribe --bind-to none -np 4)
if [[ "$(id -u)" == 0 ]]; then LAUNCH+=(--allow-run-as-root); fi

# 4 layers of hidden 64: about 0.4 MB of gradients per stage, 16 KiB
# activations.
"$BUILD/bin/hetero-gen" gpt --layers 4 --hidden 64 --heads 2 --seq 32 \
  --batch 2 --stages 2 --microbatches 8 --dp 2 --lr 0.01 -o "$WORK/gpt.mlir"
"$BUILD/bin/hetero-opt" "$WORK/gpt.mlir" --hetero-kfkb-schedule=group-size=1 \
  -o "$WORK/1f1b.mlir"

# Median iteration time in ms, ignoring 2 warm-up iterations.
run_ms() {
  local bandwidth="$1"
  shift
  local cmd=("$BUILD/bin/hetero-run" "$WORK/1f1b.mlir" --iterations "$ITERATIONS" "$@")
  if [[ "$bandwidth" == unlimited ]]; then
    "${LAUNCH[@]}" "${cmd[@]}"
  else
    HETERO_RT_LINK="$bandwidth" "${LAUNCH[@]}" -x HETERO_RT_LINK "${cmd[@]}"
  fi | awk '/^iteration/ && $2 + 0 >= 2 {sub(",", "", $5); print $5}' |
    sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'
}

echo "2 stages x 2 replicas, 1F1B, 8 micro-batches; link emulated by the runtime"
printf "%-10s %14s %14s %10s\n" link_MBps blocking_ms overlapped_ms ratio
for bandwidth in $BANDWIDTHS; do
  blocking="$(run_ms "$bandwidth" --blocking-collectives)"
  overlapped="$(run_ms "$bandwidth")"
  printf "%-10s %14.2f %14.2f %10.3f\n" "$bandwidth" "$blocking" "$overlapped" \
    "$(awk "BEGIN {print $overlapped / $blocking}")"
done
