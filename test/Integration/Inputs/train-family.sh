#!/usr/bin/env bash
# Schedules a model with one family and trains it against a reference run:
#   train-family.sh RANKS MODEL DERIVE FAMILY K OUT REFERENCE
# derives MODEL's backward (DERIVE: hetero-derive-backward's options),
# schedules it with hetero-kfkb-schedule{family=FAMILY group-size=K} into
# OUT.mlir, trains it on RANKS ranks for as many steps as REFERENCE.txt
# has, saving OUT/, and compares losses and parameters with REFERENCE.txt
# and REFERENCE/ (training-reference.py runs). MPIRUN and PYTHON name the
# launcher and the interpreter; HETERO_RUN, when set, is the hetero-run
# command (the test suite's compiles at -O1, as its reference runs do).
set -euo pipefail
ranks=$1 model=$2 derive=$3 family=$4 k=$5 out=$6 reference=$7
steps=$(grep -c '^iteration' "$reference.txt")
hetero-opt "$model" --hetero-derive-backward="$derive" \
  --hetero-kfkb-schedule="family=$family group-size=$k" -o "$out.mlir"
rm -rf "$out"
# shellcheck disable=SC2086 # MPIRUN is a command and its options
$MPIRUN -np "$ranks" ${HETERO_RUN:-hetero-run} "$out.mlir" --iterations "$steps" \
  --save "$out" > "$out.txt"
"$PYTHON" "$(dirname "$0")/training-reference.py" runs "$out.txt" "$out" \
  "$reference.txt" "$reference"
