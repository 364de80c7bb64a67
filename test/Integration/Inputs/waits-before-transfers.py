"""Counts the host's waits for the stream (hrt_cuda_synchronize) right
before a transfer (send, receive, all-reduce) in a GPU-lowered module."""

import re
import sys

lines = open(sys.argv[1]).read().splitlines()
transfer = re.compile(r"call @hrt_mlir_(send|recv|all_reduce)")
waits = sum(
    1
    for line, following in zip(lines, lines[1:])
    if "call @hrt_cuda_synchronize()" in line and transfer.search(following)
)
print("waits before transfers:", waits)
