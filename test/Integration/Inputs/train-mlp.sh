#!/usr/bin/env bash
# Trains test/Integration/Inputs/mlp-pipeline.mlir in one configuration and
# checks it: the single-process reference step (@mlp_step_reference) against
# an independent NumPy computation, then the distributed step under 1F1B,
# 2F2B and GPipe (k = 4 = M) against the reference.
#
#   train-mlp.sh OUT RANKS SED-EXPRESSION MPIRUN PYTHON INPUTS
#
# HETERO_RUN, when set, is the hetero-run command (the test suite's
# compiles at -O1).
set -euo pipefail
out=$1 ranks=$2 edit=$3 mpirun=$4 python=$5 inputs=$6
steps=5
sed -e "$edit" "$inputs/mlp-pipeline.mlir" > "$out.mlir"
$mpirun -np 1 ${HETERO_RUN:-hetero-run} "$out.mlir" --entry mlp_step_reference \
  --iterations $steps --save "$out.ref" > "$out.ref.txt"
echo "reference against NumPy:"
$python "$inputs/training-reference.py" numpy "$out.mlir" $steps "$out.ref.txt" "$out.ref"
for k in 1 2 4; do
  hetero-opt "$out.mlir" --hetero-kfkb-schedule=group-size=$k -o "$out.k$k.mlir"
  $mpirun -np "$ranks" ${HETERO_RUN:-hetero-run} "$out.k$k.mlir" --iterations $steps \
    --save "$out.k$k" > "$out.k$k.txt"
  echo "k = $k against the reference:"
  $python "$inputs/training-reference.py" runs "$out.k$k.txt" "$out.k$k" \
    "$out.ref.txt" "$out.ref"
done
