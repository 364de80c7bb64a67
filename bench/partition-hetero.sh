#!/usr/bin/env bash
# Automatic stage partitioning on a heterogeneous pipeline: the GPT of
# LAYERS layers as one forward-only stage, cut into 4 stages on 4 ranks of
# which rank 3 is SLOWDOWN times slower (HETERO_RT_SLOWDOWN=3:<factor>:
# every task of rank 3 takes that factor of its real compute time), by
#   even    hetero-gen --stages 4: the layers spread evenly, as a user cuts
#           by hand today (the head and the loss on the last stage)
#   blind   hetero-partition-stages{stages=4}: the cost model's best cut
#           for four equal ranks
#   aware   hetero-partition-stages{stages=4 speeds=1,1,1,1/SLOWDOWN}: the
#           cut for the ranks as they are
# each derived (hetero-derive-backward), scheduled 1F1B and trained on the
# same emulated cluster, rounds interleaved. Prints each cut's blocks per
# stage, its predicted bottleneck, the median step after the first WARM
# iterations and its ratio to even's, and the same three cuts on equal
# ranks (no slowdown) for comparison.
#
# Ranks are processes: on a machine of fewer cores than 4 they share cores,
# and the slowed rank's sleeps leave its core to the others, as a slower
# device would.
#
# usage: bench/partition-hetero.sh [build dir]
#   LAYERS=8  HIDDEN=64  SEQ=32  BATCH=2  MICROBATCHES=8  SLOWDOWN=2
#   ITERATIONS=12  WARM=2  ROUNDS=3
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh" "$@"
LAYERS="${LAYERS:-8}"
HIDDEN="${HIDDEN:-64}"
SEQ="${SEQ:-32}"
BATCH="${BATCH:-2}"
MICROBATCHES="${MICROBATCHES:-8}"
SLOWDOWN="${SLOWDOWN:-2}"
ITERATIONS="${ITERATIONS:-12}"
WARM="${WARM:-2}"
ROUNDS="${ROUNDS:-3}"
BIN="$BUILD/bin"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

MODEL=(gpt --layers "$LAYERS" --hidden "$HIDDEN" --heads 2 --seq "$SEQ"
       --batch "$BATCH" --microbatches "$MICROBATCHES" --optimizer sgd
       --lr 0.01)
"$BIN/hetero-gen" "${MODEL[@]}" --stages 4 -o "$WORK/even.forward.mlir"
"$BIN/hetero-gen" "${MODEL[@]}" --stages 1 -o "$WORK/one.mlir"
speed="$(awk -v f="$SLOWDOWN" 'BEGIN {printf "%.6g", 1 / f}')"
"$BIN/hetero-opt" "$WORK/one.mlir" --hetero-partition-stages=stages=4 \
  -o "$WORK/blind.forward.mlir" 2> "$WORK/blind.remarks"
"$BIN/hetero-opt" "$WORK/one.mlir" \
  --hetero-partition-stages="stages=4 speeds=1,1,1,$speed" \
  -o "$WORK/aware.forward.mlir" 2> "$WORK/aware.remarks"
for cut in even blind aware; do
  "$BIN/hetero-opt" "$WORK/$cut.forward.mlir" --hetero-derive-backward \
    --hetero-kfkb-schedule --hetero-lower-pipeline -o "$WORK/$cut.mlir"
  cp "$WORK/$cut.mlir" "$WORK/$cut-equal.mlir"
done
echo "model: GPT of $LAYERS layers, hidden $HIDDEN, $((SEQ * BATCH)) tokens a micro-batch, $MICROBATCHES micro-batches, 1F1B, SGD; 4 ranks on $(nproc) cores, rank 3 ${SLOWDOWN}x slower"

HETERO_RT_SLOWDOWN="3:$SLOWDOWN" interleaved_runs 4 "even blind aware" \
  --iterations "$ITERATIONS"
interleaved_runs 4 "even-equal blind-equal aware-equal" \
  --iterations "$ITERATIONS"

"$PYTHON" - "$WORK" "$WARM" "$ROUNDS" "$ROOT/bench" "$SLOWDOWN" <<'PY'
import re, sys
work, warm, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sys.path.insert(0, sys.argv[4])
slowdown = sys.argv[5]
from step_times import median_ms

def blocks(cut):
    """Blocks per stage in the module the cut wrote."""
    text = open(f"{work}/{cut}.forward.mlir").read()
    counts = []
    for s in range(4):
        m = re.search(r"func\.func @\w*?(?:stage%d_forward|_stage%d)\(.*?\n  }\n" % (s, s),
                      text, re.S)
        counts.append(m.group(0).count("call @gpt_block_forward(") if m else -1)
    return counts

def predicted(cut):
    try:
        lines = open(f"{work}/{cut}.remarks").read()
    except FileNotFoundError:
        return None
    times = [float(t) for t in re.findall(r"predicted ([0-9.]+) ms", lines)]
    return max(times) if times else None

rows = []
for cut in ["even", "blind", "aware"]:
    slow = median_ms(work, cut, warm, rounds)
    equal = median_ms(work, cut + "-equal", warm, rounds)
    rows.append((cut, blocks(cut), predicted(cut), slow, equal))
base_slow, base_equal = rows[0][3], rows[0][4]
print(f"| cut | blocks per stage | predicted bottleneck | step, rank 3 {slowdown}x slower | vs even | step, equal ranks | vs even |")
print("|---|---|---|---|---|---|---|")
for cut, counts, pred, slow, equal in rows:
    pred_text = f"{pred:.3f} ms" if pred is not None else "(by hand)"
    print(f"| {cut} | {', '.join(map(str, counts))} | {pred_text} | "
          f"{slow:.1f} ms | {slow / base_slow:.2f} | {equal:.1f} ms | "
          f"{equal / base_equal:.2f} |")
print(f"aware's step on the slow cluster is {100 * (1 - rows[2][3] / base_slow):.0f}% "
      f"faster than the even cut's")
PY
