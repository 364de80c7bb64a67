#!/usr/bin/env bash
# Cupcake's buckets and Espresso's decisions in real runs, beside what the
# timeline oracles predicted for them.
#
# The GPT of hetero-gen on 2 stages x 2 data-parallel replicas (4 ranks),
# 1F1B, lowered with eager-gradient-sync: each stage's last backward posts
# each gradient's all-reduce where it computes it, and the runtime's
# communication thread runs the collectives (compressing them first, for
# compressed ones) while the backward goes on. All ranks share one link
# shaped by the kernel (scripts/shaped-link.sh: tc tbf on a network
# namespace's loopback, MPI over TCP).
#
#  1. Profile: the run with one all-reduce per gradient, measured with
#     --profile-timeline (the mean of the iterations after the first).
#     bench/gradient_oracle.py reads each stage's gradient-ready times (the
#     posts), its last backward, and the link (alpha + beta x bytes, fitted
#     to the communication thread's runs) into the profiles of
#     hetero-fuse-gradients and hetero-select-compression; the link all
#     stages share has the beta of the shaped rate (2 bytes on the wire a
#     byte all-reduced by 2 ranks) and the alpha that ends the profiled
#     run's gradient phases where they ended.
#  2. The configurations, each a pass over the same lowered step:
#     per-tensor; cupcake (hetero-fuse-gradients{profile=}, the optimal
#     buckets for the measured costs); ddp-25mb (strategy=size); one-bucket
#     (strategy=one); espresso (hetero-select-compression{profile=}, topk
#     1% where it pays, placement = cpu); compressed (strategy=compressed:
#     one option for all).
#  3. Each runs and is measured the same way, ROUNDS times in rounds that
#     interleave the configurations (the per-tensor runs come first, and
#     the profile is the one of median iteration), so that the machine's
#     drifts reach every configuration alike; the report gives its
#     iteration (the median round's mean trace extent) beside the oracle's
#     prediction for that run (hetero-sim fusion / espresso on the profile
#     moved onto the run's own compute timeline: each stage's gradient
#     phase, plus the run's compute after it), and the ratio to
#     per-tensor.
#
# usage: bench/gradient-overlap.sh [build dir]
#   RATE=100 (Mbit/s)  ITERATIONS=8  ROUNDS=5  LAYERS=4 HIDDEN=64 SEQ=32
#   BATCH=4
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh" "$@"
RATE="${RATE:-100}"
ITERATIONS="${ITERATIONS:-8}"
ROUNDS="${ROUNDS:-5}"
LAYERS="${LAYERS:-4}"
HIDDEN="${HIDDEN:-64}"
SEQ="${SEQ:-32}"
BATCH="${BATCH:-4}"
BIN="$BUILD/bin"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# shellcheck source=bench/shaped-launch.sh
source "$ROOT/bench/shaped-launch.sh"

run() { # <name> <module>
  local args=("$BIN/hetero-run" "$2" --entry gpt_step
              --iterations "$ITERATIONS" --profile-timeline "$WORK/$1.json")
  shaped_mpirun 4 "${args[@]}" > "$WORK/$1.txt"
}

"$BIN/hetero-gen" gpt --layers "$LAYERS" --hidden "$HIDDEN" --heads 2 \
  --seq "$SEQ" --batch "$BATCH" --stages 2 --microbatches 4 --dp 2 \
  -o "$WORK/gpt.mlir"
"$BIN/hetero-opt" "$WORK/gpt.mlir" --hetero-derive-backward --hetero-kfkb-schedule=group-size=1 \
  --hetero-lower-pipeline=eager-gradient-sync -o "$WORK/per-tensor.mlir"
echo "model: $LAYERS layers of hidden $HIDDEN, $BATCH x $SEQ tokens a micro-batch, 4 micro-batches, 1F1B, $ITERATIONS iterations"

traces() { # <name>: its rounds' traces, comma-separated
  local list=() round
  for round in $(seq "$ROUNDS"); do list+=("$WORK/$1-$round.json"); done
  (IFS=,; echo "${list[*]}")
}
for round in $(seq "$ROUNDS"); do
  run "per-tensor-$round" "$WORK/per-tensor.mlir"
done
"$PYTHON" "$ROOT/bench/gradient_oracle.py" median "$(traces per-tensor)" \
  > "$WORK/profiled"
# On the shaped link the shared link's beta is what the rate gives; over
# shared memory it is fitted with alpha.
linkrate=()
[[ "$SHAPED" == 1 ]] && linkrate=("$RATE")
"$PYTHON" "$ROOT/bench/gradient_oracle.py" profiles "$(cat "$WORK/profiled")" \
  2 2 "$WORK/fusion-profile.json" "$WORK/espresso-profile.json" \
  "$BIN/hetero-sim" "${linkrate[@]}"

opt() { # <name> <pass>
  "$BIN/hetero-opt" "$WORK/per-tensor.mlir" "$2" -o "$WORK/$1.mlir"
}
opt cupcake "--hetero-fuse-gradients=profile=$WORK/fusion-profile.json"
opt ddp-25mb "--hetero-fuse-gradients=strategy=size bucket-mb=25"
opt one-bucket "--hetero-fuse-gradients=strategy=one"
opt espresso "--hetero-select-compression=profile=$WORK/espresso-profile.json compressor=topk ratio=0.01"
opt compressed "--hetero-select-compression=profile=$WORK/espresso-profile.json compressor=topk ratio=0.01 strategy=compressed"
echo "cupcake: $(grep -c 'hetero.bucket' "$WORK/cupcake.mlir") buckets; espresso: $(grep -c 'compress <' "$WORK/espresso.mlir") of $(grep -c 'hetero.all_reduce' "$WORK/espresso.mlir") all-reduces compressed"

configurations=(cupcake ddp-25mb one-bucket espresso compressed)
for round in $(seq "$ROUNDS"); do
  for name in "${configurations[@]}"; do
    run "$name-$round" "$WORK/$name.mlir"
  done
done
pairs=("per-tensor=$(traces per-tensor)" "dense=$(traces per-tensor)")
for name in "${configurations[@]}"; do
  pairs+=("$name=$(traces "$name")")
done
"$PYTHON" "$ROOT/bench/gradient_oracle.py" report "$BIN/hetero-sim" \
  "$(cat "$WORK/profiled")" 2 2 "$WORK/fusion-profile.json" \
  "$WORK/espresso-profile.json" "${pairs[@]}"
