"""Reads hetero-run's `iteration <i>: loss <value>, ...` lines and says
whether the last loss (or, with --mean-of-last N, the mean of the last N)
is below `fraction` of the first."""
import argparse
import re
import sys

parser = argparse.ArgumentParser()
parser.add_argument("fraction", type=float)
parser.add_argument("--mean-of-last", type=int, default=1)
args = parser.parse_args()
losses = [float(m.group(1)) for m in
          (re.match(r"iteration \d+: loss ([-+0-9.eE]+|nan|inf)", line)
           for line in sys.stdin) if m]
if len(losses) < 1 + args.mean_of_last:
    sys.exit(f"fewer than {1 + args.mean_of_last} losses in the input")
first = losses[0]
last = sum(losses[-args.mean_of_last:]) / args.mean_of_last
verdict = "below" if last < args.fraction * first else "NOT below"
print(f"loss {first:.6g} -> {last:.6g}")
print(f"the loss falls {verdict} {args.fraction:g} of its start")
