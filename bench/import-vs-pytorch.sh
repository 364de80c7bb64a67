#!/usr/bin/env bash
# A PyTorch model brought to hetero through ONNX, trained against PyTorch
# training the same model.
#
# examples/onnx/export.py's TinyLM (a 2-layer pre-LN transformer language
# model that computes its own loss; vocabulary 80, 2 heads) is exported
# with torch.onnx.export (opset 17, constant folding) and imported with
# hetero-import-onnx (Adam, lr LR, M micro-batches of B sequences); then,
# from the same initial parameters (the ONNX file's initializers are the
# PyTorch model's, both built from torch.manual_seed(0)) and on the same
# corpus windows, STEPS steps of:
#   pytorch    bench/import_torch.py: the model in PyTorch, one process
#   reference  hetero-run --entry train_step_reference on 1 rank: the
#              imported module's single-process step, its backward derived
#              by hetero-derive-backward (residuals=save)
#   ranks      the module cut into 2 stages by hetero-partition-stages
#              (imported with --dp 2), on 4 MPI ranks: 2 stages x 2
#              replicas, 1F1B; PyTorch's run for it trains 2 replicas'
#              windows (bench/import_torch.py --dp 2)
# one thread a process, the kinds alternated in each of ROUNDS rounds.
# Prints per size the median step time (the first step left out) of each,
# hetero's over PyTorch's (below 1: hetero is faster), and checks that every
# step's loss agrees with PyTorch's within 1e-4 (relative).
#
# usage: bench/import-vs-pytorch.sh [build dir]
#   SIZES=small,medium  STEPS=20  ROUNDS=2  LR=0.001
#   WORK (kept when given; else a temporary directory)
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh" "$@"
SIZES="${SIZES:-small,medium}"
STEPS="${STEPS:-20}"
ROUNDS="${ROUNDS:-2}"
LR="${LR:-0.001}"
work_dir
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
need_torch

# name: hidden seq batch microbatches
declare -A SHAPES=([small]="32 16 4 4" [medium]="128 64 4 4")

IFS=, read -r -a sizes <<< "$SIZES"
for size in "${sizes[@]}"; do
  if [[ -z "${SHAPES[$size]:-}" ]]; then
    echo "unknown size '$size' in SIZES (small, medium)" >&2
    exit 1
  fi
  read -r hidden seq batch microbatches <<< "${SHAPES[$size]}"
  dir="$WORK/$size"
  mkdir -p "$dir"
  echo "$hidden $seq $batch $microbatches" > "$dir/shape"
  "$PYTHON" "$ROOT/examples/onnx/export.py" "$dir/onnx" --hidden "$hidden" \
    --seq "$seq" --batch "$batch" > /dev/null
  common=(--microbatches "$microbatches" --optimizer adam --lr "$LR")
  "$BUILD/bin/hetero-import-onnx" "$dir/onnx/tiny-lm.onnx" "${common[@]}" \
    -o "$dir/one.mlir"
  "$BUILD/bin/hetero-import-onnx" "$dir/onnx/tiny-lm.onnx" "${common[@]}" \
    --dp 2 -o "$dir/dp.mlir"
  "$BUILD/bin/hetero-opt" "$dir/dp.mlir" --mlir-print-op-on-diagnostic=false \
    --hetero-partition-stages=stages=2 -o "$dir/cut.mlir" 2> "$dir/cut.txt"
  echo "$size: hidden $hidden, sequence $seq, $microbatches micro-batches of" \
    "$batch sequences; $STEPS steps x $ROUNDS rounds"
  torch=("$PYTHON" "$ROOT/bench/import_torch.py" --hidden "$hidden" --seq "$seq"
    --batch "$batch" --microbatches "$microbatches" --lr "$LR"
    --iterations "$STEPS" --threads 1)
  for round in $(seq "$ROUNDS"); do
    "${torch[@]}" > "$dir/pytorch-$round.txt"
    "${torch[@]}" --dp 2 > "$dir/pytorch-dp-$round.txt"
    "${LAUNCH[@]}" -np 1 "$BUILD/bin/hetero-run" "$dir/one.mlir" \
      --entry train_step_reference --residuals save --iterations "$STEPS" \
      > "$dir/reference-$round.txt"
    "${LAUNCH[@]}" -np 4 "$BUILD/bin/hetero-run" "$dir/cut.mlir" \
      --residuals save --iterations "$STEPS" > "$dir/ranks-$round.txt"
  done
done

"$PYTHON" - "$WORK" "$ROUNDS" "$ROOT/bench" "$SIZES" <<'PY'
import sys
work, rounds = sys.argv[1], int(sys.argv[2])
sys.path.insert(0, sys.argv[3])
from step_times import compare_losses, losses, median_ms

TOLERANCE = 1e-4
# kind, label, the PyTorch run it is compared with
KINDS = [("pytorch", "pytorch (1 process)", "pytorch"),
         ("reference", "hetero reference step (1 rank)", "pytorch"),
         ("pytorch-dp", "pytorch, 2 replicas' windows", "pytorch-dp"),
         ("ranks", "hetero 2 stages x 2 replicas (4 ranks)", "pytorch-dp")]

ok = True
for size in sys.argv[4].split(","):
    d = f"{work}/{size}"
    hidden, seq, batch, microbatches = map(int, open(f"{d}/shape").read().split())
    print(f"\n== {size}: TinyLM, 2 layers, hidden {hidden}, 2 heads, "
          f"sequence {seq}, vocabulary 80; {microbatches} x {batch} sequences "
          f"a step (x 2 replicas in the 4-rank rows)")
    times = {kind: median_ms(d, kind, 1, rounds) for kind, _, _ in KINDS}
    for kind, label, base in KINDS:
        line = f"   {label:42s} {times[kind]:9.2f} ms a step"
        if kind != base:
            line += f"  / pytorch's {times[kind] / times[base]:.3f}"
        print(line)
    agree, worst, count = compare_losses(
        d, [(kind, base) for kind, _, base in KINDS], rounds, TOLERANCE)
    ok &= agree
    first = losses(d, "pytorch", 1)
    print(f"   losses {first[0]:.4f} -> {first[-1]:.4f}; {count} losses agree with "
          f"PyTorch's within {worst:.1e} relative (tolerance {TOLERANCE:g})"
          if agree else "   losses do NOT agree")
sys.exit(0 if ok else 1)
PY
