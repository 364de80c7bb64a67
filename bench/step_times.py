"""Step times of interleaved hetero-run rounds (bench/common.sh's
interleaved_runs): <work>/<kind>-<round>.txt per kind and round."""
import re
import statistics


def median_ms(work, kind, warm, rounds):
    """The median time of the iterations from `warm` on, over all rounds."""
    times = []
    for r in range(1, rounds + 1):
        for line in open(f"{work}/{kind}-{r}.txt"):
            m = re.match(r"iteration (\d+): .*, ([0-9.]+) ms", line)
            if m and int(m.group(1)) >= warm:
                times.append(float(m.group(2)))
    return statistics.median(times)


def losses(work, kind, r):
    """The losses of <work>/<kind>-<r>.txt (`iteration <i>: loss <v>, ...`:
    hetero-run's lines, and the PyTorch scripts')."""
    with open(f"{work}/{kind}-{r}.txt") as f:
        return [float(v) for v in
                re.findall(r"^iteration \d+: loss (\S+),", f.read(), re.MULTILINE)]


def compare_losses(work, pairs, rounds, tolerance):
    """Compares every round of each (kind, base) pair's losses with base's
    first round, step by step, relative to base's; prints a MISMATCH line
    per disagreement. Returns (all agree, largest difference, losses
    compared)."""
    ok, worst, count = True, 0.0, 0
    for kind, base in pairs:
        reference = losses(work, base, 1)
        for r in range(1, rounds + 1):
            other = losses(work, kind, r)
            if len(other) != len(reference):
                print(f"   MISMATCH: {kind} round {r}: {len(other)} losses "
                      f"against {base}'s {len(reference)}")
                ok = False
                continue
            for step, (a, b) in enumerate(zip(other, reference)):
                difference = abs(a - b) / abs(b)
                worst = max(worst, difference)
                if not difference <= tolerance:
                    print(f"   MISMATCH: {kind} round {r} step {step}: loss "
                          f"{a} against {base}'s {b}")
                    ok = False
            count += len(other)
    return ok, worst, count
