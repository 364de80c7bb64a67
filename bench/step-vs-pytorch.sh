#!/usr/bin/env bash
# hetero's GPT training step against the same model trained in PyTorch.
#
# The GPT of hetero-gen at three sizes (vocabulary 80 each):
#   demo    2 layers, hidden  64,  4 heads, sequence  32  (scripts/demo.sh)
#   medium  4 layers, hidden 256,  8 heads, sequence 128
#   large   6 layers, hidden 768, 12 heads, sequence 256
# trained with Adam (lr LR) on the GPL-3 text for STEPS steps, three ways:
#   reference  hetero-run --entry gpt_step_reference on 1 rank: the
#              single-process step (every replica's micro-batches in turn
#              through every stage and back, one optimizer update), the
#              stage backwards derived by hetero-derive-backward with
#              re-computed residuals (hetero-run's default)
#   saved      the same reference step with saved residuals (hetero-run
#              --residuals save: no forward is re-computed)
#   ranks      hetero-run's step on 4 MPI ranks: 2 pipeline stages x 2
#              data-parallel replicas, 1F1B (hetero-lower-pipeline's
#              default schedule)
#   pytorch    bench/gpt_torch.py: the same model in PyTorch, one process
# all with one thread a process (torch.set_num_threads(1); hetero-run's
# BLAS products use one thread by default; OMP_NUM_THREADS and
# OPENBLAS_NUM_THREADS are 1 for both), and the three alternated in each of
# ROUNDS rounds so that the machine's drift reaches all alike. The 4-rank
# run wants 4 cores; with fewer its ranks share them. Its step time is the
# one rank 0 prints (each rank times its own steps; rank 0, stage 0 of
# replica 0, ends a step with the last backward and the all-reduce).
#
# The same model and the same batches: hetero-gen emits one module
# (--stages 2 --dp 2 --microbatches M --batch B) that both hetero runs
# train; its initial parameters come from `hetero-run --iterations 0
# --save`, and gpt_torch.py loads those .npy files. A step's batch is the
# 2 x M x B sequences of SEQ tokens that hetero.corpus_batch hands replica
# r < 2, micro-batch m < M, sequence s < B (hetero's step: each replica's M
# micro-batches of B sequences; the reference: all 2 x M of them in turn);
# gpt_torch.py reproduces the runtime's window sampling
# (runtime/Corpus.cpp) and trains on all of them as one batch in that
# order. Per size (sequences = 2 replicas x M micro-batches x B):
#   demo    B 2, M 4: 16 sequences x  32 =  512 tokens a step
#   medium  B 2, M 4: 16 sequences x 128 = 2048 tokens a step
#   large   B 1, M 2:  4 sequences x 256 = 1024 tokens a step
#
# Prints, per size and way, tokens/s (tokens a step over the median step
# time of all rounds, the first step of each run left out as warm-up: it
# includes first touches and, in PyTorch, the allocator's warm-up), the
# step time over PyTorch's (below 1: hetero is faster), and the achieved
# FLOP rate; checks that the losses of every step of every run agree with
# PyTorch's within 1e-4 (relative), and shows how far the trained
# parameters of the first round differ (in units of lr: Adam's step moves an
# element by about lr, however small its gradient, so rounding in near-zero
# gradients shows in full there).
#
# FLOPs (the report's comment gives the formula) are the model's: forward
# matmuls 2 M N K, backward twice the forward, the same count for both
# sides. hetero's default backward recomputes its stage's forward (no
# activations are kept between a stage's forward and backward), so it
# executes about 4 forwards' worth a step; the report shows that rate too.
# With saved residuals it executes 3, as PyTorch does.
#
# PyTorch is Debian's python3-torch with libopenblas0-pthread; the script
# installs them with apt-get when they are missing (nothing else needs
# them).
#
# usage: bench/step-vs-pytorch.sh [build dir]
#   SIZES=demo,medium,large  STEPS (default: demo 10, medium 5, large 3)
#   ROUNDS=2  LR=0.003  CORPUS=/usr/share/common-licenses/GPL-3
#   WORK (kept when given; else a temporary directory)
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh" "$@"
SIZES="${SIZES:-demo,medium,large}"
ROUNDS="${ROUNDS:-2}"
LR="${LR:-0.003}"
CORPUS="${CORPUS:-/usr/share/common-licenses/GPL-3}"
work_dir
# One thread a process, for BLAS and OpenMP alike.
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1

need_torch

# name: layers hidden heads seq batch microbatches default-steps
declare -A SHAPES=(
  [demo]="2 64 4 32 2 4 10"
  [medium]="4 256 8 128 2 4 5"
  [large]="6 768 12 256 1 2 3"
)

# run KIND ROUND: one run into $dir/KIND-ROUND.txt; the first round's also
# save their trained parameters into $dir/trained-KIND.
run() {
  local save=()
  if (($2 == 1)); then save=(--save "$dir/trained-$1"); fi
  case $1 in
    reference)
      "${LAUNCH[@]}" -np 1 "$BUILD/bin/hetero-run" "$dir/gpt.mlir" \
        --entry gpt_step_reference --corpus "$CORPUS" \
        --iterations "$steps" "${save[@]}" ;;
    saved)
      "${LAUNCH[@]}" -np 1 "$BUILD/bin/hetero-run" "$dir/gpt.mlir" \
        --residuals save --entry gpt_step_reference --corpus "$CORPUS" \
        --iterations "$steps" "${save[@]}" ;;
    ranks)
      "${LAUNCH[@]}" -np 4 "$BUILD/bin/hetero-run" "$dir/gpt.mlir" \
        --corpus "$CORPUS" --iterations "$steps" "${save[@]}" ;;
    pytorch)
      "$PYTHON" "$ROOT/bench/gpt_torch.py" --params "$dir/initial" \
        --corpus "$CORPUS" --vocab 80 --layers "$layers" --hidden "$hidden" \
        --heads "$heads" --seq "$seq" --batch "$batch" \
        --microbatches "$microbatches" --dp 2 --lr "$LR" \
        --iterations "$steps" --threads 1 "${save[@]}" ;;
  esac > "$dir/$1-$2.txt"
}

IFS=, read -r -a sizes <<< "$SIZES"
for size in "${sizes[@]}"; do
  if [[ -z "${SHAPES[$size]:-}" ]]; then
    echo "unknown size '$size' in SIZES (demo, medium, large)" >&2
    exit 1
  fi
  read -r layers hidden heads seq batch microbatches steps <<< "${SHAPES[$size]}"
  steps="${STEPS:-$steps}"
  if ((steps < 2)); then
    echo "STEPS must be at least 2 (the first step is a warm-up)" >&2
    exit 1
  fi
  dir="$WORK/$size"
  mkdir -p "$dir"
  echo "$layers $hidden $heads $seq $batch $microbatches" > "$dir/shape"
  "$BUILD/bin/hetero-gen" gpt --vocab 80 --layers "$layers" \
    --hidden "$hidden" --heads "$heads" --seq "$seq" --batch "$batch" \
    --stages 2 --microbatches "$microbatches" --dp 2 --optimizer adam \
    --lr "$LR" -o "$dir/gpt.mlir"
  # The module's initial parameters, for PyTorch.
  "${LAUNCH[@]}" -np 1 "$BUILD/bin/hetero-run" "$dir/gpt.mlir" \
    --entry gpt_step_reference --corpus "$CORPUS" --iterations 0 \
    --save "$dir/initial" > /dev/null
  echo "$size: $layers layers, hidden $hidden, $heads heads, sequence $seq;" \
    "$((2 * microbatches * batch)) sequences a step; $steps steps x $ROUNDS rounds"
  for round in $(seq "$ROUNDS"); do
    for kind in reference saved ranks pytorch; do run "$kind" "$round"; done
  done
done

"$PYTHON" - "$WORK" "$ROUNDS" "$ROOT/bench" "$SIZES" "$LR" <<'PY'
import pathlib, re, sys
import numpy as np
work, rounds, lr = sys.argv[1], int(sys.argv[2]), float(sys.argv[5])
sys.path.insert(0, sys.argv[3])
from step_times import compare_losses, losses, median_ms

VOCAB, REPLICAS, TOLERANCE = 80, 2, 1e-4
KINDS = [("pytorch", "pytorch (1 process)", 1),
         ("reference", "hetero reference step (1 rank)", 1),
         ("saved", "hetero reference, saved residuals", 1),
         ("ranks", "hetero 2 stages x 2 replicas (4 ranks)", 4)]


def forward_flops(layers, hidden, seq, tokens):
    """Model FLOPs of one forward pass over `tokens` tokens (sequences of
    `seq`), counting the matrix products only, 2 M N K each:
      per layer  qkv 2 T H 3H + attn_out 2 T H H + mlp_up 2 T H 4H
                 + mlp_down 2 T 4H H = 24 T H^2,
                 scores q k^T 2 T S H + probs v 2 T S H = 4 T S H
                 (the full S x S products, as both sides compute them;
                 causal masking is not subtracted)
      head       2 T H V
    The embedding is a lookup (hetero's one-hot product, 2 T V H, is not
    counted). A step is forward + backward = 3 x forward (the backward of
    a product is two products of its size); hetero's backward recomputes
    the forward, so it executes about 4 x forward."""
    t = tokens
    return layers * (24 * t * hidden**2 + 4 * t * seq * hidden) \
        + 2 * t * hidden * VOCAB


def parameter_difference(a_dir, b_dir):
    """The largest |a - b| over the elements of all parameters."""
    return max(np.max(np.abs(np.load(pathlib.Path(a_dir) / path.name)
                             .astype(np.float64) - np.load(path)))
               for path in pathlib.Path(b_dir).glob("*.npy"))

ok = True
for size in sys.argv[4].split(","):
    d = f"{work}/{size}"
    layers, hidden, heads, seq, batch, microbatches = map(
        int, open(f"{d}/shape").read().split())
    sequences = REPLICAS * microbatches * batch
    tokens = sequences * seq
    forward = forward_flops(layers, hidden, seq, tokens)
    print(f"\n== {size}: {layers} layers, hidden {hidden}, {heads} heads, "
          f"sequence {seq}, vocabulary {VOCAB}")
    print(f"   a step: {sequences} sequences ({REPLICAS} replicas x "
          f"{microbatches} micro-batches x {batch}) x {seq} = {tokens} tokens; "
          f"model FLOPs 3 x forward = {3 * forward / 1e9:.3f} GFLOP "
          f"(hetero executes 4 x forward = {4 * forward / 1e9:.3f}: its "
          f"backward recomputes the forward)")
    base = None
    for kind, label, ranks in KINDS:
        ms = median_ms(d, kind, 1, rounds)
        rate = tokens / ms * 1e3
        model = 3 * forward / ms * 1e3 / 1e9
        line = (f"   {label:40s} {rate:10.0f} tokens/s  ({ms:9.1f} ms a step)  "
                f"{model:7.2f} GFLOP/s")
        if kind == "saved":
            line += f"  step time / pytorch's {ms / base:.3f}"
        elif kind != "pytorch":
            line += f" ({4 * forward / ms * 1e3 / 1e9:.2f} executed"
            line += f", {model / ranks:.2f} a rank)" if ranks > 1 else ")"
            line += f"  step time / pytorch's {ms / base:.3f}"
        else:
            base = ms
        print(line)
    reference = losses(d, "pytorch", 1)
    agree, worst, count = compare_losses(
        d, [(kind, "pytorch") for kind, _, _ in KINDS], rounds, TOLERANCE)
    ok &= agree
    print(f"   losses: {reference[0]:.4f} -> {reference[-1]:.4f}; "
          f"{count} losses of all runs agree with pytorch's within "
          f"{worst:.1e} relative (tolerance {TOLERANCE:g})"
          if agree else "   losses do NOT agree")
    # Informational: Adam moves every element by about lr a step, whatever
    # its gradient's size, so where a gradient is near zero its rounding
    # shows in full; the differences are small against that step.
    print("   trained parameters (first round), largest difference against "
          "pytorch's: " + ", ".join(
              f"{kind} {diff:.1e} ({diff / lr:.3f} x lr)" for kind, diff in
              ((k, parameter_difference(f"{d}/trained-{k}",
                                        f"{d}/trained-pytorch"))
               for k in ("reference", "saved", "ranks"))))
sys.exit(0 if ok else 1)
PY
