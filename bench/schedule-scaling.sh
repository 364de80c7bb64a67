#!/usr/bin/env bash
# Compile time of hetero-kfkb-schedule + hetero-verify-schedule on hetero-gen
# models of 8 to 96 layers, S = 8 stages, M = 64 to 512 micro-batches.
# Prints the time per schedule task (2 S M compute tasks plus their
# transfers) and its ratio to the smallest case: a flat ratio means the
# passes grow linearly with the schedule.
#
# usage: bench/schedule-scaling.sh [build dir]
set -euo pipefail
BUILD="${1:-$(cd "$(dirname "$0")/.." && pwd)/build}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

printf "%-7s %-7s %-7s %12s %14s %8s\n" layers stages micro tasks us_per_task ratio
base=""
for layers in 8 32 96; do
  for micro in 64 128 256 512; do
    "$BUILD/bin/hetero-gen" gpt --layers "$layers" --hidden 8 --heads 1 --seq 2 \
      --stages 8 --microbatches "$micro" --dp 1 -o "$WORK/model.mlir"
    # Three runs, the fastest pass time (seconds) of schedule + verify.
    best=""
    for run in 1 2 3; do
      "$BUILD/bin/hetero-opt" "$WORK/model.mlir" --hetero-kfkb-schedule=group-size=2 \
        --hetero-verify-schedule --verify-each=false --mlir-timing --mlir-timing-display=list \
        -o /dev/null 2> "$WORK/timing.txt"
      seconds="$(awk '/HeteroKfkbSchedule|HeteroVerifySchedule/ {sum += $1} END {printf "%.9f", sum}' "$WORK/timing.txt")"
      if [[ -z "$best" ]] || awk "BEGIN {exit !($seconds < $best)}"; then best="$seconds"; fi
    done
    tasks=$((2 * 8 * micro * 2))  # compute tasks and their transfers
    per_task="$(awk "BEGIN {printf \"%.4f\", $best * 1e6 / $tasks}")"
    if [[ -z "$base" ]]; then base="$per_task"; fi
    ratio="$(awk "BEGIN {printf \"%.2f\", $per_task / $base}")"
    printf "%-7s %-7s %-7s %12s %14s %8s\n" "$layers" 8 "$micro" "$tasks" "$per_task" "$ratio"
  done
done
