#!/usr/bin/env bash
# SDPipe against All-Reduce in real runs: the hand-written MLP
# (test/Integration/Inputs/mlp-pipeline.mlir) trained by hetero-run on
# stages x pipelines MPI ranks, with `sync #hetero.sync<policy = dynamic>`
# against `policy = allreduce`, under sleep-emulated compute
# (HETERO_RT_COMPUTE: F = 10 ms, B = 20 ms per task, so the cores stay free
# for communication and the coordinator). Under hete-B a task also sleeps
# h = 2.3 homogeneous iterations (one step: the interval between a worker's
# syncs) with probability 0.1.
#
# Every figure comes from runs of this script: the homogeneous All-Reduce
# run gives the iteration time h is made of, then each configuration runs
# every policy with the same seeds. Each ratio is printed beside hetero-sim's
# for the same mesh, step and measured costs (--step-microbatches: a step
# of M micro-batches and a flush, one sync per step), and the issue's bands:
#   hete-B: SDPipe / All-Reduce >= 1.3;  homogeneous: within [0.95, 1.10];
#   real / simulated ratio within 15%.
#
# usage: bench/sdpipe-real.sh [build dir]
#   CONFIGS="2x2 2x4"  ITERATIONS=31 (the first warms up)  SEEDS="1 2 3"
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh" "$@"
CONFIGS="${CONFIGS:-2x2 2x4}"
ITERATIONS="${ITERATIONS:-31}"
SEEDS="${SEEDS:-1 2 3}"
MICRO=4
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT


model() { # stages x pipelines, policy -> file
  local pipelines=$1 policy=$2 out="$WORK/$1-$2.mlir"
  sed -e "s/shape = 2x2/shape = 2x$pipelines/" \
      -e "s/optimizer #hetero.sgd<lr = 5.0e-02>/optimizer #hetero.sgd<lr = 5.0e-02> sync #hetero.sync<policy = $policy>/" \
      "$ROOT/test/Integration/Inputs/mlp-pipeline.mlir" > "$out"
  echo "$out"
}

# Real throughput (micro-batches/s) of one run.
real() { # pipelines policy compute
  HETERO_RT_COMPUTE=$3 HETERO_RT_TIMEOUT=300 "${LAUNCH[@]}" \
    -x HETERO_RT_COMPUTE -x HETERO_RT_TIMEOUT -np $((2 * $1)) \
    "$BUILD/bin/hetero-run" "$(model "$1" "$2")" --iterations "$ITERATIONS" \
    --throughput | awk '/^throughput:/ {print $2}'
}

# Simulated throughput, mean of the seeds.
simulated() { # pipelines policy het
  local sum=0 t
  for seed in $SEEDS; do
    t=$("$BUILD/bin/hetero-sim" sdpipe --stages 2 --pipelines "$1" \
        --microbatches $((MICRO * 80)) --step-microbatches $MICRO \
        --sync-every $MICRO --forward-ms 10 --backward-ms 20 \
        --heterogeneity "$3" --policy "$2" --seed "$seed" \
        --stage-mb 0.001 --bandwidth-gbps 1 --latency-ms 0.05 \
        --p2p-ms 0.1 --rpc-ms 0.2 | awk '/^throughput:/ {print $2}')
    sum=$(awk -v a="$sum" -v b="$t" 'BEGIN {print a + b}')
  done
  awk -v s="$sum" -v n="$(wc -w <<<"$SEEDS")" 'BEGIN {print s / n}'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }

printf '%-5s %-4s %11s %11s %7s %7s %9s\n' config het allreduce sdpipe real sim real/sim
for config in $CONFIGS; do
  pipelines=${config#*x}
  # The homogeneous step: M micro-batches of each of N pipelines.
  base=$(real "$pipelines" allreduce 10,20)
  step_ms=$(awk -v t="$base" -v n="$pipelines" -v m=$MICRO \
            'BEGIN {print 1000 * n * m / t}')
  h=$(awk -v s="$step_ms" 'BEGIN {printf "%.1f", 2.3 * s}')
  for het in none B; do
    ar=0 sd=0
    for seed in $SEEDS; do
      compute=10,20
      [[ $het == B ]] && compute="10,20,$h,0.1,$seed"
      ar=$(awk -v a="$ar" -v b="$(real "$pipelines" allreduce "$compute")" 'BEGIN {print a + b}')
      sd=$(awk -v a="$sd" -v b="$(real "$pipelines" dynamic "$compute")" 'BEGIN {print a + b}')
    done
    sim=$(ratio "$(simulated "$pipelines" sdpipe "$het")" \
                "$(simulated "$pipelines" allreduce "$het")")
    real_ratio=$(ratio "$sd" "$ar")
    n=$(wc -w <<<"$SEEDS")
    printf '%-5s %-4s %11.2f %11.2f %7s %7s %9s\n' "$config" "$het" \
      "$(awk -v s="$ar" -v n="$n" 'BEGIN {print s / n}')" \
      "$(awk -v s="$sd" -v n="$n" 'BEGIN {print s / n}')" \
      "$real_ratio" "$sim" "$(ratio "$real_ratio" "$sim")"
  done
  echo "       (h = $h ms: 2.3 x the homogeneous step of $step_ms ms)"
done
echo "bands: hete-B SDPipe/All-Reduce >= 1.3; homogeneous in [0.95, 1.10]; real/sim in [0.85, 1.15]"
