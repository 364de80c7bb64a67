#!/usr/bin/env bash
# Compile time of the schedule passes as the schedule grows, on valid and on
# invalid input.
#
# Valid: hetero-kfkb-schedule + hetero-verify-schedule on hetero-gen models
# of 8 and 96 layers, S = 8 stages, M = 64 to 4096 micro-batches (2048 to
# 131072 tasks: 2 S M compute tasks plus their transfers).
#
# Invalid: hetero-verify-schedule on a 2-stage pipeline of M = 1024 to 65536
# micro-batches whose hand-written schedule runs micro-batch 0 only, so that
# 4 (M - 1) tasks are missing; the pass reports the first few of each kind
# and a count.
#
# Each row prints the time per task (valid) or per missing task (invalid)
# and its ratio to the first row of its table: a flat ratio means the pass
# grows linearly with the schedule.
#
# usage: bench/schedule-scaling.sh [build dir]
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh" "$@"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# Fastest of three runs: the summed time (seconds) of the named passes.
fastest() {
  local passes="$1"; shift
  local best="" seconds
  for run in 1 2 3; do
    "$BUILD/bin/hetero-opt" "$@" --verify-each=false --mlir-timing \
      --mlir-timing-display=list -o /dev/null 2> "$WORK/timing.txt" || true
    seconds="$(awk -v passes="$passes" '$0 ~ passes {sum += $1} END {printf "%.9f", sum}' "$WORK/timing.txt")"
    if [[ -z "$best" ]] || awk "BEGIN {exit !($seconds < $best)}"; then best="$seconds"; fi
  done
  echo "$best"
}

echo "valid schedules: kfkb-schedule + verify-schedule, k = 2"
printf "%-7s %-7s %-7s %12s %14s %8s\n" layers stages micro tasks us_per_task ratio
base=""
for layers in 8 96; do
  for micro in 64 256 1024 4096; do
    "$BUILD/bin/hetero-gen" gpt --layers "$layers" --hidden 8 --heads 1 --seq 2 \
      --stages 8 --microbatches "$micro" --dp 1 -o "$WORK/model.mlir"
    best="$(fastest 'HeteroKfkbSchedule|HeteroVerifySchedule' "$WORK/model.mlir" \
      --hetero-kfkb-schedule=group-size=2 --hetero-verify-schedule)"
    tasks=$((2 * 8 * micro * 2))  # compute tasks and their transfers
    per_task="$(awk "BEGIN {printf \"%.4f\", $best * 1e6 / $tasks}")"
    if [[ -z "$base" ]]; then base="$per_task"; fi
    ratio="$(awk "BEGIN {printf \"%.2f\", $per_task / $base}")"
    printf "%-7s %-7s %-7s %12s %14s %8s\n" "$layers" 8 "$micro" "$tasks" "$per_task" "$ratio"
  done
done

echo
echo "invalid schedules: verify-schedule, all but micro-batch 0 missing"
printf "%-7s %-7s %12s %14s %8s %12s\n" stages micro missing us_per_task ratio diagnostics
base=""
for micro in 1024 4096 16384 65536; do
  cat > "$WORK/incomplete.mlir" <<EOF
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 2 microbatches = $micro {
  hetero.stage 0 forward @f backward @f
  hetero.stage 1 forward @f backward @f
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    hetero.fwd 0
    hetero.send_task activation 0 to 1
    hetero.recv_task gradient 0 from 1
    hetero.bwd 0
  }
  hetero.stage_program 1 {
    hetero.recv_task activation 0 from 0
    hetero.fwd 0
    hetero.bwd 0
    hetero.send_task gradient 0 to 0
  }
}
EOF
  best="$(fastest 'HeteroVerifySchedule' "$WORK/incomplete.mlir" --hetero-verify-schedule)"
  diagnostics="$("$BUILD/bin/hetero-opt" "$WORK/incomplete.mlir" --hetero-verify-schedule \
    -o /dev/null 2>&1 | grep -c ': error: ' || true)"
  missing=$((4 * (micro - 1)))
  per_task="$(awk "BEGIN {printf \"%.4f\", $best * 1e6 / $missing}")"
  if [[ -z "$base" ]]; then base="$per_task"; fi
  ratio="$(awk "BEGIN {printf \"%.2f\", $per_task / $base}")"
  printf "%-7s %-7s %12s %14s %8s %12s\n" 2 "$micro" "$missing" "$per_task" "$ratio" "$diagnostics"
done
