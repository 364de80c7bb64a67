#!/usr/bin/env bash
# Gemini's traffic interleaving in real runs: the GPT of hetero-gen on
# 2 stages x 2 replicas (4 MPI ranks), checkpointed every step into
# 2 replicas, over an emulated slow network with one card per rank
# (HETERO_RT_LINK=<MB/s>,<latency>,nic: chunks queue with the activations)
# and sleep-emulated compute (HETERO_RT_COMPUTE), so that the step's time
# is the schedule's and the link's, not the host's arithmetic.
#
# The step time of four runs, measured in the same run of this script:
#   none      no checkpoints: the baseline;
#   blocking  every chunk sent at the start of the step (thesis Fig 6.16);
#   naive     one chunk per idle span, as large as the span allows;
#   gemini    Algorithm 6.2 in the idle spans that --profile-timeline
#             measured on the baseline (mu = 0.9, R = 128 MiB in 4 parts).
# Then the time to recover (restore phase and relaunch to the first
# completed step) after a killed rank: from CPU memory, and from disk once
# both agents of its group are gone.
#
# usage: bench/checkpoint-interleave.sh [build dir]
#   ITERATIONS=12 (the first warms up)  ROUNDS=3  MBPS=35  COMPUTE=30,60
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh" "$@"
ITERATIONS="${ITERATIONS:-12}"
ROUNDS="${ROUNDS:-3}"
MBPS="${MBPS:-35}"
COMPUTE="${COMPUTE:-30,60}"
MICRO=4
WORK="$(mktemp -d)"
trap 'pkill -9 -f "$WORK/agents" 2>/dev/null || true; rm -rf "$WORK"' EXIT

export HETERO_RT_LINK="$MBPS,0.05,nic" HETERO_RT_COMPUTE="$COMPUTE"
export HETERO_RT_TIMEOUT=300
ENVS=(-x HETERO_RT_LINK -x HETERO_RT_COMPUTE -x HETERO_RT_TIMEOUT)

"$BUILD/bin/hetero-gen" gpt --layers 4 --hidden 128 --heads 4 --seq 16 \
  --batch 4 --stages 2 --microbatches $MICRO --dp 2 -o "$WORK/gpt.mlir"
run() { "${LAUNCH[@]}" "${ENVS[@]}" -np 4 "$BUILD/bin/hetero-run" "$WORK/gpt.mlir" "$@"; }
step_ms() { # hetero-run --throughput's output -> ms per step
  awk -v m=$MICRO '/^throughput:/ {printf "%.1f", 1000 * 2 * m / $2}'
}

run --iterations 3 --profile-timeline "$WORK/profile.json" > /dev/null
# The modes take turns, ROUNDS times, so that the host's drift hits all.
declare -A sum
modes=(none blocking naive gemini)
for round in $(seq "$ROUNDS"); do
  for mode in "${modes[@]}"; do
    args=()
    [[ $mode != none ]] && args=(--checkpoint "replicas=2,profile=$WORK/profile.json,interleaving=$mode,bandwidth_mbps=$MBPS,alpha_ms=0.05,agents=none")
    t=$(run --iterations "$ITERATIONS" --throughput "${args[@]}" | step_ms)
    sum[$mode]=$(awk -v a="${sum[$mode]:-0}" -v b="$t" 'BEGIN {print a + b}')
  done
done
declare -A ms
for mode in "${modes[@]}"; do
  ms[$mode]=$(awk -v s="${sum[$mode]}" -v n="$ROUNDS" 'BEGIN {printf "%.1f", s / n}')
done
none=${ms[none]}
echo "link ${MBPS} MiB/s shared per rank, compute $COMPUTE ms per task, $MICRO micro-batches, 2x2 ranks, mean of $ROUNDS rounds"
printf '%-9s %9s %9s\n' mode ms/step overhead
printf '%-9s %9s %9s\n' none "$none" "-"
for mode in blocking naive gemini; do
  printf '%-9s %9s %8s%%\n' "$mode" "${ms[$mode]}" \
    "$(awk -v a="${ms[$mode]}" -v b="$none" 'BEGIN {printf "%+.1f", 100 * (a / b - 1)}')"
done
run --iterations 2 --checkpoint "replicas=2,profile=$WORK/profile.json,bandwidth_mbps=$MBPS,agents=none" |
  sed -n 's/^checkpoint: [0-9]* steps committed .*; per step/checkpoint traffic per step (4 ranks):/p'

# Recovery: kill rank 2 in step 3, relaunch; then again with its group's
# agents gone (the disk holds every second step).
options="replicas=2,profile=$WORK/profile.json,bandwidth_mbps=$MBPS,alpha_ms=0.05,agents=$WORK/agents,disk=$WORK/disk,disk_every=2"
recover() { # label, agents to kill
  rm -rf "$WORK/disk"
  HETERO_RT_FAULT=2:kill:400 run --iterations 10 --checkpoint "$options" \
    > /dev/null 2>&1 || true
  for agent in $2; do pkill -9 -f "$WORK/agents/agent-$agent.sock" || true; done
  # Relaunch to the first completed step, from the relaunch's timestamps.
  local start line first
  start=$(date +%s.%N)
  run --iterations 10 --checkpoint "$options" |
    while IFS= read -r line; do echo "$(date +%s.%N) $line"; done > "$WORK/$1.txt"
  line=$(sed -n 's/^[0-9.]* checkpoint: resuming //p' "$WORK/$1.txt")
  first=$(awk '$2 == "iteration" {print $1; exit}' "$WORK/$1.txt")
  printf '%-7s relaunch to first step %6.0f ms; resumed %s\n' "$1" \
    "$(awk -v a="$first" -v b="$start" 'BEGIN {print 1000 * (a - b)}')" "$line"
}
echo "recovery after rank 2 is killed (relaunch includes MPI start-up and compilation):"
recover memory ""
recover disk "2 3"
