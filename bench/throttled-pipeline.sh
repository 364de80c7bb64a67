#!/usr/bin/env bash
# Real 2-stage pipeline training over a real, kernel-shaped link: every
# fixed kFkB group size against 1F1B (k = 1) and against Ada-Grouper's
# adaptive planner (hetero-run --adaptive), in the same run, for a sweep of
# link rates and over a preemption trace.
#
# The link is the loopback of a network namespace that tc shapes with a
# token bucket (scripts/shaped-link.sh); both ranks share it, MPI talks TCP
# over it, and nothing in hetero knows the rate: the planner sees only what
# the runtime measures. Where namespaces or tc are refused, the runtime's
# link emulation (HETERO_RT_LINK) stands in, and the first line says so.
#
# usage: bench/throttled-pipeline.sh [build dir]
#   RATES="64 32 24"      Mbit/s of the link
#   GROUP_SIZES="1 2 4 8" fixed k; 1 is 1F1B; the adaptive planner's plans
#   ITERATIONS=15         per run; fixed plans: the median of all but the
#                         first 2; adaptive: the median after its first
#                         re-plan (every REPLAN iterations)
#   TRACE="64 24 64"      the preemption trace: these rates, PHASE_S
#   PHASE_S=5             seconds each, over TRACE_ITERATIONS iterations
#   TRACE_ITERATIONS=150
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
RATES="${RATES:-64 32 24}"
GROUP_SIZES="${GROUP_SIZES:-1 2 4 8}"
ITERATIONS="${ITERATIONS:-15}"
REPLAN="${REPLAN:-3}"
TRACE="${TRACE:-64 24 64}"
PHASE_S="${PHASE_S:-5}"
TRACE_ITERATIONS="${TRACE_ITERATIONS:-150}"
MICRO=8
SAMPLES_PER_MICROBATCH=2
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

LAUNCH=(mpirun --oversubscribe --bind-to none)
if [[ "$(id -u)" == 0 ]]; then LAUNCH+=(--allow-run-as-root); fi
LAUNCH+=(-np 2)
TCP_LO=(--mca btl tcp,self --mca btl_tcp_if_include lo
        --mca oob_tcp_if_include lo)

# Activations of 2 samples x 32 tokens x 64 features: 16 KiB per message.
"$BUILD/bin/hetero-gen" gpt --layers 2 --hidden 64 --heads 2 --seq 32 \
  --batch "$SAMPLES_PER_MICROBATCH" --stages 2 --microbatches "$MICRO" \
  --tp 1 --dp 1 --lr 0.01 -o "$WORK/gpt.mlir"
for k in $GROUP_SIZES; do
  "$BUILD/bin/hetero-opt" "$WORK/gpt.mlir" \
    --hetero-kfkb-schedule=group-size="$k" -o "$WORK/k$k.mlir"
done
"$BUILD/bin/hetero-opt" "$WORK/gpt.mlir" \
  --hetero-kfkb-schedule=group-sizes="${GROUP_SIZES// /,}" \
  -o "$WORK/adaptive.mlir"

SHAPED=0
if "$ROOT/scripts/shaped-link.sh" --check; then
  SHAPED=1
  echo "link: tc tbf on the loopback of a network namespace (burst 4kb, MTU 1500), MPI over TCP"
else
  echo "link: runtime link emulation (HETERO_RT_LINK); this machine refused a network namespace or tc"
fi

# run <rate> <trace or ""> <file> <hetero-run arguments...>: the job's
# output over a link of <rate> Mbit/s.
run() {
  local rate="$1" trace="$2" file="$3"
  shift 3
  if [[ "$SHAPED" == 1 ]]; then
    local args=("$rate")
    if [[ -n "$trace" ]]; then args+=(--trace "$trace"); fi
    "$ROOT/scripts/shaped-link.sh" "${args[@]}" -- \
      "${LAUNCH[@]}" "${TCP_LO[@]}" "$BUILD/bin/hetero-run" "$file" "$@"
  else
    # The emulation cannot change its rate during a run: the trace's first
    # rate holds throughout.
    HETERO_RT_LINK="$(awk -v r="$rate" 'BEGIN {print r / 8.388608}')" \
      "${LAUNCH[@]}" -x HETERO_RT_LINK "$BUILD/bin/hetero-run" "$file" "$@"
  fi
}

# Median of the iteration times of iterations >= <from> on stdin.
median_from() {
  awk -v from="$1" '/^iteration/ && $2 + 0 >= from {
      for (i = 1; i <= NF; ++i) if ($(i + 1) ~ /^ms,?$/) { print $i; break } }' |
    sort -g | awk '{v[NR] = $1} END {print (NR ? v[int((NR + 1) / 2)] : 0)}'
}

# Sum of the iteration times on stdin: the wall time of the work.
total_ms() {
  awk '/^iteration/ { for (i = 1; i <= NF; ++i) if ($(i + 1) ~ /^ms,?$/) s += $i }
       END {printf "%.1f", s}'
}

printf "%-10s %-6s %12s %10s\n" rate_mbit k iteration_ms vs_1f1b
declare -A FIXED
for rate in $RATES; do
  for k in $GROUP_SIZES; do
    FIXED[$rate,$k]="$(run "$rate" "" "$WORK/k$k.mlir" --iterations "$ITERATIONS" |
                       median_from 2)"
    printf "%-10s %-6s %12.2f %10.3f\n" "$rate" "$k" "${FIXED[$rate,$k]}" \
      "$(awk -v a="${FIXED[$rate,$k]}" -v b="${FIXED[$rate,1]}" 'BEGIN {print a / b}')"
  done
done

for rate in $RATES; do
  run "$rate" "" "$WORK/adaptive.mlir" --adaptive --replan-every "$REPLAN" \
    --iterations "$ITERATIONS" > "$WORK/adaptive-$rate.txt"
  ms="$(median_from "$REPLAN" < "$WORK/adaptive-$rate.txt")"
  last="$(grep '^iteration' "$WORK/adaptive-$rate.txt" | tail -1)"
  k="$(sed -n 's/.*, k = \([0-9]*\).*/\1/p' <<< "$last")"
  b="$(sed -n 's/.*, b = \([0-9]*\).*/\1/p' <<< "$last")"
  best=""
  for g in $GROUP_SIZES; do
    if [[ -z "$best" ]] || awk -v a="${FIXED[$rate,$g]}" -v b="$best" 'BEGIN {exit !(a < b)}'; then
      best="${FIXED[$rate,$g]}"
    fi
  done
  printf "adaptive %smbit: final k = %s, b = %s, %.1f ms; best fixed %.1f ms; 1F1B %.1f ms\n" \
    "$rate" "$k" "${b:-$SAMPLES_PER_MICROBATCH}" "$ms" "$best" "${FIXED[$rate,1]}"
done

# The preemption trace: every plan does the same TRACE_ITERATIONS
# iterations while the rate changes at the same wall-clock times.
set -- $TRACE
first="$1"
shift
changes=""
at=0
for rate in "$@"; do
  at=$((at + PHASE_S))
  changes+="$at:$rate "
done
echo "trace: $first Mbit/s, then ${changes% }(s:Mbit/s), $TRACE_ITERATIONS iterations"
best=""
for k in $GROUP_SIZES; do
  ms="$(run "$first" "$changes" "$WORK/k$k.mlir" \
          --iterations "$TRACE_ITERATIONS" 2>/dev/null | total_ms)"
  echo "trace fixed k = $k: $ms ms"
  if [[ -z "$best" ]] || awk -v a="$ms" -v b="$best" 'BEGIN {exit !(a < b)}'; then
    best="$ms"
  fi
done
run "$first" "$changes" "$WORK/adaptive.mlir" --adaptive \
  --replan-every "$REPLAN" --iterations "$TRACE_ITERATIONS" \
  > "$WORK/trace-adaptive.txt" 2>/dev/null
ms="$(total_ms < "$WORK/trace-adaptive.txt")"
# When each re-plan happened, in ms of iterations since the first.
awk '/^iteration/ { for (i = 1; i <= NF; ++i) if ($(i + 1) ~ /^ms,?$/) t += $i }
     /^re-planned/ { printf "trace re-plan at %.0f ms: %s\n", t, $0 }' \
  "$WORK/trace-adaptive.txt"
echo "trace adaptive: $ms ms; best fixed $best ms ($(awk -v a="$ms" -v b="$best" 'BEGIN {printf "%+.1f%%", (a / b - 1) * 100}'))"
