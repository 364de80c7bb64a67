#!/usr/bin/env python3
"""Reads the block size of every kernel launch in a module lowered with
`hetero-lower-to-gpu`.

usage: launch-check.py <lowered.mlir>

The launch dimensions are `llvm.mlir.constant`s of the launching function.
Prints, per launch whose block has fewer than 32 threads (less than a
warp) although its grid has several blocks, `underfilled: <kernel>
<x>x<y>x<z> in <blocks> blocks` (a launch of one block covers its whole
loop, however small), then
`<n> launches, <s> serial, <m> with one thread per block, <d> dynamic,
fewest threads per block <t>`, and `<a> asynchronous` (launches on a
stream). A serial launch is one block of one thread: the loop nest of an op
without a parallel loop (hetero-gpu-serial-kernels); it counts neither as
one thread per block nor towards the fewest threads. Exits non-zero when
the module launches nothing.
"""

import re
import sys

FUNC = re.compile(r"^\s*llvm\.func ")
CONSTANT = re.compile(r"^\s*(%\w+) = llvm\.mlir\.constant\((-?\d+) : (?:index|i64|i32)\)")
# An asynchronous launch names its stream: gpu.launch_func <%s : !llvm.ptr>.
LAUNCH = re.compile(
    r"gpu\.launch_func\s+(?:<%\w+ : !llvm\.ptr>\s+)?@\w+::@(\w+) blocks in \((%\w+), (%\w+), (%\w+)\) "
    r"threads in \((%\w+), (%\w+), (%\w+)\)")


def main():
    constants = {}
    launches = 0
    one_thread = 0
    serial = 0
    dynamic = 0
    asynchronous = 0
    fewest = None
    with open(sys.argv[1]) as f:
        for line in f:
            if FUNC.match(line):
                constants = {}
                continue
            match = CONSTANT.match(line)
            if match:
                constants[match.group(1)] = int(match.group(2))
                continue
            match = LAUNCH.search(line)
            if not match:
                continue
            launches += 1
            asynchronous += "gpu.launch_func <" in line
            kernel = match.group(1)
            values = [constants.get(name) for name in match.groups()[1:]]
            if any(value is None for value in values[3:]):
                dynamic += 1
                continue
            grid, block = values[:3], values[3:]
            threads = block[0] * block[1] * block[2]
            if threads == 1 and grid == [1, 1, 1]:
                serial += 1
                continue
            fewest = threads if fewest is None else min(fewest, threads)
            if threads == 1:
                one_thread += 1
            blocks = None if None in grid else grid[0] * grid[1] * grid[2]
            if threads < 32 and blocks != 1:
                print("underfilled: %s %dx%dx%d in %s blocks"
                      % (kernel, block[0], block[1], block[2],
                         "?" if blocks is None else blocks))
    if launches == 0:
        print("no kernel launch found in " + sys.argv[1], file=sys.stderr)
        return 1
    print("%d launches, %d serial, %d with one thread per block, %d dynamic, "
          "fewest threads per block %s, %d asynchronous"
          % (launches, serial, one_thread, dynamic, fewest, asynchronous))
    return 0


if __name__ == "__main__":
    sys.exit(main())
