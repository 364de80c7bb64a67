#!/usr/bin/env python3
"""Assembles every PTX kernel of a module lowered with
`hetero-lower-to-gpu=format=isa` with ptxas.

usage: ptxas-check.py <lowered.mlir> <ptxas> <arch> <scratch dir>

Prints `kernel <name>: ptxas ok` per kernel and `<n> kernels assembled`;
exits non-zero on the first kernel ptxas rejects (with its message), or when
the module holds no kernel at all.
"""

import os
import re
import subprocess
import sys

BINARY = re.compile(r'gpu\.binary @(\w+)\s+\[#gpu\.object<.*?assembly = "((?:[^"\\]|\\.)*)"')


def unescape(text):
    """MLIR string literals escape bytes as \\XX (hex), quotes and backslashes."""
    out = bytearray()
    i = 0
    while i < len(text):
        if text[i] == "\\":
            nxt = text[i + 1]
            if nxt in '"\\':
                out.append(ord(nxt))
                i += 2
            else:
                out.append(int(text[i + 1 : i + 3], 16))
                i += 3
        else:
            out.extend(text[i].encode())
            i += 1
    return bytes(out)


def main():
    lowered, ptxas, arch, scratch = sys.argv[1:5]
    os.makedirs(scratch, exist_ok=True)
    with open(lowered) as f:
        kernels = BINARY.findall(f.read())
    if not kernels:
        print("no PTX kernel found in " + lowered, file=sys.stderr)
        return 1
    for name, escaped in kernels:
        path = os.path.join(scratch, name + ".ptx")
        with open(path, "wb") as f:
            f.write(unescape(escaped))
        result = subprocess.run(
            [ptxas, "-arch=" + arch, path, "-o", os.path.join(scratch, name + ".cubin")],
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            print("kernel %s: ptxas failed:\n%s" % (name, result.stderr), file=sys.stderr)
            return 1
        print("kernel %s: ptxas ok" % name)
    print("%d kernels assembled" % len(kernels))
    return 0


if __name__ == "__main__":
    sys.exit(main())
