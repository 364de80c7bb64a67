#!/usr/bin/env python3
"""Compares a data-parallel training run with compressed gradients against
the same steps with dense gradients and with no communication at all.

usage: compare-to-dense.py <dense.txt> <local.txt> <tolerance> < run.txt

Each input holds hetero-run's `iteration <i>: loss <value>, ...` lines. The
distance of two runs is the mean over iterations of |ln(loss_a / loss_b)|.
Checks, one line each:
  * the dense run and local training differ (distance at least 1): the
    dense all-reduce changes the trajectory;
  * the compressed run is within `tolerance` of the dense run;
  * and closer to it than local training is, by a factor of 4.
Exits non-zero on the first failed check. A NaN or non-positive loss fails.
"""

import math
import re
import sys

LOSS = re.compile(r"^iteration (\d+): loss ([-+0-9.eE]+|nan|inf)")


def losses(lines):
    return [float(m.group(2)) for m in map(LOSS.match, lines) if m]


def distance(a, b):
    if len(a) != len(b) or not a:
        sys.exit(f"FAIL: runs of {len(a)} and {len(b)} iterations")
    for value in a + b:
        if not value > 0 or math.isinf(value):
            sys.exit(f"FAIL: loss {value} is not a positive number")
    return sum(abs(math.log(x / y)) for x, y in zip(a, b)) / len(a)


def main():
    with open(sys.argv[1]) as f:
        dense = losses(f)
    with open(sys.argv[2]) as f:
        local = losses(f)
    tolerance = float(sys.argv[3])
    run = losses(sys.stdin)
    apart = distance(local, dense)
    if apart < 1.0:
        print(f"FAIL: local training is only {apart:.3g} from the dense run")
        return 1
    print("local training differs from the dense run")
    near = distance(run, dense)
    print(f"distance to the dense run {near:.3g}, local training {apart:.3g}")
    if near > tolerance:
        print(f"FAIL: farther from the dense run than {tolerance:g}")
        return 1
    if 4 * near > apart:
        print("FAIL: not 4x closer to the dense run than local training")
        return 1
    print(f"within {tolerance:g} of the dense run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
