# Sourced first by the benchmark scripts, with the script's arguments:
#   ROOT    the repository
#   BUILD   the build directory: the first argument, else $ROOT/build
#   PYTHON  the interpreter for the reports ($PYTHON, else /usr/bin/python3)
#   LAUNCH  mpirun with oversubscribed, unbound ranks (and root allowed when
#           run as root); scripts append -np and the command
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
PYTHON="${PYTHON:-/usr/bin/python3}"
LAUNCH=(mpirun --oversubscribe --bind-to none)
if [[ "$(id -u)" == 0 ]]; then LAUNCH+=(--allow-run-as-root); fi
