#!/usr/bin/env bash
# Megatron's sharded parameters (hetero-partition-tp, the default) against
# replicated ones (shard-parameters=false), in the same run: the generated
# GPT on TP tensor-parallel ranks (one stage, Adam). Sharded, each rank
# holds, updates and all-reduces over its replicas only its slice of every
# linear's weight, gradient sum and Adam moments, and a weight gradient
# stays the rank's slice instead of being all-gathered.
#
# Prints the median step time after the first WARM iterations of each
# (rounds interleaved) and their ratio, and the bytes of trainable state
# (parameters, gradient sums, optimizer state) each rank holds, from the
# partitioned modules' globals; the read-only initial values the sharded
# module keeps for its slices are shown apart.
#
# usage: bench/tp-sharding.sh [build dir]
#   TP=2  HIDDEN=256  LAYERS=2  ITERATIONS=12  WARM=3  ROUNDS=2
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh" "$@"
TP="${TP:-2}"
HIDDEN="${HIDDEN:-256}"
LAYERS="${LAYERS:-2}"
ITERATIONS="${ITERATIONS:-12}"
WARM="${WARM:-3}"
ROUNDS="${ROUNDS:-2}"
MIGRATE="${MIGRATE:-}"
SHARDED=(--hetero-partition-tp)
REPLICATED=(--hetero-partition-tp=shard-parameters=false)
RUN=()
if [[ -n "$MIGRATE" ]]; then
  SHARDED=(--hetero-partition-tp=migration=true --hetero-resize)
  REPLICATED=("--hetero-partition-tp=migration=true shard-parameters=false"
    --hetero-resize)
  RUN=(--prune "migrate=$MIGRATE,ranks=$((TP - 1))")
fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

"$BUILD/bin/hetero-gen" gpt --layers "$LAYERS" --hidden "$HIDDEN" --heads 4 \
  --seq 32 --batch 4 --stages 1 --microbatches 2 --tp "$TP" \
  --optimizer adam -o "$WORK/gpt.mlir"
"$BUILD/bin/hetero-opt" "$WORK/gpt.mlir" --hetero-derive-backward --hetero-lower-pipeline \
  "${SHARDED[@]}" -o "$WORK/sharded.mlir"
"$BUILD/bin/hetero-opt" "$WORK/gpt.mlir" --hetero-derive-backward --hetero-lower-pipeline \
  "${REPLICATED[@]}" -o "$WORK/replicated.mlir"

interleaved_runs "$TP" "sharded replicated" --iterations "$ITERATIONS" \
  "${RUN[@]}"

"$PYTHON" - "$WORK" "$WARM" "$ROUNDS" "$ROOT/bench" <<'PY'
import re, sys
work, warm, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sys.path.insert(0, sys.argv[4])
from step_times import median_ms

def state_bytes(kind):
    writable = readonly = 0
    pattern = re.compile(r'memref\.global "private" (constant )?@(\w+) : '
                         r'memref<([0-9x]*)x?f32>')
    for line in open(f"{work}/{kind}.mlir"):
        m = pattern.match(line.strip())
        if not m:
            continue
        size = 4
        for d in filter(None, m.group(3).split("x")):
            size *= int(d)
        if m.group(1):
            readonly += size
        else:
            writable += size
    return writable, readonly

sharded = median_ms(work, "sharded", warm, rounds)
replicated = median_ms(work, "replicated", warm, rounds)
print(f"step: sharded {sharded:.1f} ms, replicated {replicated:.1f} ms, "
      f"ratio {sharded / replicated:.3f}")
(sw, sr), (rw, _) = state_bytes("sharded"), state_bytes("replicated")
print(f"trainable state per rank: sharded {sw / 2**20:.2f} MiB, replicated "
      f"{rw / 2**20:.2f} MiB, ratio {sw / rw:.3f}; read-only initial values "
      f"kept for the slices {sr / 2**20:.2f} MiB")
PY
