"""Reads measured pipeline iterations for bench/gradient-overlap.sh.

usage: gradient_oracle.py profiles TRACE STAGES REPLICAS FUSION.json ESPRESSO.json
                                   [HETERO-SIM [RATE]]
       gradient_oracle.py phases TRACE STAGES REPLICAS
       gradient_oracle.py median TRACE,TRACE...
       gradient_oracle.py report HETERO-SIM TRACE STAGES REPLICAS FUSION.json
                                 ESPRESSO.json NAME=TRACE[,TRACE...]...

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
            stage, B, E - B and the measured gradient phase. Given
            HETERO-SIM, the fusion sets get the link all stages share
            instead, calibrated on the profiled run (calibrate()). Given
            also RATE, the Mbit/s the link is shaped to, the shared link's
            beta is not fitted but what the rate gives: an all-reduce of x
            bytes among R ranks puts 2 (R - 1) x bytes on the one link
            (each rank sends 2 (R - 1) / R x in a ring, and every rank's
            traffic crosses the shaped loopback), so only alpha is
            calibrated.
  phases    prints, per stage, B and the measured gradient phase: from B to
            the later of E and the end of the stage's last gradient
            collective; and the iteration's extent.
  median    prints the trace (of rounds of one configuration) whose
            iteration is the median.
  report    predicts each configuration's iteration for the run measured
            (the median round): the oracles of hetero-sim fusion and
            hetero-sim espresso, given the profiles moved onto that run's
            own compute timeline (each stage's last backward from its B to
            its E, the gradients ready as spread over it as in the profiled
            run), give each stage's gradient phase, at least E - B; the
            run's compute after its last gradient phase (tail) is added:
            iteration = tail + max over stages of B + phase. The oracles
            predict the communication; the compute, which varies from run
            to run on a loaded machine, is the run's. Prints the
            prediction beside the measured iteration, and beside it the
            prediction from the profiled run alone (its compute, the
            profiles unmoved).
            Names: per-tensor, cupcake, ddp-25mb, one-bucket (fusion),
            dense, espresso, compressed (Espresso's oracle).

Times are milliseconds from the earliest span of the iteration.
"""

import copy
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
    posts = [tid for tid, n in names.items() if n == "rank %d posted" % rank]
    if not row or not comm or not posts:
        sys.exit("gradient_oracle.py: no rows for rank %d: %s" % (rank, names))
    backward = [e for e in spans[row[0]] if e["cat"] == "backward"]
    last = backward[-1]
    start, end = last["ts"] / 1e3, (last["ts"] + last["dur"]) / 1e3
    # The posts of the last backward, and their runs: the thread runs in
    # posting order, so they are the runs after the earlier posts' ones.
    everything = spans[posts[0]]
    posted = [e for e in everything
              if start - 1e-3 <= e["ts"] / 1e3 <= end + 1e-3]
    first = everything.index(posted[0])
    runs = spans[comm[0]][first:first + len(posted)]
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


def median_trace(paths):
    """Of traces of one configuration, the one of median iteration."""
    extents = []
    for path in paths:
        with open(path) as f:
            extents.append((extent(rows_of(json.load(f))[1]), path))
    extents.sort()
    return extents[(len(extents) - 1) // 2]


def simulate(sim, kind, profile):
    """hetero-sim's `<label> iteration_ms: x` lines for one stage."""
    import subprocess
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump(profile, f)
        f.flush()
        out = subprocess.run([sim, kind, f.name], check=True,
                             capture_output=True, text=True).stdout
    times = {}
    for line in out.splitlines():
        words = line.split()
        if len(words) == 5 and words[1] == "set" and words[3] == "end_ms:":
            times.setdefault(words[0], {})[int(words[2])] = float(words[4])
        elif len(words) == 2 and words[0] == "iteration_ms:":
            times["optimal"] = float(words[1])
        elif len(words) == 3 and words[1] == "iteration_ms:":
            times[words[0]] = float(words[2])
    return times


def wire_beta(rate_mbit, replicas):
    """ms per MB of all-reduced data on a link of `rate_mbit` Mbit/s that
    carries every rank's traffic: 2 (R - 1) bytes on the wire per byte."""
    bytes_per_ms = rate_mbit * 1e6 / 8.0 / 1e3
    return 2.0 * (replicas - 1) * MB / bytes_per_ms


def calibrate(sim, sets, phases, beta=None):
    """The one link every stage's all-reduces share: the (alpha, beta) with
    which hetero-sim fusion's shared link, serving the profiled run's
    per-tensor all-reduces, ends each stage's gradient phase closest to
    where it ended (least squares; a grid of alpha 0-10 ms by 0.5 and beta
    20-300 ms/MB by 20, then a finer one around the best). With `beta`
    given, alpha alone (0-10 ms by 0.05)."""
    def error(alpha, beta):
        trial = [dict(x, comm={"alpha_ms": alpha, "beta_ms_per_mb": beta})
                 for x in sets]
        ends = simulate(sim, "fusion", {"sets": trial})["per_tensor"]
        return sum((max(p["end"], ends[s]) - (p["start"] + p["phase"])) ** 2
                   for s, p in enumerate(phases))

    if beta is not None:
        best = min((error(a * 0.05, beta), a * 0.05) for a in range(201))
        return best[1], beta
    best = min((error(a * 0.5, 20.0 + b * 20.0), a * 0.5, 20.0 + b * 20.0)
               for a in range(21) for b in range(15))
    _, alpha0, beta0 = best
    best = min((error(max(alpha0 + a * 0.1, 0.0), beta0 + b * 4.0),
                max(alpha0 + a * 0.1, 0.0), beta0 + b * 4.0)
               for a in range(-5, 6) for b in range(-5, 6))
    return best[1], best[2]


# Which oracle line predicts each configuration.
PREDICTED_BY = {"per-tensor": ("fusion", "per_tensor"),
                "cupcake": ("fusion", "optimal"),
                "ddp-25mb": ("fusion", "threshold_25MB"),
                "one-bucket": ("fusion", "single_group"),
                "dense": ("espresso", "dense"),
                "espresso": ("espresso", "runtime"),
                "compressed": ("espresso", "compressed")}


def on_timeline(profile_set, measured, start_key):
    """`profile_set` (a fusion set or an Espresso profile) moved onto a
    run's own compute timeline: its stage's last backward starts at the
    run's B (when the set has a start) and the gradients become ready
    spread over the run's E - B as they were over the profiled run's."""
    moved = copy.deepcopy(profile_set)
    tensors = moved["tensors"]
    profiled = sum(t["backward_ms"] for t in tensors)
    scale = (measured["end"] - measured["start"]) / profiled if profiled else 1
    for t in tensors:
        t["backward_ms"] *= scale
    if start_key:
        moved[start_key] = measured["start"]
    return moved


def report(argv):
    sim, path = argv[0], argv[1]
    stages, replicas = int(argv[2]), int(argv[3])
    with open(argv[4]) as f:
        fusion = json.load(f)["sets"]
    with open(argv[5]) as f:
        espresso = json.load(f)["sets"]
    with open(path) as f:
        names, spans = rows_of(json.load(f))
    baseline = extent(spans)
    # The prediction from the profiled run alone (its compute, the oracles
    # on the unmoved profiles), for comparison: what it misses is the
    # compute's variation between runs.
    base = [stage_phase(names, spans, s, replicas) for s in range(stages)]
    base_tail = baseline - max(p["start"] + p["phase"] for p in base)
    shared = simulate(sim, "fusion", {"sets": fusion})
    alone = {"fusion": [{line: ends[s] - base[s]["start"]
                         for line, ends in shared.items()}
                        for s in range(stages)],
             "espresso": [simulate(sim, "espresso", p) for p in espresso]}
    print("%-11s %9s %9s %7s %9s %7s %9s   %s" % (
        "config", "measured", "predicted", "error", "profile", "error",
        "/ per-t.", "gradient phase per stage, measured / predicted (ms)"))
    worst = 0.0
    for pair in argv[6:]:
        name, traces = pair.split("=", 1)
        kind, line = PREDICTED_BY[name]
        rounds = traces.split(",")
        _, trace = median_trace(rounds)
        with open(trace) as f:
            n, sp = rows_of(json.load(f))
        measured = [stage_phase(n, sp, s, replicas) for s in range(stages)]
        actual = extent(sp)
        # The run's own compute: each stage's last backward and what follows
        # the last gradient phase. The oracles predict the gradient phases:
        # Fusion's with every stage's transfers on the shared link (ends
        # are times in the iteration), Espresso's each stage alone (times
        # from B).
        tail = actual - max(m["start"] + m["phase"] for m in measured)
        if kind == "fusion":
            sets = [on_timeline(fusion[s], measured[s], "start_ms")
                    for s in range(stages)]
            ends = simulate(sim, "fusion", {"sets": sets})[line]
            phases = [ends[s] - measured[s]["start"] for s in range(stages)]
        else:
            phases = [simulate(sim, "espresso",
                               on_timeline(espresso[s], measured[s], None))[line]
                      for s in range(stages)]
        predicted = [max(m["end"] - m["start"], p)
                     for m, p in zip(measured, phases)]
        iteration = tail + max(m["start"] + p
                               for m, p in zip(measured, predicted))
        error = (iteration - actual) / actual
        worst = max(worst, abs(error))
        from_profile = base_tail + max(
            b["start"] + max(b["end"] - b["start"], alone[kind][s][line])
            for s, b in enumerate(base))
        spread = sorted(median_trace([t])[0] for t in rounds)
        print("%-11s %9.1f %9.1f %+6.1f%% %9.1f %+6.1f%% %9.3f   %s   "
              "rounds %s" % (
            name, actual, iteration, 100 * error, from_profile,
            100 * (from_profile - actual) / actual, actual / baseline,
            "  ".join("%.1f / %.1f" % (m["phase"], p)
                      for m, p in zip(measured, predicted)),
            " ".join("%.1f" % x for x in spread)))
    print("largest prediction error: %.1f%%" % (100 * worst))


def main():
    if sys.argv[1] == "report":
        report(sys.argv[2:])
        return
    if sys.argv[1] == "median":
        print(median_trace(sys.argv[2].split(","))[1])
        return
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
    sim = sys.argv[7] if len(sys.argv) > 7 else ""
    rate = float(sys.argv[8]) if len(sys.argv) > 8 else None
    fusion_sets, espresso_sets = [], []
    for s, p in enumerate(phases):
        alpha, beta = fit(list(zip(p["bytes"], p["run_ms"])))
        previous = p["start"]
        tensors = []
        for i, (ready, size) in enumerate(zip(p["ready"], p["bytes"])):
            tensors.append({"name": "g%d" % i, "bytes": size,
                            "backward_ms": max(ready - previous, 0.0)})
            previous = ready
        fusion_sets.append({
            "start_ms": p["start"], "tensors": tensors,
            "comm": {"alpha_ms": alpha, "beta_ms_per_mb": beta}})
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
    if sim:
        alpha, beta = calibrate(
            sim, fusion_sets, phases,
            wire_beta(rate, replicas) if rate else None)
        for fusion_set in fusion_sets:
            fusion_set["comm"] = {"alpha_ms": alpha, "beta_ms_per_mb": beta}
        print("shared link: alpha %.3f ms beta %.3f ms/MB" % (alpha, beta))
    print("iteration %.3f" % extent(spans))
    with open(fusion, "w") as f:
        json.dump({"sets": fusion_sets}, f)
    with open(espresso, "w") as f:
        json.dump({"sets": espresso_sets}, f)


if __name__ == "__main__":
    main()
