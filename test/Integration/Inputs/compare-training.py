#!/usr/bin/env python3
"""Compares the output of two hetero-run training runs.

usage: compare-training.py <reference.txt> <candidate.txt> [<digest name>]

Each file holds hetero-run's lines `iteration <i>: loss <value>, <ms> ms`
and a final `<digest>: <value>`. Checks, and prints one line per check:
  * the reference loss decreases over the run (last < first, and no
    iteration raises it by more than 1e-6 relative);
  * every iteration's loss agrees to 1e-5 relative (floor 1e-3);
  * the weight digests agree to 1e-6 relative (floor 1).
Exits non-zero on the first failed check.
"""

import re
import sys

LOSS = re.compile(r"^iteration (\d+): loss ([-+0-9.eE]+|nan|inf)")
DIGEST = re.compile(r"^(\w+): ([-+0-9.eE]+|nan|inf)\s*$")


def read(path):
    losses, digest = [], None
    with open(path) as f:
        for line in f:
            match = LOSS.match(line)
            if match:
                losses.append(float(match.group(2)))
                continue
            match = DIGEST.match(line)
            if match:
                digest = float(match.group(2))
    return losses, digest


def close(a, b, relative, floor):
    return abs(a - b) <= relative * max(floor, abs(a), abs(b))


def main():
    reference, reference_digest = read(sys.argv[1])
    candidate, candidate_digest = read(sys.argv[2])
    if not reference or len(reference) != len(candidate):
        print("FAIL: %d reference and %d candidate iterations"
              % (len(reference), len(candidate)))
        return 1
    if not reference[-1] < reference[0]:
        print("FAIL: the loss did not decrease: %g -> %g" % (reference[0], reference[-1]))
        return 1
    for i in range(1, len(reference)):
        if reference[i] > reference[i - 1] * (1 + 1e-6):
            print("FAIL: the loss rose at iteration %d: %g -> %g"
                  % (i, reference[i - 1], reference[i]))
            return 1
    print("loss decreases over %d iterations: %.6g -> %.6g"
          % (len(reference), reference[0], reference[-1]))
    for i, (a, b) in enumerate(zip(reference, candidate)):
        if not close(a, b, 1e-5, 1e-3):
            print("FAIL: iteration %d: loss %.9g vs %.9g" % (i, a, b))
            return 1
    print("losses agree to 1e-5 at every iteration")
    if reference_digest is None or candidate_digest is None:
        print("FAIL: a weight digest is missing")
        return 1
    if not close(reference_digest, candidate_digest, 1e-6, 1.0):
        print("FAIL: weight digests %.12g vs %.12g" % (reference_digest, candidate_digest))
        return 1
    print("weight digests agree to 1e-6: %.12g" % candidate_digest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
