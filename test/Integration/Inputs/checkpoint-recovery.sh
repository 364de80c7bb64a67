#!/usr/bin/env bash
# Trains a pipeline on 4 ranks (2 stages x 2 replicas, in-memory checkpoints
# in groups of 2: ranks {0, 1} and {2, 3}) through three failures and checks
# that every relaunch resumes where the checkpoints say and ends
# bit-identical to a run without failures:
#   1. software failure: rank 2 is killed; its agent keeps its memory;
#   2. machine replaced: rank 2 and its agent are killed;
#   3. group lost: rank 2 and the agents of ranks 2 and 3 are killed, so
#      the newest complete checkpoint is the one on disk.
#
#   checkpoint-recovery.sh OUT MODULE STEPS FAULT_CALL MPIRUN CHECKPOINT-OPTIONS
#
# HETERO_RUN, when set, is the hetero-run command (the test suite's
# compiles at -O1); HETERO_RUN_FLAGS, when set, goes to every run
# (--device gpu).
set -uo pipefail
out=$1 module=$2 steps=$3 fault=$4 mpirun=$5 options=$6
agents=$out.agents disk=$out.disk
rm -rf "$agents" "$disk" "$out".*.npy.d
stop_agents() { pkill -9 -f "$agents/agent-$1" 2>/dev/null || true; }
trap 'stop_agents ""' EXIT
checkpoint="$options,agents=$agents,disk=$disk,disk_every=3"
# shellcheck disable=SC2086 # the flags are words
run() { $mpirun -np 4 ${HETERO_RUN:-hetero-run} "$module" --iterations "$steps" ${HETERO_RUN_FLAGS:-} "$@"; }

# The losses of the iterations a run printed, without their times.
losses() { sed -n 's/^\(iteration [0-9]*: loss [^,]*\),.*/\1/p' "$1"; }
# Compares a run with the golden one: its parameters bit for bit, and the
# losses of the iterations it ran.
compare() {
  local name=$1 differ=""
  for file in "$out.golden"/*.npy; do
    cmp -s "$file" "$out.$name/$(basename "$file")" || differ="$differ $(basename "$file")"
  done
  if [ -n "$differ" ]; then echo "$name: parameters differ:$differ"; return; fi
  if losses "$out.$name.txt" | grep -vxF -f <(losses "$out.golden.txt") >/dev/null; then
    echo "$name: losses differ"; return
  fi
  echo "$name: bit-identical to the run without failures"
}
# A fresh run that must die of the injected fault.
fail() {
  rm -rf "$disk"
  if HETERO_RT_FAULT="$1" run --checkpoint "$checkpoint" > "$out.$2.txt" 2>&1; then
    echo "$2: the run with a fault did not fail"
  fi
}

run --save "$out.golden" > "$out.golden.txt" || echo "golden run failed"
run --checkpoint "$checkpoint" --save "$out.plain" > "$out.plain.txt" 2>&1
grep '^checkpoint:' "$out.plain.txt"
compare plain

fail 2:kill:$fault killed
run --checkpoint "$checkpoint" --save "$out.software" > "$out.software.txt" 2>&1
grep '^checkpoint: resuming' "$out.software.txt"
compare software

fail 2:kill:$fault replaced
stop_agents 2.sock
run --checkpoint "$checkpoint" --save "$out.machine" > "$out.machine.txt" 2>&1
grep '^checkpoint: resuming' "$out.machine.txt"
compare machine

fail 2:kill:$fault lost
stop_agents 2.sock
stop_agents 3.sock
run --checkpoint "$checkpoint" --save "$out.group" > "$out.group.txt" 2>&1
grep '^checkpoint: resuming' "$out.group.txt"
compare group
# A successful run stops its agents.
pgrep -f "$agents/agent-" >/dev/null && echo "agents still run after a successful run"
true
