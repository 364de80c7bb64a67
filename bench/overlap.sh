#!/usr/bin/env bash
# Gradient synchronisation overlapped with the rest of the step, against
# two blocking baselines, on 2 pipeline stages x 2 data-parallel replicas
# (4 ranks) of the GPT over a link emulated by the runtime (HETERO_RT_LINK:
# point-to-point messages and all-reduces):
#   overlapped      the all-reduces start right after a stage's last backward
#                   and are waited for before the update (the default);
#   blocking        the same program waiting for each all-reduce where it
#                   stands (hetero-run --blocking-collectives): the stage's
#                   last gradient send waits behind it, so the all-reduces of
#                   the stages add up along the pipeline's drain;
#   blocking-late   blocking all-reduces after the stage's last send
#                   (hetero-lower-pipeline{late-gradient-sync}): the best a
#                   blocking step can do with one backward call per stage.
# Prints the median iteration time of each and the ratios.
#
#   bench/overlap.sh [build dir]
#   BANDWIDTHS="unlimited 16 8"  MB/s of the emulated link
#   ITERATIONS=8                 per run; the median of all but the first 2
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh" "$@"
BANDWIDTHS="${BANDWIDTHS:-unlimited 8}"
ITERATIONS="${ITERATIONS:-8}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
LAUNCH+=(-np 4)

# 4 layers of hidden 64: about 0.4 MB of gradients per stage, 16 KiB
# activations.
"$BUILD/bin/hetero-gen" gpt --layers 4 --hidden 64 --heads 2 --seq 32 \
  --batch 2 --stages 2 --microbatches 8 --dp 2 --lr 0.01 -o "$WORK/gpt.mlir"
"$BUILD/bin/hetero-opt" "$WORK/gpt.mlir" --hetero-derive-backward --hetero-kfkb-schedule=group-size=1 \
  -o "$WORK/1f1b.mlir"
"$BUILD/bin/hetero-opt" "$WORK/1f1b.mlir" \
  --hetero-lower-pipeline=late-gradient-sync -o "$WORK/late.mlir"

# Median iteration time in ms, ignoring 2 warm-up iterations.
run_ms() {
  local bandwidth="$1" model="$2"
  shift 2
  local cmd=("$BUILD/bin/hetero-run" "$WORK/$model.mlir" --iterations "$ITERATIONS" "$@")
  if [[ "$bandwidth" == unlimited ]]; then
    "${LAUNCH[@]}" "${cmd[@]}"
  else
    HETERO_RT_LINK="$bandwidth" "${LAUNCH[@]}" -x HETERO_RT_LINK "${cmd[@]}"
  fi | awk '/^iteration/ && $2 + 0 >= 2 {sub(",", "", $5); print $5}' |
    sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'
}

echo "2 stages x 2 replicas, 1F1B, 8 micro-batches; link emulated by the runtime"
printf "%-10s %12s %12s %17s %16s %21s\n" link_MBps overlapped_ms blocking_ms \
  blocking_late_ms "overlapped/blocking" "overlapped/blocking_late"
for bandwidth in $BANDWIDTHS; do
  overlapped="$(run_ms "$bandwidth" 1f1b)"
  blocking="$(run_ms "$bandwidth" 1f1b --blocking-collectives)"
  late="$(run_ms "$bandwidth" late --blocking-collectives)"
  printf "%-10s %12.2f %12.2f %17.2f %16.3f %21.3f\n" "$bandwidth" "$overlapped" \
    "$blocking" "$late" "$(awk "BEGIN {print $overlapped / $blocking}")" \
    "$(awk "BEGIN {print $overlapped / $late}")"
done
