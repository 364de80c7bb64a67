#!/usr/bin/env python3
"""Compares two models saved by hetero-run --save, against where they
started.

usage: compare-saved.py <initial> <expected> <actual> <rtol>
                        [<expected log> <actual log>]

The first three arguments are directories of .npy files, one a parameter.
Checks that all three hold the same parameters of the same shapes, every
value finite, that training moved every parameter of <expected> away from
<initial> (by more than the tolerance), and that <actual> agrees with
<expected>: for each parameter, max |actual - expected| <= rtol *
max(|expected|, 1e-3). With the runs' output, also that both printed the
same iterations and that each loss is finite and agrees within rtol.
Prints `<n> parameters agree within rtol <rtol>, each trained` (and `<i>
losses agree`) or what failed, and exits non-zero on a failure.
"""

import math
import os
import re
import sys

import numpy


def load(directory):
    return {name: numpy.load(os.path.join(directory, name))
            for name in sorted(os.listdir(directory)) if name.endswith(".npy")}


LOSS = re.compile(r"^iteration (\d+): loss ([-+0-9.eE]+|-?nan|-?inf)")


def losses(path):
    with open(path) as f:
        return [float(m.group(2)) for m in map(LOSS.match, f) if m]


def main():
    initial, expected, actual = (load(d) for d in sys.argv[1:4])
    rtol = float(sys.argv[4])
    if not expected or set(initial) != set(expected) or \
            set(expected) != set(actual):
        print("the directories hold different parameters")
        return 1
    status = 0
    for directory in (initial, expected, actual):
        for name, value in directory.items():
            if not numpy.all(numpy.isfinite(value)):
                print("%s: values that are not finite" % name)
                return 1
    for name, value in expected.items():
        if actual[name].shape != value.shape:
            print("%s: shape %s, expected %s"
                  % (name, actual[name].shape, value.shape))
            return 1
        scale = max(float(numpy.max(numpy.abs(value))), 1e-3)
        moved = float(numpy.max(numpy.abs(value - initial[name])))
        if moved <= rtol * scale:
            print("%s: training did not move it (%g)" % (name, moved))
            status = 1
        difference = float(numpy.max(numpy.abs(actual[name] - value)))
        if difference > rtol * scale:
            print("%s: differs by %g (scale %g)" % (name, difference, scale))
            status = 1
    if status == 0:
        print("%d parameters agree within rtol %g, each trained"
              % (len(expected), rtol))
    if len(sys.argv) > 6:
        want, got = losses(sys.argv[5]), losses(sys.argv[6])
        if not want or len(want) != len(got):
            print("%d losses printed, expected %d" % (len(got), len(want)))
            return 1
        for index, (w, g) in enumerate(zip(want, got)):
            if not (math.isfinite(w) and math.isfinite(g)) or \
                    abs(g - w) > rtol * abs(w):
                print("iteration %d: loss %r, expected %r" % (index, g, w))
                status = 1
        if status == 0:
            print("%d losses agree" % len(want))
    return status


if __name__ == "__main__":
    sys.exit(main())
