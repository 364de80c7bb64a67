#!/usr/bin/env bash
# The convergence analogue of SDPipe's time-to-accuracy: the hand-written
# MLP (test/Integration/Inputs/mlp-pipeline.mlir) on 2 stages x N pipelines
# under hete-B (HETERO_RT_COMPUTE: F = 10, B = 20 ms per task, and
# h = 2.3 homogeneous steps with probability 0.1), with
# `sync #hetero.sync<policy = allreduce>` and `policy = dynamic`.
#
# The target is the loss the all-reduce run reaches after K steps. The
# data set is fixed (every step sees the same micro-batches), and a loss is
# the mean loss of the saved parameters (replica 0's) on all of it, computed
# by the single-process reference step (--entry mlp_step_reference --load). Each run's wall time
# is its iterations at the throughput hetero-run --throughput measured.
# SDPipe runs K' = 4, 6, ... steps, and the first K' that reaches the
# target gives its time to it. Both runs use the same straggler seed.
#
# usage: bench/sdpipe-convergence.sh [build dir]
#   PIPELINES=4  STEPS=10 (K)  SEED=1
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh" "$@"
PIPELINES="${PIPELINES:-4}"
STEPS="${STEPS:-10}"
SEED="${SEED:-1}"
MICRO=4
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT


# The data of a step stays the same from step to step (the phases that
# move with the step are zeroed): a fixed data set of every replica's
# micro-batches, whose loss both runs minimise.
for policy in allreduce dynamic; do
  sed -e "s/shape = 2x2/shape = 2x$PIPELINES/" \
      -e "s/%c017 = arith.constant 0.17 : f32/%c017 = arith.constant 0.0 : f32/" \
      -e "s/%c011 = arith.constant 0.11 : f32/%c011 = arith.constant 0.0 : f32/" \
      -e "s/optimizer #hetero.sgd<lr = 5.0e-02>/optimizer #hetero.sgd<lr = 5.0e-02> sync #hetero.sync<policy = $policy>/" \
      "$ROOT/test/Integration/Inputs/mlp-pipeline.mlir" > "$WORK/$policy.mlir"
done

# Trains `policy` for `steps` steps; prints "<loss> <seconds>".
train() { # policy steps compute
  local dir="$WORK/$1-$2" rate loss
  rate=$(HETERO_RT_COMPUTE=$3 HETERO_RT_TIMEOUT=300 "${LAUNCH[@]}" \
         -x HETERO_RT_COMPUTE -x HETERO_RT_TIMEOUT -np $((2 * PIPELINES)) \
         "$BUILD/bin/hetero-run" "$WORK/$1.mlir" --iterations "$2" \
         --throughput --save "$dir" | awk '/^throughput:/ {print $2}')
  loss=$("${LAUNCH[@]}" -np 1 "$BUILD/bin/hetero-run" "$WORK/$1.mlir" \
         --entry mlp_step_reference --load "$dir" |
         sed -n 's/^iteration 0: loss \([^,]*\),.*/\1/p')
  awk -v l="$loss" -v t="$rate" -v k="$2" -v n="$PIPELINES" -v m=$MICRO \
    'BEGIN {printf "%s %.3f\n", l, k * n * m / t}'
}

base=$(HETERO_RT_COMPUTE=10,20 "${LAUNCH[@]}" -x HETERO_RT_COMPUTE \
       -np $((2 * PIPELINES)) "$BUILD/bin/hetero-run" "$WORK/allreduce.mlir" \
       --iterations 11 --throughput | awk '/^throughput:/ {print $2}')
h=$(awk -v t="$base" -v n="$PIPELINES" -v m=$MICRO \
    'BEGIN {printf "%.1f", 2.3 * 1000 * n * m / t}')
compute="10,20,$h,0.1,$SEED"
echo "2 x $PIPELINES, hete-B: h = $h ms (2.3 homogeneous steps), seed $SEED"

read -r target target_s <<<"$(train allreduce "$STEPS" "$compute")"
printf '%-10s %6s %10s %9s\n' policy steps loss seconds
printf '%-10s %6s %10s %9s\n' allreduce "$STEPS" "$target" "$target_s"
reached=""
for steps in $(seq 4 2 $((STEPS + 10))); do
  read -r loss seconds <<<"$(train dynamic "$steps" "$compute")"
  printf '%-10s %6s %10s %9s\n' sdpipe "$steps" "$loss" "$seconds"
  if awk -v a="$loss" -v b="$target" 'BEGIN {exit !(a <= b)}'; then
    reached="$seconds"
    break
  fi
done
if [[ -n $reached ]]; then
  awk -v a="$target_s" -v b="$reached" -v l="$target" 'BEGIN {
    printf "SDPipe reaches the all-reduce loss %s in %.1f s against %.1f s: %.2fx less wall time\n", l, b, a, a / b }'
else
  echo "SDPipe does not reach the all-reduce loss $target within $((STEPS + 10)) steps"
fi
