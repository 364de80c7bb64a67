"""Checks that hetero-partition-stages calibrated by a trace predicts the
measured time: the sum over the stages of the remarks' "compute X ms"
equals the mean forward and backward time of a micro-batch in the trace
(the tasks of its first row), within 1% (the remarks print 3 decimals).

  check-calibration.py TRACE.json REMARKS.txt
"""

import json
import re
import sys

trace = json.load(open(sys.argv[1]))
rows = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"]
        if e.get("ph") == "M" and e.get("name") == "thread_name"}
first = min(tid for tid, name in rows.items() if name.startswith("rank 0"))
tasks = [e["dur"] / 1000.0 for e in trace["traceEvents"]
         if e.get("ph") == "X" and e.get("tid") == first
         and e.get("cat") in ("forward", "backward")]
measured = sum(tasks) / (len(tasks) / 2)
remarks = open(sys.argv[2]).read()
predicted = sum(float(ms) for ms in re.findall(r"compute ([0-9.]+) ms", remarks))
if len(re.findall(r"compute ([0-9.]+) ms", remarks)) != 4:
    sys.exit("expected 4 stages in the remarks:\n" + remarks)
if abs(predicted - measured) > 0.01 * measured + 0.002:
    sys.exit(f"predicted {predicted} ms, measured {measured} ms")
print("the stages' compute adds up to the measured micro-batch")
