"""Writes a synthetic --profile-timeline trace for gradient_oracle.py.

usage: oracle-trace.py OUT.json SHIFT_MS

Two stages of two replicas (the oracle reads the replica-0 ranks 0 and 2).
Stage s's last backward runs [B_s, B_s + 40] ms with B = 100, 60; it posts
four all-reduces of 65536, 256, 65536 and 16384 bytes at 10 ms intervals
from B + 10, and the communication thread runs each for 2 + 0.2 x KB ms,
one after the other. SHIFT_MS moves the whole iteration later.
"""
import json
import sys

out, shift = sys.argv[1], float(sys.argv[2])
events = []


def row(tid, name):
    events.append({"ph": "M", "name": "thread_name", "pid": 0, "tid": tid,
                   "args": {"name": name}})


def span(tid, name, cat, start_ms, dur_ms):
    events.append({"ph": "X", "name": name, "cat": cat, "pid": 0, "tid": tid,
                   "ts": (start_ms + shift) * 1e3, "dur": dur_ms * 1e3})


for stage, begin in ((0, 100.0), (1, 60.0)):
    rank = 2 * stage
    compute, comm, posted = 10 * rank, 10 * rank + 1, 10 * rank + 2
    row(compute, "rank %d (stage %d, replica 0)" % (rank, stage))
    row(comm, "rank %d communication" % rank)
    row(posted, "rank %d posted" % rank)
    span(compute, "F0", "forward", 0.0, begin)
    span(compute, "B0", "backward", begin, 40.0)
    free = 0.0
    for i, size in enumerate((65536, 256, 65536, 16384)):
        ready = begin + 10.0 * (i + 1)
        span(posted, "posted %d B" % size, "communication", ready, 0.001)
        run = 2.0 + 0.2 * size / 1024.0
        start = max(ready, free)
        span(comm, "background %d B" % size, "communication", start, run)
        free = start + run
with open(out, "w") as f:
    json.dump({"traceEvents": events}, f)
