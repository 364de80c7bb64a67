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
