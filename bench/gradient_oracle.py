"""Reads measured pipeline iterations for bench/gradient-overlap.sh.

usage: gradient_oracle.py profiles TRACE STAGES REPLICAS FUSION.json ESPRESSO.json
       gradient_oracle.py phases TRACE STAGES REPLICAS

TRACE is the mean iteration that `hetero-run --profile-timeline` wrote of a
step lowered with eager-gradient-sync and one all-reduce per gradient. Per
stage (its replica-0 rank), the stage's last backward starts at B and ends
at E; each gradient is ready when the rank posts its all-reduce (an instant
on the rank's communication row), and the communication thread's run of it
gives its cost. From those:

  profiles  writes the {"sets": [...]} profiles that hetero-fuse-gradients
            and hetero-select-compression take (tensors in ready order with
            their backprop since the previous one; the link fitted to the
            runs by least squares, t = alpha + beta x bytes) and prints, per
            stage, B, E - B and the measured gradient phase.
  phases    prints, per stage, B and the measured gradient phase: from B to
            the later of E and the end of the stage's last gradient
            collective; and the iteration's extent.

Times are milliseconds from the earliest span of the iteration.
"""

import json
import sys

MB = 1024.0 * 1024.0


def rows_of(trace):
    events = trace["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    spans = {}
    for e in events:
        if e["ph"] == "X":
            spans.setdefault(e["tid"], []).append(e)
    for tid in spans:
        spans[tid].sort(key=lambda e: e["ts"])
    return names, spans


def stage_phase(names, spans, stage, replicas):
    """The gradient phase of `stage` on its replica-0 rank."""
    rank = stage * replicas
    row = [tid for tid, n in names.items()
           if n == "rank %d (stage %d, replica 0)" % (rank, stage)]
    comm = [tid for tid, n in names.items()
            if n == "rank %d communication" % rank]
    if not row or not comm:
        sys.exit("gradient_oracle.py: no rows for rank %d: %s" % (rank, names))
    backward = [e for e in spans[row[0]] if e["cat"] == "backward"]
    last = backward[-1]
    start, end = last["ts"] / 1e3, (last["ts"] + last["dur"]) / 1e3
    events = spans[comm[0]]
    posted = [e for e in events if e["cat"] == "posted"
              and start - 1e-3 <= e["ts"] / 1e3 <= end + 1e-3]
    runs = [e for e in events if e["cat"] == "background"
            and e["ts"] / 1e3 >= posted[0]["ts"] / 1e3 - 1e-3][:len(posted)]
    ready = [e["ts"] / 1e3 for e in posted]
    sizes = [int(e["name"].split()[1]) for e in posted]
    durations = [e["dur"] / 1e3 for e in runs]
    done = max([end] + [(e["ts"] + e["dur"]) / 1e3 for e in runs])
    return {"start": start, "end": end, "ready": ready, "bytes": sizes,
            "run_ms": durations, "phase": done - start}


def fit(points):
    """Least squares t = alpha + beta x MB over (bytes, ms) points."""
    n = len(points)
    xs = [b / MB for b, _ in points]
    ys = [t for _, t in points]
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    beta = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0
    beta = max(beta, 0.0)
    alpha = max(my - beta * mx, 0.0)
    return alpha, beta


def extent(spans):
    return max((e["ts"] + e["dur"]) / 1e3 for row in spans.values()
               for e in row)


def main():
    command, path = sys.argv[1], sys.argv[2]
    stages, replicas = int(sys.argv[3]), int(sys.argv[4])
    with open(path) as f:
        names, spans = rows_of(json.load(f))
    phases = [stage_phase(names, spans, s, replicas) for s in range(stages)]
    if command == "phases":
        for s, p in enumerate(phases):
            print("stage %d: start %.3f phase %.3f" % (s, p["start"],
                                                      p["phase"]))
        print("iteration %.3f" % extent(spans))
        return
    fusion, espresso = sys.argv[5], sys.argv[6]
    fusion_sets, espresso_sets = [], []
    for s, p in enumerate(phases):
        alpha, beta = fit(list(zip(p["bytes"], p["run_ms"])))
        previous = p["start"]
        tensors = []
        for i, (ready, size) in enumerate(zip(p["ready"], p["bytes"])):
            tensors.append({"name": "g%d" % i, "bytes": size,
                            "backward_ms": max(ready - previous, 0.0)})
            previous = ready
        fusion_sets.append({"tensors": tensors,
                            "comm": {"alpha_ms": alpha,
                                     "beta_ms_per_mb": beta}})
        # Espresso's dense all-reduce of 2 ranks costs 2 alpha + beta x:
        # the same fit. Every compression of the CPU backend runs on the
        # runtime's communication thread (one CPU worker; topk 1% costs
        # about 0.27 ms/MB there, bench-compression); no device
        # compresses, so its options cost too much to choose.
        espresso_sets.append({
            "ranks": replicas, "wire_fraction": 0.02, "cpu_workers": 1,
            "tensors": tensors,
            "link": {"alpha_ms": alpha / (2.0 * (replicas - 1)),
                     "beta_ms_per_mb": beta * replicas / (2.0 * (replicas - 1))},
            "gpu": {"compress": {"alpha_ms": 1e3, "beta_ms_per_mb": 1e3},
                    "decompress": {"alpha_ms": 1e3, "beta_ms_per_mb": 1e3}},
            "cpu": {"compress": {"alpha_ms": 0.05, "beta_ms_per_mb": 0.3},
                    "decompress": {"alpha_ms": 0.02, "beta_ms_per_mb": 0.05}}})
        print("stage %d: start %.3f backward %.3f phase %.3f tensors %d "
              "link alpha %.3f ms beta %.3f ms/MB" % (
                  s, p["start"], p["end"] - p["start"], p["phase"],
                  len(tensors), alpha, beta))
    print("iteration %.3f" % extent(spans))
    with open(fusion, "w") as f:
        json.dump({"sets": fusion_sets}, f)
    with open(espresso, "w") as f:
        json.dump({"sets": espresso_sets}, f)


if __name__ == "__main__":
    main()
