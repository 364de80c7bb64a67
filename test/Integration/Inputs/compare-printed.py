#!/usr/bin/env python3
"""Compares the buffers two runs printed with printMemrefF32.

usage: compare-printed.py <expected.txt> <actual.txt> <rtol> <atol>

Reads every buffer's shape and data (the lines after each "Unranked Memref"
header) from both files. Prints `<b> buffers, <n> values agree within rtol
<rtol>, atol <atol>` when both printed the same buffers, of the same shapes,
and every value agrees: |actual - expected| <= atol + rtol |expected|, NaNs
and infinities nowhere. Otherwise prints the first disagreements and exits
non-zero.
"""

import math
import re
import sys

HEADER = re.compile(r"Unranked Memref .* sizes = \[([0-9, ]*)\]")
NUMBER = re.compile(r"-?(?:\d+\.?\d*(?:e[-+]?\d+)?|nan|inf)", re.IGNORECASE)


def buffers(path):
    result = []
    with open(path) as f:
        for line in f:
            match = HEADER.search(line)
            if match:
                result.append((match.group(1).replace(" ", ""), []))
            elif result:
                result[-1][1].extend(float(v) for v in NUMBER.findall(line))
    return result


def main():
    expected, actual = buffers(sys.argv[1]), buffers(sys.argv[2])
    rtol, atol = float(sys.argv[3]), float(sys.argv[4])
    if not expected or len(expected) != len(actual):
        print("printed %d buffers, expected %d" % (len(actual), len(expected)))
        return 1
    bad = 0
    count = 0
    for index, ((shape_e, data_e), (shape_a, data_a)) in enumerate(
            zip(expected, actual)):
        if shape_e != shape_a or len(data_e) != len(data_a):
            print("buffer %d: shape [%s] (%d values), expected [%s] (%d)"
                  % (index, shape_a, len(data_a), shape_e, len(data_e)))
            return 1
        for position, (e, a) in enumerate(zip(data_e, data_a)):
            count += 1
            if not (math.isfinite(a) and math.isfinite(e)) or \
                    abs(a - e) > atol + rtol * abs(e):
                bad += 1
                if bad <= 5:
                    print("buffer %d, value %d: %r, expected %r"
                          % (index, position, a, e))
    if bad:
        print("%d of %d values disagree" % (bad, count))
        return 1
    print("%d buffers, %d values agree within rtol %g, atol %g"
          % (len(expected), count, rtol, atol))
    return 0


if __name__ == "__main__":
    sys.exit(main())
