"""Reads hetero-run's `iteration <i>: loss <mask>` lines of
Inputs/priority-layer.mlir (the bit mask of the rows kept) and replays
ZERO-Pri / ZERO-PriDiff (shared/seeds/000-zero-resizing.md 2.4-2.5) on the
same weight: row k changes by 2^k / 1000 per iteration. The first epoch's
columns are ZERO-Rd's draw, taken from the run; every later epoch's kept
rows must be the top of the ranking the statistics give:

  - a row pruned in at least half of an epoch's iterations keeps its
    statistic (all start at 1); the others take the epoch's mean absolute
    change, measured between the copies at the epochs' last iterations;
  - ties rank the lower row first;
  - with epsilon > 0, a layer prunes min(31/32, max(ratio, 0.8 x share of
    rows whose statistic is below epoch x epsilon)), floor of the rows.
"""
import argparse
import math
import re
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--rows", type=int, default=4)
parser.add_argument("--ratio", type=float, required=True)
parser.add_argument("--epoch", type=int, required=True)
parser.add_argument("--epsilon", type=float, default=0.0)
args = parser.parse_args()

masks = [round(float(m.group(1))) for m in
         (re.match(r"iteration \d+: loss ([-+0-9.eE]+)", line)
          for line in sys.stdin) if m]
if len(masks) < 2 * args.epoch:
    sys.exit(f"need at least two epochs of {args.epoch} iterations, "
             f"got {len(masks)} iterations")


def weight_row(k, iteration):
    return 2.0 ** k * (1.0 + 1e-3 * iteration)


def pruned_count(ratio):
    return min(args.rows - 1, math.floor(ratio * args.rows + 1e-9))


def kept_mask(stats, ratio):
    order = sorted(range(args.rows), key=lambda k: (-stats[k], k))
    kept = order[:args.rows - pruned_count(ratio)]
    return sum(1 << k for k in kept)


stats = [1.0] * args.rows
pruned_iterations = [0] * args.rows
iterations_recorded = 0
ranked = False
last_copy = 0  # the iteration of the copy the next change starts from
failures = 0
epochs = len(masks) // args.epoch
for epoch in range(epochs):
    first = epoch * args.epoch
    if epoch > 0:
        # The change between the copies at the last iterations of the two
        # epochs (the first copy: iteration 0).
        latest = first - 1
        for k in range(args.rows):
            if pruned_iterations[k] * 2 >= iterations_recorded > 0:
                continue
            stats[k] = abs(weight_row(k, latest) - weight_row(k, last_copy))
        last_copy = latest
        pruned_iterations = [0] * args.rows
        iterations_recorded = 0
        ranked = True
    ratio = args.ratio
    if ranked and args.epsilon > 0:
        threshold = args.epoch * args.epsilon
        share = sum(s < threshold for s in stats) / args.rows
        ratio = min(31 / 32, max(ratio, 0.8 * share))
    observed = masks[first:first + args.epoch]
    expected = kept_mask(stats, ratio) if ranked else observed[0]
    kept_rows = args.rows - pruned_count(ratio)
    if any(m != expected for m in observed) or bin(expected).count("1") != kept_rows:
        print(f"epoch {epoch}: kept masks {observed}, expected {expected} "
              f"({kept_rows} rows)")
        failures += 1
    for m in observed:
        iterations_recorded += 1
        for k in range(args.rows):
            if not (m >> k) & 1:
                pruned_iterations[k] += 1
print(f"{epochs - failures} of {epochs} epochs keep the rows the ranking gives")
