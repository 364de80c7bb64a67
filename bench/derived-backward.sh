#!/usr/bin/env bash
# The GPT's derived backwards against each other, in the same run:
# hetero-gen's GPT (forward only) at the demo's width, its stage backwards
# derived by hetero-derive-backward with
#   recompute   residuals=recompute: the backward re-runs the forward
#               (activation checkpointing at stage granularity)
#   save        residuals=save: the forward keeps its residuals, which the
#               step stashes per micro-batch
#   save-split  residuals=save split=true: an input task and a weight task
# trained by hetero-run's reference step on one rank (rounds interleaved).
#
# and by the pipelined step of 2 stages on 2 ranks (1F1B, 4 micro-batches),
# where a split backward's weight task follows its input gradient's send.
#
# Prints, for each, the median step time after the first WARM iterations,
# its ratio to recompute's and the last loss (the same model and batches:
# they must agree), and each stage's peak stash under 2F2B:
# micro-batches in flight and their bytes (hetero.peak_stash,
# hetero.peak_stash_bytes).
#
# usage: bench/derived-backward.sh [build dir]
#   LAYERS=4  HIDDEN=160  HEADS=4  SEQ=32  BATCH=2  ITERATIONS=40  WARM=5  ROUNDS=3
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh" "$@"
LAYERS="${LAYERS:-4}"
HIDDEN="${HIDDEN:-160}"
HEADS="${HEADS:-4}"
SEQ="${SEQ:-32}"
BATCH="${BATCH:-2}"
ITERATIONS="${ITERATIONS:-40}"
WARM="${WARM:-5}"
ROUNDS="${ROUNDS:-3}"
CORPUS="${CORPUS:-/usr/share/common-licenses/GPL-3}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

MODEL=(gpt --vocab 80 --layers "$LAYERS" --hidden "$HIDDEN" --heads "$HEADS"
       --seq "$SEQ" --batch "$BATCH")
"$BUILD/bin/hetero-gen" "${MODEL[@]}" --stages 1 --microbatches 2 \
  -o "$WORK/forward.mlir"
"$BUILD/bin/hetero-gen" "${MODEL[@]}" --stages 2 --microbatches 4 \
  -o "$WORK/pipeline-forward.mlir"
for model in "" pipeline-; do
  "$BUILD/bin/hetero-opt" "$WORK/${model}forward.mlir" \
    --hetero-derive-backward -o "$WORK/${model}recompute.mlir"
  "$BUILD/bin/hetero-opt" "$WORK/${model}forward.mlir" \
    --hetero-derive-backward=residuals=save -o "$WORK/${model}save.mlir"
  "$BUILD/bin/hetero-opt" "$WORK/${model}forward.mlir" \
    --hetero-derive-backward="residuals=save split=true" \
    -o "$WORK/${model}save-split.mlir"
done
KINDS="recompute save save-split"
for kind in $KINDS; do
  "$BUILD/bin/hetero-opt" "$WORK/pipeline-$kind.mlir" \
    --hetero-kfkb-schedule=group-size=2 --hetero-lower-pipeline \
    -o "$WORK/pipeline-$kind.lowered.mlir"
done

interleaved_runs 1 "$KINDS" --entry gpt_step_reference \
  --iterations "$ITERATIONS" --corpus "$CORPUS"
for kind in $KINDS; do
  cp "$WORK/pipeline-$kind.mlir" "$WORK/ranks-$kind.mlir"
done
interleaved_runs 2 "$(printf 'ranks-%s ' $KINDS)" \
  --iterations "$ITERATIONS" --corpus "$CORPUS"

"$PYTHON" - "$WORK" "$WARM" "$ROUNDS" "$ROOT/bench" $KINDS <<'PY'
import re, sys
work, warm, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sys.path.insert(0, sys.argv[4])
kinds = sys.argv[5:]
from step_times import median_ms

def last_loss(kind):
    loss = None
    for line in open(f"{work}/{kind}-1.txt"):
        m = re.match(r"iteration \d+: loss ([0-9.e+-]+),", line)
        if m:
            loss = float(m.group(1))
    return loss

def stashes(kind):
    found = []
    for line in open(f"{work}/pipeline-{kind}.lowered.mlir"):
        m = re.search(r"@gpt_step_stage(\d+)\(.*hetero\.peak_stash = (\d+) : i64, "
                      r"hetero\.peak_stash_bytes = (\d+) : i64", line)
        if m:
            found.append((int(m.group(1)), int(m.group(2)), int(m.group(3))))
    return sorted(found)

for prefix, title in (("", "reference step, 1 rank"),
                      ("ranks-", "pipelined step, 2 stages on 2 ranks, 1F1B")):
    print(title)
    base = median_ms(work, prefix + "recompute", warm, rounds)
    for kind in kinds:
        ms = median_ms(work, prefix + kind, warm, rounds)
        print(f"  {kind:10s} step {ms:7.2f} ms  ratio to recompute {ms / base:.3f}  "
              f"last loss {last_loss(prefix + kind):.6f}")
print("peak stash, 2 stages, 2F2B")
for kind in kinds:
    stash = "; ".join(f"stage {s}: {n} micro-batches, {b / 2**20:.3f} MiB"
                      for s, n, b in stashes(kind))
    print(f"  {kind:10s} {stash}")
PY
