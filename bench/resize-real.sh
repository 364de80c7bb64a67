#!/usr/bin/env bash
# ZERO-resizing on real ranks: a GPT on 2 tensor-parallel ranks (one stage,
# hetero-partition-tp, hetero-resize) whose rank 1 runs every resized GEMM
# delta times as long (HETERO_RT_SLOW_GEMM: a sleep proportional to the GEMM
# it actually ran), for each delta, in the same run:
#
#   baseline   no pruning: every collective waits for the straggler
#   ZERO-min   hetero-run --prune target=min: the online planner (Eq. 1)
#              gives each rank the share that meets the fastest
#   ZERO-mean  --prune target=mean: the share that meets the mean
#   ZERO-Pri   ZERO-min with the columns that changed least over the last
#              epoch (EPOCH iterations) pruned (hetero-resize{priority=true},
#              order=priority): the weights' copies and the ranking cost
#   MIG        --prune target=min,policy=migrate on the module partitioned
#              with hetero-partition-tp{migration=true}: the straggler hands
#              Eq. 1's share of its columns to the other rank, losslessly
#   SEMI       --prune target=min,policy=semi on that module: a tolerable
#              share is pruned, a heavier one split by Eq. 2 between
#              pruning and migration (the share shown is their sum)
#   SEMI-Pri   SEMI whose pruned columns are ZERO-PriDiff's (order=priority,
#              epsilon=EPSILON; receivers split by the straggler's ranking)
#
# Each line gives the median iteration time after the first WARM
# iterations, its ratio to the baseline at delta 1, and the straggler's
# final share (pruned or migrated) beside 1 - 1/delta (what pruning a
# linear GEMM would need) and (delta - 1) / (delta + 1) (what balances two
# ranks when the straggler migrates).
# The last line fits the baseline to a line in delta (R^2).
#
# usage: bench/resize-real.sh [build dir]
#   DELTAS="1 2 4 8"   ITERATIONS=12   WARM=4   ROUNDS=1   EPOCH=4
#   EPSILON=5e-4
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh" "$@"
DELTAS="${DELTAS:-1 2 4 8}"
ITERATIONS="${ITERATIONS:-12}"
WARM="${WARM:-4}"
ROUNDS="${ROUNDS:-1}"
EPOCH="${EPOCH:-4}"
EPSILON="${EPSILON:-5e-4}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT


"$BUILD/bin/hetero-gen" gpt --layers 2 --hidden 128 --heads 4 --seq 32 \
  --batch 4 --stages 1 --microbatches 2 --tp 2 --optimizer sgd --lr 0.05 \
  -o "$WORK/gpt.mlir"
"$BUILD/bin/hetero-opt" "$WORK/gpt.mlir" --hetero-derive-backward --hetero-lower-pipeline \
  --hetero-partition-tp --hetero-resize -o "$WORK/resized.mlir"
"$BUILD/bin/hetero-opt" "$WORK/gpt.mlir" --hetero-derive-backward --hetero-lower-pipeline \
  --hetero-partition-tp=migration=true --hetero-resize -o "$WORK/migrated.mlir"
"$BUILD/bin/hetero-opt" "$WORK/gpt.mlir" --hetero-derive-backward --hetero-lower-pipeline \
  --hetero-partition-tp --hetero-resize=priority=true -o "$WORK/priority.mlir"
"$BUILD/bin/hetero-opt" "$WORK/gpt.mlir" --hetero-derive-backward --hetero-lower-pipeline \
  --hetero-partition-tp=migration=true --hetero-resize=priority=true \
  -o "$WORK/migrated-priority.mlir"

run() { # delta, policy -> output file
  local delta=$1 policy=$2 out="$WORK/$1-$2-$3.txt"
  local prune=() module="$WORK/resized.mlir"
  case "$policy" in
    zero-min) prune=(--prune target=min) ;;
    zero-mean) prune=(--prune target=mean) ;;
    zero-pri) prune=(--prune "target=min,epoch=$EPOCH,order=priority")
              module="$WORK/priority.mlir" ;;
    mig) prune=(--prune target=min,policy=migrate)
         module="$WORK/migrated.mlir" ;;
    semi) prune=(--prune target=min,policy=semi)
          module="$WORK/migrated.mlir" ;;
    semi-pri) prune=(--prune "target=min,policy=semi,epoch=$EPOCH,order=priority,epsilon=$EPSILON")
              module="$WORK/migrated-priority.mlir" ;;
  esac
  HETERO_RT_SLOW_GEMM="1:$delta" "${LAUNCH[@]}" -x HETERO_RT_SLOW_GEMM -np 2 \
    "$BUILD/bin/hetero-run" "$module" --iterations "$ITERATIONS" \
    "${prune[@]}" > "$out"
}

# Rounds interleave the deltas and policies, so that load on the machine
# falls on all of them alike.
for round in $(seq 1 "$ROUNDS"); do
  for delta in $DELTAS; do
    for policy in baseline zero-min zero-mean zero-pri mig semi semi-pri; do
      run "$delta" "$policy" "$round"
    done
  done
done

"$PYTHON" - "$WORK" "$WARM" "$ROUNDS" $DELTAS <<'EOF'
import re, statistics, sys
work, warm, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
deltas = [float(d) for d in sys.argv[4:]]

def measure(delta, policy):
    times, alpha = [], None
    for r in range(1, rounds + 1):
        name = f"{work}/{sys.argv[4 + deltas.index(delta)]}-{policy}-{r}.txt"
        for line in open(name):
            m = re.match(r"iteration (\d+): .*, ([0-9.]+) ms", line)
            if m and int(m.group(1)) >= warm:
                times.append(float(m.group(2)))
            if line.startswith("re-sized after iteration"):
                # Rank 1's share: pruned, migrated, or (SEMI) both.
                alpha = sum(float(part.split()[1]) for part in
                            re.findall(r"\w+ = ([0-9. ]+)", line))
    return statistics.median(times), alpha

base = {d: measure(d, "baseline")[0] for d in deltas}
t1 = base[deltas[0]]
for d in deltas:
    line = f"delta {d:g} baseline {base[d]:.1f} ms ratio {base[d] / t1:.3f}"
    for policy in ("zero-min", "zero-mean", "zero-pri", "mig", "semi",
                   "semi-pri"):
        t, alpha = measure(d, policy)
        shown = "none" if alpha is None else f"{alpha:.3f}"
        line += f"; {policy} {t:.1f} ms ratio {t / t1:.3f} alpha {shown}"
    print(line + f" (1 - 1/delta {1 - 1 / d:.3f}, "
                 f"(delta - 1)/(delta + 1) {(d - 1) / (d + 1):.3f})")
n = len(deltas)
if n >= 2:
    mx, my = sum(deltas) / n, sum(base.values()) / n
    sxy = sum((d - mx) * (base[d] - my) for d in deltas)
    sxx = sum((d - mx) ** 2 for d in deltas)
    slope = sxy / sxx
    ss_res = sum((base[d] - (my + slope * (d - mx))) ** 2 for d in deltas)
    ss_tot = sum((base[d] - my) ** 2 for d in deltas)
    r2 = 1 - ss_res / ss_tot if ss_tot > 0 else 1.0
    print(f"baseline linear in delta: {slope:.1f} ms per unit, R^2 {r2:.4f}")
EOF
