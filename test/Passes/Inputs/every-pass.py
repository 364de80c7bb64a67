"""Runs every pass and pipeline hetero-opt registers on an empty module.

  every-pass.py HETERO_OPT EMPTY.mlir

The list comes from `hetero-opt --help` (every `--hetero-*` option), so a
new pass is covered the day it is registered. Each must print the empty
module unchanged and exit 0; the tables below name the few that need an
option to run at all, the two whose job needs IR an empty module lacks
(they must refuse it with their message), and the two that declare the
runtime functions they lower to. A table entry that names no registered pass
is an error too, so the tables cannot go stale. Prints one line per pass and
a count; exits 1 on the first problem.
"""

import re
import subprocess
import sys

# Passes that do nothing without an option.
OPTIONS = {
    "hetero-partition-stages": "stages=4",
    "hetero-rebatch": "sizes=8",
    "hetero-plan-candidates": "memory-cap=1000000",
    "hetero-kfkb-schedule": "group-sizes=1,2",
    "hetero-lower-to-gpu": "format=isa",
    "hetero-summary": "output=/dev/null",
}
# Passes that need a schedule or a pipeline to work on, with their message.
REFUSES = {
    "hetero-export-schedule": "no hetero.schedule in the module",
    "hetero-import-schedule": "no hetero.pipeline to schedule",
}
# Passes that declare the runtime functions they call even on an empty
# module: their output may hold private function declarations only.
DECLARES = {"hetero-gpu-device-buffers", "hetero-lower-to-gpu"}

EMPTY = re.compile(r"^module \{\n\}\n$")
DECLARATIONS = re.compile(
    r"^module \{\n((  func\.func private @\w+\(.*"
    r"|  llvm\.func @\w+\(.*attributes \{sym_visibility = \"private\"\})\n)*\}\n$")


def main(argv):
    hetero_opt, empty = argv[1], argv[2]
    help_text = subprocess.run([hetero_opt, "--help"], capture_output=True,
                               text=True, check=True).stdout
    passes = sorted(set(re.findall(r"^\s+--(hetero-[a-z0-9-]+)\b", help_text,
                                   re.MULTILINE)))
    if len(passes) < 30:
        print(f"only {len(passes)} hetero passes in hetero-opt --help")
        return 1
    for table in (OPTIONS, REFUSES, DECLARES):
        for name in table:
            if name not in passes:
                print(f"{name} is in a table but not registered")
                return 1
    for name in passes:
        flag = f"--{name}" + (f"={OPTIONS[name]}" if name in OPTIONS else "")
        run = subprocess.run([hetero_opt, empty, flag], capture_output=True,
                             text=True)
        if name in REFUSES:
            ok = run.returncode != 0 and REFUSES[name] in run.stderr
            verdict = "refuses it"
        else:
            pattern = DECLARATIONS if name in DECLARES else EMPTY
            ok = run.returncode == 0 and pattern.match(run.stdout) is not None
            verdict = "keeps it empty"
        if not ok:
            print(f"{flag}: exit {run.returncode}\n{run.stdout}{run.stderr}")
            return 1
        print(f"{flag}: {verdict}")
    print(f"all {len(passes)} registered hetero passes and pipelines accept "
          "an empty module")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
