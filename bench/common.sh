# Sourced first by the benchmark scripts, with the script's arguments:
#   ROOT    the repository
#   BUILD   the build directory: the first argument, else $ROOT/build
#   PYTHON  the interpreter for the reports ($PYTHON, else /usr/bin/python3)
#   LAUNCH  mpirun with oversubscribed, unbound ranks (and root allowed when
#           run as root); scripts append -np and the command
# and interleaved_runs, which runs modules against each other in rounds.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
PYTHON="${PYTHON:-/usr/bin/python3}"
LAUNCH=(mpirun --oversubscribe --bind-to none)
if [[ "$(id -u)" == 0 ]]; then LAUNCH+=(--allow-run-as-root); fi

# interleaved_runs RANKS "KIND..." [hetero-run arguments]: ROUNDS rounds
# (one run of every kind each, so that the machine's drift reaches all
# alike; round r starts at kind r, so that no kind always runs first) of
# hetero-run on $WORK/<kind>.mlir, into $WORK/<kind>-<round>.txt;
# bench/step_times.py reads their step times.
interleaved_runs() {
  local ranks=$1 round kind i
  local -a kinds
  read -r -a kinds <<< "$2"
  shift 2
  for round in $(seq 1 "$ROUNDS"); do
    for i in "${!kinds[@]}"; do
      kind="${kinds[$(((i + round - 1) % ${#kinds[@]}))]}"
      "${LAUNCH[@]}" -np "$ranks" "$BUILD/bin/hetero-run" "$WORK/$kind.mlir" \
        "$@" > "$WORK/$kind-$round.txt"
    done
  done
}
