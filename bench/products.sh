#!/usr/bin/env bash
# The products of hetero's GPT step against OpenBLAS on the same shapes.
#
# For the GPT of hetero-gen at the sizes of bench/step-vs-pytorch.sh
# (demo: 2 layers, hidden 64, 4 heads, sequence 32; medium: 4, 256, 8, 128;
# large: 6, 768, 12, 256), hetero-run trains the single-process reference
# step (--entry gpt_step_reference, one thread) with --blas-profile: every
# product of the iterations after the first is timed by shape, and the
# run prints the products' share of the step and their rate. Then
# bench-blas-shapes replays each shape with cblas_sgemm called directly in a
# loop (the best OpenBLAS does on that shape) and prints the step's products
# as a share of that rate, and of OpenBLAS's rate on a 1024^3 product.
#
# usage: bench/products.sh [build dir]     SIZES=demo,medium,large  STEPS
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh" "$@"
SIZES="${SIZES:-demo,medium,large}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export OPENBLAS_NUM_THREADS=1

# name: layers hidden heads seq batch microbatches steps
declare -A SHAPES=(
  [demo]="2 64 4 32 2 4 20"
  [medium]="4 256 8 128 2 4 4"
  [large]="6 768 12 256 1 2 3"
)
for size in ${SIZES//,/ }; do
  read -r layers hidden heads seq batch microbatches steps <<< "${SHAPES[$size]}"
  steps="${STEPS:-$steps}"
  echo "== $size: $layers layers, hidden $hidden, $heads heads, sequence $seq"
  "$BUILD/bin/hetero-gen" gpt --vocab 80 --layers "$layers" --hidden "$hidden" \
    --heads "$heads" --seq "$seq" --batch "$batch" --stages 2 --dp 2 \
    --microbatches "$microbatches" -o "$WORK/$size.mlir"
  "${LAUNCH[@]}" -np 1 "$BUILD/bin/hetero-run" "$WORK/$size.mlir" \
    --entry gpt_step_reference --iterations "$steps" \
    --blas-profile "$WORK/$size.tsv" | grep "^products:"
  "$BUILD/bin/bench-blas-shapes" "$WORK/$size.tsv" | tail -3
done
