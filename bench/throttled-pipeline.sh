#!/usr/bin/env bash
# Real 2-stage pipeline training over a real, kernel-shaped link: every
# (k, b) plan of Ada-Grouper's Pareto set under a memory cap, fixed, against
# 1F1B and against the adaptive planner (hetero-run --adaptive), in the same
# run, for a sweep of link rates and over a preemption trace.
#
# The model is a GPT whose stage functions take 1 sequence and whose
# variants (hetero-gen --microbatch-sizes) take 2, 4 and 8, so a plan of
# micro-batch size b runs one task and one message per micro-batch: b
# changes the compute efficiency and the message sizes, and under the cap a
# larger k forces a smaller b. "1F1B" is the set's plan with k = 1 (the
# largest micro-batch that fits).
#
# The link is the loopback of a network namespace that tc shapes with a
# token bucket (scripts/shaped-link.sh); both ranks share it, MPI talks TCP
# over it, and nothing in hetero knows the rate: the planner sees only what
# the runtime measures. Where namespaces or tc are refused, the runtime's
# link emulation (HETERO_RT_LINK) stands in, and the first line says so.
#
# usage: bench/throttled-pipeline.sh [build dir]
#   RATES="64 32 24"      Mbit/s of the link
#   MEMORY_CAP=945000     bytes per stage: the Pareto set's cap
#   ITERATIONS=15         per run; fixed plans: the median of all but the
#                         first 2; adaptive: the median after its first
#                         re-plan (every REPLAN iterations)
#   TRACE="64 24 64"      the preemption trace: these rates, PHASE_S
#   PHASE_S=5             seconds each, over TRACE_ITERATIONS iterations
#   TRACE_ITERATIONS=150
#   ROUNDS=3              turns of the rate sweep; TRACE_ROUNDS=2 of the trace
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh" "$@"
RATES="${RATES:-64 32 24}"
MEMORY_CAP="${MEMORY_CAP:-945000}"
ITERATIONS="${ITERATIONS:-15}"
REPLAN="${REPLAN:-3}"
TRACE="${TRACE:-64 24 64}"
PHASE_S="${PHASE_S:-5}"
TRACE_ITERATIONS="${TRACE_ITERATIONS:-150}"
ROUNDS="${ROUNDS:-3}"
TRACE_ROUNDS="${TRACE_ROUNDS:-2}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

LAUNCH+=(-np 2)
TCP_LO=(--mca btl tcp,self --mca btl_tcp_if_include lo
        --mca oob_tcp_if_include lo)

# 16 sequences a step; activations of 32 tokens x 64 features: 8 KiB a
# sequence.
"$BUILD/bin/hetero-gen" gpt --layers 2 --hidden 64 --heads 2 --seq 32 \
  --batch 1 --microbatch-sizes 2,4,8 --stages 2 --microbatches 16 \
  --tp 1 --dp 1 --lr 0.01 -o "$WORK/gpt.mlir"
"$BUILD/bin/hetero-opt" "$WORK/gpt.mlir" --hetero-derive-backward \
  --hetero-plan-candidates=memory-cap="$MEMORY_CAP" -o "$WORK/adaptive.mlir"
# The plans, in the set's order: gpt_k<k>_b<b>.
PLANS="$(sed -n 's/.*hetero.plan_set @gpt_plans for @gpt \[\(.*\)\] default.*/\1/p' \
           "$WORK/adaptive.mlir" | tr -d '@,')"
for plan in $PLANS; do
  "$BUILD/bin/hetero-opt" "$WORK/adaptive.mlir" \
    --hetero-lower-pipeline=schedule="$plan" -o "$WORK/$plan.mlir"
done
ONE_F_ONE_B="$(set -- $PLANS; echo "$1")"
label() { sed 's/gpt_k\([0-9]*\)_b\([0-9]*\)/k=\1,b=\2/' <<< "$1"; }
echo "plans under $MEMORY_CAP bytes a stage: $(for p in $PLANS; do printf '%s ' "$(label "$p")"; done)"

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
    median
}

# Sum of the iteration times on stdin: the wall time of the work.
total_ms() {
  awk '/^iteration/ { for (i = 1; i <= NF; ++i) if ($(i + 1) ~ /^ms,?$/) s += $i }
       END {printf "%.1f", s}'
}

# What the runtime measures of the link: its fit of alpha and the time per
# byte against bytes / rate (test/Runtime/hrt-link-costs.c, 25%).
if [[ "$SHAPED" == 1 ]]; then
  for rate in $RATES; do
    "$ROOT/scripts/shaped-link.sh" "$rate" -- "${LAUNCH[@]}" "${TCP_LO[@]}" \
      "$BUILD/bin/hrt-link-costs" shaped "$rate" 2>&1 |
      sed -n "s/^rank 1: \(.*within.*\)/link $rate mbit: \1/p"
  done
fi

# The median of the numbers on stdin (the lower of the two middle ones for
# an even count).
median() {
  sort -g | awk '{v[NR] = $1} END {print (NR ? v[int((NR + 1) / 2)] : 0)}'
}

# Plans and the adaptive run take turns, ROUNDS times, so that the host's
# drift (a step here can move between two levels some 25% apart from one
# run to the next) hits them all; each figure is the median over rounds.
declare -A FIXED_RUNS ADAPTIVE_RUNS TRACE_RUNS
for round in $(seq "$ROUNDS"); do
  for rate in $RATES; do
    for plan in $PLANS; do
      FIXED_RUNS[$rate,$plan]+="$(run "$rate" "" "$WORK/$plan.mlir" \
                                    --iterations "$ITERATIONS" | median_from 2) "
    done
    run "$rate" "" "$WORK/adaptive.mlir" --adaptive --replan-every "$REPLAN" \
      --iterations "$ITERATIONS" > "$WORK/adaptive-$rate-$round.txt"
    ADAPTIVE_RUNS[$rate]+="$(median_from "$REPLAN" < "$WORK/adaptive-$rate-$round.txt") "
  done
done

printf "%-10s %-10s %12s %10s\n" rate_mbit plan iteration_ms vs_1f1b
declare -A FIXED
for rate in $RATES; do
  for plan in $PLANS; do
    FIXED[$rate,$plan]="$(tr ' ' '\n' <<< "${FIXED_RUNS[$rate,$plan]}" | grep . | median)"
  done
  for plan in $PLANS; do
    printf "%-10s %-10s %12.2f %10.3f\n" "$rate" "$(label "$plan")" "${FIXED[$rate,$plan]}" \
      "$(awk -v a="${FIXED[$rate,$plan]}" -v b="${FIXED[$rate,$ONE_F_ONE_B]}" 'BEGIN {print a / b}')"
  done
done

for rate in $RATES; do
  ms="$(tr ' ' '\n' <<< "${ADAPTIVE_RUNS[$rate]}" | grep . | median)"
  # The plan the last round settled on.
  last="$(grep '^iteration' "$WORK/adaptive-$rate-$ROUNDS.txt" | tail -1)"
  k="$(sed -n 's/.*, k = \([0-9]*\).*/\1/p' <<< "$last")"
  b="$(sed -n 's/.*, b = \([0-9]*\).*/\1/p' <<< "$last")"
  best=""
  for plan in $PLANS; do
    if [[ -z "$best" ]] || awk -v a="${FIXED[$rate,$plan]}" -v b="$best" 'BEGIN {exit !(a < b)}'; then
      best="${FIXED[$rate,$plan]}"
    fi
  done
  printf "adaptive %smbit: final k = %s, b = %s, %.1f ms; best fixed %.1f ms; 1F1B %.1f ms\n" \
    "$rate" "$k" "$b" "$ms" "$best" "${FIXED[$rate,$ONE_F_ONE_B]}"
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
echo "trace: $first Mbit/s, then ${changes% }(s:Mbit/s), $TRACE_ITERATIONS iterations, lower median of $TRACE_ROUNDS rounds"
for round in $(seq "$TRACE_ROUNDS"); do
  for plan in $PLANS; do
    TRACE_RUNS[$plan]+="$(run "$first" "$changes" "$WORK/$plan.mlir" \
                            --iterations "$TRACE_ITERATIONS" 2>/dev/null | total_ms) "
  done
  run "$first" "$changes" "$WORK/adaptive.mlir" --adaptive \
    --replan-every "$REPLAN" --iterations "$TRACE_ITERATIONS" \
    > "$WORK/trace-adaptive-$round.txt" 2>/dev/null
  TRACE_RUNS[adaptive]+="$(total_ms < "$WORK/trace-adaptive-$round.txt") "
done
best=""
for plan in $PLANS; do
  ms="$(tr ' ' '\n' <<< "${TRACE_RUNS[$plan]}" | grep . | median)"
  echo "trace fixed $(label "$plan"): $ms ms (rounds: ${TRACE_RUNS[$plan]% })"
  if [[ -z "$best" ]] || awk -v a="$ms" -v b="$best" 'BEGIN {exit !(a < b)}'; then
    best="$ms"
  fi
done
# When each re-plan of the last round happened, in ms of iterations since
# the first.
awk '/^iteration/ { for (i = 1; i <= NF; ++i) if ($(i + 1) ~ /^ms,?$/) t += $i }
     /^re-planned/ { printf "trace re-plan at %.0f ms: %s\n", t, $0 }' \
  "$WORK/trace-adaptive-$TRACE_ROUNDS.txt"
ms="$(tr ' ' '\n' <<< "${TRACE_RUNS[adaptive]}" | grep . | median)"
echo "trace adaptive: $ms ms (rounds: ${TRACE_RUNS[adaptive]% }); best fixed $best ms ($(awk -v a="$ms" -v b="$best" 'BEGIN {printf "%+.1f%%", (a / b - 1) * 100}'))"
