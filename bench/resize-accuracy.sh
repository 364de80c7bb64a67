#!/usr/bin/env bash
# Accuracy directions of ZERO-resizing and migration (the spec's 5.6,
# reported, not asserted): the generated GPT (2 layers, hidden 64, 2
# tensor-parallel ranks, Adam) trains on the runtime's corpus for ITERATIONS
# steps per seed under
#
#   baseline        nothing pruned
#   homogeneous a   every rank prunes a of its columns (ZERO-Rd, new
#                   columns every EPOCH iterations)
#   heterogeneous a rank 1 alone prunes a
#   average 0.5     homogeneous 0.5 with average imputation instead of zero
#   same 0.5        homogeneous 0.5, the pruned gradient columns holding
#                   their values of the previous step (same imputation)
#   MIG 0.5         rank 1 migrates half of its columns (lossless)
#   Pri a           homogeneous a, the columns that changed least over the
#                   last epoch pruned (ZERO-Pri) instead of random ones
#   PriDiff 0.5     ZERO-Pri 0.5, layers whose columns hardly moved (below
#                   EPOCH x EPSILON) pruned more
#
# and prints, per configuration, the mean over seeds of the mean loss of the
# last TAIL steps and its difference to the baseline's.
#
# usage: bench/resize-accuracy.sh [build dir]
#   ITERATIONS=150  TAIL=30  EPOCH=10  SEEDS="1 2 3"  RATIOS="0.25 0.5 0.75"
#   EPSILON=5e-4  ONLY="same-0.5 average-0.5" (these and the baseline only)
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh" "$@"
ITERATIONS="${ITERATIONS:-150}"
TAIL="${TAIL:-30}"
EPOCH="${EPOCH:-10}"
SEEDS="${SEEDS:-1 2 3}"
RATIOS="${RATIOS:-0.25 0.5 0.75}"
EPSILON="${EPSILON:-5e-4}"
ONLY="${ONLY:-}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

LAUNCH+=(-np 2)

"$BUILD/bin/hetero-gen" gpt --layers 2 --hidden 64 --heads 4 --seq 32 \
  --batch 4 --stages 1 --microbatches 2 --tp 2 -o "$WORK/gpt.mlir"
"$BUILD/bin/hetero-opt" "$WORK/gpt.mlir" --hetero-derive-backward --hetero-lower-pipeline \
  --hetero-partition-tp=migration=true --hetero-resize -o "$WORK/zero.mlir"
# ZERO-Pri: the forward weights shown to the runtime.
"$BUILD/bin/hetero-opt" "$WORK/gpt.mlir" --hetero-derive-backward --hetero-lower-pipeline \
  --hetero-partition-tp --hetero-resize=priority=true -o "$WORK/pri.mlir"
# Average and same imputation: the linears' gradient products.
for impute in average same; do
  "$BUILD/bin/hetero-gen" gpt --layers 2 --hidden 64 --heads 4 --seq 32 \
    --batch 4 --stages 1 --microbatches 2 --tp 2 --impute "$impute" \
    -o "$WORK/gpt-$impute.mlir"
  "$BUILD/bin/hetero-opt" "$WORK/gpt-$impute.mlir" --hetero-derive-backward --hetero-lower-pipeline \
    --hetero-partition-tp --hetero-resize -o "$WORK/$impute.mlir"
done

CONFIGS=(baseline)
run() { # name, module, seed, prune options...
  local name=$1 module=$2 seed=$3
  shift 3
  if [[ -n "$ONLY" && "$name" != baseline && " $ONLY " != *" $name "* ]]; then
    return
  fi
  if [[ " ${CONFIGS[*]} " != *" $name "* ]]; then CONFIGS+=("$name"); fi
  "${LAUNCH[@]}" "$BUILD/bin/hetero-run" "$WORK/$module.mlir" \
    --iterations "$ITERATIONS" --seed "$seed" "$@" > "$WORK/$name-$seed.txt"
}

for seed in $SEEDS; do
  run baseline zero "$seed"
  for a in $RATIOS; do
    run "homogeneous-$a" zero "$seed" --prune "ratio=$a,epoch=$EPOCH"
    run "heterogeneous-$a" zero "$seed" --prune "ratio=$a,ranks=1,epoch=$EPOCH"
    run "pri-$a" pri "$seed" --prune "ratio=$a,epoch=$EPOCH,order=priority"
  done
  run pridiff-0.5 pri "$seed" \
    --prune "ratio=0.5,epoch=$EPOCH,order=priority,epsilon=$EPSILON"
  run average-0.5 average "$seed" --prune "ratio=0.5,epoch=$EPOCH"
  run same-0.5 same "$seed" --prune "ratio=0.5,epoch=$EPOCH"
  run mig-0.5 zero "$seed" --prune "migrate=0.5,ranks=1,epoch=$EPOCH"
done

"$PYTHON" - "$WORK" "$TAIL" "$SEEDS" "${CONFIGS[@]}" <<'PY'
import re, statistics, sys
work, tail, seeds = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
configs = sys.argv[4:]

def final_loss(name, seed):
    losses = [float(m.group(1)) for line in open(f"{work}/{name}-{seed}.txt")
              if (m := re.match(r"iteration \d+: loss ([-0-9.e]+)", line))]
    return statistics.mean(losses[-tail:])

base = statistics.mean(final_loss("baseline", s) for s in seeds)
for name in configs:
    per_seed = [final_loss(name, s) for s in seeds]
    mean = statistics.mean(per_seed)
    kept = [m.group(1, 2) for line in open(f"{work}/{name}-{seeds[0]}.txt")
            if (m := re.match(r"columns: kept (\d+) of (\d+)", line))]
    share = f", kept {int(kept[0][0]) / int(kept[0][1]):.3f}" if kept else ""
    print(f"{name:18s} loss {mean:.4f} ({mean - base:+.4f} vs baseline; "
          f"seeds {' '.join(f'{x:.4f}' for x in per_seed)}{share})")
PY
