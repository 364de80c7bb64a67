#!/usr/bin/env bash
# Compile time of hetero-gen's GPT as it grows: the whole compile of the
# training step (hetero-derive-backward, hetero-kfkb-schedule,
# hetero-lower-pipeline and hetero-lower-to-cpu, from the generated
# forward-only module to the LLVM dialect), on
# 8 stages and 64 micro-batches at 8, 24, 48 and 96 layers, then on 96
# layers at 64, 128 and 256 micro-batches.
#
# The compiled module is written as MLIR bytecode, as a driver hands it on
# (printing 400,000 LLVM-dialect ops as text adds about 0.8 s at 96 layers).
# Each row prints the wall time of the compile (fastest of three runs), the
# operations of the step it compiles (the module after hetero-lower-pipeline,
# where the step has one call per task) and the time per operation, with
# its ratio to the first row's: a flat ratio means the compile grows
# linearly with the model and the schedule.
#
# usage: bench/compile-time.sh [build dir]
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh" "$@"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
OPT="$BUILD/bin/hetero-opt"

# Fastest of three runs of the whole compile, in seconds.
fastest() {
  local best="" start end seconds
  for run in 1 2 3; do
    start="$(date +%s.%N)"
    "$OPT" "$WORK/model.mlir" --hetero-derive-backward --hetero-kfkb-schedule=group-size=2 \
      --hetero-lower-pipeline --hetero-lower-to-cpu --emit-bytecode \
      -o /dev/null
    end="$(date +%s.%N)"
    seconds="$(awk "BEGIN {printf \"%.3f\", $end - $start}")"
    if [[ -z "$best" ]] || awk "BEGIN {exit !($seconds < $best)}"; then
      best="$seconds"
    fi
  done
  echo "$best"
}

# Operations of the module after hetero-lower-pipeline.
operations() {
  "$OPT" "$WORK/model.mlir" --hetero-derive-backward --hetero-kfkb-schedule=group-size=2 \
    --hetero-lower-pipeline --print-op-stats -o /dev/null 2>&1 |
    awk -F, '/ , / {sum += $2} END {print sum}'
}

echo "compile of the GPT step: derive-backward, kfkb-schedule (k = 2), lower-pipeline, lower-to-cpu"
printf "%-7s %-7s %-7s %10s %10s %12s %8s\n" layers stages micro ops seconds us_per_op ratio
base=""
row() {
  local layers="$1" micro="$2"
  "$BUILD/bin/hetero-gen" gpt --layers "$layers" --stages 8 \
    --microbatches "$micro" -o "$WORK/model.mlir"
  local ops seconds per_op ratio
  ops="$(operations)"
  seconds="$(fastest)"
  per_op="$(awk "BEGIN {printf \"%.2f\", $seconds * 1e6 / $ops}")"
  if [[ -z "$base" ]]; then base="$per_op"; fi
  ratio="$(awk "BEGIN {printf \"%.2f\", $per_op / $base}")"
  printf "%-7s %-7s %-7s %10s %10s %12s %8s\n" "$layers" 8 "$micro" "$ops" \
    "$seconds" "$per_op" "$ratio"
}
for layers in 8 24 48 96; do row "$layers" 64; done
for micro in 128 256; do row 96 "$micro"; done
