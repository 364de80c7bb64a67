#!/usr/bin/env bash
# Imports every model of DIR (test/Import/Inputs/ops, written by
# make-ops.py), runs one reference step of each with hetero-run and
# compares its loss with DIR/expected.txt (NumPy's value): within 1e-5 of
# the sum of the probes' magnitudes.
#   check-ops.sh DIR OUT
# MPIRUN and PYTHON name the launcher and the interpreter, HETERO_RUN
# (optional) hetero-run with its flags.
set -euo pipefail
dir=$1 out=$2
mkdir -p "$out"
while read -r name expected scale; do
  hetero-import-onnx "$dir/$name.onnx" --data "npy:$dir" --microbatches 1 \
    -o "$out/$name.mlir"
  # shellcheck disable=SC2086 # MPIRUN is a command and its options
  $MPIRUN -np 1 ${HETERO_RUN:-hetero-run} "$out/$name.mlir" --entry train_step_reference \
    --iterations 1 < /dev/null > "$out/$name.txt"
  "$PYTHON" - "$name" "$expected" "$scale" "$out/$name.txt" <<'PY'
import re, sys
name, expected, scale, path = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
match = re.search(r"^iteration 0: loss (\S+),", open(path).read(), re.M)
got = float(match.group(1)) if match else float("nan")
ok = abs(got - expected) <= 1e-5 * scale
print(f"{name}: {'agrees' if ok else 'MISMATCH'}: {got!r} against NumPy's {expected!r}")
sys.exit(0 if ok else 1)
PY
done < "$dir/expected.txt"
