"""Reads hetero-run's `iteration <i>: loss <value>, ...` lines and says
whether the last loss is below `fraction` of the first."""
import re
import sys

fraction = float(sys.argv[1])
losses = [float(m.group(1)) for m in
          (re.match(r"iteration \d+: loss ([-+0-9.eE]+|nan|inf)", line)
           for line in sys.stdin) if m]
if len(losses) < 2:
    sys.exit("fewer than 2 losses in the input")
first, last = losses[0], losses[-1]
verdict = "below" if last < fraction * first else "NOT below"
print(f"loss {first:.6g} -> {last:.6g}")
print(f"the loss falls {verdict} {fraction:g} of its start")
