#!/usr/bin/env python3
"""Launches, cuBLAS products and host waits per transformer block and
micro-batch, from the host CUDA driver's reports (host-cuda.c) of four
runs: a GPT of fewer and of more layers, each for one and for two
iterations.

usage: per-block.py <few-1.txt> <few-2.txt> <more-1.txt> <more-2.txt>
                    <blocks> <microbatches> <most-launches>

The second iteration less the first is the steady state of one iteration
(what happens once, as the first copy of a parameter to the device, drops
out); the larger GPT less the smaller is what its `blocks` more blocks per
stage add, over `microbatches` micro-batches. Prints, for each rank
(stage),
  rank R: L launches, P products, W waits per transformer block and
  micro-batch
and exits non-zero when some L exceeds `most-launches` or a difference is
not a whole number.
"""

import re
import sys

REPORT = re.compile(r"host-cuda: rank (\d+): launches (\d+) .*?products "
                    r"(\d+), waits (\d+);")


def counts(path):
    result = {}
    with open(path) as f:
        for line in f:
            match = REPORT.search(line)
            if match:
                result[int(match.group(1))] = [int(v)
                                               for v in match.groups()[1:]]
    if not result:
        sys.exit("no host-cuda report in " + path)
    return result


def main():
    few1, few2, more1, more2 = (counts(p) for p in sys.argv[1:5])
    blocks, microbatches, most = (int(v) for v in sys.argv[5:8])
    status = 0
    for rank in sorted(few1):
        per = []
        for i in range(3):
            steady_few = few2[rank][i] - few1[rank][i]
            steady_more = more2[rank][i] - more1[rank][i]
            added = steady_more - steady_few
            if added % (blocks * microbatches):
                print("rank %d: %d more per iteration is not a whole number "
                      "per block and micro-batch" % (rank, added))
                status = 1
            per.append(added // (blocks * microbatches))
        print("rank %d: %d launches, %d products, %d waits per transformer "
              "block and micro-batch" % (rank, per[0], per[1], per[2]))
        if per[0] > most:
            print("rank %d: more than %d launches" % (rank, most))
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
