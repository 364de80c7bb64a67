"""Compares the losses of two training runs.

  compare-losses.py A.txt B.txt TOLERANCE

Both files hold `iteration <i>: loss <value>, ...` lines (hetero-run's, or
bench/import_torch.py's for PyTorch); every step's losses must agree within
TOLERANCE relative. Prints one line; exits 1 on a mismatch.
"""

import math
import re
import sys


def losses(path):
    with open(path) as f:
        return [float(m.group(1)) for m in
                (re.match(r"iteration \d+: loss ([-+0-9.eE]+|nan|inf)", line)
                 for line in f) if m]


def main(argv):
    a, b, tolerance = losses(argv[1]), losses(argv[2]), float(argv[3])
    if not a or len(a) != len(b):
        print(f"MISMATCH: {len(a)} losses against {len(b)}")
        return 1
    worst = max(abs(x - y) / abs(y) if math.isfinite(x) and math.isfinite(y)
                else math.inf for x, y in zip(a, b))
    if worst > tolerance:
        print(f"MISMATCH: losses differ by {worst:.3g} relative")
        return 1
    print(f"{len(a)} losses agree to {argv[3]} (largest difference {worst:.1e})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
