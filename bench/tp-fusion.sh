#!/usr/bin/env bash
# Megatron's col-row fusion (hetero-partition-tp's sharded-activations, the
# default) against the same partition with every product's value gathered
# (sharded-activations=false), in the same run: the generated GPT on TP
# tensor-parallel ranks (one stage, Adam). Fused, the MLP's values between
# mlp_up and mlp_down stay the rank's window: two all-gathers of
# [tokens, 4 hidden] go from each block's forward and backward, gelu and
# its derivative run on 1/TP of the values, and the block's tape shrinks.
#
# Prints the median step time after the first WARM iterations of each
# (rounds interleaved) and their ratio, and, from the partitioned modules,
# the floats each rank all-gathers per call of the block functions and the
# floats of a block's tape.
#
# usage: bench/tp-fusion.sh [build dir]
#   TP=2  HIDDEN=256  LAYERS=2  SEQ=64  BATCH=4  ITERATIONS=12  WARM=3  ROUNDS=3
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh" "$@"
TP="${TP:-2}"
HIDDEN="${HIDDEN:-256}"
LAYERS="${LAYERS:-2}"
SEQ="${SEQ:-64}"
BATCH="${BATCH:-4}"
ITERATIONS="${ITERATIONS:-12}"
WARM="${WARM:-3}"
ROUNDS="${ROUNDS:-3}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

"$BUILD/bin/hetero-gen" gpt --layers "$LAYERS" --hidden "$HIDDEN" --heads 4 \
  --seq "$SEQ" --batch "$BATCH" --stages 1 --microbatches 2 --tp "$TP" \
  --optimizer adam -o "$WORK/gpt.mlir"
"$BUILD/bin/hetero-opt" "$WORK/gpt.mlir" --hetero-derive-backward --hetero-lower-pipeline \
  --hetero-partition-tp -o "$WORK/fused.mlir"
"$BUILD/bin/hetero-opt" "$WORK/gpt.mlir" --hetero-derive-backward --hetero-lower-pipeline \
  --hetero-partition-tp=sharded-activations=false -o "$WORK/gathered.mlir"

interleaved_runs "$TP" "fused gathered" --iterations "$ITERATIONS"

"$PYTHON" - "$WORK" "$WARM" "$ROUNDS" "$ROOT/bench" <<'PY'
import math, re, sys
work, warm, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sys.path.insert(0, sys.argv[4])
from step_times import median_ms

def block_functions(kind):
    """Per block function: floats all-gathered per call, and the tape."""
    gathered, tape, function = {}, None, None
    for line in open(f"{work}/{kind}.mlir"):
        m = re.match(r"\s*func\.func private @(gpt_block_\w+)\(", line)
        if m:
            function = m.group(1)
            gathered[function] = 0
            t = re.search(r"-> \(tensor<\w+>, tensor<(\d+)xf32>\)", line)
            if function == "gpt_block_forward" and t:
                tape = int(t.group(1))
            continue
        if re.match(r"\s*func\.func ", line):
            function = None
        m = re.search(r"hetero\.all_gather .* -> tensor<([0-9x]+)xf32>", line)
        if function and m:
            gathered[function] += math.prod(int(d) for d in m.group(1).split("x"))
    return gathered, tape

fused = median_ms(work, "fused", warm, rounds)
gathered = median_ms(work, "gathered", warm, rounds)
print(f"step: fused {fused:.1f} ms, gathered {gathered:.1f} ms, "
      f"ratio {fused / gathered:.3f}")
for kind in ("fused", "gathered"):
    per_call, tape = block_functions(kind)
    calls = ", ".join(f"{name} {floats}" for name, floats in sorted(per_call.items()))
    print(f"{kind}: floats all-gathered per call: {calls}; tape {tape} floats")
PY
