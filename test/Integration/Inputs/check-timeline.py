"""Checks the timeline that hetero-run --timeline wrote for a pipeline step.

usage: check-timeline.py DIR STAGES REPLICAS MICROBATCHES

Ranks form a stages x replicas grid (rank = stage * replicas + replica).
Prints one line per property that holds and exits non-zero at the first one
that does not.
"""

import collections
import json
import re
import sys

FORWARD, BACKWARD, COMMUNICATION = "#4c78a8", "#59a14f", "#f28e2b"
# ts and dur are written with three decimals (nanoseconds).
EPSILON_US = 0.002


def fail(message):
    print("error: " + message)
    sys.exit(1)


def main():
    directory = sys.argv[1]
    stages, replicas, microbatches = (int(a) for a in sys.argv[2:5])
    ranks = stages * replicas
    with open(directory + "/timeline.json") as f:
        trace = json.load(f)
    events = trace["traceEvents"]

    names = {e["tid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    for rank in range(ranks):
        expected = "rank %d (stage %d, replica %d)" % (
            rank, rank // replicas, rank % replicas)
        if names.get(rank) != expected:
            fail("row %d is named %r, not %r" % (rank, names.get(rank),
                                                 expected))
    # Then, per rank that posted collectives, the row of their runs on its
    # communication thread and the row of their posts.
    for tid, name in names.items():
        if tid < ranks:
            continue
        rank, second = divmod(tid - ranks, 2)
        expected = "rank %d %s" % (rank, "posted" if second else
                                   "communication")
        if name != expected:
            fail("row %d is named %r, not %r" % (tid, name, expected))
    if len(names) > 3 * ranks:
        fail("%d rows for %d ranks" % (len(names), ranks))
    print("every rank has its row")

    spans = [e for e in events if e["ph"] == "X"]
    if any(e["pid"] != 0 for e in spans):
        fail("an event has a pid other than 0")
    if abs(min(e["ts"] for e in spans)) > EPSILON_US:
        fail("the earliest event is not at time 0")
    by_rank = collections.defaultdict(list)
    for e in spans:
        by_rank[e["tid"]].append(e)
    # One origin for all ranks: the ranks do not all start at the same
    # nanosecond (as they would, at 0, each from its own earliest span).
    if all(min(e["ts"] for e in by_rank[rank]) <= EPSILON_US
           for rank in range(ranks)):
        fail("every rank starts at time 0: the ranks have their own origins")

    # Every rank ran each micro-batch forward and backward once.
    tasks = {}
    for rank in range(ranks):
        for prefix, category in (("F", "forward"), ("B", "backward")):
            labels = sorted(e["name"] for e in by_rank[rank]
                            if e["cat"] == category)
            expected = sorted(prefix + str(i) for i in range(microbatches))
            if labels != expected:
                fail("rank %d ran %s tasks %s, not %s" % (
                    rank, category, labels, expected))
        for e in by_rank[rank]:
            if e["cat"] in ("forward", "backward"):
                tasks[(rank, e["name"])] = e
    print("every rank ran F0..F%d and B0..B%d once" % (
        microbatches - 1, microbatches - 1))

    # A rank does one thing at a time; a task is not its waits.
    for rank in range(ranks):
        ordered = sorted(by_rank[rank], key=lambda e: e["ts"])
        for a, b in zip(ordered, ordered[1:]):
            if a["ts"] + a["dur"] > b["ts"] + EPSILON_US:
                fail("on rank %d, %s at %.3f us (%.3f us) overlaps %s at "
                     "%.3f us" % (rank, a["name"], a["ts"], a["dur"],
                                  b["name"], b["ts"]))
        if not any(e["cat"] == "communication" for e in ordered):
            fail("rank %d has no communication span" % rank)
    print("the spans of each rank do not overlap")

    # Each collective the rank posted ran on its communication thread after
    # its post, one at a time, in the order posted, with the same bytes.
    threads = [tid for tid in names
               if tid >= ranks and names[tid].endswith("communication")]
    for tid in threads:
        ran = sorted(by_rank[tid], key=lambda e: e["ts"])
        posted = sorted(by_rank[tid + 1], key=lambda e: e["ts"])
        if any(e["cat"] != "background" for e in ran) or \
                any(e["cat"] != "posted" or e["dur"] != 0 for e in posted):
            fail("row %d or %d holds other spans" % (tid, tid + 1))
        if len(posted) != len(ran) or not ran:
            fail("row %d: %d posted collectives, %d runs" % (
                tid, len(posted), len(ran)))
        for post, run in zip(posted, ran):
            if run["ts"] + EPSILON_US < post["ts"] or \
                    run["name"].split()[1] != post["name"].split()[1]:
                fail("row %d: %s at %.3f us runs as %s at %.3f us" % (
                    tid, post["name"], post["ts"], run["name"], run["ts"]))
        for a, b in zip(ran, ran[1:]):
            if a["ts"] + a["dur"] > b["ts"] + EPSILON_US:
                fail("row %d: two collectives run at once" % tid)
    if threads:
        print("posted collectives run on the communication thread in order")

    # Data flows down the pipeline forward and up it backward.
    def end(e):
        return e["ts"] + e["dur"]

    for replica in range(replicas):
        for stage in range(1, stages):
            up = (stage - 1) * replicas + replica
            down = stage * replicas + replica
            for i in range(microbatches):
                before, after = tasks[(up, "F%d" % i)], tasks[(down, "F%d" % i)]
                if after["ts"] + EPSILON_US < end(before):
                    fail("F%d on rank %d starts at %.3f us, before it ends on "
                         "rank %d at %.3f us" % (i, down, after["ts"], up,
                                                 end(before)))
                before, after = tasks[(down, "B%d" % i)], tasks[(up, "B%d" % i)]
                if after["ts"] + EPSILON_US < end(before):
                    fail("B%d on rank %d starts at %.3f us, before it ends on "
                         "rank %d at %.3f us" % (i, up, after["ts"], down,
                                                 end(before)))
    print("each micro-batch starts on a stage after the stage it needs")

    with open(directory + "/timeline.svg") as f:
        svg = f.read()
    # Row r's name and boxes share their vertical place: the name's baseline
    # 14 pixels below the top of the row's boxes.
    rows = {float(y) - 14: int(r) for y, r in
            re.findall(r'<text x="4" y="([0-9.]+)">rank (\d+) \(stage', svg)}
    if sorted(rows.values()) != list(range(ranks)):
        fail("the SVG names rows %s" % sorted(rows.values()))
    boxes = collections.Counter(
        (rows.get(float(y)), fill) for y, fill in
        re.findall(r'<rect [^>]*y="([0-9.]+)"[^>]*fill="(#[0-9a-f]+)"', svg))
    for rank in range(ranks):
        communication = len(by_rank[rank]) - 2 * microbatches
        if (boxes[(rank, FORWARD)], boxes[(rank, BACKWARD)],
                boxes[(rank, COMMUNICATION)]) != \
                (microbatches, microbatches, communication):
            fail("the SVG row of rank %d has %d forward, %d backward and %d "
                 "communication boxes, not %d, %d and %d" % (
                     rank, boxes[(rank, FORWARD)], boxes[(rank, BACKWARD)],
                     boxes[(rank, COMMUNICATION)], microbatches, microbatches,
                     communication))
    if sum(boxes.values()) != len(spans):
        fail("the SVG has %d boxes for %d spans" % (sum(boxes.values()),
                                                     len(spans)))
    if ">0 ms</text>" not in svg:
        fail("the SVG has no time axis")
    print("the SVG draws every span on its rank's row")


if __name__ == "__main__":
    main()
