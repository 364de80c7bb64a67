# Sourced first by the benchmark scripts, with the script's arguments:
#   ROOT    the repository
#   BUILD   the build directory: the first argument, else $ROOT/build
#   PYTHON  the interpreter for the reports ($PYTHON, else /usr/bin/python3)
#   LAUNCH  mpirun with oversubscribed, unbound ranks (and root allowed when
#           run as root); scripts append -np and the command
# and interleaved_runs, which runs modules against each other in rounds,
# work_dir, which sets up $WORK, and need_torch, which installs Debian's
# python3-torch when it is missing.
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

# need_torch: PyTorch from Debian (python3-torch, with libopenblas0-pthread
# as its BLAS), installed with apt-get when missing; the log goes to
# $WORK/apt.txt. Only the benchmarks that compare with PyTorch need it.
need_torch() {
  if "$PYTHON" -c "import torch" 2>/dev/null &&
    dpkg -s libopenblas0-pthread >/dev/null 2>&1; then
    return
  fi
  echo "installing python3-torch and libopenblas0-pthread (apt-get)"
  local -a sudo=()
  if [[ "$(id -u)" != 0 ]]; then sudo=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  if ! "${sudo[@]}" apt-get install -y -q python3-torch libopenblas0-pthread \
    > "$WORK/apt.txt" 2>&1; then
    "${sudo[@]}" apt-get update -q > "$WORK/apt.txt" 2>&1
    "${sudo[@]}" apt-get install -y -q python3-torch libopenblas0-pthread \
      >> "$WORK/apt.txt" 2>&1 || { cat "$WORK/apt.txt"; exit 1; }
  fi
}

# work_dir: $WORK when given (created and kept), else a temporary directory
# removed when the script exits.
work_dir() {
  if [[ -n "${WORK:-}" ]]; then
    mkdir -p "$WORK"
  else
    WORK="$(mktemp -d)"
    trap 'rm -rf "$WORK"' EXIT
  fi
}
