#!/usr/bin/env bash
# Every schedule family of hetero-kfkb-schedule on the GPT over RANKS ranks:
# step time, bubble fraction and peak stash per rank, unshaped (shared
# memory) and over a kernel-shaped link (tc tbf on a network namespace's
# loopback, MPI over TCP: bench/shaped-launch.sh), beside the simulator's
# figures for the same schedules and the zero-bubble paper's claim.
#
# The model is one GPT of LAYERS layers: 1F1B runs it as RANKS stages, one
# per rank; the other families as 2 x RANKS stages of half as many layers,
# 2 per rank,
# in a loop (interleaved, looped-bfs, zb1p) or in a V (zbv, dualpipev).
# Every rank holds the same layers in both cuts, and a stash of a stage of
# half the layers holds half the activations: the peak stash per rank, in
# stashed bytes from the lowered step (hetero.peak_stash_bytes), is the
# memory each family needs. The zero-bubble families run I and W as
# separate tasks (hetero-derive-backward{split=true}); the others a whole
# backward.
#
# Figures, per family and link: the median step over ROUNDS rounds (the
# families take turns in each, so the machine's drift reaches them alike)
# of the iterations after the first; its ratio to 1F1B's; the bubble
# fraction of the step's measured timeline (hetero-run --profile-timeline:
# 1 - compute time / (ranks x the span of the compute)); and the
# simulator's iteration and bubble for the family under the costs the 1F1B
# run measured (hetero-sim pipeline, F and B of a stage of half the layers
# half of 1F1B's).
#
# The zero-bubble paper (Qi et al., ICLR 2024) claims up to 23% more
# throughput than 1F1B at similar memory for ZB-H1 (zb1p), and close to
# zero bubble for ZB-V at 1F1B's memory.
#
# Ranks are processes: on a machine of fewer cores than RANKS they share
# cores, and a rank's idle time runs another's tasks, so the measured
# bubble says little there; RANKS=2 on 2 cores measures it.
#
# usage: bench/schedule-families.sh [build dir]
#   RANKS=4  RATE=800 (Mbit/s of the shaped link)  ITERATIONS=6  ROUNDS=3
#   LAYERS=8 HIDDEN=128 SEQ=64 MICROBATCHES=8
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh" "$@"
RANKS="${RANKS:-4}"
RATE="${RATE:-800}"
ITERATIONS="${ITERATIONS:-6}"
ROUNDS="${ROUNDS:-3}"
LAYERS="${LAYERS:-8}"
HIDDEN="${HIDDEN:-128}"
SEQ="${SEQ:-64}"
MICROBATCHES="${MICROBATCHES:-8}"
BIN="$BUILD/bin"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
# shellcheck source=bench/shaped-launch.sh
source "$ROOT/bench/shaped-launch.sh"

gen() { # <name> <hetero-gen placement arguments...>
  local name="$1"
  shift
  "$BIN/hetero-gen" gpt --layers "$LAYERS" --hidden "$HIDDEN" --heads 2 \
    --seq "$SEQ" --batch 1 --microbatches "$MICROBATCHES" --optimizer sgd \
    --lr 0.01 "$@" -o "$WORK/$name.mlir"
}
gen one --stages "$RANKS"
gen loop --stages $((2 * RANKS)) --pipeline-ranks "$RANKS" --placement loop
gen v --stages $((2 * RANKS)) --pipeline-ranks "$RANKS" --placement v

FAMILIES="1f1b interleaved looped-bfs zb1p zbv dualpipev"
model_of() {
  case "$1" in
    1f1b) echo one ;;
    interleaved | looped-bfs | zb1p) echo loop ;;
    *) echo v ;;
  esac
}
split_of() {
  case "$1" in zb1p | zbv | dualpipev) echo true ;; *) echo false ;; esac
}
for family in $FAMILIES; do
  "$BIN/hetero-opt" "$WORK/$(model_of "$family").mlir" \
    --hetero-derive-backward=split="$(split_of "$family")" \
    --hetero-kfkb-schedule=family="$family" --hetero-lower-pipeline \
    -o "$WORK/$family.mlir"
done
echo "model: GPT of $LAYERS layers, hidden $HIDDEN, $SEQ tokens a micro-batch, $MICROBATCHES micro-batches, SGD; $RANKS ranks on $(nproc) cores"

run() { # <link> <family> <round>
  local out="$WORK/$1-$2-$3"
  local args=("$BIN/hetero-run" "$WORK/$2.mlir" --iterations "$ITERATIONS"
              --profile-timeline "$out.json")
  if [[ "$1" == shaped ]]; then
    shaped_mpirun "$RANKS" "${args[@]}" > "$out.txt"
  else
    "${LAUNCH[@]}" -np "$RANKS" "${args[@]}" > "$out.txt"
  fi
}
LINKS=unshaped
[[ "$SHAPED" == 1 ]] && LINKS="unshaped shaped"
for round in $(seq "$ROUNDS"); do
  for link in $LINKS; do
    for family in $FAMILIES; do
      run "$link" "$family" "$round"
    done
  done
done

# One activation message (SEQ x HIDDEN floats) on the shaped link, for the
# simulator; over shared memory, none.
message_ms="$(awk -v b="$((SEQ * HIDDEN * 4))" -v r="$RATE" 'BEGIN {print b * 8 / (r * 1000)}')"
"$PYTHON" "$ROOT/bench/schedule_families.py" "$WORK" "$BIN/hetero-sim" \
  "$RANKS" "$ROUNDS" "$MICROBATCHES" "$LINKS" "unshaped=0,shaped=$message_ms" $FAMILIES
